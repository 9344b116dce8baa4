/* A rank's part of a split mesh and space (see dist.h). */
#include "dist.h"

#include "error.h"
#include "partition.h"

#include <stdlib.h>
#include <string.h>

/* The elements of global block gb that `keep` selects, as a new block of the local mesh (node numbers still
 * the global mesh's); which[] receives their indices in gb. */
static int copy_block(const MeshBlock *gb, const char *keep, int64_t count, MeshBlock *lb, int64_t **which) {
    *lb = *gb;
    lb->count = count;
    lb->nodes = NULL, lb->entity = NULL, lb->tag = NULL;
    FEM_ALLOC(lb->nodes, count * gb->nnodes, "a rank's cells");
    FEM_ALLOC(lb->entity, count, "a rank's cells");
    FEM_ALLOC(lb->tag, count, "a rank's cells");
    FEM_ALLOC(*which, count, "a rank's cells");
    for (int64_t c = 0, k = 0; c < gb->count; c++)
        if (keep[c]) {
            memcpy(&lb->nodes[k * gb->nnodes], &gb->nodes[c * gb->nnodes],
                   sizeof(fem_idx) * (size_t)gb->nnodes);
            lb->entity[k] = gb->entity[c];
            lb->tag[k] = gb->tag[c];
            (*which)[k++] = c;
        }
    return FEM_OK;
}

/* keep[c] for the cells (facet 0) or facets (1) of global block b that are this rank's; returns their count.
 * With `shared` (cells only), keep[c] is 2 for a cell with a mesh node that a cell of another rank touches. */
static int64_t select_elements(const Mesh *gm, const int32_t *part, const char *shared, int rank, int facet,
                               int b, char *keep) {
    int64_t n = 0;
    const MeshBlock *mb = facet ? &gm->facets[b] : &gm->cells[b];
    for (int64_t c = 0; c < mb->count; c++) {
        int64_t cell = facet ? partition_cell_offset(gm, gm->topo.facet_cell[b][c].block) +
                                   gm->topo.facet_cell[b][c].cell
                             : partition_cell_offset(gm, b) + c;
        keep[c] = part[cell] == rank;
        n += keep[c];
        for (int i = 0; keep[c] && shared && i < mb->nnodes; i++)
            if (shared[mb->nodes[c * mb->nnodes + i]]) keep[c] = 2;
    }
    return n;
}

/* shared[n] = 1 for the global mesh nodes that cells of more than one part touch; NULL when the cells are not
 * to be split (FEMTO_OVERLAP=0, or no room for twice the blocks). */
static int shared_nodes(const Mesh *gm, const int32_t *part, char **shared) {
    *shared = NULL;
    const char *env = getenv("FEMTO_OVERLAP");
    if ((env && strcmp(env, "0") == 0) || 2 * gm->ncell_blocks > MESH_MAX_BLOCKS) return FEM_OK;
    int32_t *first = malloc(sizeof(int32_t) * (size_t)(gm->nnodes + 1));
    *shared = calloc((size_t)gm->nnodes + 1, 1);
    if (!first || !*shared) {
        free(first);
        free(*shared);
        *shared = NULL;
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's shared nodes");
    }
    for (int64_t n = 0; n < gm->nnodes; n++) first[n] = -1;
    for (int b = 0; b < gm->ncell_blocks; b++) {
        const MeshBlock *mb = &gm->cells[b];
        int64_t off = partition_cell_offset(gm, b);
        for (int64_t k = 0; k < mb->count * mb->nnodes; k++) {
            fem_idx n = mb->nodes[k];
            int32_t p = part[off + k / mb->nnodes];
            if (first[n] < 0) first[n] = p;
            else if (first[n] != p) (*shared)[n] = 1;
        }
    }
    free(first);
    return FEM_OK;
}

/* A local block of the kept elements of global block b: keep[c] == want (or != 0 for want 0). */
static int add_block(Dist *d, const MeshBlock *gb, int b, int facet, char *keep, int want, int boundary) {
    int64_t n = 0;
    char *pick = malloc((size_t)gb->count + 1);
    if (!pick) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's cells");
    for (int64_t c = 0; c < gb->count; c++) n += pick[c] = want ? keep[c] == want : keep[c] != 0;
    int status = FEM_OK;
    if (n > 0 && facet) {
        int lb = d->mesh.nfacet_blocks++;
        d->facet_block[lb] = b;
        status = copy_block(gb, pick, n, &d->mesh.facets[lb], &d->facet_global[lb]);
    } else if (n > 0) {
        int lb = d->mesh.ncell_blocks++;
        d->cell_block[lb] = b;
        d->cell_boundary[lb] = (unsigned char)boundary;
        status = copy_block(gb, pick, n, &d->mesh.cells[lb], &d->cell_global[lb]);
    }
    free(pick);
    return status;
}

/* The rank's elements of every global block; with `shared`, each cell block's interior cells (no shared node)
 * and boundary cells as two local blocks, interior first. */
static int copy_blocks(Dist *d, const Mesh *gm, const int32_t *part, const char *shared, int facet) {
    int nglobal = facet ? gm->nfacet_blocks : gm->ncell_blocks;
    for (int b = 0; b < nglobal; b++) {
        const MeshBlock *gb = facet ? &gm->facets[b] : &gm->cells[b];
        char *keep = malloc((size_t)gb->count + 1);
        if (!keep) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's cells");
        select_elements(gm, part, facet ? NULL : shared, d->rank, facet, b, keep);
        int status = facet || !shared ? add_block(d, gb, b, facet, keep, 0, 1)
                                      : add_block(d, gb, b, facet, keep, 1, 0);
        if (!status && !facet && shared) status = add_block(d, gb, b, facet, keep, 2, 1);
        free(keep);
        FEM_TRY(status);
    }
    return FEM_OK;
}

/* The mesh nodes the local elements use, renumbered in increasing global order, and the physical groups. */
static int local_nodes_and_groups(Dist *d, const Mesh *gm) {
    Mesh *m = &d->mesh;
    fem_idx *local = malloc(sizeof(fem_idx) * (size_t)(gm->nnodes + 1));
    if (!local) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's nodes");
    for (int64_t n = 0; n < gm->nnodes; n++) local[n] = -1;
    for (int b = 0; b < m->ncell_blocks; b++)
        for (int64_t k = 0; k < m->cells[b].count * m->cells[b].nnodes; k++) local[m->cells[b].nodes[k]] = 0;
    m->nnodes = 0;
    for (int64_t n = 0; n < gm->nnodes; n++)
        if (local[n] == 0) local[n] = (fem_idx)m->nnodes++;
    m->x = malloc(sizeof(double) * 3 * (size_t)(m->nnodes + 1));
    m->node_tag = malloc(sizeof(int64_t) * (size_t)(m->nnodes + 1));
    m->groups = calloc((size_t)gm->ngroups + 1, sizeof(PhysicalGroup));
    int status = m->x && m->node_tag && m->groups
                     ? FEM_OK
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's mesh");
    for (int64_t n = 0; n < gm->nnodes && !status; n++)
        if (local[n] >= 0) {
            memcpy(&m->x[3 * (int64_t)local[n]], &gm->x[3 * n], 3 * sizeof(double));
            m->node_tag[local[n]] = gm->node_tag[n];
        }
    MeshBlock *blocks[2 * MESH_MAX_BLOCKS];
    int nb = 0;
    for (int b = 0; b < m->ncell_blocks; b++) blocks[nb++] = &m->cells[b];
    for (int b = 0; b < m->nfacet_blocks; b++) blocks[nb++] = &m->facets[b];
    for (int i = 0; i < nb && !status; i++)
        for (int64_t k = 0; k < blocks[i]->count * blocks[i]->nnodes; k++)
            blocks[i]->nodes[k] = local[blocks[i]->nodes[k]];
    free(local);
    for (int g = 0; g < gm->ngroups && !status; g++) {
        m->groups[g] = gm->groups[g];
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

static int local_mesh(Dist *d, const Mesh *gm, const int32_t *part) {
    Mesh *m = &d->mesh;
    memcpy(m->path, gm->path, sizeof m->path);
    m->dim = gm->dim;
    char *shared = NULL;
    FEM_TRY(shared_nodes(gm, part, &shared));
    int status = copy_blocks(d, gm, part, shared, 0);
    free(shared);
    FEM_TRY(status);
    if (m->ncell_blocks == 0)
        return fem_fail(FEM_ERR_INPUT, "mesh %s: MPI rank %d of %d received no cell; run on fewer ranks",
                        gm->path, d->rank, d->nranks);
    FEM_TRY(copy_blocks(d, gm, part, NULL, 1));
    FEM_TRY(local_nodes_and_groups(d, gm));
    return mesh_finish(m);
}

uint64_t dist_owner_key(int64_t node, int32_t part) {
    /* splitmix64's finaliser of (node, part): every part touching a node is equally likely to come first */
    uint64_t z = (uint64_t)node * 0x9e3779b97f4a7c15u + (uint64_t)part * 0xd1b54a32d192ed03u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (z ^ (z >> 31)) ^ (uint64_t)part; /* distinct parts: distinct keys */
}

/* owner[n] = the part among the cells that touch global node n with the smallest dist_owner_key. */
static int node_owners(const Space *gsp, const int32_t *part, int32_t *owner) {
    for (int64_t n = 0; n < gsp->nnodes; n++) owner[n] = -1;
    for (int b = 0; b < gsp->ncell_blocks; b++) {
        const SpaceBlock *sb = &gsp->cells[b];
        int64_t off = partition_cell_offset(gsp->mesh, b);
        for (int64_t c = 0; c < sb->count; c++)
            for (int i = 0; i < sb->ndof; i++) {
                const fem_idx n = sb->dofs[c * sb->ndof + i];
                const int32_t p = part[off + c];
                if (owner[n] < 0 || dist_owner_key(n, p) < dist_owner_key(n, owner[n])) owner[n] = p;
            }
    }
    return FEM_OK;
}

/* The global number of every local node (before renumbering), through the element slots: slot i of a local
 * cell and of its global cell is the same node. */
static void map_nodes(Dist *d, const Space *gsp) {
    for (int b = 0; b < d->space.ncell_blocks; b++) {
        const SpaceBlock *lb = &d->space.cells[b], *gb = &gsp->cells[d->cell_block[b]];
        for (int64_t c = 0; c < lb->count; c++)
            for (int i = 0; i < lb->ndof; i++)
                d->node_global[lb->dofs[c * lb->ndof + i]] = gb->dofs[d->cell_global[b][c] * gb->ndof + i];
    }
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

/* Owned nodes first, then ghosts by owner; node_global follows; the receive lists fall out in order. */
static int number_owned_first(Dist *d, const int32_t *owner) {
    int64_t n = d->space.nnodes, nowned = 0;
    NodeKey *keys = malloc(sizeof(NodeKey) * (size_t)(n + 1));
    fem_idx *new_of_old = malloc(sizeof(fem_idx) * (size_t)(n + 1));
    if (!keys || !new_of_old) {
        free(keys);
        free(new_of_old);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory numbering a rank's nodes");
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t o = owner[d->node_global[i]];
        keys[i] = (NodeKey){.key = o == d->rank ? -1 : o, .global = d->node_global[i], .local = (int32_t)i};
        nowned += o == d->rank;
    }
    qsort(keys, (size_t)n, sizeof(NodeKey), cmp_node_key);
    for (int64_t i = 0; i < n; i++)
        new_of_old[keys[i].local] = (fem_idx)i, d->node_global[i] = keys[i].global;
    int status = space_renumber(&d->space, new_of_old, nowned);
    free(new_of_old);
    free(keys);
    return status;
}

/* (rank, node) pairs: this rank's nodes that a cell of another rank touches too, sorted by rank, then global
 * number, without repeats. The owned ones among them are what this rank sends (the halo); all of them are
 * what it shares (Dist.share). local_of_global: -1 for a node that is not this rank's. */
static int shared_pairs(const Dist *d, const Space *gsp, const int32_t *part, const int32_t *local_of_global,
                        NodeKey **pairs, int64_t *npairs) {
    int64_t n = 0, cap = 1024;
    NodeKey *p = malloc(sizeof(NodeKey) * (size_t)cap);
    if (!p) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's halo");
    for (int b = 0; b < gsp->ncell_blocks; b++) {
        const SpaceBlock *sb = &gsp->cells[b];
        int64_t off = partition_cell_offset(gsp->mesh, b);
        for (int64_t c = 0; c < sb->count; c++) {
            if (part[off + c] == d->rank) continue;
            for (int i = 0; i < sb->ndof; i++) {
                fem_idx g = sb->dofs[c * sb->ndof + i];
                if (local_of_global[g] < 0) continue;
                if (n == cap) {
                    NodeKey *q = realloc(p, sizeof(NodeKey) * (size_t)(cap *= 2));
                    if (!q)
                        return free(p), fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's halo");
                    p = q;
                }
                p[n++] = (NodeKey){.key = part[off + c], .global = g, .local = local_of_global[g]};
            }
        }
    }
    qsort(p, (size_t)n, sizeof(NodeKey), cmp_node_key);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (u == 0 || p[i].key != p[u - 1].key || p[i].global != p[u - 1].global) p[u++] = p[i];
    *pairs = p;
    *npairs = u;
    return FEM_OK;
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
    for (int64_t i = d->space.nnodes_owned; i < d->space.nnodes; i++) is_nbr[owner[d->node_global[i]]] = 1;
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
        for (; g < d->space.nnodes && owner[d->node_global[g]] == r; g++)
            d->recv[g - d->space.nnodes_owned] = (int32_t)g;
        d->send_off[k + 1] = s;
        d->recv_off[k + 1] = g - d->space.nnodes_owned;
        k++;
    }
    free(is_nbr);
    return FEM_OK;
}

/* The halo and the shared lists from the global space: which owned nodes each neighbour ghosts, whose
 * ghosts this rank holds, and which nodes it has in common with each other rank. */
static int halo_lists(Dist *d, const Space *gsp, const int32_t *part, const int32_t *owner) {
    int32_t *local_of_global = malloc(sizeof(int32_t) * (size_t)(gsp->nnodes + 1));
    if (!local_of_global) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's halo");
    for (int64_t g = 0; g < gsp->nnodes; g++) local_of_global[g] = -1;
    for (int64_t i = 0; i < d->space.nnodes; i++) local_of_global[d->node_global[i]] = (int32_t)i;
    NodeKey *pairs = NULL;
    int64_t npairs = 0, nsend = 0;
    int status = shared_pairs(d, gsp, part, local_of_global, &pairs, &npairs);
    if (!status) status = build_share(d, pairs, npairs);
    /* the owned ones, in the same order, are the send lists */
    for (int64_t i = 0; !status && i < npairs; i++)
        if (owner[pairs[i].global] == d->rank) pairs[nsend++] = pairs[i];
    if (!status) status = build_halo(d, pairs, nsend, owner);
    free(pairs);
    free(local_of_global);
    return status;
}

int dist_create(Dist *d, const Space *gsp, const int32_t *part, int rank, int nranks) {
    memset(d, 0, sizeof *d);
    d->rank = rank;
    d->nranks = nranks;
    d->nglobal_nodes = gsp->nnodes;
    d->global_mesh = gsp->mesh;
    d->part = part;
    int32_t *owner = malloc(sizeof(int32_t) * (size_t)(gsp->nnodes + 1));
    int status = owner ? local_mesh(d, gsp->mesh, part)
                       : fem_fail(FEM_ERR_INTERNAL, "out of host memory for node owners");
    if (!status) status = node_owners(gsp, part, owner);
    if (!status) status = space_create(&d->mesh, gsp->order, gsp->ncomp, &d->space);
    if (!status) {
        d->node_global = malloc(sizeof(int64_t) * (size_t)(d->space.nnodes + 1));
        status =
            d->node_global ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a rank's nodes");
    }
    if (!status) map_nodes(d, gsp);
    if (!status) status = number_owned_first(d, owner);
    if (!status) status = halo_lists(d, gsp, part, owner);
    free(owner);
    if (status) dist_destroy(d);
    return status;
}

int dist_create_order(Dist *d, const Dist *like, int order) {
    memset(d, 0, sizeof *d);
    if (!like->global_mesh || !like->part)
        return fem_fail(FEM_ERR_INTERNAL, "a rank's part of a space was split from no global mesh");
    Space gsp;
    FEM_TRY(space_create(like->global_mesh, order, like->space.ncomp, &gsp));
    int status = dist_create(d, &gsp, like->part, like->rank, like->nranks);
    space_destroy(&gsp);
    return status;
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
