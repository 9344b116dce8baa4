/* Continuity of H1 spaces across cells of random local orientation.
 *
 * usage: test_space_continuity MESH.geo P SEED
 * The mesh is read with second-order geometry, its non-corner nodes are moved by a smooth displacement (so
 * cells are curved and no two cells are images of each other by a translation), and every cell's local
 * numbering is replaced by a random orientation-preserving symmetry of its reference cell: an even
 * permutation of the corners of a triangle or tetrahedron, a rotation of the square or cube (4 or 24),
 * applied to the whole node lattice of the cell. The topology is rebuilt and the space of order P created.
 * Then:
 *   (a) each cell's own geometric map, evaluated at each of its space nodes (lattice positions), lands on the
 *       coordinates sp->node_x holds for that node number, within 1e-12: a shared edge or face whose nodes
 *       two cells number differently would put one number at two places;
 *   (b) a random global field (nodal values uniform in [-1, 1]) evaluated from each of the two cells that
 *       share a face (3D) or edge (2D), at 3 random points of it, agrees within 1e-12 (the points are built
 *       from the facet's global corner numbers; their physical images from the two cells agree within 1e-12);
 *   (c) the number of nodes is that of the same mesh without the reorientation;
 *   (d) the check can fail: swapping two nodes of one shared edge in one cell's dof map gives a jump above
 *       1e-6 in (b) (a difference of two random nodal values times basis values at random points: 1e-4 to
 *       1, six orders or more above the 1e-12 of (b));
 *   (e) the trace of the space on the boundary facet elements (sp->facets, numbered through the cell each
 *       facet bounds) is consistent: each facet element's own geometric map at its trace nodes lands on
 *       node_x of the numbers it was given, within 1e-12. */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/space.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static uint64_t rng;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static int irand(int n) {
    return (int)(urand() * n) % n;
}

/* ---- symmetries: maps from a new lattice multi-index to the old one */

typedef struct {
    int perm[4]; /* simplices: new corner v is old corner perm[v]; tensor: new axis a reads old axis perm[a]
                  */
    int flip[3]; /* tensor: axis reversed */
} Sym;

static int perm_sign(const int *p, int n) {
    int s = 1;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (p[i] > p[j]) s = -s;
    return s;
}

static Sym random_symmetry(Shape s) {
    Sym y;
    memset(&y, 0, sizeof y);
    int d = shape_dim(s), simplex = !shape_is_tensor(s), n = simplex ? d + 1 : d;
    for (;;) {
        for (int i = 0; i < n; i++) y.perm[i] = i;
        for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
            int j = irand(i + 1), t = y.perm[i];
            y.perm[i] = y.perm[j];
            y.perm[j] = t;
        }
        int sign = perm_sign(y.perm, n);
        for (int a = 0; a < d && !simplex; a++) {
            y.flip[a] = irand(2);
            if (y.flip[a]) sign = -sign;
        }
        if (sign > 0) return y; /* orientation preserving */
    }
}

/* The old lattice multi-index of the node at new multi-index `lat` (order g). */
static void sym_apply(Shape s, int g, const Sym *y, const int lat[3], int old[3]) {
    int d = shape_dim(s);
    old[0] = old[1] = old[2] = 0;
    if (shape_is_tensor(s)) {
        for (int a = 0; a < d; a++) {
            /* old axis perm[a] carries the new axis a */
            int v = lat[a];
            old[y->perm[a]] = y->flip[a] ? g - v : v;
        }
        return;
    }
    int cnew[4] = {g - lat[0] - lat[1] - lat[2], lat[0], lat[1], lat[2]}, cold[4] = {0, 0, 0, 0};
    for (int v = 0; v <= d; v++) cold[y->perm[v]] = cnew[v];
    for (int a = 0; a < d; a++) old[a] = cold[a + 1];
}

static void reorient_cells(Mesh *m) {
    for (int b = 0; b < m->ncell_blocks; b++) {
        MeshBlock *mb = &m->cells[b];
        fem_idx old[64];
        for (int64_t c = 0; c < mb->count; c++) {
            Sym y = random_symmetry(mb->shape);
            memcpy(old, &mb->nodes[c * mb->nnodes], sizeof(fem_idx) * mb->nnodes);
            for (int i = 0; i < mb->nnodes; i++) {
                int lat[3], o[3];
                lattice_node(mb->shape, mb->order, i, lat);
                sym_apply(mb->shape, mb->order, &y, lat, o);
                mb->nodes[c * mb->nnodes + i] = old[lattice_index(mb->shape, mb->order, o)];
            }
        }
    }
    mesh_destroy_topology(m);
    CHECK_OK(mesh_build_topology(m));
}

/* Reference position of cell corner v. */
static void corner_position(Shape s, int v, double xi[3]) {
    xi[0] = xi[1] = xi[2] = 0.0;
    if (shape_is_tensor(s))
        for (int a = 0; a < shape_dim(s); a++) xi[a] = (v >> a) & 1;
    else if (v > 0)
        xi[v - 1] = 1.0;
}

static fem_idx cell_vertex(const Mesh *m, const MeshBlock *mb, int64_t c, int v) {
    return m->topo.vertex_of_node[mb->nodes[c * mb->nnodes + lattice_vertex(mb->shape, mb->order, v)]];
}

/* Field and position of cell c of block b at reference point xi. */
static void eval_cell(const Mesh *m, const Space *sp, const fem_idx *dofs, int b, int64_t c, const double *xi,
                      const double *u, double *val, double x[3]) {
    const MeshBlock *mb = &m->cells[b];
    int nd = sp->cells[b].ndof;
    double phi[1024], geo[64];
    basis_tabulate(mb->shape, sp->order, 1, xi, phi, NULL);
    basis_tabulate(mb->shape, mb->order, 1, xi, geo, NULL);
    *val = 0.0;
    for (int i = 0; i < nd; i++) *val += phi[i] * u[dofs[c * nd + i]];
    x[0] = x[1] = x[2] = 0.0;
    for (int j = 0; j < mb->nnodes; j++)
        for (int a = 0; a < 3; a++) x[a] += geo[j] * m->x[3 * (int64_t)mb->nodes[c * mb->nnodes + j] + a];
}

/* The worst distance between where block mb's elements map their own space nodes (their geometry's basis at
 * the nodes' lattice positions) and node_x of the numbers the space block sb gave those nodes. */
static double block_mismatch(const Mesh *m, const Space *sp, const MeshBlock *mb, const SpaceBlock *sb) {
    double worst = 0.0;
    double *pts = malloc(sizeof(double) * 3 * sb->ndof),
           *geo = malloc(sizeof(double) * sb->ndof * mb->nnodes);
    for (int n = 0; n < sb->ndof; n++) {
        int lat[3];
        lattice_node(sb->shape, sp->order, n, lat);
        lattice_position(sb->shape, sp->order, lat, &pts[3 * n]);
    }
    basis_tabulate(mb->shape, mb->order, sb->ndof, pts, geo, NULL);
    for (int64_t c = 0; c < sb->count; c++)
        for (int n = 0; n < sb->ndof; n++) {
            double x[3] = {0, 0, 0};
            for (int j = 0; j < mb->nnodes; j++)
                for (int a = 0; a < 3; a++)
                    x[a] += geo[n * mb->nnodes + j] * m->x[3 * (int64_t)mb->nodes[c * mb->nnodes + j] + a];
            const double *y = &sp->node_x[3 * (int64_t)sb->dofs[c * sb->ndof + n]];
            for (int a = 0; a < 3; a++) worst = fmax(worst, fabs(x[a] - y[a]));
        }
    free(pts);
    free(geo);
    return worst;
}

/* (a): each cell maps its own nodes onto node_x. */
static double node_mismatch(const Mesh *m, const Space *sp) {
    double worst = 0.0;
    for (int b = 0; b < m->ncell_blocks; b++)
        worst = fmax(worst, block_mismatch(m, sp, &m->cells[b], &sp->cells[b]));
    return worst;
}

/* (e): each facet element maps its own trace nodes onto node_x of the numbers the space gave them. */
static double facet_mismatch(const Mesh *m, const Space *sp) {
    double worst = 0.0;
    for (int b = 0; b < m->nfacet_blocks; b++)
        worst = fmax(worst, block_mismatch(m, sp, &m->facets[b], &sp->facets[b]));
    return worst;
}

typedef struct {
    int b;
    int64_t c;
    int f;
} Side;

/* (b): largest jump of u across shared facets, and largest mismatch of the points' physical images. */
static void facet_jumps(const Mesh *m, const Space *sp, fem_idx *const *dofs, const double *u, double *jump,
                        double *xgap) {
    int64_t nf = m->dim == 3 ? m->topo.nfaces : m->topo.nedges;
    Side *first = malloc(sizeof(Side) * (size_t)(nf + 1));
    for (int64_t i = 0; i < nf; i++) first[i].b = -1;
    *jump = *xgap = 0.0;
    int64_t pairs = 0;
    for (int b = 0; b < m->ncell_blocks; b++) {
        const MeshBlock *mb = &m->cells[b];
        int nfc = shape_nfacets(mb->shape);
        for (int64_t c = 0; c < mb->count; c++)
            for (int f = 0; f < nfc; f++) {
                int lv[4], nv = shape_facet_vertices(mb->shape, f, lv);
                fem_idx id;
                if (m->dim == 3) {
                    id = m->topo.cell_faces[b][c * nfc + f];
                } else { /* 2D facets are edges: find the edge id */
                    id = -1;
                    for (int e = 0; e < shape_nedges(mb->shape); e++) {
                        const int *ev = shape_edge(mb->shape, e);
                        if ((ev[0] == lv[0] && ev[1] == lv[1]) || (ev[0] == lv[1] && ev[1] == lv[0]))
                            id = m->topo.cell_edges[b][c * shape_nedges(mb->shape) + e];
                    }
                }
                if (first[id].b < 0) {
                    first[id] = (Side){b, c, f};
                    continue;
                }
                pairs++;
                /* the facet's global corners, in the first cell's facet order */
                const Side *s1 = &first[id];
                const MeshBlock *mb1 = &m->cells[s1->b];
                int lv1[4];
                shape_facet_vertices(mb1->shape, s1->f, lv1);
                fem_idx gv[4];
                for (int k = 0; k < nv; k++) gv[k] = cell_vertex(m, mb1, s1->c, lv1[k]);
                for (int r = 0; r < 3; r++) {
                    double w[4];
                    if (nv == 2) {
                        double t = urand();
                        w[0] = 1 - t, w[1] = t;
                    } else if (nv == 3) {
                        double a = urand(), bb = urand();
                        if (a + bb > 1) a = 1 - a, bb = 1 - bb;
                        w[0] = 1 - a - bb, w[1] = a, w[2] = bb;
                    } else {
                        double s = urand(), t = urand();
                        w[0] = (1 - s) * (1 - t), w[1] = s * (1 - t), w[2] = (1 - s) * t, w[3] = s * t;
                    }
                    double val[2], x[2][3];
                    const Side sides[2] = {*s1, {b, c, f}};
                    for (int side = 0; side < 2; side++) {
                        const MeshBlock *ms = &m->cells[sides[side].b];
                        double xi[3] = {0, 0, 0};
                        for (int k = 0; k < nv; k++) { /* where global corner gv[k] sits in this cell */
                            int local = -1;
                            for (int v = 0; v < shape_nvertices(ms->shape); v++)
                                if (cell_vertex(m, ms, sides[side].c, v) == gv[k]) local = v;
                            double cp[3];
                            corner_position(ms->shape, local, cp);
                            for (int a = 0; a < 3; a++) xi[a] += w[k] * cp[a];
                        }
                        eval_cell(m, sp, dofs[sides[side].b], sides[side].b, sides[side].c, xi, u, &val[side],
                                  x[side]);
                    }
                    *jump = fmax(*jump, fabs(val[0] - val[1]));
                    for (int a = 0; a < 3; a++) *xgap = fmax(*xgap, fabs(x[0][a] - x[1][a]));
                }
            }
    }
    CHECK(pairs > 10, "only %lld shared facets", (long long)pairs);
    free(first);
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: %s MESH.geo P SEED\n", argv[0]), 2;
    int p = atoi(argv[2]);
    rng = 0x2545f4914f6cdd1dull * (uint64_t)(atoi(argv[3]) + 1);
    Mesh m;
    MeshReadOptions mo = {.order = 2};
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    Space plain;
    CHECK_OK(space_create(&m, p, 1, &plain));
    int64_t plain_nodes = plain.nnodes;
    space_destroy(&plain);

    test_curve_mesh(&m, 0.02);
    reorient_cells(&m);
    Space sp;
    CHECK_OK(space_create(&m, p, 1, &sp));
    CHECK(sp.nnodes == plain_nodes, "(c) %lld nodes after reorienting the cells, %lld before",
          (long long)sp.nnodes, (long long)plain_nodes);

    double mis = node_mismatch(&m, &sp);
    CHECK(mis < 1e-12, "(a) a cell maps one of its nodes %.3g away from node_x of its number", mis);

    double fmis = facet_mismatch(&m, &sp);
    CHECK(fmis < 1e-12, "(e) a facet element maps one of its trace nodes %.3g away from node_x of its number",
          fmis);

    double *u = malloc(sizeof(double) * (size_t)sp.nnodes);
    for (int64_t n = 0; n < sp.nnodes; n++) u[n] = 2 * urand() - 1;
    fem_idx *dofs[MESH_MAX_BLOCKS];
    for (int b = 0; b < sp.ncell_blocks; b++) dofs[b] = sp.cells[b].dofs;
    double jump, xgap;
    facet_jumps(&m, &sp, dofs, u, &jump, &xgap);
    CHECK(jump < 1e-12, "(b) the field jumps by %.3g across a shared facet", jump);
    CHECK(xgap < 1e-12, "(b) the two cells map a facet point to places %.3g apart", xgap);

    /* (d) swap the first two nodes of an edge (p >= 3 has two per edge) in one cell of block 0, an edge that
     * lies on a facet the cell shares (an edge on the boundary alone would be seen by no shared facet) */
    if (p >= 3) {
        const SpaceBlock *sb = &sp.cells[0];
        const MeshBlock *mb = &m.cells[0];
        fem_idx *bad = malloc(sizeof(fem_idx) * (size_t)(sb->count * sb->ndof));
        memcpy(bad, sb->dofs, sizeof(fem_idx) * (size_t)(sb->count * sb->ndof));
        int nfc = shape_nfacets(mb->shape), ne = shape_nedges(mb->shape);
        int64_t nfe = m.dim == 3 ? m.topo.nfaces : m.topo.nedges;
        int *uses = calloc((size_t)nfe + 1, sizeof(int));
        for (int b = 0; b < m.ncell_blocks; b++)
            for (int64_t c = 0; c < m.cells[b].count; c++)
                for (int f = 0; f < shape_nfacets(m.cells[b].shape); f++) {
                    int lv[4];
                    shape_facet_vertices(m.cells[b].shape, f, lv);
                    fem_idx id = -1;
                    if (m.dim == 3)
                        id = m.topo.cell_faces[b][c * shape_nfacets(m.cells[b].shape) + f];
                    else
                        for (int e = 0; e < shape_nedges(m.cells[b].shape); e++) {
                            const int *ev = shape_edge(m.cells[b].shape, e);
                            if ((ev[0] == lv[0] && ev[1] == lv[1]) || (ev[0] == lv[1] && ev[1] == lv[0]))
                                id = m.topo.cell_edges[b][c * shape_nedges(m.cells[b].shape) + e];
                        }
                    uses[id]++;
                }
        int64_t c = -1;
        int edge = -1;
        for (int64_t k = 0; k < sb->count && c < 0; k++) {
            int64_t cc = (sb->count / 2 + k) % sb->count;
            for (int e = 0; e < ne && c < 0; e++) {
                const int *ev = shape_edge(mb->shape, e);
                for (int f = 0; f < nfc; f++) {
                    int lv[4], nv = shape_facet_vertices(mb->shape, f, lv), hits = 0;
                    for (int i = 0; i < nv; i++) hits += lv[i] == ev[0] || lv[i] == ev[1];
                    fem_idx id = -1;
                    if (m.dim == 3)
                        id = m.topo.cell_faces[0][cc * nfc + f];
                    else if (hits == 2 && nv == 2)
                        id = m.topo.cell_edges[0][cc * ne + e];
                    if (hits == 2 && id >= 0 && uses[id] == 2) c = cc, edge = e;
                }
            }
        }
        free(uses);
        CHECK(c >= 0, "(d) no cell of block 0 has an edge on a shared facet");
        if (c < 0) c = 0, edge = 0;
        int i1 = -1, i2 = -1;
        const int *ev = shape_edge(mb->shape, edge);
        for (int n = 0; n < sb->ndof; n++) {
            int lat[3];
            LatticeSite site;
            lattice_node(sb->shape, p, n, lat);
            lattice_site(sb->shape, p, lat, &site);
            if (site.dim == 1 && ((site.corner[0] == ev[0] && site.corner[1] == ev[1]) ||
                                  (site.corner[0] == ev[1] && site.corner[1] == ev[0]))) {
                if (i1 < 0)
                    i1 = n;
                else if (i2 < 0)
                    i2 = n;
            }
        }
        fem_idx t = bad[c * sb->ndof + i1];
        bad[c * sb->ndof + i1] = bad[c * sb->ndof + i2];
        bad[c * sb->ndof + i2] = t;
        dofs[0] = bad;
        double bad_jump, bad_gap;
        facet_jumps(&m, &sp, dofs, u, &bad_jump, &bad_gap);
        CHECK(bad_jump > 1e-6, "(d) a corrupted dof map went unnoticed: jump %.3g", bad_jump);
        free(bad);
    }
    free(u);
    space_destroy(&sp);
    mesh_destroy(&m);
    return test_result("test_space_continuity");
}
