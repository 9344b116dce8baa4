/* Newton's method on an Operator: matrix-free Krylov for each correction, a line search (on the energy's slope
 * for a symmetric Jacobian, else backtracking on |R|: line_search in newton.c), and a report per iteration.
 * A failure says why (diverged, stagnated, NaN, iteration limit) and returns
 * FEM_ERR_SOLVER; it is never a silent "done".
 *
 * Convergence is judged in floating point, against the problem's own scale. R(u) = F_int(u) - F_ext, and the
 * rounding error of evaluating R is about machine epsilon times the size of the terms that cancel in it, not
 * times |R_0|: a stiff structure under a small load stalls at |R| ~ 1e-16 |F_int| however tight the
 * tolerance. So the residual is measured against
 *     S = max(|R(u_0)|, |R(0)|, |R(u) - R(0)|)      (|R(0)| ~ the applied loads, |R(u) - R(0)| ~ F_int(u))
 * and Newton stops when
 *     |R| <= rtol S      (or |R| <= atol, when atol > 0), or
 *     a converged linear solve gave a correction |du| <= stol |u| (nothing left to correct), or
 *     the residual stalls (no step reduces it) after a converged linear solve while it is already below
 *     STALL_FACTOR rtol S: the round-off floor, reported as a note.
 * An affine problem (settings.linear) takes exactly one Newton step, solved to the linear tolerance; a second
 * step only follows a linear solve that stopped at its iteration cap. A linear solve that stops at its cap is
 * counted (NewtonResult.capped) and never by itself lets Newton declare convergence. */
#ifndef FEMTO_NEWTON_H
#define FEMTO_NEWTON_H

#include "krylov.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    double rtol; /* relative to the scale S above */
    double atol; /* absolute residual norm; 0: not used */
    double stol; /* relative correction |du| / |u| after a converged linear solve; 0: not used */
    int max_iterations;
    int line_search;
    int symmetric;   /* the Jacobian is symmetric: R is the gradient of an energy, which the line search
                        follows (see line_search in newton.c) */
    int linear;      /* the residual is affine: one step, solved to the linear tolerance */
    int rebuild_pc;  /* nonlinear: 1 sets the preconditioner up at every Newton iteration; 0 (the default)
                        keeps it while it serves (see Newton) */
    KspSettings ksp; /* ksp.rtol is the loosest forcing term; Newton tightens it near convergence */
    PcSettings pc;
} NewtonSettings;

/* Defaults for the fields above (the problem file's defaults; docs/problem-file.md). */
enum { NEWTON_DEFAULT_MAX_ITERATIONS = 25 };
#define NEWTON_DEFAULT_RTOL 1e-8
#define NEWTON_DEFAULT_STOL 1e-10

typedef struct {
    int iteration;
    double rnorm; /* ||R|| after the step */
    double scale; /* S after the step */
    int linear_iterations;
    int linear_converged; /* 0: the linear solve stopped at its cap or broke down */
    double step;          /* line-search step length */
    double seconds;       /* since the solve began */
} NewtonStep;

typedef enum { NEWTON_BY_RESIDUAL = 1, NEWTON_BY_STEP = 2, NEWTON_BY_LINEAR = 3, NEWTON_BY_FLOOR = 4 } NewtonHow;

typedef struct {
    int iterations, linear_iterations;
    int capped; /* linear solves that stopped at their iteration cap */
    double pc_seconds; /* spent setting the preconditioner up */
    int pc_setups;     /* times it was set up */
    double rnorm0, rnorm, scale; /* scale: S at the current iterate */
    double scale0;               /* S at u_0, the least S can be: max(|R(u_0)|, |R(0)|, |R(u_0) - R(0)|) */
    int converged;
    NewtonHow how;   /* why it stopped, when converged */
    char reason[256]; /* why it failed, when not converged */
    char note[192];   /* how it converged, when that deserves a word (round-off floor, negligible step) */
    int nhistory;
    double history[64]; /* ||R_k|| */
} NewtonResult;

typedef void (*NewtonReport)(void *ctx, const NewtonStep *step);

/* A Newton solver for repeated solves on one operator (time steps, load steps): it keeps its work vectors and
 * the Krylov solver with its preconditioner. For an affine problem the preconditioner is set up once and
 * reused until newton_jacobian_changed().
 *
 * For a nonlinear one the Jacobian changes at every iteration, but the Krylov solver applies the current
 * Jacobian itself (matrix-free): the preconditioner only steers it, and one set up at an earlier iterate
 * still does, at the price of some more Krylov iterations. So Newton keeps it, across iterations and load or
 * time steps, until the iterations its later solves took beyond those of its first solve add up to as many
 * as that first solve took: a multigrid setup costs about one solve's time (on the GPU: 0.17 s against 0.1 s
 * for the 747k-dof neo-Hookean cantilever's 13 CG iterations; on the CPU, CHOLMOD's factorisation, about
 * 0.7 of a solve). The rule counts iterations, not seconds, so a run's decisions, and on the CPU its
 * numbers, are the same from one run to the next. It is also set up again when a solve with the kept one did
 * not converge (that solve is then repeated with the new one), and after a failed solve (a cut-back step
 * starts from a new one). settings.rebuild_pc sets it up at every iteration instead. */
typedef struct {
    Operator *op;
    NewtonSettings set;
    NewtonReport report;
    void *report_ctx;
    Ksp ksp;
    Pc pc;
    Vec r, du, trial, rtrial, r_zero, tmp; /* on the operator's device, its space's layout */
    int pc_ready;
    /* the preconditioner kept for a nonlinear problem: the Krylov iterations of its first solve (-1: none yet)
     * and the iterations of the later ones beyond that */
    int pc_first_its, pc_extra_its;
} Newton;

int newton_create(Newton *nw, Operator *op, const NewtonSettings *set, NewtonReport report, void *report_ctx);
void newton_destroy(Newton *nw);
/* The caller changed what the Jacobian depends on (a time step size, material constants): the next solve
 * sets the preconditioner up again. */
void newton_jacobian_changed(Newton *nw);

/* Solves R(u) + extra = 0 for u (holding the Dirichlet values on constrained dofs and the initial guess
 * elsewhere). extra may be NULL. Not converging is FEM_ERR_SOLVER with res->reason. */
int newton_solve(Newton *nw, Vec *u, const Vec *extra, NewtonResult *res);

/* One line on how a converged solve stopped ("|R| <= rtol S", "negligible correction", ...). */
const char *newton_how(NewtonHow how);

FEM_EXTERN_C_END

#endif
