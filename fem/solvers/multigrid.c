/* p-multigrid preconditioning (PC_MULTIGRID, pc.h).
 *
 * Levels are spaces of decreasing order on the same mesh (p, then about p/2, ..., 1), each with an operator
 * of the same physics, so every level is matrix-free and runs the device's own kernels (or a backend's fused
 * ones). One application is a V-cycle: Chebyshev-Jacobi smoothing before and after the coarse correction
 * (the same polynomial both times, so the cycle is symmetric and CG may use it), transfers by interpolation
 * and its transpose (fem/transfer.h), and on the coarsest level the coarse solver. A nonlinear problem's
 * coarse levels are linearised at the coarse interpolant of the fine state.
 *
 * Below order 1, a mesh made by uniform refinement (<mesh refine>, Mesh.parent) gives more levels: order 1 on
 * the mesh before each refinement (an h-level). A parent's cells are of order 2 on its child's nodes, so a
 * field of order 1 on the child is one of order 2 on the parent's cells: the transfer between the two levels
 * is the p-transfer from order 1 to order 2 on the parent, composed with the map between the parent's
 * order-2 dofs and the child's order-1 dofs (hperm, a permutation). The coarse solver then factorises the
 * coarsest parent's order-1 matrix, 8 times smaller per refinement in 3D. Over MPI ranks each rank holds
 * whole parent cells (the partition puts a cell's children on its rank), and its part of each parent mesh
 * is a Dist of its own; the two levels' dofs then have owners of their own, so the transfers forward the
 * finer level's ghosts before reading them.
 *
 * Over MPI ranks (the fine operator has a halo) each coarse level is this rank's part of the global space of
 * its order (dist_create_order: the same local cells, its own owned-first numbering and halo), its operator
 * and transfers exchange through that halo, its vectors count owned dofs only in reductions, and the coarsest
 * level is solved by BoomerAMG over all ranks (mg_coarse.c). Nothing else changes: the smoother's diagonal is
 * reverse-added by op_diagonal, and every vector operation runs on the rank's device. */
#include "pc.h"

#include "fem/error.h"
#include "fem/comm.h"
#include "fem/halo.h"
#include "fem/partition.h"
#include "fem/transfer.h"
#include "multigrid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MG_MAX_LEVELS = 8 };

/* The bottom of the smoother's interval as a fraction of the top: the smoother damps what the coarser level
 * cannot represent, the upper part of D^-1 A's spectrum. */
#define MG_SMOOTH_LOWER 0.1

typedef struct {
    Space space; /* coarse levels own their space and operator (one process) ... */
    Dist dist;   /* ... or their part of the space over MPI ranks, and its halos (ncomp and one component) */
    Halo halo, halo1;
    int have_dist, have_halo, have_halo1;
    const Space *sp; /* the level's space: the caller's (finest), space or dist.space */
    Operator own;
    Operator *op;  /* the level's operator (the caller's on the finest level) */
    Transfer down; /* to the next coarser level */
    Transfer aux_down;
    Vec u, aux, b, x, res, t, diag;
    Chebyshev cheb;
    /* When the level below is on this level's mesh's parent: down is the transfer between that level's space
     * and hspace (order 2 on the parent), whose dof i is this level's dof hperm[i] (device). */
    Space hspace; /* one process */
    Dist hdist;   /* over MPI ranks: this rank's part of it, and its halos */
    Halo hhalo, hhalo1;
    const Space *hsp;
    int have_hspace, have_hdist, have_hhalo, have_hhalo1;
    int32_t *hpart; /* an h-level over MPI ranks: the partition of its mesh's cells (its Dist borrows it) */
    int32_t *hperm, *hperm1; /* hperm1: of the nodes, for the auxiliary field (one component) */
    Vec hvec, hvec1;
    int32_t *htags[2][MESH_MAX_BLOCKS]; /* an h-level's own cell and facet tags (its operator keeps them) */
} MgLevel;

typedef struct {
    int n, nh; /* levels, of which on coarser meshes */
    MgLevel L[MG_MAX_LEVELS];
    MgCoarse coarse;
    /* FEMTO_MG_PROFILE=FILE (a diagnostic): the device is synchronised around each part of the V-cycle and
     * each part's seconds per level are summed (prof[l]: smoothing before, residual and restriction,
     * prolongation and correction, residual and smoothing after; the coarse solve in prof[n-1][0]), then
     * appended to FILE, one line per level and rank, when the preconditioner is destroyed */
    const char *profile;
    double prof[MG_MAX_LEVELS][4];
    int64_t cycles;
    char description[1024];
} Multigrid;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int mg_next_order(int p) {
    return p <= 1 ? 1 : p <= 3 ? p - 1 : (p + 1) / 2;
}

static int zero_constrained(const Operator *op, Vec *v) {
    return op->ndir ? op->dev->ops.scatter(op->dev, op->ndir, op->dir, NULL, v->data) : FEM_OK;
}

/* Over MPI ranks: a flag set on any rank that holds a dof is set on all of them (summed into the owner, then
 * forwarded). */
static int flags_over_ranks(Halo *h, char *flags, int64_t n) {
    if (!h) return FEM_OK;
    double *x = malloc(sizeof(double) * (size_t)(n + 1));
    if (!x) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a multigrid level");
    for (int64_t i = 0; i < n; i++) x[i] = flags[i];
    Vec v = {0};
    int status = vec_create(&v, h->dev, n);
    if (!status) status = vec_upload(&v, x);
    if (!status) status = halo_reverse_add(h, &v);
    if (!status) status = halo_forward(h, &v);
    if (!status) status = vec_download(&v, x);
    for (int64_t i = 0; i < n && !status; i++) flags[i] = x[i] > 0;
    vec_destroy(&v);
    free(x);
    return status;
}

/* The coarse space's constrained dofs: component c of the coarse nodes of every facet whose fine nodes are
 * all constrained in c (Dirichlet conditions act on whole boundary facets). Over MPI ranks (halo) a facet
 * lies on one rank only, so the flags are combined over the ranks that hold each dof. */
static int coarse_dirichlet_of(const Space *sf, char *cf, const Space *coarse, Halo *halo, int32_t **dofs,
                               int64_t *n) {
    int nc = sf->ncomp;
    char *cc = calloc((size_t)coarse->ndofs + 1, 1);
    *dofs = malloc(sizeof(int32_t) * (size_t)(coarse->ndofs + 1));
    if (!cc || !*dofs) {
        free(cc), free(*dofs);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a multigrid level");
    }
    for (int fb = 0; fb < sf->nfacet_blocks; fb++) {
        const SpaceBlock *bf = &sf->facets[fb], *bc = &coarse->facets[fb];
        for (int64_t k = 0; k < bf->count; k++)
            for (int c = 0; c < nc; c++) {
                int all = 1;
                for (int i = 0; i < bf->ndof && all; i++)
                    all = cf[(int64_t)bf->dofs[k * bf->ndof + i] * nc + c];
                for (int j = 0; all && j < bc->ndof; j++)
                    cc[(int64_t)bc->dofs[k * bc->ndof + j] * nc + c] = 1;
            }
    }
    *n = 0;
    int status = flags_over_ranks(halo, cc, coarse->ndofs);
    for (int64_t d = 0; d < coarse->ndofs && !status; d++)
        if (cc[d]) (*dofs)[(*n)++] = (int32_t)d;
    free(cc);
    return status;
}

/* cf[d] = 1 for op's constrained dofs (malloc'ed, one per dof of its space). */
static int constrained_flags(const Operator *op, char **cf) {
    *cf = calloc((size_t)op->space->ndofs + 1, 1);
    if (!*cf) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a multigrid level");
    for (int64_t i = 0; i < op->ndir; i++) (*cf)[op->dir_host[i]] = 1;
    return FEM_OK;
}

static int coarse_dirichlet(const Operator *fine, const Space *coarse, Halo *halo, int32_t **dofs,
                            int64_t *n) {
    char *cf;
    FEM_TRY(constrained_flags(fine, &cf));
    int status = coarse_dirichlet_of(fine->space, cf, coarse, halo, dofs, n);
    free(cf);
    return status;
}

/* A level's vectors. The finest level's right-hand side and iterate are the preconditioner's own arguments,
 * and its state is the Newton iterate, so it keeps none of them; every level but the coarsest takes its
 * diagonal into t at setup (the smoother keeps its inverse), so only a coarse level made here keeps diag. */
static int level_vectors(MgLevel *L, int coarse_level, int degree) {
    const Space *sp = L->op->space;
    Device *d = L->op->dev;
    Vec *v[] = {&L->res, &L->t, &L->b, &L->x, &L->u, &L->diag};
    for (int i = 0; i < (coarse_level ? 6 : 2); i++)
        FEM_TRY(vec_create_split(v[i], d, sp->ndofs, sp->ndofs_owned));
    if (coarse_level && L->op->aux_used) FEM_TRY(vec_create_split(&L->aux, d, sp->nnodes, sp->nnodes_owned));
    return chebyshev_create(&L->cheb, &L->res, degree);
}

/* The space of a coarse level of order `order` below F: one process, or this rank's part over MPI ranks. */
static int level_space(MgLevel *F, MgLevel *C, int order) {
    const Space *sf = F->op->space;
    if (!F->op->halo) {
        FEM_TRY(space_create(sf->mesh, order, sf->ncomp, &C->space));
        C->sp = &C->space;
        return FEM_OK;
    }
    FEM_TRY(dist_create_order(&C->dist, F->op->halo->dist, order));
    C->have_dist = 1;
    C->sp = &C->dist.space;
    FEM_TRY(halo_create(&C->halo, &C->dist, F->op->dev, sf->ncomp));
    C->have_halo = 1;
    if (!F->op->aux_used) return FEM_OK;
    FEM_TRY(halo_create(&C->halo1, &C->dist, F->op->dev, 1));
    C->have_halo1 = 1;
    return FEM_OK;
}

/* The transfers below level F (its aux field's too), exchanging through both levels' halos over MPI ranks. */
static int level_transfers(MgLevel *F, MgLevel *C) {
    const Space *sf = F->op->space;
    Device *dev = F->op->dev;
    FEM_TRY(transfer_create(&F->down, dev, sf, C->sp, sf->ncomp));
    if (F->op->halo) FEM_TRY(transfer_set_halo(&F->down, F->op->halo, &C->halo));
    if (!F->op->aux_used) return FEM_OK;
    FEM_TRY(transfer_create(&F->aux_down, dev, sf, C->sp, 1));
    if (F->op->halo && !F->have_halo1) { /* the finest level's scalar halo */
        FEM_TRY(halo_create(&F->halo1, F->op->halo->dist, dev, 1));
        F->have_halo1 = 1;
    }
    return F->op->halo ? transfer_set_halo(&F->aux_down, &F->halo1, &C->halo1) : FEM_OK;
}

/* Level l + 1 below level l: its space, operator, constraints and the transfers between them. */
static int add_level(Multigrid *mg, int order, int degree) {
    MgLevel *F = &mg->L[mg->n - 1], *C = &mg->L[mg->n];
    mg->n++;
    FEM_TRY(level_space(F, C, order));
    FEM_TRY(op_create_like(&C->own, F->op, C->sp));
    C->op = &C->own;
    if (C->have_halo) op_set_halo(C->op, &C->halo);
    int32_t *dofs = NULL;
    int64_t ndir = 0;
    FEM_TRY(coarse_dirichlet(F->op, C->sp, C->have_halo ? &C->halo : NULL, &dofs, &ndir));
    int status = op_set_dirichlet(C->op, ndir, dofs);
    free(dofs);
    FEM_TRY(status);
    FEM_TRY(level_transfers(F, C));
    return level_vectors(C, 1, degree);
}

/* ---- levels on the meshes before refinement */

/* uf = P uc, rc = P^T rf and uc = the interpolant of uf between level F and the one below it */
static int down_prolong(MgLevel *F, const Vec *uc, Vec *uf) {
    if (!F->hsp) return transfer_prolong(&F->down, uc, uf);
    FEM_TRY(transfer_prolong(&F->down, uc, &F->hvec));
    Device *d = F->op->dev;
    return d->ops.scatter(d, F->hvec.n, F->hperm, F->hvec.data, uf->data);
}

static int down_restrict(MgLevel *F, const Vec *rf, Vec *rc) {
    if (!F->hsp) return transfer_restrict(&F->down, rf, rc);
    Device *d = F->op->dev;
    /* rf is consistent (every copy holds its owner's value), so the permuted vector is too, whichever rank
     * owns each of its dofs */
    FEM_TRY(d->ops.gather(d, F->hvec.n, F->hperm, rf->data, F->hvec.data));
    return transfer_restrict(&F->down, &F->hvec, rc);
}

static int down_inject(MgLevel *F, int aux, const Vec *uf, Vec *uc) {
    Transfer *t = aux ? &F->aux_down : &F->down;
    if (!F->hsp) return transfer_inject(t, uf, uc);
    Device *d = F->op->dev;
    if (F->op->halo) FEM_TRY(halo_forward(aux ? &F->halo1 : F->op->halo, (Vec *)uf));
    Vec *h = aux ? &F->hvec1 : &F->hvec;
    FEM_TRY(d->ops.gather(d, h->n, aux ? F->hperm1 : F->hperm, uf->data, h->data));
    return transfer_inject(t, h, uc);
}

/* tags[b][c] of the parent's cells (facet: facets) from the child's, through their Gmsh entities (a refined
 * cell keeps its parent's entity, and tags are given by physical groups, which are sets of entities). 0 when
 * an entity of the child has two tags, or one of the parent's has none. */
static int tags_by_entity(const Mesh *child, const Mesh *parent, int facet, int32_t *const *child_tags,
                          int32_t **out) {
    int nb = facet ? child->nfacet_blocks : child->ncell_blocks,
        np = facet ? parent->nfacet_blocks : parent->ncell_blocks;
    int cap = 64, n = 0, ok = 1;
    int32_t(*map)[2] = malloc(sizeof *map * (size_t)cap);
    for (int b = 0; b < nb && map && ok; b++) {
        const MeshBlock *k = facet ? &child->facets[b] : &child->cells[b];
        if (!child_tags[b]) continue;
        for (int64_t c = 0; c < k->count && ok; c++) {
            int i = 0;
            while (i < n && map[i][0] != k->entity[c]) i++;
            if (i < n) {
                ok = map[i][1] == child_tags[b][c];
                continue;
            }
            if (n == cap) {
                void *grown = realloc(map, sizeof *map * (size_t)(cap *= 2));
                if (!grown) break;
                map = grown;
            }
            map[n][0] = k->entity[c], map[n][1] = child_tags[b][c], n++;
        }
    }
    int any = 0; /* a child block with tags: else the parent has none either */
    for (int cb = 0; cb < nb; cb++) any |= child_tags[cb] != NULL;
    for (int b = 0; b < np && map && ok && any; b++) {
        const MeshBlock *k = facet ? &parent->facets[b] : &parent->cells[b];
        out[b] = malloc(sizeof(int32_t) * (size_t)(k->count + 1));
        ok = out[b] != NULL;
        for (int64_t c = 0; c < k->count && ok; c++) {
            int i = 0;
            while (i < n && map[i][0] != k->entity[c]) i++;
            /* a facet of an entity without a natural term has no tag in the child either */
            out[b][c] = i < n ? map[i][1] : facet ? -1 : 0;
            ok = i < n || facet;
        }
    }
    free(map);
    return map && ok;
}

static void level_free(Multigrid *mg, int l);
static void h_free(MgLevel *L);

/* hperm[i]: the dof of level F's space f (order 1, on the child mesh) at node i of h (order 2 on the parent's
 * cells); 0 unless it is a permutation. The two meshes are matched by their nodes' coordinates (one process:
 * the parent's nodes are the child's; over MPI ranks each is this rank's part, numbered on its own). */
static int h_permutation(const Space *f, const Space *h, int32_t *perm) {
    const Mesh *child = f->mesh, *parent = h->mesh;
    fem_idx *of_node = malloc(sizeof(fem_idx) * (size_t)(child->nnodes + 1));
    char *hit = calloc((size_t)f->nnodes + 1, 1);
    MeshPointIndex at = {0, NULL, NULL};
    int ok = of_node && hit && f->nnodes == h->nnodes &&
             mesh_point_index_create(&at, child->x, child->nnodes) == FEM_OK;
    for (int64_t i = 0; ok && i < child->nnodes; i++) of_node[i] = -1;
    for (int b = 0; ok && b < child->ncell_blocks; b++) {
        const MeshBlock *k = &child->cells[b];
        const SpaceBlock *sb = &f->cells[b];
        int nv = shape_nvertices(k->shape);
        for (int64_t c = 0; c < k->count; c++)
            for (int v = 0; v < nv; v++)
                of_node[k->nodes[c * k->nnodes + lattice_vertex(k->shape, k->order, v)]] =
                    sb->dofs[c * sb->ndof + lattice_vertex(k->shape, 1, v)];
    }
    for (int64_t i = 0; ok && i < h->nnodes; i++) perm[i] = -1;
    for (int b = 0; ok && b < parent->ncell_blocks; b++) {
        const MeshBlock *k = &parent->cells[b];
        const SpaceBlock *sb = &h->cells[b];
        ok = k->order == 2 && sb->ndof == k->nnodes;
        for (int64_t c = 0; ok && c < k->count; c++)
            for (int i = 0; ok && i < sb->ndof; i++) {
                fem_idx node =
                    mesh_point_index_find(&at, &parent->x[3 * (int64_t)k->nodes[c * k->nnodes + i]]);
                ok = node >= 0 && of_node[node] >= 0;
                if (ok) perm[sb->dofs[c * sb->ndof + i]] = (int32_t)of_node[node];
            }
    }
    for (int64_t i = 0; ok && i < h->nnodes; i++) {
        ok = perm[i] >= 0 && !hit[perm[i]];
        if (ok) hit[perm[i]] = 1;
    }
    if (at.slot) mesh_point_index_destroy(&at);
    free(of_node);
    free(hit);
    return ok;
}

/* Over MPI ranks: every rank's answer, 1 when all said 1. */
static int all_ranks(const Operator *op, int yes) {
    if (!op->halo) return yes;
    double no = !yes;
    return comm_sum(&no, 1) == FEM_OK && no == 0;
}

/* The spaces of an h-level below F on `parent` (the parent of F's global mesh): order 1 for level C and
 * order 2 for the transfer (F->hsp). Over MPI ranks, each rank's part of them: the parent's cells go to the
 * rank of their children (the partition keeps children together: fem/partition.h); *fits 0 where it did
 * not (then nothing is made). */
static int h_spaces(MgLevel *F, MgLevel *C, const Mesh *parent, int *fits) {
    const Operator *op = F->op;
    int nc = op->space->ncomp;
    *fits = 1;
    if (!op->halo) {
        FEM_TRY(space_create(parent, 2, nc, &F->hspace));
        F->have_hspace = 1;
        F->hsp = &F->hspace;
        FEM_TRY(space_create(parent, 1, nc, &C->space));
        C->sp = &C->space;
        return FEM_OK;
    }
    /* rank 0 (which holds the global mesh) partitions the parent and sends every rank its part; the others
     * learn whether it fits */
    const Dist *fd = op->halo->dist;
    int root = comm_rank() == 0, status = FEM_OK;
    if (root) {
        int64_t n = partition_ncells(fd->global_mesh), np = partition_ncells(parent);
        int64_t *of = malloc(sizeof(int64_t) * (size_t)(n + 1));
        C->hpart = malloc(sizeof(int32_t) * (size_t)(np + 1));
        status = of && C->hpart ? mesh_parent_cells(fd->global_mesh, of)
                                : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a multigrid level");
        for (int64_t c = 0; c < np && !status; c++) C->hpart[c] = -1;
        for (int64_t c = 0; c < n && !status && *fits; c++) {
            *fits = C->hpart[of[c]] < 0 || C->hpart[of[c]] == fd->part[c];
            C->hpart[of[c]] = fd->part[c];
        }
        free(of);
    }
    double fit = root ? (double)(*fits && !status) : 0;
    status = comm_agree(status);
    if (!status) status = comm_sum(&fit, 1);
    if (status || fit == 0) {
        *fits = 0;
        fem_clear_error();
        return FEM_OK;
    }
    Space g;
    FEM_TRY(comm_agree(root ? space_create(parent, 1, nc, &g) : FEM_OK));
    status = dist_scatter(&C->dist, root ? &g : NULL, C->hpart);
    if (root) space_destroy(&g);
    FEM_TRY(status);
    C->dist.global_mesh = parent; /* (read on rank 0 only, for the order-2 space below) */
    C->dist.part = C->hpart;
    C->have_dist = 1;
    C->sp = &C->dist.space;
    FEM_TRY(halo_create(&C->halo, &C->dist, op->dev, nc));
    C->have_halo = 1;
    FEM_TRY(dist_create_order(&F->hdist, &C->dist, 2));
    F->have_hdist = 1;
    F->hsp = &F->hdist.space;
    FEM_TRY(halo_create(&F->hhalo, &F->hdist, op->dev, nc));
    F->have_hhalo = 1;
    if (!op->aux_used) return FEM_OK;
    FEM_TRY(halo_create(&C->halo1, &C->dist, op->dev, 1));
    C->have_halo1 = 1;
    FEM_TRY(halo_create(&F->hhalo1, &F->hdist, op->dev, 1));
    F->have_hhalo1 = 1;
    if (!F->have_halo1) { /* the finest level's scalar halo */
        FEM_TRY(halo_create(&F->halo1, fd, op->dev, 1));
        F->have_halo1 = 1;
    }
    return FEM_OK;
}

/* Level C on `parent`, the parent of level F's mesh (F of order 1). *added 0 (nothing made, no error) where
 * the meshes do not fit together as a refinement (on any rank). */
static int add_h_level(Multigrid *mg, const Mesh *parent, int degree, int *added) {
    MgLevel *F = &mg->L[mg->n - 1], *C = &mg->L[mg->n];
    const Space *sf = F->op->space;
    Device *dev = F->op->dev;
    int nc = sf->ncomp, fits = 0;
    *added = 0;
    /* C's pieces are freed with the level from here on, whether or not it is kept */
    mg->n++;
    FEM_TRY(h_spaces(F, C, parent, &fits));
    const Space *hs = F->hsp;
    int32_t *perm = fits ? malloc(sizeof(int32_t) * (size_t)(hs->ndofs + 1)) : NULL;
    fits = all_ranks(F->op, perm && h_permutation(sf, hs, perm) &&
                                tags_by_entity(sf->mesh, hs->mesh, 0, F->op->cell_tags_host, C->htags[0]) &&
                                (!F->op->facet_tags_host ||
                                 tags_by_entity(sf->mesh, hs->mesh, 1, F->op->facet_tags_host, C->htags[1])));
    if (!fits) {
        free(perm);
        return FEM_OK; /* the caller drops the level */
    }
    int status = FEM_OK;
    if (F->op->aux_used)
        status = device_alloc_copy(dev, (void **)&F->hperm1, perm, sizeof(int32_t) * (size_t)hs->nnodes);
    for (int64_t i = hs->nnodes - 1; i >= 0; i--) /* nodes -> dofs, in place from the end */
        for (int c = nc - 1; c >= 0; c--) perm[i * nc + c] = perm[i] * nc + c;
    /* the parent's order-2 constraints are the child's order-1 ones, in the parent's numbering */
    char *flags = calloc((size_t)hs->ndofs + 1, 1), *cf = NULL;
    if (!status) status = constrained_flags(F->op, &cf);
    if (!status && !flags) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for a multigrid level");
    for (int64_t i = 0; !status && i < hs->ndofs; i++) flags[i] = cf[perm[i]];
    if (!status)
        status = device_alloc_copy(dev, (void **)&F->hperm, perm, sizeof(int32_t) * (size_t)hs->ndofs);
    free(perm);
    free(cf);
    if (!status) status = vec_create(&F->hvec, dev, hs->ndofs);
    mg->nh++;
    *added = 1;
    if (!status)
        status = op_create(&C->own, dev, C->sp, &F->op->phys, F->op->qdegree, C->htags[0],
                           F->op->facet_tags_host ? C->htags[1] : NULL);
    C->op = &C->own;
    if (!status && C->have_halo) op_set_halo(C->op, &C->halo);
    int32_t *dofs = NULL;
    int64_t ndir = 0;
    if (!status) status = coarse_dirichlet_of(hs, flags, C->sp, C->have_halo ? &C->halo : NULL, &dofs, &ndir);
    free(flags);
    if (!status) status = op_set_dirichlet(C->op, ndir, dofs);
    free(dofs);
    if (!status) status = transfer_create(&F->down, dev, hs, C->sp, nc);
    if (!status && C->have_halo) status = transfer_set_halo(&F->down, &F->hhalo, &C->halo);
    if (!status && F->op->aux_used) status = transfer_create(&F->aux_down, dev, hs, C->sp, 1);
    if (!status && F->op->aux_used && C->have_halo)
        status = transfer_set_halo(&F->aux_down, &F->hhalo1, &C->halo1);
    if (!status && F->op->aux_used) status = vec_create(&F->hvec1, dev, hs->nnodes);
    F->down.fine_consistent = F->aux_down.fine_consistent = 1; /* down_inject forwards first */
    return status ? status : level_vectors(C, 1, degree);
}

static int mg_build(Multigrid *mg, Operator *fine, const PcSettings *set) {
    int most = set->mg_levels > 0 && set->mg_levels < MG_MAX_LEVELS ? set->mg_levels : MG_MAX_LEVELS;
    mg->L[0].op = fine;
    mg->L[0].sp = fine->space;
    mg->n = 1;
    FEM_TRY(level_vectors(&mg->L[0], 0, set->cheb_degree));
    for (int p = fine->space->order; p > 1 && mg->n < most;) {
        p = mg_next_order(p);
        FEM_TRY(add_level(mg, p, set->cheb_degree));
    }
    /* then the meshes before refinement, while the levels are of order 1 */
    const Mesh *global = fine->halo ? fine->halo->dist->global_mesh : fine->space->mesh;
    int added = 1;
    for (const Mesh *parent = global->parent; parent && added && mg->n < most; parent = parent->parent) {
        if (mg->L[mg->n - 1].op->space->order != 1) break;
        FEM_TRY(add_h_level(mg, parent, set->cheb_degree, &added));
        if (!added) { /* what was made for it, below and above */
            level_free(mg, --mg->n);
            h_free(&mg->L[mg->n - 1]);
        }
    }
    return FEM_OK;
}

/* Level l's q-point state, linearised at the coarse interpolant of level l - 1's: the constants, the
 * auxiliary field and the residual evaluated there. */
static int level_state(Multigrid *mg, int l, const Vec *fine_state) {
    MgLevel *F = &mg->L[l - 1], *C = &mg->L[l];
    FEM_TRY(op_update_ctx(C->op));
    const Vec *uf = l == 1 ? fine_state : &F->u;
    if (uf)
        FEM_TRY(down_inject(F, 0, uf, &C->u));
    else
        FEM_TRY(vec_zero(&C->u));
    C->op->aux = NULL;
    if (F->op->aux && F->op->aux_used) {
        Vec af = l == 1 ? vec_wrap(F->op->dev, F->op->space->nnodes, (double *)F->op->aux) : F->aux;
        FEM_TRY(down_inject(F, 1, &af, &C->aux));
        C->op->aux = C->aux.data;
    }
    return op_residual(C->op, &C->u, &C->t);
}

/* The run log's line: levels, smoother, coarse solver, and where the setup's time went. */
static void describe(Multigrid *mg, double t_levels, double t_smooth) {
    int len =
        snprintf(mg->description, sizeof mg->description,
                 "%s, %d level%s (p =", mg->nh ? "multigrid" : "p-multigrid", mg->n, mg->n == 1 ? "" : "s");
    for (int l = 0; l < mg->n - mg->nh && len < (int)sizeof mg->description; l++)
        len += snprintf(mg->description + len, sizeof mg->description - (size_t)len, "%s %d", l ? "," : "",
                        mg->L[l].op->space->order);
    const MgLevel *last = &mg->L[mg->n - 1];
    long long coarsest =
        last->have_dist ? (long long)last->dist.nglobal_nodes * last->sp->ncomp : (long long)last->sp->ndofs;
    if (mg->nh > 1 && len < (int)sizeof mg->description)
        len += snprintf(mg->description + len, sizeof mg->description - (size_t)len,
                        ", then p = 1 on the %d meshes before its last %d refinements: %lld dofs)", mg->nh,
                        mg->nh, coarsest);
    else if (mg->nh && len < (int)sizeof mg->description)
        len += snprintf(mg->description + len, sizeof mg->description - (size_t)len,
                        ", then p = 1 on the mesh before its last refinement: %lld dofs)", coarsest);
    else if (len < (int)sizeof mg->description)
        len += snprintf(mg->description + len, sizeof mg->description - (size_t)len, ")");
    if (len < (int)sizeof mg->description)
        snprintf(
            mg->description + len, sizeof mg->description - (size_t)len,
            ", Chebyshev(%d) smoothing, coarse: %s; setup %.2f s (levels %.2f s, smoothers %.2f s, coarse "
            "assembly %.2f s, coarse solver %.2f s)",
            mg->L[0].cheb.degree, mg_coarse_describe(&mg->coarse),
            t_levels + t_smooth + mg->coarse.assembly_seconds + mg->coarse.solver_seconds, t_levels, t_smooth,
            mg->coarse.assembly_seconds, mg->coarse.solver_seconds);
}

static int mg_setup(Pc *pc, LinOp A, Operator *op, const Vec *state) {
    (void)A;
    Multigrid *mg = pc->data;
    double t0 = now(), t_smooth = 0.0;
    if (!mg) {
        mg = pc->data = calloc(1, sizeof *mg);
        if (!mg) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for multigrid");
        mg->profile = getenv("FEMTO_MG_PROFILE");
        if (mg->profile && !mg->profile[0]) mg->profile = NULL;
        FEM_TRY(mg_build(mg, op, &pc->set));
    }
    for (int l = 0; l < mg->n; l++) {
        MgLevel *L = &mg->L[l];
        if (l > 0) FEM_TRY(level_state(mg, l, state));
        const int coarsest = l == mg->n - 1;
        if (coarsest && !L->diag.data) FEM_TRY(vec_duplicate(&L->diag, &L->res)); /* the finest alone */
        Vec *diag = coarsest ? &L->diag : &L->t;
        FEM_TRY(op_diagonal(L->op, diag));
        double t = now();
        if (!coarsest) FEM_TRY(chebyshev_setup(&L->cheb, op_linop(L->op), diag, MG_SMOOTH_LOWER));
        t_smooth += now() - t;
    }
    double t_levels = now() - t0 - t_smooth;
    MgLevel *C = &mg->L[mg->n - 1];
    FEM_TRY(mg_coarse_setup(&mg->coarse, C->op, &C->diag, &pc->set));
    describe(mg, t_levels, t_smooth);
    return FEM_OK;
}

/* FEMTO_MG_PROFILE: the time since *t into part `part` of level l, once the device has finished its work. */
static int mark(Multigrid *mg, int l, int part, double *t) {
    if (!mg->profile) return FEM_OK;
    Device *dev = mg->L[0].op->dev;
    if (dev->ops.sync) FEM_TRY(dev->ops.sync(dev));
    double t1 = now();
    mg->prof[l][part] += t1 - *t;
    *t = t1;
    return FEM_OK;
}

/* x = M^-1 b on level l: smooth, correct from the coarser level, smooth again. */
static int vcycle(Multigrid *mg, int l, const Vec *b, Vec *x) {
    MgLevel *L = &mg->L[l];
    double t = mg->profile ? now() : 0.0;
    if (l == mg->n - 1) {
        FEM_TRY(mg_coarse_apply(&mg->coarse, b, x));
        /* the coarse solvers fill x's owned entries; its ghosts from them, for the prolongation */
        if (L->op->halo) FEM_TRY(halo_forward(L->op->halo, x));
        return mark(mg, l, 0, &t);
    }
    MgLevel *C = &mg->L[l + 1];
    /* every vector of the cycle is consistent (fem/operator.h): one exchange per operator application */
    LinOp A = op_linop_consistent(L->op);
    FEM_TRY(chebyshev_apply(&L->cheb, A, b, x));
    FEM_TRY(mark(mg, l, 0, &t));
    FEM_TRY(A.apply(A.ctx, x, &L->t));
    FEM_TRY(vec_copy(&L->res, b));
    FEM_TRY(vec_axpby(-1.0, &L->t, 1.0, &L->res));
    FEM_TRY(down_restrict(L, &L->res, &C->b));
    FEM_TRY(zero_constrained(C->op, &C->b));
    FEM_TRY(mark(mg, l, 1, &t));
    FEM_TRY(vcycle(mg, l + 1, &C->b, &C->x));
    t = mg->profile ? now() : 0.0;
    FEM_TRY(down_prolong(L, &C->x, &L->t));
    FEM_TRY(zero_constrained(L->op, &L->t));
    FEM_TRY(vec_axpby(1.0, &L->t, 1.0, x));
    FEM_TRY(mark(mg, l, 2, &t));
    FEM_TRY(A.apply(A.ctx, x, &L->t));
    FEM_TRY(vec_copy(&L->res, b));
    FEM_TRY(vec_axpby(-1.0, &L->t, 1.0, &L->res));
    FEM_TRY(chebyshev_apply(&L->cheb, A, &L->res, &L->t));
    FEM_TRY(vec_axpby(1.0, &L->t, 1.0, x));
    return mark(mg, l, 3, &t);
}

static int mg_apply(Pc *pc, const Vec *r, Vec *z) {
    Multigrid *mg = pc->data;
    mg->cycles++;
    /* the cycle's vectors are consistent: r's ghosts from their owners (r stays the same vector), unless the
     * Krylov solve keeps them so already */
    Halo *h = mg->L[0].op->halo;
    if (h && !pc->consistent) FEM_TRY(halo_forward(h, (Vec *)r));
    return vcycle(mg, 0, r, z);
}

/* FEMTO_MG_PROFILE's lines (see Multigrid.profile), milliseconds per V-cycle. */
static void profile_write(const Multigrid *mg) {
    FILE *f = mg->profile && mg->cycles ? fopen(mg->profile, "a") : NULL;
    if (!f) return;
    for (int l = 0; l < mg->n; l++) {
        const MgLevel *L = &mg->L[l];
        const double *p = mg->prof[l], c = 1e3 / (double)mg->cycles;
        fprintf(f,
                "rank %d of %d, level %d (%lld owned dofs), %lld cycles, ms per cycle: smooth %.3f, "
                "restrict %.3f, prolong %.3f, post %.3f, total %.3f\n",
                comm_rank(), comm_size(), l, (long long)L->op->space->ndofs_owned, (long long)mg->cycles,
                p[0] * c, p[1] * c, p[2] * c, p[3] * c, (p[0] + p[1] + p[2] + p[3]) * c);
    }
    fclose(f);
}

/* What level L holds for the transfer to an h-level below it. */
static void h_free(MgLevel *L) {
    transfer_destroy(&L->down);
    transfer_destroy(&L->aux_down);
    vec_destroy(&L->hvec);
    vec_destroy(&L->hvec1);
    if (L->hperm) device_free(L->op->dev, L->hperm);
    if (L->hperm1) device_free(L->op->dev, L->hperm1);
    L->hperm = L->hperm1 = NULL;
    if (L->have_hhalo1) halo_destroy(&L->hhalo1);
    if (L->have_hhalo) halo_destroy(&L->hhalo);
    if (L->have_hdist) dist_destroy(&L->hdist);
    if (L->have_hspace) space_destroy(&L->hspace);
    L->have_hspace = L->have_hdist = L->have_hhalo = L->have_hhalo1 = 0;
    L->hsp = NULL;
}

static void level_free(Multigrid *mg, int l) {
    MgLevel *L = &mg->L[l];
    Vec *v[] = {&L->u, &L->aux, &L->b, &L->x, &L->res, &L->t, &L->diag};
    for (int i = 0; i < 7; i++) vec_destroy(v[i]);
    chebyshev_destroy(&L->cheb);
    h_free(L);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) free(L->htags[0][b]), free(L->htags[1][b]);
    if (l > 0) op_destroy(&L->own);
    if (L->have_halo1) halo_destroy(&L->halo1);
    if (L->have_halo) halo_destroy(&L->halo);
    if (L->have_dist) dist_destroy(&L->dist);
    if (l > 0 && !L->have_dist) space_destroy(&L->space);
    free(L->hpart);
    memset(L, 0, sizeof *L);
}

static void mg_destroy(Pc *pc) {
    Multigrid *mg = pc->data;
    if (!mg) return;
    profile_write(mg);
    mg_coarse_destroy(&mg->coarse);
    for (int l = mg->n - 1; l >= 0; l--) level_free(mg, l);
    free(mg);
    pc->data = NULL;
}

static const char *mg_describe(const Pc *pc) {
    const Multigrid *mg = pc->data;
    return mg ? mg->description : "p-multigrid";
}

const PcOps multigrid_ops = {"multigrid", mg_setup, mg_apply, mg_destroy, mg_describe};
