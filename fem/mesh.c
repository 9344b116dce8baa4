/* Mesh bookkeeping: the element types femto reads, validation of cells, physical groups. */
#include "mesh.h"

#include "error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lattice index (fem/element.h) of each Gmsh node, in Gmsh's node order. Facts of Gmsh's reference elements;
 * tests/mesh checks every table against gmshModelMeshGetElementProperties. */
static const int line2_lattice[2] = {0, 1};
static const int line3_lattice[3] = {0, 2, 1};
static const int tri3_lattice[3] = {0, 1, 2};
static const int tri6_lattice[6] = {0, 2, 5, 1, 4, 3};
static const int quad4_lattice[4] = {0, 1, 3, 2};
static const int quad9_lattice[9] = {0, 2, 8, 6, 1, 5, 7, 3, 4};
static const int tet4_lattice[4] = {0, 1, 2, 3};
static const int tet10_lattice[10] = {0, 2, 5, 9, 1, 4, 3, 6, 8, 7};
static const int hex8_lattice[8] = {0, 1, 3, 2, 4, 5, 7, 6};
static const int hex27_lattice[27] = {0,  2,  8,  6,  18, 20, 26, 24, 1,  3,  9,  5,  11, 7,
                                      17, 15, 19, 21, 23, 25, 4,  10, 12, 14, 16, 22, 13};

static const MeshElementType element_types[] = {
    {1, "line2", SHAPE_LINE, 1, 2, line2_lattice}, {8, "line3", SHAPE_LINE, 2, 3, line3_lattice},
    {2, "tri3", SHAPE_TRI, 1, 3, tri3_lattice},    {9, "tri6", SHAPE_TRI, 2, 6, tri6_lattice},
    {3, "quad4", SHAPE_QUAD, 1, 4, quad4_lattice}, {10, "quad9", SHAPE_QUAD, 2, 9, quad9_lattice},
    {4, "tet4", SHAPE_TET, 1, 4, tet4_lattice},    {11, "tet10", SHAPE_TET, 2, 10, tet10_lattice},
    {5, "hex8", SHAPE_HEX, 1, 8, hex8_lattice},    {12, "hex27", SHAPE_HEX, 2, 27, hex27_lattice},
};

const MeshElementType *mesh_gmsh_type(int gmsh_type) {
    for (size_t i = 0; i < sizeof element_types / sizeof element_types[0]; i++)
        if (element_types[i].gmsh_type == gmsh_type) return &element_types[i];
    return NULL;
}

const char *mesh_supported_types(void) {
    return "cells tri3, tri6, quad4, quad9, tet4, tet10, hex8, hex27 and facets line2, line3, tri3, tri6, "
           "quad4, "
           "quad9";
}

static void block_destroy(MeshBlock *b) {
    free(b->nodes);
    free(b->entity);
    free(b->tag);
    memset(b, 0, sizeof *b);
}

void mesh_destroy(Mesh *m) {
    if (!m) return;
    free(m->x);
    free(m->node_tag);
    for (int b = 0; b < m->ncell_blocks; b++) block_destroy(&m->cells[b]);
    for (int b = 0; b < m->nfacet_blocks; b++) block_destroy(&m->facets[b]);
    for (int g = 0; g < m->ngroups; g++) free(m->groups[g].entities);
    free(m->groups);
    mesh_destroy_topology(m);
    if (m->parent) {
        mesh_destroy(m->parent);
        free(m->parent);
    }
    memset(m, 0, sizeof *m);
}

int mesh_block_geometry_order(const Mesh *m, const MeshBlock *mb) {
    const Shape s = mb->shape;
    const int nn = mb->nnodes, nv = shape_nvertices(s);
    if (mb->order <= 1 || shape_is_tensor(s) || mb->count == 0 || nn > 64) return mb->order;
    double pts[64 * 3], val[64 * 4];
    int corner[4];
    lattice_points(s, mb->order, 0, pts); /* where the order's own basis is nodal */
    if (!basis_tabulate(s, 1, nn, pts, val, NULL)) return mb->order;
    for (int v = 0; v < nv; v++) corner[v] = lattice_vertex(s, mb->order, v);
    for (int64_t c = 0; c < mb->count; c++) {
        const fem_idx *nodes = mb->nodes + c * nn;
        double extent = 0.0;
        for (int v = 1; v < nv; v++)
            for (int d = 0; d < 3; d++)
                extent = fmax(extent, fabs(m->x[3 * nodes[corner[v]] + d] - m->x[3 * nodes[corner[0]] + d]));
        for (int i = 0; i < nn; i++)
            for (int d = 0; d < 3; d++) {
                double x = 0.0; /* the affine map through the corners at node i */
                for (int v = 0; v < nv; v++)
                    x += val[i * nv + lattice_vertex(s, 1, v)] * m->x[3 * nodes[corner[v]] + d];
                if (fabs(m->x[3 * nodes[i] + d] - x) > 1e-10 * extent) return mb->order;
            }
    }
    return 1;
}

void mesh_destroy_topology(Mesh *m) {
    Topology *t = &m->topo;
    free(t->vertex_of_node);
    free(t->edges);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) {
        free(t->cell_edges[b]);
        free(t->cell_faces[b]);
        free(t->facet_cell[b]);
    }
    memset(t, 0, sizeof *t);
    m->has_topology = 0;
}

const PhysicalGroup *mesh_find_group(const Mesh *m, const char *name, int dim) {
    for (int g = 0; g < m->ngroups; g++)
        if (m->groups[g].dim == dim && strcmp(m->groups[g].name, name) == 0) return &m->groups[g];
    /* a group without a name can be referred to by its number */
    char *end;
    long tag = strtol(name, &end, 10);
    if (*name && !*end)
        for (int g = 0; g < m->ngroups; g++)
            if (m->groups[g].dim == dim && m->groups[g].tag == tag) return &m->groups[g];
    return NULL;
}

void mesh_group_names(const Mesh *m, int dim, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int g = 0; g < m->ngroups; g++) {
        const PhysicalGroup *pg = &m->groups[g];
        if (pg->dim != dim) continue;
        int n = pg->name[0] ? snprintf(buf + used, len - used, "%s'%s'", used ? ", " : "", pg->name)
                            : snprintf(buf + used, len - used, "%s%d", used ? ", " : "", pg->tag);
        if (n < 0 || (size_t)n >= len - used) break;
        used += (size_t)n;
    }
    if (!used) snprintf(buf, len, "none");
}

int mesh_group_has_entity(const PhysicalGroup *g, int entity) {
    for (int i = 0; i < g->nentities; i++)
        if (g->entities[i] == entity) return 1;
    return 0;
}

void mesh_bounding_box(const Mesh *m, double lo[3], double hi[3]) {
    for (int a = 0; a < 3; a++) lo[a] = m->nnodes ? INFINITY : 0.0, hi[a] = m->nnodes ? -INFINITY : 0.0;
    for (int64_t n = 0; n < m->nnodes; n++)
        for (int a = 0; a < 3; a++) {
            if (m->x[3 * n + a] < lo[a]) lo[a] = m->x[3 * n + a];
            if (m->x[3 * n + a] > hi[a]) hi[a] = m->x[3 * n + a];
        }
}

/* Gradients of the geometric basis of a block at its own nodes: [nnodes (points)][nnodes (functions)][dim].
 */
static double *node_gradients(Shape s, int order) {
    int n = lattice_count(s, order), d = shape_dim(s);
    double *pts = malloc(sizeof(double) * 3 * n), *grad = malloc(sizeof(double) * n * n * d);
    if (!pts || !grad) {
        free(pts);
        free(grad);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        int lat[3];
        lattice_node(s, order, i, lat);
        lattice_position(s, order, lat, &pts[3 * i]);
    }
    basis_tabulate(s, order, n, pts, NULL, grad);
    free(pts);
    return grad;
}

static double det_at(const Mesh *m, const MeshBlock *b, int64_t c, const double *grad, int k) {
    int d = m->dim, n = b->nnodes;
    double J[3][3] = {{0}};
    for (int i = 0; i < n; i++) {
        const double *x = &m->x[3 * (int64_t)b->nodes[c * n + i]];
        for (int a = 0; a < d; a++)
            for (int r = 0; r < d; r++) J[a][r] += x[a] * grad[(k * n + i) * d + r];
    }
    if (d == 2) return J[0][0] * J[1][1] - J[0][1] * J[1][0];
    return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
           J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
           J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
}

void mesh_cell_jacobian_range(const Mesh *m, int block, int64_t cell, double *jmin, double *jmax) {
    const MeshBlock *b = &m->cells[block];
    double *grad = node_gradients(b->shape, b->order);
    *jmin = INFINITY;
    *jmax = -INFINITY;
    if (!grad) return;
    for (int k = 0; k < b->nnodes; k++) {
        double det = det_at(m, b, cell, grad, k);
        if (det < *jmin) *jmin = det;
        if (det > *jmax) *jmax = det;
    }
    free(grad);
}

int mesh_block_jacobian_range(const Mesh *m, int block, double *lo, double *hi) {
    const MeshBlock *b = &m->cells[block];
    double *grad = node_gradients(b->shape, b->order);
    if (!grad) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for Jacobians");
#pragma omp parallel for schedule(static) if (b->count > 10000)
    for (int64_t c = 0; c < b->count; c++) {
        double l = INFINITY, h = -INFINITY;
        for (int k = 0; k < b->nnodes; k++) {
            double det = det_at(m, b, c, grad, k);
            l = fmin(l, det);
            h = fmax(h, det);
        }
        lo[c] = l;
        hi[c] = h;
    }
    free(grad);
    return FEM_OK;
}

/* Swaps lattice axes 0 and 1 of a 2D cell, reversing its orientation. */
static void transpose_cell(MeshBlock *b, int64_t c) {
    fem_idx tmp[64];
    int n = b->nnodes;
    memcpy(tmp, &b->nodes[c * n], sizeof(fem_idx) * n);
    for (int i = 0; i < n; i++) {
        int lat[3], t[3];
        lattice_node(b->shape, b->order, i, lat);
        t[0] = lat[1];
        t[1] = lat[0];
        t[2] = 0;
        b->nodes[c * n + i] = tmp[lattice_index(b->shape, b->order, t)];
    }
}

static double cell_size(const Mesh *m, const MeshBlock *b, int64_t c) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < b->nnodes; i++)
        for (int a = 0; a < 3; a++) {
            double v = m->x[3 * (int64_t)b->nodes[c * b->nnodes + i] + a];
            lo[a] = fmin(lo[a], v);
            hi[a] = fmax(hi[a], v);
        }
    return sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                (hi[2] - lo[2]) * (hi[2] - lo[2]));
}

/* The range of cell c's Jacobian determinant at its nodes; a consistently clockwise 2D cell (legal for a
 * surface meshed with a downward normal) is turned over on the way and marked in flipped (NULL in 3D).
 * Returns 1 when the cell is degenerate, inverted or tangled. */
static int check_cell(const Mesh *m, MeshBlock *b, int64_t c, const double *grad, uint8_t *flipped,
                      double *lo, double *hi) {
    double h = cell_size(m, b, c), tiny = 1e-12 * h * h * (m->dim == 3 ? h : 1.0);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < b->nnodes; k++) {
        double det = det_at(m, b, c, grad, k);
        *lo = fmin(*lo, det);
        *hi = fmax(*hi, det);
    }
    if (m->dim == 2 && *hi < 0.0) {
        transpose_cell(b, c);
        flipped[c] = 1;
        double t = *lo;
        *lo = -*hi;
        *hi = -t;
    }
    return *lo <= tiny;
}

/* Every cell is checked (in parallel); the first bad one in mesh order is the one the message names.
 * flipped[b][c] = 1 for the 2D cells turned over (NULL in 3D); the caller frees them. */
static int check_cells(Mesh *m, uint8_t **flipped) {
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        MeshBlock *b = &m->cells[bi];
        if (m->dim == 2) FEM_ALLOC(flipped[bi], b->count, "cell orientations");
        double *grad = node_gradients(b->shape, b->order);
        if (!grad) return fem_fail(FEM_ERR_INTERNAL, "out of host memory checking cells");
        int64_t bad = b->count;
#pragma omp parallel for schedule(static) reduction(min : bad) if (b->count > 10000)
        for (int64_t c = 0; c < b->count; c++) {
            double lo, hi;
            if (check_cell(m, b, c, grad, flipped[bi], &lo, &hi) && c < bad) bad = c;
        }
        double lo = 0, hi = 0, tiny = 0;
        if (bad < b->count) {
            uint8_t again = 0; /* already turned over: this only measures again */
            check_cell(m, b, bad, grad, &again, &lo, &hi);
            double h = cell_size(m, b, bad);
            tiny = 1e-12 * h * h * (m->dim == 3 ? h : 1.0);
        }
        free(grad);
        if (bad == b->count) continue;
        if (hi <= tiny && lo >= -tiny)
            return fem_fail(FEM_ERR_INPUT,
                            "%s: element %lld (%s) is degenerate: its Jacobian determinant is 0", m->path,
                            (long long)b->tag[bad], b->type->name);
        return fem_fail(FEM_ERR_INPUT,
                        "%s: element %lld (%s) is inverted or tangled: its Jacobian determinant ranges from "
                        "%.3g to %.3g",
                        m->path, (long long)b->tag[bad], b->type->name, lo, hi);
    }
    return FEM_OK;
}

/* Elements per physical group: the blocks' elements come in runs of one entity (a reader appends them
 * entity by entity), so each run is looked up in the groups once. */
static void count_group_elements(Mesh *m) {
    for (int g = 0; g < m->ngroups; g++) m->groups[g].nelements = 0;
    for (int side = 0; side < 2; side++) {
        const MeshBlock *blocks = side ? m->facets : m->cells;
        int nb = side ? m->nfacet_blocks : m->ncell_blocks, dim = side ? m->dim - 1 : m->dim;
        for (int b = 0; b < nb; b++)
            for (int64_t c = 0, run; c < blocks[b].count; c += run) {
                int32_t entity = blocks[b].entity[c];
                for (run = 1; c + run < blocks[b].count && blocks[b].entity[c + run] == entity; run++) {
                }
                for (int g = 0; g < m->ngroups; g++)
                    if (m->groups[g].dim == dim && mesh_group_has_entity(&m->groups[g], entity))
                        m->groups[g].nelements += run;
            }
    }
}

static int check_planar(const Mesh *m) {
    if (m->dim != 2) return FEM_OK;
    double lo[3], hi[3];
    mesh_bounding_box(m, lo, hi);
    double size = fmax(hi[0] - lo[0], hi[1] - lo[1]);
    if (hi[2] - lo[2] > 1e-10 * size || fabs(lo[2]) > 1e-10 * size)
        return fem_fail(FEM_ERR_INPUT,
                        "%s: a 2D mesh must lie in the plane z = 0 (its z ranges from %g to %g)", m->path,
                        lo[2], hi[2]);
    return FEM_OK;
}

int mesh_finish_stored(Mesh *m) {
    if (!m->has_topology) return fem_fail(FEM_ERR_INTERNAL, "mesh_finish_stored: the mesh has no topology");
    count_group_elements(m);
    return FEM_OK;
}

int mesh_finish(Mesh *m) {
    FEM_TRY(check_planar(m));
    uint8_t *flipped[MESH_MAX_BLOCKS] = {0};
    int status = check_cells(m, flipped);
    if (!status) {
        count_group_elements(m);
        status = mesh_build_topology(m);
    }
    /* each 2D cell was turned counter-clockwise on its own: only now can a cell turned against its
     * neighbours, one that folds over them, be found */
    if (!status && m->dim == 2) status = mesh_check_folds(m, (const uint8_t *const *)flipped);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) free(flipped[b]);
    return status;
}

void mesh_finish_parents(Mesh *m, int stored, char *note, size_t note_size) {
    for (Mesh *c = m; c->parent; c = c->parent) {
        Mesh *p = c->parent;
        int status = stored && p->has_topology ? mesh_finish_stored(p) : mesh_finish(p);
        if (status == FEM_OK) continue;
        if (note)
            snprintf(note, note_size, "the mesh before refinement is not kept for multigrid: %s",
                     fem_last_error());
        mesh_destroy(p);
        free(p);
        c->parent = NULL;
        return;
    }
}

int mesh_parent_count(const Mesh *m) {
    int n = 0;
    for (const Mesh *p = m ? m->parent : NULL; p; p = p->parent) n++;
    return n;
}

static uint64_t point_hash(const double *p) {
    uint64_t h = 1469598103934665603ull;
    for (int d = 0; d < 3; d++) {
        double v = p[d] + 0.0; /* -0 and +0 alike */
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        h = (h ^ bits) * 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

/* The slot of point p: where it is, or the empty slot where it would go. */
static int64_t point_slot(const MeshPointIndex *t, const double *p) {
    for (int64_t i = (int64_t)(point_hash(p) & (uint64_t)(t->cap - 1));; i = (i + 1) & (t->cap - 1)) {
        fem_idx s = t->slot[i];
        if (s < 0) return i;
        const double *q = &t->x[3 * (int64_t)s];
        if (q[0] == p[0] && q[1] == p[1] && q[2] == p[2]) return i;
    }
}

int mesh_point_index_create(MeshPointIndex *t, const double *x, int64_t n) {
    t->cap = 64;
    t->x = x;
    while (t->cap < 2 * n) t->cap *= 2;
    t->slot = malloc(sizeof(fem_idx) * (size_t)t->cap);
    if (!t->slot) return fem_fail(FEM_ERR_INTERNAL, "out of host memory indexing %lld nodes", (long long)n);
    for (int64_t i = 0; i < t->cap; i++) t->slot[i] = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = point_slot(t, &x[3 * i]);
        if (t->slot[s] < 0) t->slot[s] = (fem_idx)i;
    }
    return FEM_OK;
}

fem_idx mesh_point_index_find(const MeshPointIndex *t, const double p[3]) {
    return t->slot[point_slot(t, p)];
}

void mesh_point_index_destroy(MeshPointIndex *t) {
    free(t->slot);
    memset(t, 0, sizeof *t);
}

int mesh_parent_cells(const Mesh *m, int64_t *parent_cell) {
    const Mesh *p = m->parent;
    if (!p || p->nnodes != m->nnodes) return fem_fail(FEM_ERR_INPUT, "mesh %s has no parent mesh", m->path);
    /* the parent cells at each node (CSR) */
    int64_t *start = calloc((size_t)m->nnodes + 2, sizeof *start), off[MESH_MAX_BLOCKS + 1] = {0};
    for (int b = 0; b < p->ncell_blocks; b++) off[b + 1] = off[b] + p->cells[b].count;
    int64_t total = 0;
    for (int b = 0; b < p->ncell_blocks; b++) total += p->cells[b].count * p->cells[b].nnodes;
    int64_t *cells = malloc(sizeof(int64_t) * (size_t)(total + 1));
    if (!start || !cells) {
        free(start), free(cells);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the parent of every cell");
    }
    for (int b = 0; b < p->ncell_blocks; b++)
        for (int64_t i = 0; i < p->cells[b].count * p->cells[b].nnodes; i++)
            start[p->cells[b].nodes[i] + 2]++;
    for (int64_t n = 0; n < m->nnodes; n++) start[n + 2] += start[n + 1];
    for (int b = 0; b < p->ncell_blocks; b++) {
        const MeshBlock *k = &p->cells[b];
        for (int64_t c = 0; c < k->count; c++)
            for (int i = 0; i < k->nnodes; i++) cells[start[k->nodes[c * k->nnodes + i] + 1]++] = off[b] + c;
    }
    /* start[n] .. start[n + 1]: node n's parent cells; a child's parent holds all its corners */
    int status = FEM_OK;
    int64_t moff = 0;
    for (int b = 0; b < m->ncell_blocks && !status; b++) {
        const MeshBlock *k = &m->cells[b];
        int nv = shape_nvertices(k->shape);
        for (int64_t c = 0; c < k->count && !status; c++) {
            const fem_idx *cn = &k->nodes[c * k->nnodes];
            fem_idx first = cn[lattice_vertex(k->shape, k->order, 0)];
            int64_t found = -1;
            for (int64_t j = start[first]; j < start[first + 1] && found < 0; j++) {
                int64_t pc = cells[j], pb = 0;
                while (pc >= off[pb + 1]) pb++;
                const MeshBlock *pk = &p->cells[pb];
                const fem_idx *pn = &pk->nodes[(pc - off[pb]) * pk->nnodes];
                int all = 1;
                for (int v = 1; v < nv && all; v++) {
                    fem_idx want = cn[lattice_vertex(k->shape, k->order, v)];
                    int in = 0;
                    for (int i = 0; i < pk->nnodes && !in; i++) in = pn[i] == want;
                    all = in;
                }
                if (all) found = pc;
            }
            if (found < 0)
                status = fem_fail(FEM_ERR_INPUT,
                                  "mesh %s: element %lld lies in no cell of the mesh it was refined from",
                                  m->path, (long long)k->tag[c]);
            parent_cell[moff + c] = found;
        }
        moff += k->count;
    }
    free(start);
    free(cells);
    return status;
}
