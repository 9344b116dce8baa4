/* Mesh topology: unique vertices, edges and faces, and the cell behind every facet element.
 *
 * Entities are numbered in first-touch order over the cells, so numbers that belong together in memory are
 * close together. An edge or face is identified by its sorted vertex ids (keytable). */
#include "keytable.h"
#include "mesh.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int number_vertices(Mesh *m) {
    Topology *t = &m->topo;
    FEM_ALLOC(t->vertex_of_node, m->nnodes, "vertex numbers");
    for (int64_t n = 0; n < m->nnodes; n++) t->vertex_of_node[n] = -1;
    t->nvertices = 0;
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        const MeshBlock *b = &m->cells[bi];
        int nv = shape_nvertices(b->shape), corner[SHAPE_MAX_VERTICES];
        for (int v = 0; v < nv; v++) corner[v] = lattice_vertex(b->shape, b->order, v);
        for (int64_t c = 0; c < b->count; c++)
            for (int v = 0; v < nv; v++) {
                fem_idx node = b->nodes[c * b->nnodes + corner[v]];
                if (t->vertex_of_node[node] < 0) t->vertex_of_node[node] = (fem_idx)t->nvertices++;
            }
    }
    return FEM_OK;
}

/* Vertex ids of the corners `local` (cell corner numbers) of element c of block b. */
static void corner_vertices(const Mesh *m, const MeshBlock *b, int64_t c, const int *local, int n,
                            fem_idx *out) {
    for (int i = 0; i < n; i++) {
        fem_idx node = b->nodes[c * b->nnodes + lattice_vertex(b->shape, b->order, local[i])];
        out[i] = m->topo.vertex_of_node[node];
    }
}

static const char *facet_group_name(const Mesh *m, int entity) {
    for (int g = 0; g < m->ngroups; g++)
        if (m->groups[g].dim == m->dim - 1 && mesh_group_has_entity(&m->groups[g], entity))
            return m->groups[g].name[0] ? m->groups[g].name : "(unnamed)";
    return NULL;
}

int mesh_build_topology(Mesh *m) {
    Topology *t = &m->topo;
    FEM_TRY(number_vertices(m));
    int64_t ncells = 0;
    for (int bi = 0; bi < m->ncell_blocks; bi++) ncells += m->cells[bi].count;

    /* edges of every cell; in 2D these are also the facets */
    KeyTable edges, faces;
    FEM_TRY(keytable_init(&edges, 2 * ncells + 16));
    int status = keytable_init(&faces, m->dim == 3 ? 3 * ncells + 16 : 16);
    if (status) {
        keytable_free(&edges);
        return status;
    }
    /* per facet entity: number of cells and the first one */
    int64_t facet_cap = 0, nfacet_entities = 0;
    int32_t *facet_count = NULL;
    FacetCell *facet_first = NULL;

    for (int bi = 0; bi < m->ncell_blocks && !status; bi++) {
        const MeshBlock *b = &m->cells[bi];
        int ne = shape_nedges(b->shape), nf = shape_nfacets(b->shape);
        t->cell_edges[bi] = malloc(sizeof(fem_idx) * (b->count * ne + 1));
        t->cell_faces[bi] = m->dim == 3 ? malloc(sizeof(fem_idx) * (b->count * nf + 1)) : NULL;
        if (!t->cell_edges[bi] || (m->dim == 3 && !t->cell_faces[bi])) {
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh topology");
            break;
        }
        for (int64_t c = 0; c < b->count && !status; c++) {
            for (int e = 0; e < ne && !status; e++) {
                fem_idx v[2];
                int32_t key[4];
                corner_vertices(m, b, c, shape_edge(b->shape, e), 2, v);
                keytable_make_key(v, 2, key);
                int added;
                status = keytable_get_or_add(&edges, key, (fem_idx)edges.count,
                                             &t->cell_edges[bi][c * ne + e], &added);
            }
            for (int f = 0; f < nf && !status; f++) {
                int local[4], nc = shape_facet_vertices(b->shape, f, local);
                fem_idx v[4], id;
                int32_t key[4];
                int added;
                (void)added;
                corner_vertices(m, b, c, local, nc, v);
                keytable_make_key(v, nc, key);
                KeyTable *table = m->dim == 3 ? &faces : &edges;
                status = keytable_get_or_add(table, key, (fem_idx)table->count, &id, &added);
                if (status) break;
                if (m->dim == 3) t->cell_faces[bi][c * nf + f] = id;
                if (id >= facet_cap) {
                    int64_t cap = facet_cap ? 2 * facet_cap : 1024;
                    while (cap <= id) cap *= 2;
                    int32_t *cnt = realloc(facet_count, sizeof(int32_t) * cap);
                    FacetCell *first = realloc(facet_first, sizeof(FacetCell) * cap);
                    if (cnt) facet_count = cnt;
                    if (first) facet_first = first;
                    if (!cnt || !first) {
                        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh topology");
                        break;
                    }
                    memset(facet_count + facet_cap, 0, sizeof(int32_t) * (cap - facet_cap));
                    facet_cap = cap;
                }
                if (facet_count[id] == 0)
                    facet_first[id] =
                        (FacetCell){.block = (int8_t)bi, .facet = (int8_t)f, .cell = (fem_idx)c};
                facet_count[id]++;
            }
        }
    }
    t->nedges = edges.count;
    t->nfaces = m->dim == 3 ? faces.count : 0;
    t->nboundary_facets = 0;
    nfacet_entities = m->dim == 3 ? faces.count : edges.count;
    for (int64_t i = 0; i < nfacet_entities && i < facet_cap; i++) t->nboundary_facets += facet_count[i] == 1;

    /* edge vertex list, from the table */
    if (!status) {
        t->edges = malloc(sizeof(fem_idx) * 2 * (t->nedges + 1));
        if (!t->edges) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh topology");
        for (int64_t s = 0; !status && s < edges.cap; s++)
            if (edges.keys[4 * s] != -1) {
                t->edges[2 * edges.vals[s]] = edges.keys[4 * s];
                t->edges[2 * edges.vals[s] + 1] = edges.keys[4 * s + 1];
            }
    }

    /* every facet element bounds a cell */
    for (int fb = 0; fb < m->nfacet_blocks && !status; fb++) {
        const MeshBlock *b = &m->facets[fb];
        int nv = shape_nvertices(b->shape);
        t->facet_cell[fb] = malloc(sizeof(FacetCell) * (b->count + 1));
        if (!t->facet_cell[fb]) {
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh topology");
            break;
        }
        for (int64_t c = 0; c < b->count; c++) {
            fem_idx v[4] = {-1, -1, -1, -1}, id = -1;
            int ok = 1;
            for (int i = 0; i < nv; i++) {
                v[i] = t->vertex_of_node[b->nodes[c * b->nnodes + lattice_vertex(b->shape, b->order, i)]];
                ok &= v[i] >= 0;
            }
            if (ok) {
                int32_t key[4];
                keytable_make_key(v, nv, key);
                id = keytable_find(m->dim == 3 ? &faces : &edges, key);
            }
            if (id < 0 || id >= facet_cap) {
                const char *g = facet_group_name(m, b->entity[c]);
                status = fem_fail(
                    FEM_ERR_INPUT,
                    "%s: boundary element %lld (%s%s%s%s) matches no %s of any cell; the mesh's "
                    "boundary elements must be %s of its cells",
                    m->path, (long long)b->tag[c], b->type->name, g ? " in physical group '" : "", g ? g : "",
                    g ? "'" : "", m->dim == 3 ? "face" : "edge", m->dim == 3 ? "faces" : "edges");
                break;
            }
            t->facet_cell[fb][c] = facet_first[id];
            t->facet_cell[fb][c].shared = facet_count[id] > 1;
        }
    }
    free(facet_count);
    free(facet_first);
    keytable_free(&edges);
    keytable_free(&faces);
    m->has_topology = status == FEM_OK;
    return status;
}
