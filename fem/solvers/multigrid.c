/* p-multigrid preconditioning (PC_MULTIGRID, pc.h).
 *
 * Levels are spaces of decreasing order on the same mesh (p, then about p/2, ..., 1), each with an operator
 * of the same physics, so every level is matrix-free and runs the device's own kernels (or a backend's fused
 * ones). One application is a V-cycle: Chebyshev-Jacobi smoothing before and after the coarse correction
 * (the same polynomial both times, so the cycle is symmetric and CG may use it), transfers by interpolation
 * and its transpose (fem/transfer.h), and on the coarsest level the coarse solver. A nonlinear problem's
 * coarse levels are linearised at the coarse interpolant of the fine state.
 *
 * Over MPI ranks (the fine operator has a halo) each coarse level is this rank's part of the global space of
 * its order (dist_create_order: the same local cells, its own owned-first numbering and halo), its operator
 * and transfers exchange through that halo, its vectors count owned dofs only in reductions, and the coarsest
 * level is solved by BoomerAMG over all ranks (mg_coarse.c). Nothing else changes: the smoother's diagonal is
 * reverse-added by op_diagonal, and every vector operation runs on the rank's device. */
#include "pc.h"

#include "fem/error.h"
#include "fem/halo.h"
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
} MgLevel;

typedef struct {
    int n;
    MgLevel L[MG_MAX_LEVELS];
    MgCoarse coarse;
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
static int coarse_dirichlet(const Operator *fine, const Space *coarse, Halo *halo, int32_t **dofs,
                            int64_t *n) {
    const Space *sf = fine->space;
    int nc = sf->ncomp;
    char *cf = calloc((size_t)sf->ndofs + 1, 1), *cc = calloc((size_t)coarse->ndofs + 1, 1);
    *dofs = malloc(sizeof(int32_t) * (size_t)(coarse->ndofs + 1));
    if (!cf || !cc || !*dofs) {
        free(cf), free(cc), free(*dofs);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a multigrid level");
    }
    for (int64_t i = 0; i < fine->ndir; i++) cf[fine->dir_host[i]] = 1;
    for (int fb = 0; fb < sf->nfacet_blocks; fb++) {
        const SpaceBlock *bf = &sf->facets[fb], *bc = &coarse->facets[fb];
        for (int64_t k = 0; k < bf->count; k++)
            for (int c = 0; c < nc; c++) {
                int all = 1;
                for (int i = 0; i < bf->ndof && all; i++) all = cf[(int64_t)bf->dofs[k * bf->ndof + i] * nc + c];
                for (int j = 0; all && j < bc->ndof; j++) cc[(int64_t)bc->dofs[k * bc->ndof + j] * nc + c] = 1;
            }
    }
    *n = 0;
    int status = flags_over_ranks(halo, cc, coarse->ndofs);
    for (int64_t d = 0; d < coarse->ndofs && !status; d++)
        if (cc[d]) (*dofs)[(*n)++] = (int32_t)d;
    free(cf);
    free(cc);
    return status;
}

static int level_vectors(MgLevel *L, int coarse_level, int degree) {
    const Space *sp = L->op->space;
    Device *d = L->op->dev;
    Vec *v[] = {&L->b, &L->x, &L->res, &L->t, &L->diag};
    for (int i = 0; i < 5; i++) FEM_TRY(vec_create_split(v[i], d, sp->ndofs, sp->ndofs_owned));
    if (coarse_level) FEM_TRY(vec_create_split(&L->u, d, sp->ndofs, sp->ndofs_owned));
    if (coarse_level && L->op->aux_used) FEM_TRY(vec_create_split(&L->aux, d, sp->nnodes, sp->nnodes_owned));
    return chebyshev_create(&L->cheb, &L->b, degree);
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
    return FEM_OK;
}

/* Level l's q-point state, linearised at the coarse interpolant of level l - 1's: the constants, the
 * auxiliary field and the residual evaluated there. */
static int level_state(Multigrid *mg, int l, const Vec *fine_state) {
    MgLevel *F = &mg->L[l - 1], *C = &mg->L[l];
    FEM_TRY(op_update_ctx(C->op));
    const Vec *uf = l == 1 ? fine_state : &F->u;
    if (uf)
        FEM_TRY(transfer_inject(&F->down, uf, &C->u));
    else
        FEM_TRY(vec_zero(&C->u));
    C->op->aux = NULL;
    if (F->op->aux && F->op->aux_used) {
        Vec af = l == 1 ? vec_wrap(F->op->dev, F->op->space->nnodes, (double *)F->op->aux) : F->aux;
        FEM_TRY(transfer_inject(&F->aux_down, &af, &C->aux));
        C->op->aux = C->aux.data;
    }
    return op_residual(C->op, &C->u, &C->t);
}

/* The run log's line: levels, smoother, coarse solver, and where the setup's time went. */
static void describe(Multigrid *mg, double t_levels, double t_smooth) {
    int len = snprintf(mg->description, sizeof mg->description, "p-multigrid, %d level%s (p =", mg->n,
                       mg->n == 1 ? "" : "s");
    for (int l = 0; l < mg->n && len < (int)sizeof mg->description; l++)
        len += snprintf(mg->description + len, sizeof mg->description - (size_t)len, "%s %d", l ? "," : "",
                        mg->L[l].op->space->order);
    if (len < (int)sizeof mg->description)
        snprintf(mg->description + len, sizeof mg->description - (size_t)len,
                 "), Chebyshev(%d) smoothing, coarse: %s; setup %.2f s (levels %.2f s, smoothers %.2f s, coarse "
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
        FEM_TRY(mg_build(mg, op, &pc->set));
    }
    for (int l = 0; l < mg->n; l++) {
        MgLevel *L = &mg->L[l];
        if (l > 0) FEM_TRY(level_state(mg, l, state));
        FEM_TRY(op_diagonal(L->op, &L->diag));
        double t = now();
        if (l < mg->n - 1) FEM_TRY(chebyshev_setup(&L->cheb, op_linop(L->op), &L->diag, MG_SMOOTH_LOWER));
        t_smooth += now() - t;
    }
    double t_levels = now() - t0 - t_smooth;
    MgLevel *C = &mg->L[mg->n - 1];
    FEM_TRY(mg_coarse_setup(&mg->coarse, C->op, &C->diag, &pc->set));
    describe(mg, t_levels, t_smooth);
    return FEM_OK;
}

/* x = M^-1 b on level l: smooth, correct from the coarser level, smooth again. */
static int vcycle(Multigrid *mg, int l, const Vec *b, Vec *x) {
    MgLevel *L = &mg->L[l];
    if (l == mg->n - 1) return mg_coarse_apply(&mg->coarse, b, x);
    MgLevel *C = &mg->L[l + 1];
    LinOp A = op_linop(L->op);
    FEM_TRY(chebyshev_apply(&L->cheb, A, b, x));
    FEM_TRY(A.apply(A.ctx, x, &L->t));
    FEM_TRY(vec_copy(&L->res, b));
    FEM_TRY(vec_axpby(-1.0, &L->t, 1.0, &L->res));
    FEM_TRY(transfer_restrict(&L->down, &L->res, &C->b));
    FEM_TRY(zero_constrained(C->op, &C->b));
    FEM_TRY(vcycle(mg, l + 1, &C->b, &C->x));
    FEM_TRY(transfer_prolong(&L->down, &C->x, &L->t));
    FEM_TRY(zero_constrained(L->op, &L->t));
    FEM_TRY(vec_axpby(1.0, &L->t, 1.0, x));
    FEM_TRY(A.apply(A.ctx, x, &L->t));
    FEM_TRY(vec_copy(&L->res, b));
    FEM_TRY(vec_axpby(-1.0, &L->t, 1.0, &L->res));
    FEM_TRY(chebyshev_apply(&L->cheb, A, &L->res, &L->t));
    return vec_axpby(1.0, &L->t, 1.0, x);
}

static int mg_apply(Pc *pc, const Vec *r, Vec *z) {
    return vcycle(pc->data, 0, r, z);
}

static void mg_destroy(Pc *pc) {
    Multigrid *mg = pc->data;
    if (!mg) return;
    mg_coarse_destroy(&mg->coarse);
    for (int l = 0; l < mg->n; l++) {
        MgLevel *L = &mg->L[l];
        Vec *v[] = {&L->u, &L->aux, &L->b, &L->x, &L->res, &L->t, &L->diag};
        for (int i = 0; i < 7; i++) vec_destroy(v[i]);
        chebyshev_destroy(&L->cheb);
        transfer_destroy(&L->down);
        transfer_destroy(&L->aux_down);
        if (l > 0) op_destroy(&L->own);
        if (L->have_halo1) halo_destroy(&L->halo1);
        if (L->have_halo) halo_destroy(&L->halo);
        if (L->have_dist) dist_destroy(&L->dist);
        if (l > 0 && !L->have_dist) space_destroy(&L->space);
    }
    free(mg);
    pc->data = NULL;
}

static const char *mg_describe(const Pc *pc) {
    const Multigrid *mg = pc->data;
    return mg ? mg->description : "p-multigrid";
}

const PcOps multigrid_ops = {"multigrid", mg_setup, mg_apply, mg_destroy, mg_describe};
