/* A rank's part of a split mesh as a record (see dist.h, DistPart): made from the global space, moved as
 * bytes, turned into the rank's Dist by dist.c.
 *
 * What every part needs from the global space is computed once (Split): each node's owner and the parts
 * whose cells touch it, which mesh nodes cells of several parts share, and each part's cells and facets in
 * increasing global order. Making a part then costs the part's own size (its cells, their nodes sorted), so
 * rank 0 can make every rank's part in about the time of one pass over the global mesh. */
#include "dist.h"

#include "comm.h"
#include "error.h"
#include "partition.h"

#include <stdlib.h>
#include <string.h>

struct DistSplit {
    const Space *gsp;
    const Mesh *gm;
    const int32_t *part;
    int nranks;
    int32_t *owner;     /* [gsp->nnodes] */
    int64_t *touch_off; /* [gsp->nnodes + 1] */
    int32_t *touch;     /* the parts whose cells touch each node, increasing, without repeats */
    char *shared;       /* [gm->nnodes] 1: a mesh node cells of several parts touch; NULL: no overlap split */
    int64_t *cell_off;  /* [nranks + 1] */
    int64_t *cells;     /* each part's cells (partition numbering), increasing */
    int64_t *facet_off; /* [nranks + 1] */
    int64_t *facets;    /* each part's facets, numbered across the facet blocks, increasing */
    int64_t facet_first[MESH_MAX_BLOCKS + 1];
    /* stamps: mesh_mark[n] (space_mark[n]) is the stamp of the last part that listed mesh (space) node n, so
     * that a part finds its distinct nodes in its own size; -1 before any; each part made takes a new one */
    int32_t *mesh_mark, *space_mark;
    int32_t stamp;
};

void dist_split_destroy(DistSplit *s) {
    if (!s) return;
    free(s->owner), free(s->touch_off), free(s->touch), free(s->shared);
    free(s->cell_off), free(s->cells), free(s->facet_off), free(s->facets);
    free(s->mesh_mark), free(s->space_mark);
    free(s);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* owner[] and the touch lists: every slot of every cell names its node and the cell's part. */
static int split_nodes(DistSplit *s) {
    const Space *gsp = s->gsp;
    int64_t nn = gsp->nnodes, nslots = 0;
    for (int b = 0; b < gsp->ncell_blocks; b++) nslots += gsp->cells[b].count * gsp->cells[b].ndof;
    FEM_ALLOC(s->owner, nn + 1, "the nodes' owners");
    FEM_ALLOC(s->touch_off, nn + 1, "the parts touching each node");
    FEM_ALLOC(s->touch, nslots + 1, "the parts touching each node");
    for (int64_t n = 0; n < nn; n++) s->owner[n] = -1;
    for (int b = 0; b < gsp->ncell_blocks; b++)
        for (int64_t k = 0; k < gsp->cells[b].count * gsp->cells[b].ndof; k++)
            s->touch_off[gsp->cells[b].dofs[k] + 1]++;
    for (int64_t n = 0; n < nn; n++) s->touch_off[n + 1] += s->touch_off[n];
    int64_t *fill = calloc((size_t)nn + 1, sizeof(int64_t));
    if (!fill) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the parts touching each node");
    for (int b = 0; b < gsp->ncell_blocks; b++) {
        const SpaceBlock *sb = &gsp->cells[b];
        int64_t off = partition_cell_offset(s->gm, b);
        for (int64_t c = 0; c < sb->count; c++)
            for (int i = 0; i < sb->ndof; i++) {
                fem_idx n = sb->dofs[c * sb->ndof + i];
                int32_t p = s->part[off + c];
                s->touch[s->touch_off[n] + fill[n]++] = p;
                if (s->owner[n] < 0 || dist_owner_key(n, p) < dist_owner_key(n, s->owner[n])) s->owner[n] = p;
            }
    }
    free(fill);
    /* each node's list sorted and made unique, the lists packed to the front */
    int64_t w = 0;
    for (int64_t n = 0; n < nn; n++) {
        int64_t lo = s->touch_off[n], hi = s->touch_off[n + 1], start = w;
        qsort(&s->touch[lo], (size_t)(hi - lo), sizeof(int32_t), cmp_i32);
        for (int64_t k = lo; k < hi; k++)
            if (k == lo || s->touch[k] != s->touch[k - 1]) s->touch[w++] = s->touch[k];
        s->touch_off[n] = start;
    }
    s->touch_off[nn] = w;
    return FEM_OK;
}

/* shared[]: the mesh nodes that cells of more than one part touch; left NULL when the cells are not to be
 * split into interior and boundary blocks (FEMTO_OVERLAP=0, or no room for twice the blocks). */
static int split_shared(DistSplit *s) {
    const Mesh *gm = s->gm;
    const char *env = getenv("FEMTO_OVERLAP");
    if ((env && strcmp(env, "0") == 0) || 2 * gm->ncell_blocks > MESH_MAX_BLOCKS) return FEM_OK;
    int32_t *first = malloc(sizeof(int32_t) * (size_t)(gm->nnodes + 1));
    FEM_ALLOC(s->shared, gm->nnodes + 1, "the shared mesh nodes");
    if (!first) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's shared nodes");
    for (int64_t n = 0; n < gm->nnodes; n++) first[n] = -1;
    for (int b = 0; b < gm->ncell_blocks; b++) {
        const MeshBlock *mb = &gm->cells[b];
        int64_t off = partition_cell_offset(gm, b);
        for (int64_t k = 0; k < mb->count * mb->nnodes; k++) {
            fem_idx n = mb->nodes[k];
            int32_t p = s->part[off + k / mb->nnodes];
            if (first[n] < 0)
                first[n] = p;
            else if (first[n] != p)
                s->shared[n] = 1;
        }
    }
    free(first);
    return FEM_OK;
}

/* Each part's cells and facets (a facet is the part's whose cell it bounds), by a counting sort. */
static int split_elements(DistSplit *s) {
    const Mesh *gm = s->gm;
    int64_t ncells = partition_ncells(gm);
    for (int b = 0; b < gm->nfacet_blocks; b++)
        s->facet_first[b + 1] = s->facet_first[b] + gm->facets[b].count;
    int64_t nfacets = s->facet_first[gm->nfacet_blocks];
    FEM_ALLOC(s->cell_off, s->nranks + 2, "each rank's cells");
    FEM_ALLOC(s->facet_off, s->nranks + 2, "each rank's facets");
    FEM_ALLOC(s->cells, ncells + 1, "each rank's cells");
    FEM_ALLOC(s->facets, nfacets + 1, "each rank's facets");
    int32_t *fpart = malloc(sizeof(int32_t) * (size_t)(nfacets + 1));
    if (!fpart) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for each rank's facets");
    for (int b = 0; b < gm->nfacet_blocks; b++)
        for (int64_t c = 0; c < gm->facets[b].count; c++) {
            const FacetCell *fc = &gm->topo.facet_cell[b][c];
            fpart[s->facet_first[b] + c] = s->part[partition_cell_offset(gm, fc->block) + fc->cell];
        }
    for (int64_t c = 0; c < ncells; c++) s->cell_off[s->part[c] + 2]++;
    for (int64_t f = 0; f < nfacets; f++) s->facet_off[fpart[f] + 2]++;
    for (int r = 0; r < s->nranks; r++)
        s->cell_off[r + 2] += s->cell_off[r + 1], s->facet_off[r + 2] += s->facet_off[r + 1];
    for (int64_t c = 0; c < ncells; c++) s->cells[s->cell_off[s->part[c] + 1]++] = c;
    for (int64_t f = 0; f < nfacets; f++) s->facets[s->facet_off[fpart[f] + 1]++] = f;
    free(fpart);
    return FEM_OK;
}

int dist_split_create(const Space *gsp, const int32_t *part, int nranks, DistSplit **out) {
    *out = NULL;
    DistSplit *s = fem_calloc(1, sizeof *s, "the mesh's split");
    if (!s) return FEM_ERR_INTERNAL;
    s->gsp = gsp, s->gm = gsp->mesh, s->part = part, s->nranks = nranks;
    s->mesh_mark = malloc(sizeof(int32_t) * (size_t)(s->gm->nnodes + 1));
    s->space_mark = malloc(sizeof(int32_t) * (size_t)(gsp->nnodes + 1));
    int status = s->mesh_mark && s->space_mark
                     ? split_nodes(s)
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the split");
    for (int64_t n = 0; !status && n < s->gm->nnodes; n++) s->mesh_mark[n] = -1;
    for (int64_t n = 0; !status && n < gsp->nnodes; n++) s->space_mark[n] = -1;
    if (!status) status = split_shared(s);
    if (!status) status = split_elements(s);
    if (status) return dist_split_destroy(s), status;
    *out = s;
    return FEM_OK;
}

/* ------------------------------------------------------------------------------------------ making a part */

/* The local block of global block b's `count` elements list[] (indices in b), node numbers still global. */
static int copy_block(const MeshBlock *gb, const int64_t *list, int64_t count, MeshBlock *lb,
                      int64_t **which) {
    *lb = *gb;
    lb->count = count;
    lb->nodes = NULL, lb->entity = NULL, lb->tag = NULL;
    FEM_ALLOC(lb->nodes, count * gb->nnodes + 1, "a rank's cells");
    FEM_ALLOC(lb->entity, count + 1, "a rank's cells");
    FEM_ALLOC(lb->tag, count + 1, "a rank's cells");
    FEM_ALLOC(*which, count + 1, "a rank's cells");
    for (int64_t k = 0; k < count; k++) {
        int64_t c = list[k];
        memcpy(&lb->nodes[k * gb->nnodes], &gb->nodes[c * gb->nnodes], sizeof(fem_idx) * (size_t)gb->nnodes);
        lb->entity[k] = gb->entity[c];
        lb->tag[k] = gb->tag[c];
        (*which)[k] = c;
    }
    return FEM_OK;
}

/* 1 when a cell of block b touches a mesh node of several parts. */
static int on_boundary(const DistSplit *s, const MeshBlock *gb, int64_t c) {
    for (int i = 0; i < gb->nnodes; i++)
        if (s->shared[gb->nodes[c * gb->nnodes + i]]) return 1;
    return 0;
}

/* The part's cells of every global block (with shared[], each block's interior cells and then its boundary
 * cells as two local blocks), then its facets. */
static int part_blocks(const DistSplit *s, int r, DistPart *p) {
    const Mesh *gm = s->gm;
    int64_t ncells = s->cell_off[r + 1] - s->cell_off[r];
    int64_t *list = malloc(sizeof(int64_t) * (size_t)(ncells + s->facet_off[r + 1] - s->facet_off[r] + 1));
    if (!list) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's cells");
    const int64_t *mine = &s->cells[s->cell_off[r]];
    int status = FEM_OK;
    int64_t k = 0;
    for (int b = 0; b < gm->ncell_blocks && !status; b++) {
        const MeshBlock *gb = &gm->cells[b];
        int64_t off = partition_cell_offset(gm, b), start = k;
        while (k < ncells && mine[k] < off + gb->count) k++;
        for (int pass = s->shared ? 0 : 2; pass < (s->shared ? 2 : 3) && !status;
             pass++) { /* 0 interior, 1 boundary, 2 all */
            int64_t n = 0;
            for (int64_t i = start; i < k; i++)
                if (pass == 2 || on_boundary(s, gb, mine[i] - off) == pass) list[n++] = mine[i] - off;
            if (n == 0) continue;
            int lb = p->mesh.ncell_blocks++;
            p->cell_block[lb] = b;
            p->cell_boundary[lb] = (unsigned char)(pass != 0);
            status = copy_block(gb, list, n, &p->mesh.cells[lb], &p->cell_global[lb]);
        }
    }
    const int64_t *facets = &s->facets[s->facet_off[r]];
    int64_t nf = s->facet_off[r + 1] - s->facet_off[r];
    k = 0;
    for (int b = 0; b < gm->nfacet_blocks && !status; b++) {
        int64_t n = 0;
        for (; k < nf && facets[k] < s->facet_first[b + 1]; k++) list[n++] = facets[k] - s->facet_first[b];
        if (n == 0) continue;
        int lb = p->mesh.nfacet_blocks++;
        p->facet_block[lb] = b;
        status = copy_block(&gm->facets[b], list, n, &p->mesh.facets[lb], &p->facet_global[lb]);
    }
    free(list);
    return status;
}

int64_t dist_find(const int64_t *a, int64_t n, int64_t v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo] == v ? lo : -1;
}

/* The distinct values of v[0 .. n) in increasing order, in place, and their count: the first time a part
 * meets a value it stamps mark[value] with its stamp r (mark: the split's, an older stamp elsewhere), so only
 * the distinct ones are sorted. */
static int64_t sort_unique(int64_t *v, int64_t n, int32_t *mark, int32_t r) {
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (mark[v[i]] != r) mark[v[i]] = r, v[u++] = v[i];
    qsort(v, (size_t)u, sizeof(int64_t), cmp_i64);
    return u;
}

/* The mesh nodes the local elements use, renumbered in increasing global order (so that the local space
 * orients every shared entity as the global one does), and the physical groups. */
static int part_mesh_nodes(DistPart *p, DistSplit *s) {
    const Mesh *gm = s->gm;
    Mesh *m = &p->mesh;
    MeshBlock *blocks[2 * MESH_MAX_BLOCKS];
    int nb = 0;
    int64_t total = 0;
    for (int b = 0; b < m->ncell_blocks; b++) blocks[nb++] = &m->cells[b];
    for (int b = 0; b < m->nfacet_blocks; b++) blocks[nb++] = &m->facets[b];
    for (int i = 0; i < nb; i++) total += blocks[i]->count * blocks[i]->nnodes;
    int64_t *nodes = malloc(sizeof(int64_t) * (size_t)(total + 1));
    if (!nodes) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's nodes");
    int64_t k = 0;
    for (int i = 0; i < nb; i++)
        for (int64_t j = 0; j < blocks[i]->count * blocks[i]->nnodes; j++) nodes[k++] = blocks[i]->nodes[j];
    m->nnodes = sort_unique(nodes, total, s->mesh_mark, s->stamp);
    m->x = malloc(sizeof(double) * 3 * (size_t)(m->nnodes + 1));
    m->node_tag = malloc(sizeof(int64_t) * (size_t)(m->nnodes + 1));
    m->groups = calloc((size_t)gm->ngroups + 1, sizeof(PhysicalGroup));
    int status = m->x && m->node_tag && m->groups
                     ? FEM_OK
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's mesh");
    for (int64_t n = 0; n < m->nnodes && !status; n++) {
        memcpy(&m->x[3 * n], &gm->x[3 * nodes[n]], 3 * sizeof(double));
        m->node_tag[n] = gm->node_tag[nodes[n]];
    }
    for (int i = 0; i < nb && !status; i++)
        for (int64_t j = 0; j < blocks[i]->count * blocks[i]->nnodes; j++)
            blocks[i]->nodes[j] = (fem_idx)dist_find(nodes, m->nnodes, blocks[i]->nodes[j]);
    free(nodes);
    for (int g = 0; g < gm->ngroups && !status; g++) {
        m->groups[g] = gm->groups[g];
        m->groups[g].nelements = 0;
        m->groups[g].entities = malloc(sizeof(int) * (size_t)(gm->groups[g].nentities + 1));
        if (!m->groups[g].entities) {
            m->groups[g].nentities = 0;
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's groups");
        } else {
            memcpy(m->groups[g].entities, gm->groups[g].entities,
                   sizeof(int) * (size_t)gm->groups[g].nentities);
        }
        m->ngroups = g + 1;
    }
    return status;
}

/* The global node of every slot of the part's cells, the part's nodes with their owners, and the (rank,
 * node) pairs of its nodes that cells of other ranks touch. */
static int part_nodes(DistSplit *s, int r, DistPart *p) {
    const Space *gsp = s->gsp;
    int64_t total = 0;
    for (int lb = 0; lb < p->mesh.ncell_blocks; lb++) {
        const SpaceBlock *gb = &gsp->cells[p->cell_block[lb]];
        int64_t n = p->mesh.cells[lb].count;
        p->ndof[lb] = gb->ndof;
        FEM_ALLOC(p->slot_global[lb], n * gb->ndof + 1, "a rank's nodes");
        for (int64_t c = 0; c < n; c++)
            for (int i = 0; i < gb->ndof; i++)
                p->slot_global[lb][c * gb->ndof + i] = gb->dofs[p->cell_global[lb][c] * gb->ndof + i];
        total += n * gb->ndof;
    }
    FEM_ALLOC(p->node, total + 1, "a rank's nodes");
    int64_t k = 0;
    for (int lb = 0; lb < p->mesh.ncell_blocks; lb++)
        for (int64_t j = 0; j < p->mesh.cells[lb].count * p->ndof[lb]; j++)
            p->node[k++] = p->slot_global[lb][j];
    p->nnodes = sort_unique(p->node, total, s->space_mark, s->stamp);
    FEM_ALLOC(p->owner, p->nnodes + 1, "a rank's nodes");
    int64_t npairs = 0;
    for (int64_t i = 0; i < p->nnodes; i++) {
        int64_t n = p->node[i];
        p->owner[i] = s->owner[n];
        npairs += s->touch_off[n + 1] - s->touch_off[n] - 1; /* this rank is one of them */
    }
    FEM_ALLOC(p->pair_rank, npairs + 1, "a rank's halo");
    FEM_ALLOC(p->pair_node, npairs + 1, "a rank's halo");
    /* by rank, then node: a counting sort over the ranks of the node-ordered pairs keeps the node order */
    int64_t *count = calloc((size_t)s->nranks + 1, sizeof(int64_t));
    if (!count) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's halo");
    for (int64_t i = 0; i < p->nnodes; i++)
        for (int64_t k = s->touch_off[p->node[i]]; k < s->touch_off[p->node[i] + 1]; k++)
            if (s->touch[k] != r) count[s->touch[k] + 1]++;
    for (int q = 0; q < s->nranks; q++) count[q + 1] += count[q];
    for (int64_t i = 0; i < p->nnodes; i++)
        for (int64_t k = s->touch_off[p->node[i]]; k < s->touch_off[p->node[i] + 1]; k++)
            if (s->touch[k] != r) {
                int64_t at = count[s->touch[k]]++;
                p->pair_rank[at] = s->touch[k], p->pair_node[at] = p->node[i];
            }
    free(count);
    p->npairs = npairs;
    return FEM_OK;
}

void dist_part_destroy(DistPart *p) {
    mesh_destroy(&p->mesh);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++)
        free(p->cell_global[b]), free(p->facet_global[b]), free(p->slot_global[b]);
    free(p->node), free(p->owner), free(p->pair_rank), free(p->pair_node);
    memset(p, 0, sizeof *p);
}

int dist_part_make(DistSplit *s, int r, DistPart *p) {
    memset(p, 0, sizeof *p);
    s->stamp++;
    p->rank = r, p->nranks = s->nranks, p->order = s->gsp->order, p->ncomp = s->gsp->ncomp;
    p->nglobal_nodes = s->gsp->nnodes;
    memcpy(p->mesh.path, s->gm->path, sizeof p->mesh.path);
    p->mesh.dim = s->gm->dim;
    int status = part_blocks(s, r, p);
    if (!status) status = part_mesh_nodes(p, s);
    if (!status) status = part_nodes(s, r, p);
    if (status) dist_part_destroy(p);
    return status;
}

/* ------------------------------------------------------------------------------------------- as bytes */

typedef struct {
    char *buf;
    int64_t len, cap, at;
    int failed;
} Bytes;

static void put(Bytes *b, const void *v, int64_t n) {
    if (b->failed) return;
    if (b->len + n > b->cap) {
        int64_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        char *q = realloc(b->buf, (size_t)cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->buf = q, b->cap = cap;
    }
    if (n) memcpy(b->buf + b->len, v, (size_t)n);
    b->len += n;
}

/* n bytes into v (allocated when *v is a pointer to fill: see take_array); fails past the end. */
static void get(Bytes *b, void *v, int64_t n) {
    if (b->failed || n < 0 || b->at + n > b->len) {
        b->failed = 1;
        return;
    }
    if (n) memcpy(v, b->buf + b->at, (size_t)n);
    b->at += n;
}

static void *take_array(Bytes *b, int64_t count, size_t size) {
    if (b->failed || count < 0 || b->at + count * (int64_t)size > b->len) {
        b->failed = 1;
        return NULL;
    }
    void *v = malloc(size * (size_t)count + 1);
    if (!v) {
        b->failed = 1;
        return NULL;
    }
    get(b, v, count * (int64_t)size);
    return v;
}

#define PUT(b, x) put(b, &(x), (int64_t)sizeof(x))
#define GET(b, x) get(b, &(x), (int64_t)sizeof(x))

static void put_block(Bytes *b, const MeshBlock *mb) {
    int gmsh = mb->type ? mb->type->gmsh_type : -1;
    PUT(b, gmsh), PUT(b, mb->shape), PUT(b, mb->order), PUT(b, mb->nnodes), PUT(b, mb->count);
    put(b, mb->nodes, (int64_t)sizeof(fem_idx) * mb->count * mb->nnodes);
    put(b, mb->entity, (int64_t)sizeof(int32_t) * mb->count);
    put(b, mb->tag, (int64_t)sizeof(int64_t) * mb->count);
}

static void get_block(Bytes *b, MeshBlock *mb) {
    int gmsh = -1;
    GET(b, gmsh), GET(b, mb->shape), GET(b, mb->order), GET(b, mb->nnodes), GET(b, mb->count);
    mb->type = gmsh >= 0 ? mesh_gmsh_type(gmsh) : NULL;
    if (b->failed || mb->nnodes < 0 || mb->count < 0) {
        b->failed = 1, mb->count = 0;
        return;
    }
    mb->nodes = take_array(b, mb->count * mb->nnodes, sizeof(fem_idx));
    mb->entity = take_array(b, mb->count, sizeof(int32_t));
    mb->tag = take_array(b, mb->count, sizeof(int64_t));
}

int dist_part_pack(const DistPart *p, char **buf, int64_t *len) {
    Bytes b = {0};
    const Mesh *m = &p->mesh;
    PUT(&b, p->rank), PUT(&b, p->nranks), PUT(&b, p->order), PUT(&b, p->ncomp), PUT(&b, p->nglobal_nodes);
    put(&b, m->path, sizeof m->path);
    PUT(&b, m->dim), PUT(&b, m->nnodes), PUT(&b, m->ncell_blocks), PUT(&b, m->nfacet_blocks),
        PUT(&b, m->ngroups);
    put(&b, m->x, (int64_t)sizeof(double) * 3 * m->nnodes);
    put(&b, m->node_tag, (int64_t)sizeof(int64_t) * m->nnodes);
    for (int lb = 0; lb < m->ncell_blocks; lb++) {
        put_block(&b, &m->cells[lb]);
        PUT(&b, p->cell_block[lb]), PUT(&b, p->cell_boundary[lb]), PUT(&b, p->ndof[lb]);
        put(&b, p->cell_global[lb], (int64_t)sizeof(int64_t) * m->cells[lb].count);
        put(&b, p->slot_global[lb], (int64_t)sizeof(int64_t) * m->cells[lb].count * p->ndof[lb]);
    }
    for (int lb = 0; lb < m->nfacet_blocks; lb++) {
        put_block(&b, &m->facets[lb]);
        PUT(&b, p->facet_block[lb]);
        put(&b, p->facet_global[lb], (int64_t)sizeof(int64_t) * m->facets[lb].count);
    }
    for (int g = 0; g < m->ngroups; g++) {
        const PhysicalGroup *pg = &m->groups[g];
        PUT(&b, pg->dim), PUT(&b, pg->tag), put(&b, pg->name, sizeof pg->name), PUT(&b, pg->nentities);
        put(&b, pg->entities, (int64_t)sizeof(int) * pg->nentities);
    }
    PUT(&b, p->nnodes), PUT(&b, p->npairs);
    put(&b, p->node, (int64_t)sizeof(int64_t) * p->nnodes);
    put(&b, p->owner, (int64_t)sizeof(int32_t) * p->nnodes);
    put(&b, p->pair_rank, (int64_t)sizeof(int32_t) * p->npairs);
    put(&b, p->pair_node, (int64_t)sizeof(int64_t) * p->npairs);
    if (b.failed) {
        free(b.buf);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory packing MPI rank %d's part of the mesh",
                        p->rank);
    }
    *buf = b.buf, *len = b.len;
    return FEM_OK;
}

int dist_part_unpack(const char *buf, int64_t len, DistPart *p) {
    memset(p, 0, sizeof *p);
    Bytes b = {.buf = (char *)buf, .len = len};
    Mesh *m = &p->mesh;
    int ncell = 0, nfacet = 0, ngroups = 0;
    GET(&b, p->rank), GET(&b, p->nranks), GET(&b, p->order), GET(&b, p->ncomp), GET(&b, p->nglobal_nodes);
    get(&b, m->path, sizeof m->path);
    m->path[sizeof m->path - 1] = 0;
    GET(&b, m->dim), GET(&b, m->nnodes), GET(&b, ncell), GET(&b, nfacet), GET(&b, ngroups);
    if (ncell < 0 || ncell > MESH_MAX_BLOCKS || nfacet < 0 || nfacet > MESH_MAX_BLOCKS || ngroups < 0)
        b.failed = 1;
    m->x = take_array(&b, 3 * m->nnodes, sizeof(double));
    m->node_tag = take_array(&b, m->nnodes, sizeof(int64_t));
    for (int lb = 0; lb < ncell && !b.failed; lb++) {
        m->ncell_blocks = lb + 1;
        get_block(&b, &m->cells[lb]);
        GET(&b, p->cell_block[lb]), GET(&b, p->cell_boundary[lb]), GET(&b, p->ndof[lb]);
        p->cell_global[lb] = take_array(&b, m->cells[lb].count, sizeof(int64_t));
        p->slot_global[lb] = take_array(&b, m->cells[lb].count * p->ndof[lb], sizeof(int64_t));
    }
    for (int lb = 0; lb < nfacet && !b.failed; lb++) {
        m->nfacet_blocks = lb + 1;
        get_block(&b, &m->facets[lb]);
        GET(&b, p->facet_block[lb]);
        p->facet_global[lb] = take_array(&b, m->facets[lb].count, sizeof(int64_t));
    }
    if (!b.failed) m->groups = calloc((size_t)ngroups + 1, sizeof(PhysicalGroup));
    if (!b.failed && !m->groups) b.failed = 1;
    for (int g = 0; g < ngroups && !b.failed; g++) {
        PhysicalGroup *pg = &m->groups[g];
        m->ngroups = g + 1;
        GET(&b, pg->dim), GET(&b, pg->tag), get(&b, pg->name, sizeof pg->name), GET(&b, pg->nentities);
        pg->name[sizeof pg->name - 1] = 0;
        pg->entities = take_array(&b, pg->nentities, sizeof(int));
        if (!pg->entities) pg->nentities = 0;
    }
    GET(&b, p->nnodes), GET(&b, p->npairs);
    p->node = take_array(&b, p->nnodes, sizeof(int64_t));
    p->owner = take_array(&b, p->nnodes, sizeof(int32_t));
    p->pair_rank = take_array(&b, p->npairs, sizeof(int32_t));
    p->pair_node = take_array(&b, p->npairs, sizeof(int64_t));
    if (!b.failed && b.at == len) return FEM_OK;
    dist_part_destroy(p);
    return fem_fail(FEM_ERR_INTERNAL,
                    "a part of the mesh received from MPI rank 0 is damaged or too large for "
                    "this rank's memory (%lld bytes)",
                    (long long)len);
}

/* ------------------------------------------------------------------------------ rank 0 sends the parts */

/* Rank 0: every rank's part packed into one buffer, rank r's at off[r] .. off[r + 1]. */
/* Rank 0: every other rank's part made and sent to it in turn (a count, -1 after a failure, then the
 * record), so that rank 0 holds one record at a time, not all of them; its own record is kept in *mine. */
static int make_and_send(const Space *gsp, const int32_t *part, int n, char **mine, int64_t *len) {
    DistSplit *s = NULL;
    int status = dist_split_create(gsp, part, n, &s);
    for (int k = 1; k <= n; k++) {
        int r = k % n; /* the others first: they build theirs while rank 0 makes the next */
        char *buf = NULL;
        int64_t blen = -1;
        if (!status) {
            DistPart p;
            status = dist_part_make(s, r, &p); /* (p is zeroed first: destroyed whatever happened) */
            if (!status) status = dist_part_pack(&p, &buf, &blen);
            dist_part_destroy(&p);
            if (status) free(buf), buf = NULL, blen = -1;
        }
        if (r == 0) {
            *mine = buf, *len = blen;
            continue;
        }
        int sent =
            comm_send_bytes(&blen, sizeof blen, r); /* every rank waits for its count, even after a failure */
        if (!sent && blen >= 0) sent = comm_send_bytes(buf, blen, r);
        if (!status) status = sent;
        free(buf);
    }
    dist_split_destroy(s);
    return status;
}

/* Another rank: its part's record from rank 0. */
static int receive_part(char **mine, int64_t *len) {
    FEM_TRY(comm_recv_bytes(len, sizeof *len, 0));
    if (*len < 0) return fem_fail(FEM_ERR_INTERNAL, "MPI rank 0 could not make this rank's part");
    if (!(*mine = malloc((size_t)*len + 1)))
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for this rank's part");
    return comm_recv_bytes(*mine, *len, 0);
}

int dist_scatter(Dist *d, const Space *gsp, const int32_t *part) {
    memset(d, 0, sizeof *d);
    char *mine = NULL;
    int64_t len = 0;
    int status =
        comm_rank() == 0 ? make_and_send(gsp, part, comm_size(), &mine, &len) : receive_part(&mine, &len);
    status = comm_agree(status); /* rank 0's sentence, when it failed */
    DistPart p;
    int built = status;
    if (!status) built = dist_part_unpack(mine, len, &p);
    free(mine);
    if (!status && !built) {
        built = dist_create_part(d, &p);
        dist_part_destroy(&p);
    }
    if (status) return status;             /* every rank already agreed on it */
    status = comm_agree(built);            /* a rank without cells: every rank says so */
    if (status && !built) dist_destroy(d); /* this rank's part was whole */
    return status;
}
