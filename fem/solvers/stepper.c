/* Time stepping and load continuation (see stepper.h). */
#include "stepper.h"

#include "fem/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Load continuation's bounds: at most MAX_CUTBACKS failures in a row, an increment never below MIN_INCREMENT
 * of the nominal one, at most MAX_ATTEMPTS Newton solves in all. */
enum { MAX_CUTBACKS = 10, MAX_ATTEMPTS = 400 };
#define MIN_INCREMENT (1.0 / 1024.0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int stepper_create(Stepper *s, Operator *op, Newton *nw, Vec *u, int nonlinear, int64_t ndir,
                   const int32_t *dir_dofs, const double *dir_values, const StepperHooks *hooks) {
    *s = (Stepper){
        .op = op,
        .nw = nw,
        .u = u,
        .hooks = *hooks,
        .nonlinear = nonlinear,
        .ndir = ndir,
        .dir_values = dir_values,
        .a = -1.0,
        .theta = -1.0,
    };
    Device *d = op->dev;
    int status = FEM_OK;
    /* load continuation's two where a nonlinear problem has a load to step (an affine one takes the full
     * load at once and keeps no earlier state); time stepping's four come with stepper_transient */
    if (nonlinear && hooks->set_load) {
        FEM_CHECK(vec_duplicate(&s->saved, u));
        FEM_CHECK(vec_duplicate(&s->prev, u));
    }
    if (ndir) {
        FEM_CHECK(device_alloc_copy(d, (void **)&s->dir_idx, dir_dofs, sizeof(int32_t) * (size_t)ndir));
        FEM_CHECK(device_alloc(d, (void **)&s->dir_vals, sizeof(double) * (size_t)ndir));
        FEM_CHECK_ALLOC(s->scaled, ndir, "prescribed values at a load factor");
    }
cleanup:
    if (status) stepper_destroy(s);
    return status;
}

void stepper_destroy(Stepper *s) {
    if (!s->op) return;
    Vec *vecs[] = {&s->saved, &s->prev, &s->aux, &s->un, &s->unm1, &s->extra};
    for (int i = 0; i < 6; i++) vec_destroy(vecs[i]);
    device_free(s->op->dev, s->dir_idx);
    device_free(s->op->dev, s->dir_vals);
    free(s->scaled);
    memset(s, 0, sizeof *s);
}

/* The prescribed values at load factor L into u. */
static int prescribe(Stepper *s, double L) {
    Device *d = s->op->dev;
    if (!s->ndir) return FEM_OK;
    for (int64_t i = 0; i < s->ndir; i++) s->scaled[i] = L * s->dir_values[i];
    FEM_TRY(d->ops.upload(d, s->dir_vals, s->scaled, sizeof(double) * (size_t)s->ndir));
    return d->ops.scatter(d, s->ndir, s->dir_idx, s->dir_vals, s->u->data);
}

static void report(Stepper *s, StepReport *rep) {
    rep->newton = &s->last;
    if (s->hooks.report) s->hooks.report(s->hooks.ctx, rep);
}

/* One Newton solve, counted; reported when it converged. Returns its status (FEM_ERR_SOLVER: not converged,
 * with the reason in s->last). */
static int solve(Stepper *s, const Vec *extra, StepReport *rep) {
    double t0 = now();
    int status = newton_solve(s->nw, s->u, extra, &s->last);
    rep->seconds = now() - t0;
    s->solve_seconds += rep->seconds;
    s->solves++;
    s->newton_iterations += s->last.iterations;
    s->linear_iterations += s->last.linear_iterations;
    s->capped += s->last.capped;
    s->pc_setups += s->last.pc_setups;
    if (status == FEM_OK) report(s, rep);
    return status;
}

/* ---------------------------------------------------------------- load continuation */

typedef struct {
    int nsteps, level, failures, attempts;
    double L, nominal, inc, L_prev; /* L_prev < 0: no history yet */
} Continuation;

/* u += (u - u_prev) dL / dL_prev: the secant predictor (nonlinear problems, after two converged states):
 * for slender structures the linear predictor from the last state alone bends without shortening, and the
 * resulting stretch forces keep Newton far from its quadratic range. */
static int predict(Stepper *s, const Continuation *c, double target) {
    if (c->L_prev < 0.0 || !s->nonlinear) return FEM_OK;
    double f = (target - c->L) / (c->L - c->L_prev);
    FEM_TRY(vec_axpby(f, s->u, 1.0, s->u));
    return vec_axpby(-f, &s->prev, 1.0, s->u);
}

static int set_load(Stepper *s, double L) {
    if (s->hooks.set_load) FEM_TRY(s->hooks.set_load(s->hooks.ctx, L));
    FEM_TRY(op_update_ctx(s->op));
    return prescribe(s, L);
}

/* A failed solve at load `target` (nonlinear): cut the increment, or fail for good (exit 3 with why). */
static int cut_back(Stepper *s, Continuation *c, double target, StepReport *rep) {
    const NewtonResult *res = &s->last;
    double inc = (target - c->L) / 2;
    if (++c->failures > MAX_CUTBACKS || inc < MIN_INCREMENT * c->nominal || c->attempts >= MAX_ATTEMPTS)
        return fem_fail(FEM_ERR_SOLVER,
                        "the load step from %.4g to %.4g of the full load failed %d time%s in a row (%s): %s",
                        c->L, target, c->failures, c->failures == 1 ? "" : "s",
                        c->attempts >= MAX_ATTEMPTS        ? "no Newton solves left"
                        : inc < MIN_INCREMENT * c->nominal ? "the increment cannot be cut further"
                                                           : "too many cutbacks",
                        res->reason);
    fem_clear_error(); /* Newton's message: this failure is handled */
    s->cutbacks++;
    c->inc = inc;
    rep->failed = 1;
    rep->next = inc;
    report(s, rep);
    return vec_copy(s->u, &s->saved);
}

/* A converged step to `target`: the state moves on, the increment grows back after an easy step, and the
 * nominal levels of a nonlinear multi-step run are written. */
static int step_done(Stepper *s, Continuation *c, double target) {
    c->failures = 0;
    if (s->nonlinear) FEM_TRY(vec_copy(&s->prev, &s->saved));
    c->L_prev = c->L;
    c->L = target;
    s->steps++;
    if (s->last.iterations <= 4) c->inc = fmin(2 * c->inc, c->nominal);
    if (c->L < (double)c->level / c->nsteps - 1e-12) return FEM_OK;
    int write = s->nonlinear && c->nsteps > 1 && c->level < c->nsteps;
    c->level++;
    return write ? s->hooks.write(s->hooks.ctx, c->L) : FEM_OK;
}

static int continuation(Stepper *s, int load_steps) {
    int n = s->nonlinear && load_steps > 0 ? load_steps : 1;
    Continuation c = {.nsteps = n, .level = 1, .nominal = 1.0 / n, .inc = 1.0 / n, .L_prev = -1.0};
    while (c.L < 1.0 - 1e-12) {
        /* never step past the next nominal load level: results are written there */
        double target = fmin((double)c.level / c.nsteps, c.L + c.inc);
        if (s->nonlinear) FEM_TRY(vec_copy(&s->saved, s->u)); /* what a cutback returns to */
        FEM_TRY(predict(s, &c, target));
        FEM_TRY(set_load(s, target));
        StepReport rep = {.kind = STEP_LOAD, .t = target, .from = c.L};
        int solved = solve(s, NULL, &rep);
        c.attempts++;
        if (solved == FEM_ERR_SOLVER && s->nonlinear)
            FEM_TRY(cut_back(s, &c, target, &rep));
        else if (solved)
            return solved; /* an affine problem: no load step could help it */
        else
            FEM_TRY(step_done(s, &c, target));
    }
    return s->hooks.write(s->hooks.ctx, 1.0);
}

int stepper_steady(Stepper *s, int load_steps) {
    if (s->hooks.set_load) return continuation(s, load_steps);
    FEM_TRY(op_update_ctx(s->op));
    FEM_TRY(prescribe(s, 1.0));
    StepReport rep = {.kind = STEP_STEADY};
    FEM_TRY(solve(s, NULL, &rep));
    s->steps++;
    return s->hooks.write(s->hooks.ctx, 0.0);
}

/* ---------------------------------------------------------------- time stepping */

/* The time discretisation a u + theta F(u): the Jacobian changes with it, and so must the preconditioner. */
static int set_time(Stepper *s, double a, double theta) {
    FEM_TRY(s->hooks.set_time(s->hooks.ctx, a, theta));
    if (a != s->a || theta != s->theta) newton_jacobian_changed(s->nw);
    s->a = a;
    s->theta = theta;
    return FEM_OK;
}

/* The history term h of step `step` into s->aux (and, for Crank-Nicolson, F(u_n) / 2 into s->extra).
 * Backward Euler: (u - u_n)/dt; BDF2 (from step 2): (3 u - 4 u_n + u_n-1)/(2 dt); Crank-Nicolson (from step
 * 3, after two backward Euler steps: Rannacher's start-up, which damps the modes a sudden boundary change
 * excites and that Crank-Nicolson alone barely damps; two steps of local error O(dt^2) keep it second order):
 * (u - u_n)/dt + (F(u) + F(u_n))/2. */
static int history(Stepper *s, StepScheme scheme, int step, double dt, int *explicit_half) {
    *explicit_half = 0;
    if (scheme == TIME_SCHEME_BDF2 && step > 1) {
        FEM_TRY(set_time(s, 1.5 / dt, 1.0));
        FEM_TRY(vec_axpby(-2.0 / dt, &s->un, 0.0, &s->aux));
        return vec_axpby(0.5 / dt, &s->unm1, 1.0, &s->aux);
    }
    if (scheme == TIME_SCHEME_CRANK_NICOLSON && step > 2) {
        FEM_TRY(s->hooks.set_time(s->hooks.ctx, 0.0, 0.5)); /* F(u_n) / 2 alone, the explicit half */
        s->op->aux = NULL;
        FEM_TRY(op_update_ctx(s->op));
        FEM_TRY(op_residual(s->op, &s->un, &s->extra));
        *explicit_half = 1;
        FEM_TRY(set_time(s, 1.0 / dt, 0.5));
        return vec_axpby(-1.0 / dt, &s->un, 0.0, &s->aux);
    }
    FEM_TRY(set_time(s, 1.0 / dt, 1.0));
    return vec_axpby(-1.0 / dt, &s->un, 0.0, &s->aux);
}

static int time_loop(Stepper *s, const TimeStepping *ts, int nsteps, double dt) {
    for (int step = 1; step <= nsteps; step++) {
        double t = ts->start + step * dt;
        if (step > 1) {
            FEM_TRY(vec_copy(&s->unm1, &s->un));
            FEM_TRY(vec_copy(&s->un, s->u));
        }
        int cn;
        FEM_TRY(history(s, ts->scheme, step, dt, &cn));
        s->op->aux = s->aux.data;
        FEM_TRY(op_update_ctx(s->op));
        StepReport rep = {.kind = STEP_TIME, .index = step, .count = nsteps, .t = t};
        FEM_TRY(solve(s, cn ? &s->extra : NULL, &rep));
        s->steps++;
        if (step % ts->output_every == 0 || step == nsteps) FEM_TRY(s->hooks.write(s->hooks.ctx, t));
    }
    return FEM_OK;
}

int stepper_transient(Stepper *s, const TimeStepping *ts) {
    if (!s->hooks.set_time) return fem_fail(FEM_ERR_INTERNAL, "this physics has no time derivative");
    int nsteps = (int)ceil((ts->end - ts->start) / ts->step - 1e-9);
    double dt = (ts->end - ts->start) / nsteps;
    /* the initial field is written as given; the prescribed values then hold from t = start on, in the
     * history state too (Crank-Nicolson's F(u_n) must see them, or the jump excites undamped modes) */
    Vec *vecs[] = {&s->aux, &s->un, &s->unm1, &s->extra};
    for (int i = 0; i < 4; i++)
        if (!vecs[i]->data) FEM_TRY(vec_duplicate(vecs[i], s->u));
    FEM_TRY(s->hooks.write(s->hooks.ctx, ts->start));
    FEM_TRY(prescribe(s, 1.0));
    FEM_TRY(vec_copy(&s->un, s->u));
    FEM_TRY(vec_zero(&s->extra));
    int status = time_loop(s, ts, nsteps, dt);
    s->op->aux = NULL;
    return status;
}
