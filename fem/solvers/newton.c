/* Newton's method with matrix-free Krylov (see newton.h). */
#include "newton.h"

#include "fem/error.h"
#include "fem/halo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* After a converged linear solve, a residual that no step reduces while it lies within this factor of the
 * tolerance is the round-off floor of the evaluation, not a stagnating Newton. */
#define STALL_FACTOR 100.0

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int newton_create(Newton *nw, Operator *op, const NewtonSettings *set, NewtonReport report, void *report_ctx) {
    memset(nw, 0, sizeof *nw);
    nw->op = op;
    nw->set = *set;
    nw->report = report;
    nw->report_ctx = report_ctx;
    Vec *vecs[] = {&nw->r, &nw->du, &nw->trial, &nw->rtrial, &nw->r_zero, &nw->tmp};
    int status = FEM_OK;
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0] && !status; i++)
        status = vec_create_split(vecs[i], op->dev, op->space->ndofs, op->space->ndofs_owned);
    if (!status) status = ksp_create(&nw->ksp, &nw->r, &set->ksp);
    if (!status) status = pc_create(&nw->pc, &nw->r, &set->pc);
    if (status) newton_destroy(nw);
    return status;
}

void newton_destroy(Newton *nw) {
    if (!nw->op) return;
    Vec *vecs[] = {&nw->r, &nw->du, &nw->trial, &nw->rtrial, &nw->r_zero, &nw->tmp};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) vec_destroy(vecs[i]);
    ksp_destroy(&nw->ksp);
    pc_destroy(&nw->pc);
    memset(nw, 0, sizeof *nw);
}

void newton_jacobian_changed(Newton *nw) {
    nw->pc_ready = 0;
}

const char *newton_how(NewtonHow how) {
    switch (how) {
    case NEWTON_BY_RESIDUAL: return "residual below the tolerance";
    case NEWTON_BY_STEP: return "negligible correction";
    case NEWTON_BY_LINEAR: return "affine problem: one linear solve";
    case NEWTON_BY_FLOOR: return "residual at the round-off floor";
    }
    return "";
}

/* r = R(u) + extra and its norm; internal (may be NULL) = |r - (R(0) + extra)|, the size of the internal
 * forces (or heat flows) that cancel in r. */
static int evaluate(Newton *nw, const Vec *u, const Vec *extra, Vec *r, double *rnorm, double *internal) {
    FEM_TRY(op_residual(nw->op, u, r));
    if (extra) FEM_TRY(vec_axpby(1.0, extra, 1.0, r));
    FEM_TRY(vec_norm(r, rnorm));
    if (!internal) return FEM_OK;
    FEM_TRY(vec_copy(&nw->tmp, r));
    FEM_TRY(vec_axpby(-1.0, &nw->r_zero, 1.0, &nw->tmp));
    return vec_norm(&nw->tmp, internal);
}

/* R(0) + extra (the applied loads, with the constrained rows zero) into r_zero, and the first residual. */
static int start(Newton *nw, const Vec *u, const Vec *extra, NewtonResult *res) {
    double load, rnorm, internal;
    FEM_TRY(vec_zero(&nw->trial));
    FEM_TRY(evaluate(nw, &nw->trial, extra, &nw->r_zero, &load, NULL));
    FEM_TRY(evaluate(nw, u, extra, &nw->r, &rnorm, &internal));
    res->rnorm0 = res->rnorm = rnorm;
    res->scale0 = res->scale = fmax(rnorm, fmax(load, internal));
    res->history[res->nhistory++] = rnorm;
    return FEM_OK;
}

static double tolerance(const Newton *nw, const NewtonResult *res) {
    return fmax(nw->set.atol, nw->set.rtol * res->scale);
}

/* Before a step: NaN, converged by the residual, or out of iterations. Returns 1 when Newton stops. */
static int stop_before_step(const Newton *nw, NewtonResult *res) {
    if (!isfinite(res->rnorm)) {
        snprintf(res->reason, sizeof res->reason, "the residual is NaN or infinite (iteration %d)",
                 res->iterations);
        return 1;
    }
    if (res->rnorm <= tolerance(nw, res)) {
        res->converged = 1;
        res->how = NEWTON_BY_RESIDUAL;
        return 1;
    }
    if (res->iterations >= nw->set.max_iterations) {
        snprintf(res->reason, sizeof res->reason,
                 "reached the iteration limit (%d) with |R| = %.3e, above the tolerance %.3e (%.1e of the "
                 "residual scale %.3e)%s",
                 nw->set.max_iterations, res->rnorm, tolerance(nw, res), res->rnorm / res->scale, res->scale,
                 res->capped ? "; some linear solves stopped at their iteration cap" : "");
        return 1;
    }
    return 0;
}

/* The preconditioner set up at u, and its bookkeeping started. */
static int setup_pc(Newton *nw, const Vec *u, NewtonResult *res) {
    double t0 = now();
    FEM_TRY(pc_setup(&nw->pc, op_linop(nw->op), nw->op, u));
    res->pc_seconds += now() - t0;
    res->pc_setups++;
    nw->pc_ready = 1;
    nw->pc_first_its = -1;
    nw->pc_extra_its = 0;
    return FEM_OK;
}

/* Whether the kept preconditioner of a nonlinear problem has cost as many extra Krylov iterations as its first
 * solve took (see Newton). */
static int pc_worn(const Newton *nw) {
    if (nw->set.linear) return 0;
    return nw->set.rebuild_pc || nw->pc_first_its < 0 || nw->pc_extra_its >= nw->pc_first_its;
}

/* Over MPI ranks with a preconditioner that keeps vectors consistent, the Krylov solve runs on consistent
 * vectors: the right-hand side's ghosts forwarded once, then one exchange per operator application
 * (op_jacobian_consistent) where op_jacobian takes two, and none before the preconditioner. */
static int krylov(Newton *nw, KspResult *kr) {
    FEM_TRY(vec_axpby(-1.0, &nw->r, 0.0, &nw->rtrial));
    Halo *h = nw->op->halo;
    nw->pc.consistent = h && pc_keeps_consistent(&nw->pc);
    if (nw->pc.consistent) FEM_TRY(halo_forward(h, &nw->rtrial));
    LinOp A = nw->pc.consistent ? op_linop_consistent(nw->op) : op_linop(nw->op);
    return ksp_solve(&nw->ksp, A, &nw->pc, &nw->rtrial, &nw->du, kr);
}

/* du from J du = -r: the preconditioner (again, unless the one kept still serves: see Newton), the forcing
 * term (tight enough for the Newton target, no tighter; for affine problems the linear tolerance), and the
 * Krylov solve; a kept preconditioner under which it did not converge is set up again and the solve
 * repeated. */
static int correction(Newton *nw, const Vec *u, NewtonResult *res, KspResult *kr) {
    int fresh = !nw->pc_ready || pc_worn(nw);
    if (fresh) FEM_TRY(setup_pc(nw, u, res));
    double target = tolerance(nw, res), need = target / res->rnorm;
    double eta = nw->set.linear ? fmin(nw->set.ksp.rtol, need)
                                : fmin(nw->set.ksp.rtol, fmax(0.5 * need, 0.1 * res->rnorm / res->rnorm0));
    nw->ksp.set.rtol = fmax(1e-12, eta);
    nw->ksp.set.atol = 0.01 * target;
    /* with a kept preconditioner the solve may spend what is left of its budget beyond the first solve's count,
     * no more: past that a new one is cheaper (a k(T) heat problem's second solve took 500 iterations with the
     * first's preconditioner, and 7 with its own) */
    const int cap = nw->ksp.set.max_iterations, kept = !fresh && !nw->set.linear;
    const int budget = 2 * nw->pc_first_its - nw->pc_extra_its;
    if (kept && budget < cap) nw->ksp.set.max_iterations = budget;
    int status = krylov(nw, kr);
    nw->ksp.set.max_iterations = cap;
    FEM_TRY(status);
    if (kept && !kr->converged) {
        res->linear_iterations += kr->iterations;
        FEM_TRY(setup_pc(nw, u, res));
        FEM_TRY(krylov(nw, kr));
    }
    res->linear_iterations += kr->iterations;
    res->capped += kr->capped;
    if (nw->pc_first_its < 0)
        nw->pc_first_its = kr->iterations;
    else
        nw->pc_extra_its += kr->iterations > nw->pc_first_its ? kr->iterations - nw->pc_first_its : 0;
    return FEM_OK;
}

/* A trial step of the line search: trial = u + step du, rtrial = R(trial) + extra, its norm and internal size. */
static int try_step(Newton *nw, const Vec *u, const Vec *extra, double step, double *tnorm, double *internal) {
    FEM_TRY(vec_copy(&nw->trial, u));
    FEM_TRY(vec_axpby(step, &nw->du, 1.0, &nw->trial));
    return evaluate(nw, &nw->trial, extra, &nw->rtrial, tnorm, internal);
}

/* The line search of a problem with an energy (a symmetric Jacobian: R is the energy's gradient): along du the
 * energy's slope is g(s) = du . R(u + s du), negative at s = 0 for a descent direction. A step is accepted
 * where the slope has shrunk to at most 0.8 of |g(0)| (the energy then fell by a fair share of what the
 * direction offers). From s = 1: past the minimum (g > 0), the secant's zero between the last step below it and
 * s; short of it (g < 0), the secant's zero beyond s, at most 4 s and at most 4; a NaN or infinite residual (an
 * inverted cell), halfway back to that last step short of it (from s = 1: half of s); at most 8 tries, every new
 * step at least 0.1 of the last. The residual norm, which
 * a large rotation can raise on the way to the energy's minimum, is not asked to fall. Returns *accepted = 0
 * when no try was accepted (the caller then searches on |R|). */
static int energy_search(Newton *nw, const Vec *u, const Vec *extra, double *step, double *tnorm, double *internal,
                         int *accepted) {
    double g0;
    FEM_TRY(vec_dot(&nw->du, &nw->r, &g0));
    *step = 1.0;
    *accepted = 0;
    if (!(g0 < 0.0)) return FEM_OK; /* not a descent direction */
    double s = 1.0, lo = 0.0, glo = g0; /* lo: the longest step tried whose slope is still negative */
    for (int ls = 0; ls < 8; ls++) {
        FEM_TRY(try_step(nw, u, extra, s, tnorm, internal));
        double g = NAN;
        if (isfinite(*tnorm)) FEM_TRY(vec_dot(&nw->du, &nw->rtrial, &g));
        if (isfinite(g) && fabs(g) <= 0.8 * fabs(g0)) {
            *step = s;
            *accepted = 1;
            return FEM_OK;
        }
        double next;
        if (!isfinite(g)) {
            next = lo + 0.5 * (s - lo);
        } else if (g > 0.0) { /* past the minimum: between lo and s */
            next = lo + (s - lo) * glo / (glo - g);
        } else { /* short of it: beyond s */
            next = g > glo ? lo + (s - lo) * glo / (glo - g) : 2.0 * s;
            next = fmin(fmin(next, 4.0 * s), 4.0);
            lo = s, glo = g;
        }
        s = fmax(next, 0.1 * s);
    }
    return FEM_OK;
}

/* The step along du: trial = u + step du, rtrial = R(trial). With an energy (settings.symmetric) on its slope
 * (energy_search; FEMTO_NORM_SEARCH=1 skips it, for comparisons), else, or where that accepts no step,
 * backtracking on |R| (sufficient decrease). An affine problem always takes the full step: with an exact
 * Jacobian a truncated CG correction still lowers the error in the energy norm, though not always |R|, and a
 * shortened step would only slow the restarted solve down. */
static int line_search(Newton *nw, const Vec *u, const Vec *extra, double rnorm, double *step, double *tnorm,
                       double *internal, int *accepted) {
    int search = nw->set.line_search && !nw->set.linear;
    if (search && nw->set.symmetric && !getenv("FEMTO_NORM_SEARCH")) {
        FEM_TRY(energy_search(nw, u, extra, step, tnorm, internal, accepted));
        if (*accepted) return FEM_OK;
    }
    *step = 1.0;
    *accepted = 0;
    for (int ls = 0; ls < (search ? 12 : 1); ls++) {
        FEM_TRY(try_step(nw, u, extra, *step, tnorm, internal));
        if (!search || (isfinite(*tnorm) && *tnorm <= (1.0 - 1e-4 * *step) * rnorm)) {
            *accepted = 1;
            return FEM_OK;
        }
        *step *= 0.5;
    }
    return FEM_OK;
}

/* No step reduced |R|: the round-off floor when the linear solve converged and the residual is already
 * close to the tolerance (or the correction negligible), else a stagnating Newton. */
static int stalled(Newton *nw, const Vec *u, const Vec *extra, NewtonResult *res, const KspResult *kr,
                   double du_norm, double u_norm) {
    double tol = tolerance(nw, res);
    if (kr->converged && (res->rnorm <= STALL_FACTOR * tol || du_norm <= nw->set.stol * u_norm)) {
        res->converged = 1;
        res->how = NEWTON_BY_FLOOR;
        snprintf(res->note, sizeof res->note,
                 "the residual stalled at |R| = %.3e (%.1e of the residual scale %.3e): the round-off floor of "
                 "this problem",
                 res->rnorm, res->rnorm / res->scale, res->scale);
    } else {
        snprintf(res->reason, sizeof res->reason,
                 "stagnated: no step along the Newton direction reduces |R| = %.3e (tolerance %.3e; linear "
                 "solver: %s)",
                 res->rnorm, tol, kr->converged ? "converged" : kr->reason);
    }
    /* the operator's q-point state belongs to the last residual evaluated: make it u's again */
    double rnorm;
    return evaluate(nw, u, extra, &nw->r, &rnorm, NULL);
}

/* One Newton iteration: correction, line search, and the convergence tests that only a step can decide. */
static int iterate(Newton *nw, Vec *u, const Vec *extra, NewtonResult *res, NewtonStep *st) {
    KspResult kr;
    FEM_TRY(correction(nw, u, res, &kr));
    if (!isfinite(kr.rnorm)) {
        snprintf(res->reason, sizeof res->reason, "the linear solver failed: %s", kr.reason);
        return FEM_OK;
    }
    double du_norm, u_norm, step, tnorm, internal;
    int accepted;
    FEM_TRY(vec_norm(&nw->du, &du_norm));
    FEM_TRY(vec_norm(u, &u_norm));
    FEM_TRY(line_search(nw, u, extra, res->rnorm, &step, &tnorm, &internal, &accepted));
    if (!accepted) return stalled(nw, u, extra, res, &kr, du_norm, u_norm);
    FEM_TRY(vec_copy(u, &nw->trial));
    double rnorm_before = res->rnorm;
    Vec tmp = nw->r;
    nw->r = nw->rtrial;
    nw->rtrial = tmp;
    res->rnorm = tnorm;
    /* the internal forces of the current iterate, not the largest met: a full step that overshoots (the energy
     * search takes them) has large internal forces, and the tolerance must not keep them once they are gone */
    res->scale = fmax(res->scale0, internal);
    res->iterations++;
    if (res->nhistory < 64) res->history[res->nhistory++] = tnorm;
    *st = (NewtonStep){res->iterations, tnorm, res->scale, kr.iterations, kr.converged, step, 0.0};
    if (nw->set.linear && !kr.converged && !(tnorm < 0.5 * rnorm_before)) {
        /* another capped solve, restarted from scratch, would lose the same ground again */
        snprintf(res->reason, sizeof res->reason,
                 "the linear solver stopped at its cap of %d iterations (|r|/|b| = %.1e, needed %.1e), and "
                 "restarting it does not reduce |R|; raise <linear max-iterations> or use a stronger "
                 "preconditioner",
                 nw->set.ksp.max_iterations, kr.rnorm / fmax(kr.rnorm0, 1e-300), nw->ksp.set.rtol);
        return FEM_OK;
    }
    if (!kr.converged || !isfinite(tnorm)) return FEM_OK;
    /* an affine problem is solved by one converged linear solve; a residual far above the tolerance after
     * it means the problem was not affine after all, and Newton goes on */
    if (nw->set.linear && tnorm <= sqrt(nw->set.rtol) * res->scale) {
        res->converged = 1;
        res->how = tnorm <= tolerance(nw, res) ? NEWTON_BY_RESIDUAL : NEWTON_BY_LINEAR;
    } else if (nw->set.stol > 0 && step * du_norm <= nw->set.stol * fmax(u_norm, 1e-300)) {
        res->converged = 1;
        res->how = NEWTON_BY_STEP;
        snprintf(res->note, sizeof res->note, "the correction |du| = %.3e is %.1e of |u|: nothing left to correct",
                 step * du_norm, step * du_norm / u_norm);
    }
    return FEM_OK;
}

int newton_solve(Newton *nw, Vec *u, const Vec *extra, NewtonResult *res) {
    memset(res, 0, sizeof *res);
    double t0 = now();
    int status = start(nw, u, extra, res);
    while (!status && !stop_before_step(nw, res)) {
        NewtonStep st = {0};
        status = iterate(nw, u, extra, res, &st);
        st.seconds = now() - t0;
        if (!status && st.iteration && nw->report) nw->report(nw->report_ctx, &st);
        if (status || (!res->converged && res->reason[0])) break;
        if (res->converged) break;
        if (isfinite(res->rnorm) && res->rnorm > 1e6 * fmax(res->rnorm0, 1e-300)) {
            snprintf(res->reason, sizeof res->reason, "diverged: |R| grew from %.3e to %.3e", res->rnorm0,
                     res->rnorm);
            break;
        }
    }
    if (!nw->set.linear && (status || !res->converged)) nw->pc_ready = 0; /* a cut-back step: a new one */
    FEM_TRY(status);
    if (!res->converged) return fem_fail(FEM_ERR_SOLVER, "Newton did not converge: %s", res->reason);
    return FEM_OK;
}
