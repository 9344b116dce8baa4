/* The coarsest multigrid level (see multigrid.h): the level's Jacobian assembled (assemble.h) and handed to
 * a coarse solver (coarse.h: BoomerAMG, or cuDSS on a GPU). */
#include "multigrid.h"

#include "assemble.h"
#include "coarse.h"
#include "fem/error.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int mg_coarse_setup(MgCoarse *c, Operator *op, const Vec *diag, const PcSettings *set) {
    (void)diag;
    c->op = op;
    CoarseSolver *old = c->solver;
    if (old) coarse_destroy(&old);
    c->solver = NULL;
    CsrMatrix A;
    double t0 = now();
    FEM_TRY(op_assemble(op, &A));
    double t1 = now();
    const Space *sp = op->space;
    CoarseOptions opt = {.type = (CoarseType)set->coarse,
                         .block_size = sp->ncomp,
                         .coords = sp->ncomp > 1 ? sp->node_x : NULL,
                         .dim = sp->mesh->dim,
                         .cycles = set->coarse_cycles > 0 ? set->coarse_cycles : 3};
    CoarseSolver *cs = NULL;
    int status = coarse_create(op->dev, &A, &opt, &cs);
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
