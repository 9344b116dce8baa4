/* Newton's method with matrix-free Krylov (see newton.h). */
#include "newton.h"

#include "error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int jacobian_apply(void *ctx, const double *x, double *y) {
    return op_jacobian((Operator *)ctx, x, y);
}

typedef struct {
    Operator *op;
    const double *extra;
    int64_t n;
} Residual;

static int residual_norm(Residual *R, const double *u, double *r, double *norm) {
    Device *d = R->op->dev;
    FEM_TRY(op_residual(R->op, u, r));
    if (R->extra) FEM_TRY(d->ops.axpby(d, R->n, 1.0, R->extra, 1.0, r));
    double rr;
    FEM_TRY(d->ops.dot(d, R->n, r, r, &rr));
    *norm = sqrt(rr);
    return FEM_OK;
}

int newton_solve(Operator *op, double *u, const double *extra, const NewtonSettings *set, NewtonResult *res,
                 NewtonReport report, void *report_ctx) {
    Device *d = op->dev;
    int64_t n = op->space->ndofs;
    memset(res, 0, sizeof *res);
    double *r = NULL, *du = NULL, *trial = NULL, *rtrial = NULL, *diag = NULL;
    Ksp ksp = {0};
    int status = FEM_OK;
    double *vecs[] = {NULL, NULL, NULL, NULL, NULL};
    for (int i = 0; i < 5 && !status; i++)
        status = device_alloc(d, (void **)&vecs[i], sizeof(double) * (size_t)n);
    r = vecs[0], du = vecs[1], trial = vecs[2], rtrial = vecs[3], diag = vecs[4];
    if (!status) status = ksp_create(&ksp, d, n, &set->ksp);
    Residual R = {op, extra, n};
    LinOp J = {jacobian_apply, op};
    double t0 = now(), rnorm = 0.0;
    if (!status) status = residual_norm(&R, u, r, &rnorm);
    res->rnorm0 = res->rnorm = rnorm;
    res->history[res->nhistory++] = rnorm;
    double target = fmax(set->atol, set->rtol * res->rnorm0);
    while (!status) {
        if (!isfinite(rnorm)) {
            snprintf(res->reason, sizeof res->reason, "the residual is NaN or infinite (iteration %d)",
                     res->iterations);
            break;
        }
        if (rnorm <= target) {
            res->converged = 1;
            break;
        }
        if (res->iterations >= set->max_iterations) {
            snprintf(res->reason, sizeof res->reason,
                     "reached the iteration limit (%d) with |R| = %.3e, above the tolerance %.3e",
                     set->max_iterations, rnorm, target);
            break;
        }
        /* correction: J du = -r, with a forcing term that tightens as R falls (quadratic convergence) */
        status = op_diagonal(op, diag);
        if (!status) status = ksp_setup(&ksp, J, diag);
        if (status) break;
        /* forcing term: no tighter than the Newton target needs; for nonlinear problems 0.1 |R_k| / |R_0|,
         * which keeps the convergence quadratic (Eisenstat-Walker); for affine ones the target at once */
        double need = 0.5 * target / rnorm;
        double eta = set->linear ? need : fmax(need, 0.1 * rnorm / fmax(res->rnorm0, 1e-300));
        ksp.set.rtol = fmax(1e-15, fmin(set->ksp.rtol, eta));
        ksp.set.atol = 0.01 * target;
        status = d->ops.axpby(d, n, -1.0, r, 0.0, rtrial);
        KspResult kr;
        if (!status) status = ksp_solve(&ksp, J, rtrial, du, &kr);
        if (status) break;
        res->linear_iterations += kr.iterations;
        if (!isfinite(kr.rnorm)) {
            snprintf(res->reason, sizeof res->reason, "the linear solver failed: %s", kr.reason);
            break;
        }
        /* backtracking on ||R|| (sufficient decrease) */
        double step = 1.0, tnorm = INFINITY;
        int accepted = 0;
        for (int ls = 0; ls < (set->line_search ? 12 : 1) && !status; ls++) {
            status = d->ops.copy(d, trial, u, sizeof(double) * (size_t)n);
            if (!status) status = d->ops.axpby(d, n, step, du, 1.0, trial);
            if (!status) status = residual_norm(&R, trial, rtrial, &tnorm);
            if (status) break;
            if (!set->line_search || (isfinite(tnorm) && tnorm <= (1.0 - 1e-4 * step) * rnorm)) {
                accepted = 1;
                break;
            }
            step *= 0.5;
        }
        if (status) break;
        if (!accepted) {
            snprintf(res->reason, sizeof res->reason,
                     "stagnated: no step along the Newton direction reduces |R| = %.3e (linear solver: %s)",
                     rnorm, kr.converged ? "converged" : kr.reason);
            /* leave the state of the last residual consistent with u */
            if (!status) status = residual_norm(&R, u, r, &rnorm);
            break;
        }
        status = d->ops.copy(d, u, trial, sizeof(double) * (size_t)n);
        double *tmp = r;
        r = rtrial;
        rtrial = tmp;
        rnorm = tnorm;
        res->iterations++;
        res->rnorm = rnorm;
        if (res->nhistory < 64) res->history[res->nhistory++] = rnorm;
        if (report) {
            NewtonStep st = {res->iterations, rnorm, kr.iterations, step, now() - t0};
            report(report_ctx, &st);
        }
        if (!isfinite(rnorm)) continue;
        if (rnorm > 1e6 * fmax(res->rnorm0, 1e-300)) {
            snprintf(res->reason, sizeof res->reason, "diverged: |R| grew from %.3e to %.3e", res->rnorm0,
                     rnorm);
            break;
        }
    }
    ksp_destroy(&ksp);
    for (int i = 0; i < 5; i++) device_free(d, vecs[i]);
    FEM_TRY(status);
    if (!res->converged) return fem_fail(FEM_ERR_SOLVER, "Newton did not converge: %s", res->reason);
    return FEM_OK;
}
