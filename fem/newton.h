/* Newton's method on an Operator: matrix-free Krylov for each correction, backtracking line search, and a
 * report per iteration. A failure says why (diverged, stagnated, NaN, iteration limit) and returns
 * FEM_ERR_SOLVER; it is never a silent "done". */
#ifndef FEMTO_NEWTON_H
#define FEMTO_NEWTON_H

#include "krylov.h"
#include "operator.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    double rtol, atol; /* converged when ||R|| <= max(atol, rtol ||R_0||) */
    int max_iterations;
    int line_search;
    int linear;      /* the residual is affine: solve to the Newton tolerance in one step */
    KspSettings ksp; /* ksp.rtol is the loosest forcing term; Newton tightens it near convergence */
} NewtonSettings;

typedef struct {
    int iteration;
    double rnorm; /* ||R|| after the step */
    int linear_iterations;
    double step;    /* line-search step length */
    double seconds; /* since the solve began */
} NewtonStep;

typedef struct {
    int iterations, linear_iterations;
    double rnorm0, rnorm;
    int converged;
    char reason[256];
    int nhistory;
    double history[64]; /* ||R_k|| */
} NewtonResult;

typedef void (*NewtonReport)(void *ctx, const NewtonStep *step);

/* Solves R(u) + extra = 0 for u (device vector, holding the Dirichlet values on constrained dofs and the
 * initial guess elsewhere). extra may be NULL. report (may be NULL) is called once per iteration. */
int newton_solve(Operator *op, double *u, const double *extra, const NewtonSettings *set, NewtonResult *res,
                 NewtonReport report, void *report_ctx);

FEM_EXTERN_C_END

#endif
