/* Time stepping and load continuation, written once for any physics.
 *
 * A physics gives the stepper its operator, a Newton solver on it, the solution vector, its prescribed
 * (Dirichlet) values at full load, and hooks: how its constants follow a load factor, how its time
 * derivative is discretised (the time derivative is a u + h, h being the operator's auxiliary field, which
 * the stepper fills with the history), where results go, and where each step is reported. The stepper does
 * the rest: steady solves, load steps with a secant predictor and automatic cutback (nonlinear problems
 * only, bounded so that every run ends), and backward Euler, BDF2 or Crank-Nicolson in time. */
#ifndef FEMTO_STEPPER_H
#define FEMTO_STEPPER_H

#include "newton.h"

FEM_EXTERN_C_BEGIN

typedef enum { TIME_SCHEME_BACKWARD_EULER = 1, TIME_SCHEME_BDF2 = 2, TIME_SCHEME_CRANK_NICOLSON = 3 } StepScheme;

typedef struct {
    StepScheme scheme;
    double start, end, step; /* [s]; the step is shortened to divide the interval evenly */
    int output_every;        /* write every N steps (the last step always) */
} TimeStepping;

typedef enum { STEP_STEADY = 0, STEP_LOAD = 1, STEP_TIME = 2 } StepKind;

/* One solve, for the hooks' report. */
typedef struct {
    StepKind kind;
    int index, count; /* time steps: step index of count */
    double t;         /* the time [s] or the load factor reached (or tried) */
    double from;      /* load steps: the load factor the step started from */
    const NewtonResult *newton;
    double seconds;
    int failed;       /* load steps: the attempt failed and the increment is cut */
    double next;      /* ... to this */
} StepReport;

typedef struct {
    void *ctx;
    /* The physics' constants at load factor L (NULL: nothing but the prescribed values scales). */
    int (*set_load)(void *ctx, double L);
    /* The time discretisation a u + h, spatial terms weighted by theta (NULL: steady only). */
    int (*set_time)(void *ctx, double a, double theta);
    /* Results at time (or load factor) t. */
    int (*write)(void *ctx, double t);
    /* After every solve (may be NULL). */
    void (*report)(void *ctx, const StepReport *r);
} StepperHooks;

typedef struct {
    Operator *op;
    Newton *nw;
    Vec *u;
    StepperHooks hooks;
    int nonlinear;        /* load steps and cutback only for nonlinear problems */
    int64_t ndir;
    const double *dir_values; /* host: prescribed values at full load */
    int32_t *dir_idx;         /* device copies */
    double *dir_vals;
    double *scaled;           /* host scratch */
    Vec saved, prev, aux, un, unm1, extra;
    double a, theta;   /* the time discretisation the preconditioner was set up for */
    NewtonResult last; /* the last solve's */
    /* totals over the stepper's solves */
    int solves, steps, cutbacks, newton_iterations, linear_iterations, capped, pc_setups;
    double solve_seconds;
} Stepper;

/* The stepper of u, solved by nw on op; dir_dofs / dir_values: the prescribed dofs and their values at full
 * load (host; they must outlive the stepper). */
int stepper_create(Stepper *s, Operator *op, Newton *nw, Vec *u, int nonlinear, int64_t ndir,
                   const int32_t *dir_dofs, const double *dir_values, const StepperHooks *hooks);
void stepper_destroy(Stepper *s);

/* The steady solution: at once when there is no load parameter (hooks.set_load NULL) or the problem is
 * affine, else in load_steps increments with cutback. Writes at the nominal load levels of a nonlinear
 * multi-step run and at the end (time 0 without a load parameter, else 1). */
int stepper_steady(Stepper *s, int load_steps);
/* The transient solution from u's initial values, written at the start and every output_every steps. */
int stepper_transient(Stepper *s, const TimeStepping *ts);

FEM_EXTERN_C_END

#endif
