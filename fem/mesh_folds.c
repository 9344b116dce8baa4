/* 2D fold detection (mesh_check_folds in mesh.h). A cell inverted among its neighbours (a node dragged across
 * an edge of its star) has a negative Jacobian only relative to them: mesh_finish turns every clockwise cell
 * over, which is right for a surface Gmsh meshed clockwise and wrong for such a cell, whose turned copy then
 * overlaps its neighbours and silently corrupts the answer. Orientation along shared edges tells the two
 * apart: once every cell runs counter-clockwise, each interior edge must be run once in each direction. */
#include "error.h"
#include "mesh.h"

#include <stdio.h>
#include <stdlib.h>

/* Corners of each 2D shape in counter-clockwise order around the reference cell (fem/element.h numbering). */
static const int tri_cycle[3] = {0, 1, 2};
static const int quad_cycle[4] = {0, 1, 3, 2};

static fem_idx corner_vertex(const Mesh *m, const MeshBlock *b, int64_t c, int corner) {
    return m->topo.vertex_of_node[b->nodes[c * b->nnodes + lattice_vertex(b->shape, b->order, corner)]];
}

/* The local edge of shape s joining corners a and b. */
static int local_edge(Shape s, int a, int b) {
    for (int e = 0; e < shape_nedges(s); e++) {
        const int *v = shape_edge(s, e);
        if ((v[0] == a && v[1] == b) || (v[0] == b && v[1] == a)) return e;
    }
    return -1;
}

/* Of the cells of entity `entity`, the fraction turned over like cell (bi, c). */
static double agreement(const Mesh *m, const uint8_t *const *flipped, int bi, int64_t c) {
    int entity = m->cells[bi].entity[c];
    int64_t same = 0, all = 0;
    for (int b = 0; b < m->ncell_blocks; b++)
        for (int64_t k = 0; k < m->cells[b].count; k++)
            if (m->cells[b].entity[k] == entity) all++, same += flipped[b][k] == flipped[bi][c];
    return all ? (double)same / (double)all : 1.0;
}

static int fold_error(const Mesh *m, const uint8_t *const *flipped, int64_t first, int b2, int64_t c2,
                      fem_idx v0, fem_idx v1) {
    int b1 = (int)(first >> 48);
    int64_t c1 = first & (((int64_t)1 << 48) - 1);
    const MeshBlock *B1 = &m->cells[b1], *B2 = &m->cells[b2];
    int64_t n0 = -1, n1 = -1; /* the Gmsh tags of the shared edge's end nodes, in increasing order */
    for (int64_t n = 0; n < m->nnodes; n++) {
        if (m->topo.vertex_of_node[n] == v0) n0 = m->node_tag[n];
        if (m->topo.vertex_of_node[n] == v1) n1 = m->node_tag[n];
    }
    if (n0 > n1) n0 ^= n1, n1 ^= n0, n0 ^= n1;
    if (flipped[b1][c1] == flipped[b2][c2])
        return fem_fail(
            FEM_ERR_INPUT,
            "%s: elements %lld (%s) and %lld (%s) overlap: they lie on the same side of their shared "
            "edge between nodes %lld and %lld, so the mesh is tangled",
            m->path, (long long)B1->tag[c1], B1->type->name, (long long)B2->tag[c2], B2->type->name,
            (long long)n0, (long long)n1);
    /* the inverted one of the two: the one whose orientation most of its surface does not share */
    int second = agreement(m, flipped, b2, c2) < agreement(m, flipped, b1, c1);
    const MeshBlock *bad = second ? B2 : B1, *other = second ? B1 : B2;
    int64_t cb = second ? c2 : c1, co = second ? c1 : c2;
    int cw = flipped[second ? b2 : b1][cb];
    return fem_fail(
        FEM_ERR_INPUT,
        "%s: element %lld (%s) is inverted: its nodes run %sclockwise where its neighbours' run "
        "%sclockwise, so it folds over element %lld across their shared edge between nodes %lld and "
        "%lld: the mesh is tangled",
        m->path, (long long)bad->tag[cb], bad->type->name, cw ? "" : "counter-", cw ? "counter-" : "",
        (long long)other->tag[co], (long long)n0, (long long)n1);
}

int mesh_check_folds(const Mesh *m, const uint8_t *const *flipped) {
    const Topology *t = &m->topo;
    /* run[2 e + d]: 1 + the first cell (block << 48 | index) that runs edge e forward (d = 0: from its
     * lower-numbered vertex t->edges[2 e]) or backward (d = 1); 0 when none has yet */
    int64_t *run = fem_calloc((size_t)(2 * t->nedges + 1), sizeof *run, "the fold check");
    if (!run) return FEM_ERR_INTERNAL;
    int status = FEM_OK;
    for (int bi = 0; bi < m->ncell_blocks && !status; bi++) {
        const MeshBlock *b = &m->cells[bi];
        int n = shape_nvertices(b->shape), ne = shape_nedges(b->shape);
        const int *cycle = b->shape == SHAPE_TRI ? tri_cycle : quad_cycle;
        for (int64_t c = 0; c < b->count && !status; c++)
            for (int k = 0; k < n && !status; k++) {
                int from = cycle[k], to = cycle[(k + 1) % n];
                fem_idx e = t->cell_edges[bi][c * ne + local_edge(b->shape, from, to)];
                fem_idx v0 = corner_vertex(m, b, c, from), v1 = corner_vertex(m, b, c, to);
                int64_t *slot = &run[2 * e + (v0 != t->edges[2 * e])];
                if (*slot)
                    status = fold_error(m, flipped, *slot - 1, bi, c, v0, v1);
                else
                    *slot = 1 + ((int64_t)bi << 48 | c);
            }
    }
    free(run);
    return status;
}
