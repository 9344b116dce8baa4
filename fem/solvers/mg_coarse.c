/* The coarsest multigrid level (see multigrid.h): the level's Jacobian assembled (assemble.h) and handed to
 * a coarse solver (coarse.h: BoomerAMG, or cuDSS on a GPU).
 *
 * Over MPI ranks (the level's operator has a halo) each rank assembles the rows of its local dofs from its
 * own cells (a ghost's row is a partial sum), numbers its dofs rank-contiguously through the halo, and
 * BoomerAMG sums the partial rows into their owners' rows. A constrained dof is constrained on every rank
 * that holds it (multigrid.c sees to it): its identity row is kept on the owner only. */
#include "multigrid.h"

#include "assemble.h"
#include "coarse.h"
#include "fem/error.h"
#include "fem/halo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Over MPI ranks: the rank-contiguous numbers of the local dofs (*global, malloc'ed) and the constrained
 * ghosts' identity rows zeroed (their owners keep theirs). */
static int distribute(Operator *op, CsrMatrix *A, CoarseOptions *opt, int64_t **global) {
    *global = malloc(sizeof(int64_t) * (size_t)(A->nrows + 1));
    if (!*global) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse level's numbering");
    FEM_TRY(halo_contiguous_numbers(op->halo, &opt->first, *global));
    opt->global = *global;
    opt->nowned = op->space->ndofs_owned;
    for (int64_t i = 0; i < op->ndir; i++) {
        int64_t r = op->dir_host[i];
        if (r >= opt->nowned)
            for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) A->vals[k] = 0.0;
    }
    return FEM_OK;
}

int mg_coarse_matrix(Operator *op, CsrMatrix *A, CoarseOptions *opt, int64_t **global) {
    *global = NULL;
    FEM_TRY(op_assemble(op, A));
    return op->halo ? distribute(op, A, opt, global) : FEM_OK;
}

int mg_coarse_setup(MgCoarse *c, Operator *op, const Vec *diag, const PcSettings *set) {
    (void)diag;
    c->op = op;
    /* a later setup (Newton's next step) keeps the solver when it can factorise the new values with its
     * analysis of the pattern (coarse_refactor: CHOLMOD, cuDSS, MUMPS over the ranks too); a solver that
     * cannot goes before the new matrix is assembled, and never is in memory together with the new one */
    CoarseSolver *old = c->solver;
    if (old && !coarse_can_refactor(old)) coarse_destroy(&old);
    c->solver = NULL;
    const Space *sp = op->space;
    CoarseOptions opt = {.type = (CoarseType)set->coarse,
                         .block_size = sp->ncomp,
                         .coords = sp->ncomp > 1 ? sp->node_x : NULL,
                         .dim = sp->mesh->dim,
                         .cycles = set->coarse_cycles > 0 ? set->coarse_cycles : 3,
                         .cache_dir = set->cache_dir,
                         .precision = (CoarsePrecision)set->coarse_precision,
                         .inverse = (CoarseInverse)set->coarse_inverse};
    CsrMatrix A;
    int64_t *global = NULL;
    double t0 = now();
    int status = mg_coarse_matrix(op, &A, &opt, &global);
    double t1 = now();
    CoarseSolver *cs = NULL;
    int kept = 0;
    if (!status && old && coarse_refactor(old, &A, &kept) != FEM_OK) /* not factorised: a new solver, with */
        fem_clear_error(), kept = 0;                                 /* AUTO's fallbacks */
    if (kept) cs = old, old = NULL;
    coarse_destroy(&old);
    if (!status && !kept) status = coarse_create(op->dev, &A, &opt, &cs);
    free(global);
    csr_destroy(&A);
    c->assembly_seconds = t1 - t0;
    c->solver_seconds = now() - t1;
    FEM_TRY(status);
    c->solver = cs;
    snprintf(c->description, sizeof c->description, "%s", coarse_describe(cs));
    return FEM_OK;
}

int mg_coarse_apply(MgCoarse *c, const Vec *b, Vec *x) {
    return coarse_apply(c->solver, b->data, x->data);
}

const char *mg_coarse_describe(const MgCoarse *c) {
    return c->description;
}

void mg_coarse_destroy(MgCoarse *c) {
    CoarseSolver *cs = c->solver;
    if (cs) coarse_destroy(&cs);
    memset(c, 0, sizeof *c);
}
