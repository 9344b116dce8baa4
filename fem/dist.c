/* A rank's part of a split mesh and space (see dist.h). */
#include "dist.h"

#include "comm.h"
#include "error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t dist_owner_key(int64_t node, int32_t part) {
    /* splitmix64's finaliser of (node, part): every part touching a node is equally likely to come first */
    uint64_t z = (uint64_t)node * 0x9e3779b97f4a7c15u + (uint64_t)part * 0xd1b54a32d192ed03u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (z ^ (z >> 31)) ^ (uint64_t)part; /* distinct parts: distinct keys */
}

typedef struct {
    int64_t key, global; /* key: -1 for an owned node, else its owner (or a neighbour rank) */
    int32_t local;
} NodeKey;

static int cmp_node_key(const void *a, const void *b) {
    const NodeKey *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->global > y->global) - (x->global < y->global);
}

/* Owned nodes first, then ghosts by owner; node_global and owner[] (each local node's owner) follow; the
 * receive lists fall out in order. */
static int number_owned_first(Dist *d, int32_t *owner) {
    int64_t n = d->space.nnodes, nowned = 0;
    NodeKey *keys = malloc(sizeof(NodeKey) * (size_t)(n + 1));
    fem_idx *new_of_old = malloc(sizeof(fem_idx) * (size_t)(n + 1));
    if (!keys || !new_of_old) {
        free(keys);
        free(new_of_old);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory numbering a rank's nodes");
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t o = owner[i];
        keys[i] = (NodeKey){.key = o == d->rank ? -1 : o, .global = d->node_global[i], .local = (int32_t)i};
        nowned += o == d->rank;
    }
    qsort(keys, (size_t)n, sizeof(NodeKey), cmp_node_key);
    for (int64_t i = 0; i < n; i++) {
        new_of_old[keys[i].local] = (fem_idx)i, d->node_global[i] = keys[i].global;
        owner[i] = keys[i].key < 0 ? d->rank : (int32_t)keys[i].key;
    }
    int status = space_renumber(&d->space, new_of_old, nowned);
    free(new_of_old);
    free(keys);
    return status;
}

/* Dist.share from the shared pairs (sorted by rank): one list per rank, in increasing global number. */
static int build_share(Dist *d, const NodeKey *pairs, int64_t npairs) {
    for (int64_t i = 0; i < npairs; i++) d->nshare += i == 0 || pairs[i].key != pairs[i - 1].key;
    FEM_ALLOC(d->share_nbr, d->nshare, "a rank's shared nodes");
    FEM_ALLOC(d->share_off, d->nshare + 1, "a rank's shared nodes");
    FEM_ALLOC(d->share, npairs, "a rank's shared nodes");
    d->share_off[0] = 0;
    for (int64_t i = 0, k = -1; i < npairs; i++) {
        if (i == 0 || pairs[i].key != pairs[i - 1].key) d->share_nbr[++k] = (int)pairs[i].key;
        d->share[i] = pairs[i].local;
        d->share_off[k + 1] = i + 1;
    }
    return FEM_OK;
}

/* The neighbours (every rank this one sends to or receives from) and both lists per neighbour. */
static int build_halo(Dist *d, const NodeKey *pairs, int64_t npairs, const int32_t *owner) {
    int64_t nghost = d->space.nnodes - d->space.nnodes_owned;
    char *is_nbr = calloc((size_t)d->nranks, 1);
    if (!is_nbr) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's halo");
    for (int64_t i = 0; i < npairs; i++) is_nbr[pairs[i].key] = 1;
    for (int64_t i = d->space.nnodes_owned; i < d->space.nnodes; i++) is_nbr[owner[i]] = 1;
    for (int r = 0; r < d->nranks; r++) d->nnbr += is_nbr[r];
    FEM_ALLOC(d->nbr, d->nnbr, "a rank's halo");
    FEM_ALLOC(d->send_off, d->nnbr + 1, "a rank's halo");
    FEM_ALLOC(d->recv_off, d->nnbr + 1, "a rank's halo");
    FEM_ALLOC(d->send, npairs, "a rank's halo");
    FEM_ALLOC(d->recv, nghost, "a rank's halo");
    int k = 0;
    int64_t s = 0, g = d->space.nnodes_owned;
    for (int r = 0; r < d->nranks; r++) {
        if (!is_nbr[r]) continue;
        d->nbr[k] = r;
        for (; s < npairs && pairs[s].key == r; s++) d->send[s] = pairs[s].local;
        for (; g < d->space.nnodes && owner[g] == r; g++) d->recv[g - d->space.nnodes_owned] = (int32_t)g;
        d->send_off[k + 1] = s;
        d->recv_off[k + 1] = g - d->space.nnodes_owned;
        k++;
    }
    free(is_nbr);
    return FEM_OK;
}

static int cmp_global(const void *a, const void *b) {
    const NodeKey *x = a, *y = b;
    return (x->global > y->global) - (x->global < y->global);
}

/* The halo and the shared lists from the part's (rank, global node) pairs: which owned nodes each neighbour
 * ghosts, whose ghosts this rank holds, and which nodes it has in common with each other rank. */
static int halo_lists(Dist *d, const DistPart *p, const int32_t *owner) {
    int64_t n = d->space.nnodes, nsend = 0;
    NodeKey *by_global = malloc(sizeof(NodeKey) * (size_t)(n + 1));
    NodeKey *pairs = malloc(sizeof(NodeKey) * (size_t)(p->npairs + 1));
    int status =
        by_global && pairs ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's halo");
    for (int64_t i = 0; !status && i < n; i++) by_global[i] = (NodeKey){0, d->node_global[i], (int32_t)i};
    if (!status) qsort(by_global, (size_t)n, sizeof(NodeKey), cmp_global);
    for (int64_t k = 0; !status && k < p->npairs; k++) {
        NodeKey want = {0, p->pair_node[k], 0};
        const NodeKey *at = bsearch(&want, by_global, (size_t)n, sizeof(NodeKey), cmp_global);
        if (!at)
            status =
                fem_fail(FEM_ERR_INTERNAL, "a shared node of MPI rank %d is not among its nodes", d->rank);
        else
            pairs[k] = (NodeKey){p->pair_rank[k], p->pair_node[k], at->local};
    }
    if (!status) status = build_share(d, pairs, p->npairs);
    /* the owned ones, in the same order, are the send lists */
    for (int64_t i = 0; !status && i < p->npairs; i++)
        if (owner[pairs[i].local] == d->rank) pairs[nsend++] = pairs[i];
    if (!status) status = build_halo(d, pairs, nsend, owner);
    free(pairs);
    free(by_global);
    return status;
}

/* Each local node's global number (slot i of a local cell is slot i of its global cell) and owner. */
static int global_numbers(Dist *d, const DistPart *p, int32_t **owner) {
    FEM_ALLOC(d->node_global, d->space.nnodes + 1, "a rank's nodes");
    FEM_ALLOC(*owner, d->space.nnodes + 1, "a rank's nodes");
    for (int b = 0; b < d->space.ncell_blocks; b++) {
        const SpaceBlock *lb = &d->space.cells[b];
        if (lb->ndof != p->ndof[b])
            return fem_fail(FEM_ERR_INTERNAL, "MPI rank %d's part has %d nodes a cell where its space has %d",
                            d->rank, p->ndof[b], lb->ndof);
        for (int64_t k = 0; k < lb->count * lb->ndof; k++) d->node_global[lb->dofs[k]] = p->slot_global[b][k];
    }
    for (int64_t i = 0; i < d->space.nnodes; i++) {
        int64_t at = dist_find(p->node, p->nnodes, d->node_global[i]);
        if (at < 0)
            return fem_fail(FEM_ERR_INTERNAL, "node %lld of MPI rank %d is not in its part",
                            (long long)d->node_global[i], d->rank);
        (*owner)[i] = p->owner[at];
    }
    return FEM_OK;
}

int dist_create_part(Dist *d, DistPart *p) {
    memset(d, 0, sizeof *d);
    d->rank = p->rank;
    d->nranks = p->nranks;
    d->nglobal_nodes = p->nglobal_nodes;
    d->mesh = p->mesh;
    memset(&p->mesh, 0, sizeof p->mesh);
    memcpy(d->cell_block, p->cell_block, sizeof d->cell_block);
    memcpy(d->facet_block, p->facet_block, sizeof d->facet_block);
    memcpy(d->cell_boundary, p->cell_boundary, sizeof d->cell_boundary);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) {
        d->cell_global[b] = p->cell_global[b], d->facet_global[b] = p->facet_global[b];
        p->cell_global[b] = p->facet_global[b] = NULL;
    }
    if (d->mesh.ncell_blocks == 0) {
        int status =
            fem_fail(FEM_ERR_INPUT, "mesh %s: MPI rank %d of %d received no cell; run on fewer ranks",
                     d->mesh.path, d->rank, d->nranks);
        dist_destroy(d);
        return status;
    }
    int32_t *owner = NULL;
    int status = mesh_finish(&d->mesh);
    if (!status) status = space_create(&d->mesh, p->order, p->ncomp, &d->space);
    if (!status) status = global_numbers(d, p, &owner);
    if (!status) status = number_owned_first(d, owner);
    if (!status) status = halo_lists(d, p, owner);
    free(owner);
    if (status) dist_destroy(d);
    return status;
}

int dist_create(Dist *d, const Space *gsp, const int32_t *part, int rank, int nranks) {
    memset(d, 0, sizeof *d);
    DistSplit *s = NULL;
    DistPart p;
    FEM_TRY(dist_split_create(gsp, part, nranks, &s));
    int status = dist_part_make(s, rank, &p);
    dist_split_destroy(s);
    if (status) return status;
    status = dist_create_part(d, &p);
    dist_part_destroy(&p);
    if (status) return status;
    d->global_mesh = gsp->mesh;
    d->part = part;
    return FEM_OK;
}

int dist_create_order(Dist *d, const Dist *like, int order) {
    memset(d, 0, sizeof *d);
    Space gsp;
    int have = 0, status = FEM_OK;
    if (comm_rank() == 0) {
        if (!like->global_mesh || !like->part)
            status = fem_fail(FEM_ERR_INTERNAL, "a rank's part of a space was split from no global mesh");
        else if (!(status = space_create(like->global_mesh, order, like->space.ncomp, &gsp)))
            have = 1;
    }
    status = comm_agree(status);
    if (!status) status = dist_scatter(d, have ? &gsp : NULL, like->part);
    if (have) space_destroy(&gsp);
    if (status) return status;
    d->global_mesh = like->global_mesh;
    d->part = like->part;
    return FEM_OK;
}

void dist_destroy(Dist *d) {
    space_destroy(&d->space);
    mesh_destroy(&d->mesh);
    free(d->node_global);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) free(d->cell_global[b]), free(d->facet_global[b]);
    free(d->nbr);
    free(d->send_off);
    free(d->recv_off);
    free(d->send);
    free(d->recv);
    free(d->share_nbr);
    free(d->share_off);
    free(d->share);
    memset(d, 0, sizeof *d);
}

void dist_global_dofs(const Dist *d, int64_t n, int64_t *g) {
    int nc = d->space.ncomp;
    for (int64_t i = 0; i < n; i++) g[i] = d->node_global[i / nc] * nc + i % nc;
}

/* Whether value v at global node g goes before extreme k of e (k = 0: smaller, 1: larger; ties to the lower
 * node). */
static int beats(const DistExtremes *e, int k, double v, int64_t g) {
    if (isnan(v)) return 0;
    if (e->node[k] < 0) return 1;
    if (v != e->value[k]) return k ? v > e->value[k] : v < e->value[k];
    return g < e->node[k];
}

static void take(DistExtremes *e, int k, double v, int64_t g, const double *x) {
    e->value[k] = v, e->node[k] = g;
    for (int c = 0; c < 3; c++) e->x[k][c] = x[c];
}

/* Node i's value of the [*][ncomp] field v: itself (ncomp 1) or its magnitude. */
static double node_value(const double *v, int ncomp, int64_t i) {
    if (ncomp == 1) return v[i];
    double s = 0.0;
    for (int c = 0; c < ncomp; c++) s += v[i * ncomp + c] * v[i * ncomp + c];
    return sqrt(s);
}

int dist_node_extremes(const Dist *d, const Space *sp, const double *v, int ncomp, DistExtremes *e) {
    *e = (DistExtremes){{INFINITY, -INFINITY}, {-1, -1}, {{0, 0, 0}, {0, 0, 0}}};
    int64_t n = d ? sp->nnodes_owned : sp->nnodes;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = d ? d->node_global[i] : i;
        double vi = node_value(v, ncomp, i);
        for (int k = 0; k < 2; k++)
            if (beats(e, k, vi, g)) take(e, k, vi, g, &sp->node_x[3 * i]);
    }
    if (!d) return FEM_OK;
    int size = comm_size();
    DistExtremes *all = malloc(sizeof *all * (size_t)size);
    int64_t *off = malloc(sizeof *off * (size_t)(size + 1));
    int status = all && off ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the extremes");
    status = comm_agree(status);
    for (int r = 0; r <= size && !status; r++) off[r] = (int64_t)sizeof *all * r;
    if (!status) status = comm_allgather_bytes(e, sizeof *e, all, off);
    for (int r = 0; r < size && !status; r++)
        for (int k = 0; k < 2; k++)
            if (all[r].node[k] >= 0 && beats(e, k, all[r].value[k], all[r].node[k]))
                take(e, k, all[r].value[k], all[r].node[k], all[r].x[k]);
    free(all);
    free(off);
    return status;
}

int dist_bounding_box(const Dist *d, const Mesh *m, double lo[3], double hi[3]) {
    mesh_bounding_box(m, lo, hi);
    if (!d) return FEM_OK;
    double v[6]; /* the largest of hi and of -lo over the ranks */
    for (int c = 0; c < 3; c++) v[c] = hi[c], v[3 + c] = -lo[c];
    FEM_TRY(comm_max(v, 6));
    for (int c = 0; c < 3; c++) hi[c] = v[c], lo[c] = -v[3 + c];
    return FEM_OK;
}
