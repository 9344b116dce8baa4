/* Mesh topology: unique vertices, edges and faces, and the cell behind every facet element.
 *
 * Entities are numbered in first-touch order over the cells, so numbers that belong together in memory are
 * close together. An edge or face is identified by its sorted vertex ids (its key). Each place where a cell
 * touches an edge or face is an occurrence, numbered block by block, cell by cell, in local order; the
 * occurrences are grouped by their smallest vertex (a counting sort), the equal keys found within each small
 * group (in parallel), and the distinct keys numbered in the order of their first occurrence (a prefix sum).
 * That is the order a hash table filled cell by cell gives, at a fraction of its random memory traffic. */
#define _GNU_SOURCE /* qsort_r */
#include "error.h"
#include "mesh.h"

#include <omp.h>
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

/* The key of n vertex ids: sorted ascending, padded with -1 to four entries. */
static void make_key(const fem_idx *ids, int n, int32_t key[4]) {
    for (int i = 0; i < 4; i++) key[i] = i < n ? ids[i] : -1;
    for (int i = 1; i < n; i++) /* insertion sort of at most four */
        for (int j = i; j > 0 && key[j - 1] > key[j]; j--) {
            int32_t s = key[j];
            key[j] = key[j - 1];
            key[j - 1] = s;
        }
}

/* One occurrence in its group: its number and the key's vertices after the smallest (the group's). */
typedef struct {
    int64_t o;
    int32_t k[3];
    int32_t pad;
} Entry;

/* Every occurrence of one kind of entity (edges, or faces) and what numbering them found. */
typedef struct {
    int faces; /* 0: edges (2 vertices), 1: faces (3 or 4) */
    int64_t n; /* occurrences */
    int64_t block_start[MESH_MAX_BLOCKS + 1];
    int64_t *start; /* [nvertices + 1]: where each smallest vertex's group starts in `group` */
    Entry *group;   /* [n] the occurrences grouped by smallest vertex */
    int64_t *rep;   /* [n] by occurrence: the first occurrence with the same key */
    int32_t *aux;   /* [n] at first occurrences: the count, then the entity number */
    fem_idx *id;    /* [n] entity number of each occurrence */
    int64_t ndistinct;
    int64_t *first; /* [ndistinct] first occurrence of each entity */
    int32_t *count; /* [ndistinct] its occurrences */
} Occurrences;

static void occurrences_free(Occurrences *oc) {
    free(oc->start);
    free(oc->group);
    free(oc->rep);
    free(oc->aux);
    free(oc->id);
    free(oc->first);
    free(oc->count);
    memset(oc, 0, sizeof *oc);
}

/* Where a block's cells keep their corners, and which corners bound each local edge or face. */
typedef struct {
    int nvertices;                   /* corners per cell */
    int lattice[SHAPE_MAX_VERTICES]; /* lattice index of each corner */
    int count;                       /* local edges or faces per cell */
    int n[SHAPE_MAX_EDGES];          /* corners of each */
    int corner[SHAPE_MAX_EDGES][4];  /* corner numbers of each */
} Corners;

static Corners corners_of(const MeshBlock *b, int faces) {
    Corners cs;
    memset(&cs, 0, sizeof cs);
    cs.nvertices = shape_nvertices(b->shape);
    for (int v = 0; v < cs.nvertices; v++) cs.lattice[v] = lattice_vertex(b->shape, b->order, v);
    cs.count = faces ? shape_nfacets(b->shape) : shape_nedges(b->shape);
    for (int l = 0; l < cs.count; l++) {
        cs.n[l] = 2;
        if (faces)
            cs.n[l] = shape_facet_vertices(b->shape, l, cs.corner[l]);
        else
            memcpy(cs.corner[l], shape_edge(b->shape, l), 2 * sizeof(int));
    }
    return cs;
}

/* The vertex ids of cell c's corners. */
static void cell_vertices(const Mesh *m, const MeshBlock *b, const Corners *cs, int64_t c, fem_idx *v) {
    for (int i = 0; i < cs->nvertices; i++)
        v[i] = m->topo.vertex_of_node[b->nodes[c * b->nnodes + cs->lattice[i]]];
}

/* The key of local entity l of a cell with corner vertices v: returns its smallest vertex, the others in k.
 */
static int32_t local_key(const Corners *cs, const fem_idx *v, int l, int32_t k[3]) {
    fem_idx ids[4];
    int32_t key[4];
    for (int i = 0; i < cs->n[l]; i++) ids[i] = v[cs->corner[l][i]];
    make_key(ids, cs->n[l], key);
    memcpy(k, key + 1, 3 * sizeof(int32_t));
    return key[0];
}

/* The block, cell and local number of occurrence o. */
static void decode(const Occurrences *oc, const Mesh *m, int64_t o, int *block, int64_t *cell, int *local) {
    int b = 0;
    while (o >= oc->block_start[b + 1]) b++;
    int k = oc->faces ? shape_nfacets(m->cells[b].shape) : shape_nedges(m->cells[b].shape);
    *block = b;
    *cell = (o - oc->block_start[b]) / k;
    *local = (int)((o - oc->block_start[b]) % k);
}

/* Counts (pass 0) or places (pass 1) every occurrence in the group of its smallest vertex. Places are taken
 * atomically, so a group's order varies; find_equal_keys does not depend on it. */
static void visit_occurrences(const Mesh *m, Occurrences *oc, int64_t *cursor, int pass) {
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        const MeshBlock *b = &m->cells[bi];
        Corners cs = corners_of(b, oc->faces);
        int64_t base = oc->block_start[bi];
#pragma omp parallel for schedule(static) if (b->count > 10000)
        for (int64_t c = 0; c < b->count; c++) {
            fem_idx corner[SHAPE_MAX_VERTICES];
            cell_vertices(m, b, &cs, c, corner);
            for (int l = 0; l < cs.count; l++) {
                int32_t k[3], v = local_key(&cs, corner, l, k);
                int64_t at;
                if (pass == 0) {
#pragma omp atomic
                    cursor[v + 1]++;
                    continue;
                }
#pragma omp atomic capture
                at = cursor[v]++;
                oc->group[at] = (Entry){base + c * cs.count + l, {k[0], k[1], k[2]}, 0};
            }
        }
    }
}

static int group_occurrences(const Mesh *m, Occurrences *oc, int64_t nvertices) {
    oc->n = 0;
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        oc->block_start[bi] = oc->n;
        oc->n += m->cells[bi].count * corners_of(&m->cells[bi], oc->faces).count;
    }
    for (int bi = m->ncell_blocks; bi <= MESH_MAX_BLOCKS; bi++) oc->block_start[bi] = oc->n;
    FEM_ALLOC(oc->start, nvertices + 1, "the mesh topology");
    FEM_ALLOC(oc->group, oc->n, "the mesh topology");
    int64_t *cursor;
    FEM_ALLOC(cursor, nvertices + 1, "the mesh topology");
    visit_occurrences(m, oc, oc->start, 0);
    for (int64_t v = 0; v < nvertices; v++) oc->start[v + 1] += oc->start[v];
    memcpy(cursor, oc->start, sizeof(int64_t) * (size_t)(nvertices + 1));
    visit_occurrences(m, oc, cursor, 1);
    free(cursor);
    return FEM_OK;
}

static int same_key(const Entry *a, const Entry *b) {
    return a->k[0] == b->k[0] && a->k[1] == b->k[1] && a->k[2] == b->k[2];
}

static int by_key_then_order(const void *pa, const void *pb) {
    const Entry *a = pa, *b = pb;
    for (int i = 0; i < 3; i++)
        if (a->k[i] != b->k[i]) return a->k[i] < b->k[i] ? -1 : 1;
    return (a->o > b->o) - (a->o < b->o);
}

/* Within one group of k entries: rep (the first occurrence of each key) and, at first occurrences, the
 * count. A small group compares each entry with the keys seen so far; a large one (a vertex with many cells)
 * is sorted, so that no group costs more than k log k. */
static void find_equal_keys(Occurrences *oc, Entry *g, int64_t k) {
    enum { SMALL = 256 };
    if (k <= SMALL) {
        int seen[SMALL], which[SMALL], nseen = 0; /* seen: the entry of each key with the smallest o */
        int32_t n[SMALL];
        for (int i = 0; i < k; i++) {
            int j = 0;
            while (j < nseen && !same_key(&g[seen[j]], &g[i])) j++;
            if (j == nseen) seen[nseen++] = i, n[j] = 0;
            if (g[i].o < g[seen[j]].o) seen[j] = i;
            which[i] = j;
            n[j]++;
        }
        for (int i = 0; i < k; i++) oc->rep[g[i].o] = g[seen[which[i]]].o;
        for (int j = 0; j < nseen; j++) oc->aux[g[seen[j]].o] = n[j];
        return;
    }
    qsort(g, (size_t)k, sizeof *g, by_key_then_order);
    for (int64_t i = 0, run = 0; i < k; i++) {
        if (i > 0 && !same_key(&g[i - 1], &g[i])) run = i;
        oc->rep[g[i].o] = g[run].o;
        if (i + 1 == k || !same_key(&g[i], &g[i + 1])) oc->aux[g[run].o] = (int32_t)(i - run + 1);
    }
}

/* Entity numbers in order of first occurrence: a prefix sum over the first occurrences, by chunks. */
static int number_entities(Occurrences *oc) {
    int nt = oc->n > 100000 ? omp_get_max_threads() : 1;
    int64_t *base = calloc((size_t)nt + 1, sizeof *base), n = oc->n;
    if (!base) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh topology");
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        int64_t lo = n * t / T, hi = n * (t + 1) / T, firsts = 0;
        for (int64_t o = lo; o < hi; o++) firsts += oc->rep[o] == o;
        base[t + 1] = firsts;
#pragma omp barrier
#pragma omp single
        for (int i = 0; i < T; i++) base[i + 1] += base[i];
        int64_t next = base[t];
        for (int64_t o = lo; o < hi; o++)
            if (oc->rep[o] == o) {
                oc->first[next] = o;
                oc->count[next] = oc->aux[o];
                oc->aux[o] = (int32_t)next++;
            }
#pragma omp barrier
        for (int64_t o = lo; o < hi; o++) oc->id[o] = oc->aux[oc->rep[o]];
    }
    free(base);
    return FEM_OK;
}

/* Numbers the distinct keys of the cells' edges (or faces): id, first and count. */
static int number_keys(const Mesh *m, Occurrences *oc, int64_t nvertices) {
    FEM_TRY(group_occurrences(m, oc, nvertices));
    FEM_ALLOC(oc->rep, oc->n, "the mesh topology");
    FEM_ALLOC(oc->aux, oc->n, "the mesh topology");
    FEM_ALLOC(oc->id, oc->n, "the mesh topology");
#pragma omp parallel for schedule(dynamic, 256) if (oc->n > 100000)
    for (int64_t v = 0; v < nvertices; v++)
        find_equal_keys(oc, &oc->group[oc->start[v]], oc->start[v + 1] - oc->start[v]);
    int64_t distinct = 0;
#pragma omp parallel for reduction(+ : distinct) if (oc->n > 100000)
    for (int64_t o = 0; o < oc->n; o++) distinct += oc->rep[o] == o;
    oc->ndistinct = distinct;
    FEM_ALLOC(oc->first, oc->ndistinct, "the mesh topology");
    FEM_ALLOC(oc->count, oc->ndistinct, "the mesh topology");
    return number_entities(oc);
}

/* The entity whose key is `key`, or -1. */
static fem_idx find_key(const Occurrences *oc, const int32_t key[4]) {
    if (key[0] < 0) return -1;
    Entry want = {0, {key[1], key[2], key[3]}, 0};
    for (int64_t i = oc->start[key[0]]; i < oc->start[key[0] + 1]; i++)
        if (same_key(&oc->group[i], &want)) return oc->id[oc->group[i].o];
    return -1;
}

/* Copies each block's part of oc->id into a per-cell array of the topology. */
static int split_by_block(const Mesh *m, const Occurrences *oc, fem_idx **out) {
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        int64_t n = oc->block_start[bi + 1] - oc->block_start[bi];
        FEM_ALLOC(out[bi], n + 1, "the mesh topology");
        memcpy(out[bi], oc->id + oc->block_start[bi], sizeof(fem_idx) * (size_t)n);
    }
    return FEM_OK;
}

/* The local facet of shape s whose corners are those of local edge e (2D cells: their facets are edges). */
static int facet_of_edge(Shape s, int e) {
    const int *ev = shape_edge(s, e);
    for (int f = 0; f < shape_nfacets(s); f++) {
        int v[4];
        shape_facet_vertices(s, f, v);
        if ((v[0] == ev[0] && v[1] == ev[1]) || (v[0] == ev[1] && v[1] == ev[0])) return f;
    }
    return -1;
}

static const char *facet_group_name(const Mesh *m, int entity) {
    for (int g = 0; g < m->ngroups; g++)
        if (m->groups[g].dim == m->dim - 1 && mesh_group_has_entity(&m->groups[g], entity))
            return m->groups[g].name[0] ? m->groups[g].name : "(unnamed)";
    return NULL;
}

/* The cell face (3D) or edge (2D) that facet element c of block fb is, or -1. */
static fem_idx facet_entity(const Mesh *m, const Occurrences *facets, const MeshBlock *b, int64_t c) {
    int nv = shape_nvertices(b->shape);
    fem_idx v[4];
    for (int i = 0; i < nv; i++) {
        v[i] = m->topo.vertex_of_node[b->nodes[c * b->nnodes + lattice_vertex(b->shape, b->order, i)]];
        if (v[i] < 0) return -1;
    }
    int32_t key[4];
    make_key(v, nv, key);
    return find_key(facets, key);
}

/* Every facet element bounds a cell: where it sits, or an error naming the first one that does not. */
static int match_facets(Mesh *m, const Occurrences *facets) {
    Topology *t = &m->topo;
    for (int fb = 0; fb < m->nfacet_blocks; fb++) {
        const MeshBlock *b = &m->facets[fb];
        FEM_ALLOC(t->facet_cell[fb], b->count + 1, "the mesh topology");
        int64_t bad = b->count;
#pragma omp parallel for schedule(static) reduction(min : bad) if (b->count > 10000)
        for (int64_t c = 0; c < b->count; c++) {
            fem_idx id = facet_entity(m, facets, b, c);
            if (id < 0) {
                bad = c < bad ? c : bad;
                continue;
            }
            int block, local;
            int64_t cell;
            decode(facets, m, facets->first[id], &block, &cell, &local);
            if (!facets->faces) local = facet_of_edge(m->cells[block].shape, local);
            t->facet_cell[fb][c] = (FacetCell){.block = (int8_t)block,
                                               .facet = (int8_t)local,
                                               .shared = facets->count[id] > 1,
                                               .cell = (fem_idx)cell};
        }
        if (bad < b->count) {
            const char *g = facet_group_name(m, b->entity[bad]);
            return fem_fail(FEM_ERR_INPUT,
                            "%s: boundary element %lld (%s%s%s%s) matches no %s of any cell; the mesh's "
                            "boundary elements must be %s of its cells",
                            m->path, (long long)b->tag[bad], b->type->name, g ? " in physical group '" : "",
                            g ? g : "", g ? "'" : "", m->dim == 3 ? "face" : "edge",
                            m->dim == 3 ? "faces" : "edges");
        }
    }
    return FEM_OK;
}

/* Each edge's two vertices, ascending (the key of its first occurrence). */
static int list_edges(Mesh *m, const Occurrences *edges) {
    Topology *t = &m->topo;
    Corners cs[MESH_MAX_BLOCKS];
    for (int b = 0; b < m->ncell_blocks; b++) cs[b] = corners_of(&m->cells[b], 0);
    FEM_ALLOC(t->edges, 2 * t->nedges + 2, "the mesh topology");
#pragma omp parallel for schedule(static) if (t->nedges > 100000)
    for (int64_t e = 0; e < t->nedges; e++) {
        int block, local;
        int64_t cell;
        fem_idx corner[SHAPE_MAX_VERTICES];
        int32_t k[3];
        decode(edges, m, edges->first[e], &block, &cell, &local);
        cell_vertices(m, &m->cells[block], &cs[block], cell, corner);
        t->edges[2 * e] = local_key(&cs[block], corner, local, k);
        t->edges[2 * e + 1] = k[0];
    }
    return FEM_OK;
}

static int build(Mesh *m, Occurrences *edges, Occurrences *faces) {
    Topology *t = &m->topo;
    FEM_TRY(number_vertices(m));
    FEM_TRY(number_keys(m, edges, t->nvertices));
    t->nedges = edges->ndistinct;
    FEM_TRY(split_by_block(m, edges, t->cell_edges));
    FEM_TRY(list_edges(m, edges));
    const Occurrences *facets = edges;
    if (m->dim == 3) {
        occurrences_free(edges); /* its numbers are kept; its working arrays are not needed for faces */
        faces->faces = 1;
        FEM_TRY(number_keys(m, faces, t->nvertices));
        t->nfaces = faces->ndistinct;
        FEM_TRY(split_by_block(m, faces, t->cell_faces));
        facets = faces;
    }
    t->nboundary_facets = 0;
    for (int64_t i = 0; i < facets->ndistinct; i++) t->nboundary_facets += facets->count[i] == 1;
    return match_facets(m, facets);
}

int mesh_build_topology(Mesh *m) {
    Occurrences edges, faces;
    memset(&edges, 0, sizeof edges);
    memset(&faces, 0, sizeof faces);
    int status = build(m, &edges, &faces);
    occurrences_free(&edges);
    occurrences_free(&faces);
    m->has_topology = status == FEM_OK;
    return status;
}
