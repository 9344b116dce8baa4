/* OutFrame life cycle and subdivision of Lagrange cells into linear ones (see output.h).
 *
 * Subdivision serves readers that cannot draw a Lagrange cell of order p: the `vtu_subdivide` option and
 * XDMF, whose cell types stop at order 2. It keeps the points (the lattice of order p), so point data need no
 * copy and the picture is the piecewise-linear interpolant on that lattice.
 *   - Tensor cells split into the p^d small cells of the lattice.
 *   - Simplices use Kuhn's (Freudenthal's) subdivision in the coordinates u_a = x_a + ... + x_d, where the
 *     simplex becomes p >= u_1 >= ... >= u_d >= 0 and the lattice stays the integer lattice: every unit cube
 *     of u splits into d! simplices along its monotone paths from corner to corner, and the ones inside the
 *     simplex are those whose path respects the order of equal coordinates. That gives p^d simplices of equal
 *     volume, all with the parent's orientation once odd paths have two corners swapped. */
#include "output.h"

#include "fem/error.h"

#include <stdlib.h>
#include <string.h>

void outframe_destroy(OutFrame *f)
{
    for (int b = 0; b < f->nblocks; b++) free(f->blocks[b].conn);
    free(f->x);
    for (int a = 0; a < f->npoint_arrays; a++) free(f->point[a].data);
    for (int a = 0; a < f->ncell_arrays; a++) free(f->cell[a].data);
    for (int s = 0; s < f->nstrings; s++) free(f->string_value[s]);
    memset(f, 0, sizeof *f);
}

void outframe_destroy_shallow(OutFrame *f)
{
    for (int b = 0; b < f->nblocks; b++) free(f->blocks[b].conn);
    for (int a = 0; a < f->ncell_arrays; a++) free(f->cell[a].data);
    memset(f, 0, sizeof *f);
}

/* Simplex subcells: see the file comment. Writes lattice multi-indices of d+1 corners per subcell. */
static int simplex_subcells(int d, int p, int (*corner)[3])
{
    static const int perms2[2][2] = {{0, 1}, {1, 0}};
    static const int perms3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static const int odd3[6] = {0, 1, 1, 0, 0, 1};
    int nsub = 0, nperm = d == 2 ? 2 : 6;
    int b[3] = {0, 0, 0};
    for (b[0] = 0; b[0] < p; b[0]++)
        for (b[1] = 0; b[1] <= b[0]; b[1]++)
            for (b[2] = 0; b[2] <= (d == 3 ? b[1] : 0); b[2]++)
                for (int m = 0; m < nperm; m++) {
                    const int *sigma = d == 2 ? perms2[m] : perms3[m];
                    int ok = 1;
                    /* equal base coordinates must rise in index order to stay inside u_1 >= u_2 >= u_3 */
                    for (int x = 0; x < d; x++)
                        for (int y = x + 1; y < d; y++)
                            if (b[sigma[x]] == b[sigma[y]] && sigma[x] > sigma[y]) ok = 0;
                    if (!ok) continue;
                    int u[4] = {b[0], b[1], b[2], 0}; /* u[d] = 0 closes x_a = u_a - u_{a+1} */
                    int(*c)[3] = &corner[nsub * (d + 1)];
                    for (int v = 0; v <= d; v++) {
                        if (v > 0) u[sigma[v - 1]]++;
                        for (int a = 0; a < 3; a++) c[v][a] = a < d ? u[a] - u[a + 1] : 0;
                    }
                    if (d == 2 ? m == 1 : odd3[m]) { /* the map u -> x keeps orientation; odd paths flip it */
                        for (int a = 0; a < 3; a++) {
                            int t = c[d][a];
                            c[d][a] = c[d - 1][a];
                            c[d - 1][a] = t;
                        }
                    }
                    nsub++;
                }
    return nsub;
}

/* Tensor subcells: corners of each small lattice cell in the linear VTK cell's order. */
static int tensor_subcells(int d, int p, int (*corner)[3])
{
    static const int vtk_corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                         {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
    int nv = 1 << d, nsub = 0;
    int kmax = d > 2 ? p : 1, jmax = d > 1 ? p : 1;
    for (int k = 0; k < kmax; k++)
        for (int j = 0; j < jmax; j++)
            for (int i = 0; i < p; i++, nsub++)
                for (int v = 0; v < nv; v++) { /* a line's corners are the table's first two */
                    corner[nsub * nv + v][0] = i + vtk_corner[v][0];
                    corner[nsub * nv + v][1] = j + vtk_corner[v][1];
                    corner[nsub * nv + v][2] = k + vtk_corner[v][2];
                }
    return nsub;
}

int outframe_check(const OutFrame *f)
{
    if (f->npoints < 0 || (f->npoints > 0 && !f->x) || f->nblocks < 0 || f->nblocks > OUT_MAX_BLOCKS ||
        f->npoint_arrays < 0 || f->npoint_arrays > OUT_MAX_ARRAYS || f->ncell_arrays < 0 ||
        f->ncell_arrays > OUT_MAX_ARRAYS || f->nstrings < 0 || f->nstrings > OUT_MAX_STRINGS)
        return fem_fail(FEM_ERR_INTERNAL, "output frame: counts out of range");
    int64_t ncells = 0;
    for (int b = 0; b < f->nblocks; b++) {
        const OutCellBlock *blk = &f->blocks[b];
        if (blk->shape < SHAPE_LINE || blk->shape > SHAPE_HEX || blk->order < 1 ||
            blk->order > element_max_order(blk->shape) ||
            blk->vtk_type != vtk_cell_type(blk->shape, blk->order) ||
            blk->nodes_per_cell != lattice_count(blk->shape, blk->order) || blk->ncells < 0 ||
            (blk->ncells > 0 && !blk->conn))
            return fem_fail(FEM_ERR_INTERNAL, "output frame: block %d (%s, order %d) is inconsistent", b,
                            shape_name(blk->shape), blk->order);
        for (int64_t k = 0; k < blk->ncells * blk->nodes_per_cell; k++)
            if (blk->conn[k] < 0 || blk->conn[k] >= f->npoints)
                return fem_fail(FEM_ERR_INTERNAL, "output frame: block %d refers to point %lld of %lld", b,
                                (long long)blk->conn[k], (long long)f->npoints);
        ncells += blk->ncells;
    }
    for (int k = 0; k < f->npoint_arrays + f->ncell_arrays; k++) {
        const OutArray *a = k < f->npoint_arrays ? &f->point[k] : &f->cell[k - f->npoint_arrays];
        int64_t n = k < f->npoint_arrays ? f->npoints : ncells;
        if (a->ncomp < 1 || !a->name[0] || (n > 0 && !a->data))
            return fem_fail(FEM_ERR_INTERNAL, "output frame: array '%s' is inconsistent", a->name);
    }
    return FEM_OK;
}

enum {
    SUB_MAX_NODES =
        (ELEMENT_MAX_ORDER_TENSOR + 1) * (ELEMENT_MAX_ORDER_TENSOR + 1) * (ELEMENT_MAX_ORDER_TENSOR + 1),
    SUB_MAX_CORNERS = ELEMENT_MAX_ORDER_TENSOR * ELEMENT_MAX_ORDER_TENSOR * ELEMENT_MAX_ORDER_TENSOR * 8
};

int outframe_subcells(Shape s, int p, int *local)
{
    int corner[SUB_MAX_CORNERS][3], perm[SUB_MAX_NODES], vtk_of_lattice[SUB_MAX_NODES];
    int d = shape_dim(s), n = vtk_node_order(s, p, perm);
    if (n < 0) return -1;
    for (int k = 0; k < n; k++) vtk_of_lattice[perm[k]] = k;
    int nsub = shape_is_tensor(s) ? tensor_subcells(d, p, corner) : simplex_subcells(d, p, corner);
    int nv = shape_nvertices(s);
    for (int c = 0; c < nsub * nv; c++) local[c] = vtk_of_lattice[lattice_index(s, p, corner[c])];
    return nsub;
}

int outframe_subdivide_blocks(const OutFrame *in, const int *split_block, OutFrame *out)
{
    int local[SUB_MAX_CORNERS];
    memset(out, 0, sizeof *out);
    out->dim = in->dim;
    out->npoints = in->npoints;
    out->x = in->x;
    out->npoint_arrays = in->npoint_arrays;
    memcpy(out->point, in->point, sizeof in->point);
    out->nstrings = in->nstrings;
    memcpy(out->string_name, in->string_name, sizeof in->string_name);
    memcpy(out->string_value, in->string_value, sizeof in->string_value);
    out->nblocks = in->nblocks;
    int64_t nsub[OUT_MAX_BLOCKS], total = 0;
    for (int b = 0; b < in->nblocks; b++) {
        const OutCellBlock *ib = &in->blocks[b];
        OutCellBlock *ob = &out->blocks[b];
        int split = split_block[b] && ib->order > 1;
        nsub[b] = split ? outframe_subcells(ib->shape, ib->order, local) : 1;
        if (nsub[b] < 0) {
            fem_fail(FEM_ERR_INTERNAL, "cannot subdivide a %s cell of order %d", shape_name(ib->shape),
                     ib->order);
            goto fail;
        }
        *ob = *ib;
        if (split) {
            ob->order = 1;
            ob->vtk_type = vtk_cell_type(ib->shape, 1);
            ob->nodes_per_cell = shape_nvertices(ib->shape);
        }
        ob->ncells = ib->ncells * nsub[b];
        ob->conn =
            fem_malloc(sizeof(int64_t) * (size_t)(ob->ncells * ob->nodes_per_cell), "subdivided cells");
        if (!ob->conn) goto fail;
        if (!split) {
            memcpy(ob->conn, ib->conn, sizeof(int64_t) * (size_t)(ob->ncells * ob->nodes_per_cell));
        } else {
            int nv = ob->nodes_per_cell;
            for (int64_t c = 0; c < ib->ncells; c++)
                for (int64_t k = 0; k < nsub[b] * nv; k++)
                    ob->conn[c * nsub[b] * nv + k] = ib->conn[c * ib->nodes_per_cell + local[k]];
        }
        total += ob->ncells;
    }
    out->ncell_arrays = in->ncell_arrays;
    for (int a = 0; a < in->ncell_arrays; a++) {
        const OutArray *ia = &in->cell[a];
        OutArray *oa = &out->cell[a];
        *oa = *ia;
        oa->data = fem_malloc(sizeof(double) * (size_t)(total * ia->ncomp), "subdivided cell data");
        if (!oa->data) goto fail;
        /* each parent's values, once per subcell, block after block */
        int64_t from = 0, to = 0;
        for (int b = 0; b < in->nblocks; b++)
            for (int64_t c = 0; c < in->blocks[b].ncells; c++, from++)
                for (int64_t s = 0; s < nsub[b]; s++, to++)
                    memcpy(&oa->data[to * ia->ncomp], &ia->data[from * ia->ncomp],
                           sizeof(double) * ia->ncomp);
    }
    return FEM_OK;
fail:
    outframe_destroy_shallow(out);
    return FEM_ERR_INTERNAL;
}

int outframe_subdivide(const OutFrame *in, OutFrame *out)
{
    int all[OUT_MAX_BLOCKS];
    for (int b = 0; b < OUT_MAX_BLOCKS; b++) all[b] = 1;
    return outframe_subdivide_blocks(in, all, out);
}
