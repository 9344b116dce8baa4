/* Coarse solvers (fem/solvers/coarse.h) as CG preconditioners on assembled order-1 matrices (box_problem.h).
 *
 * usage: test_coarse MODE ARGS
 *   poisson MAXITS N...     BoomerAMG-CG on the Poisson cube at each N: to rtol 1e-8 in at most MAXITS
 *                           iterations, growing at most 1.5x from one N to the next (h halves).
 *   elasticity MAXITS N...  the same on the clamped steel beam (10N x N x N elements, nodal coarsening and
 *                           the rigid-body rotations).
 *   rbm N RATIO             on the beam, the default (nodal + rotations) takes at most RATIO times the
 *                           iterations of unknown-based (scalar) coarsening without the modes.
 *   symmetric SOLVER        x.M^-1 y = y.M^-1 x to 1e-12 relative and x.M^-1 x > 0 for random x, y, on the
 *                           Poisson cube and the beam (BoomerAMG: 1 and 2 V-cycles); SOLVER
 * boomeramg|cholmod. dirichlet SOLVER        identity rows: M^-1 maps a vector that lives on the fixed dofs
 * to itself (to 1e-14), and CG leaves prescribed values there. direct                  CHOLMOD solves the
 * Poisson cube and the beam with backward error <= 1e-15, and CG preconditioned by it converges in 1
 * iteration. auto                    AUTO on the CPU: CHOLMOD up to COARSE_DIRECT_MAX_ROWS rows, BoomerAMG
 * above. errors                  what is missing or wrong is one sentence and the documented status; a matrix
 * that is not positive definite is CHOLMOD's sentence, and AUTO falls back to BoomerAMG.
 * gpu cudss|cudss-precision|boomeramg (CUDA device; else 77) cuDSS solves the beam to 1e-10 relative
 * residual, CG with it converges in 1 iteration, AUTO picks it; cudss-precision: its single-precision factor
 * takes less memory and CG 2 to 5 iterations, AUTO precision picks it where double does not fit, double-only
 * hands over and says why; cudss-inverse: the factor as its explicit inverse (test_gpu_cudss_inverse).
 * BoomerAMG on the GPU device (host cycles) takes the CPU's iteration count. bench
 * poisson|beam N [THETA AGG COARSEN UNKNOWN NO_RBM CYCLES] and bench-direct poisson|beam N print the
 *                           assembly, setup and application times and the iterations of BoomerAMG or CHOLMOD
 *                           (not CTest tests). */
#include "box_problem.h"
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/solvers/coarse.h"

#include <math.h>
#include <omp.h>
#include <string.h>
#include <time.h>

typedef int (*Precond)(void *ctx, const double *r, double *z);
typedef struct {
    int iterations;
    double seconds, relres; /* relres: the true residual |b - A x| / |b| at the end */
} CgRun;

static double dot(int64_t n, const double *x, const double *y) {
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) if (n > 50000)
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

static double true_residual(const CsrMatrix *A, const double *b, const double *x, double *work) {
    CHECK_OK(csr_matvec(A, x, work));
    for (int64_t i = 0; i < A->nrows; i++) work[i] = b[i] - work[i];
    return sqrt(dot(A->nrows, work, work) / dot(A->nrows, b, b));
}

/* The normwise backward error of x: |b - A x|_inf / (|A|_inf |x|_inf + |b|_inf), what a backward stable solve
 * keeps near the unit roundoff whatever the condition of A. */
static double backward_error(const CsrMatrix *A, const double *b, const double *x, double *work) {
    CHECK_OK(csr_matvec(A, x, work));
    double r = 0, anorm = 0, xnorm = 0, bnorm = 0;
    for (int64_t i = 0; i < A->nrows; i++) {
        double row = 0;
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) row += fabs(A->vals[k]);
        r = fmax(r, fabs(b[i] - work[i])), anorm = fmax(anorm, row);
        xnorm = fmax(xnorm, fabs(x[i])), bnorm = fmax(bnorm, fabs(b[i]));
    }
    return r / (anorm * xnorm + bnorm);
}

/* Preconditioned CG on the host from x = 0 to |r| <= rtol |b| (at most 1000 iterations). */
static CgRun pcg(const CsrMatrix *A, Precond M, void *ctx, const double *b, double *x, double rtol) {
    int64_t n = A->nrows;
    double *r = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n), *p = malloc(sizeof(double) * n),
           *q = malloc(sizeof(double) * n);
    CgRun run = {0, 0, 0};
    double t0 = omp_get_wtime(), bnorm = sqrt(dot(n, b, b));
    memset(x, 0, sizeof(double) * n);
    memcpy(r, b, sizeof(double) * n);
    CHECK_OK(M(ctx, r, z));
    memcpy(p, z, sizeof(double) * n);
    double rz = dot(n, r, z);
    while (sqrt(dot(n, r, r)) > rtol * bnorm && run.iterations < 1000) {
        CHECK_OK(csr_matvec(A, p, q));
        double alpha = rz / dot(n, p, q);
        for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * q[i];
        CHECK_OK(M(ctx, r, z));
        double rz_new = dot(n, r, z);
        for (int64_t i = 0; i < n; i++) p[i] = z[i] + rz_new / rz * p[i];
        rz = rz_new;
        run.iterations++;
    }
    run.seconds = omp_get_wtime() - t0;
    run.relres = true_residual(A, b, x, q);
    free(r), free(z), free(p), free(q);
    return run;
}

static int apply_host(void *ctx, const double *r, double *z) {
    return coarse_apply(ctx, r, z);
}

/* The host CPU time of this thread: hypre cycles on one thread, so on a machine shared with other work this
 * measures a V-cycle better than the wall clock. */
static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double apply_cpu_seconds;
static int apply_host_timed(void *ctx, const double *r, double *z) {
    double t0 = thread_seconds();
    int status = coarse_apply(ctx, r, z);
    apply_cpu_seconds += thread_seconds() - t0;
    return status;
}

static CoarseOptions options(const BoxProblem *p, CoarseType type) {
    CoarseOptions o = {.type = type, .block_size = p->block_size, .dim = 3};
    if (p->block_size == 3) o.coords = p->coords;
    return o;
}

/* CG preconditioned by a coarse solver on one problem; prints one line; returns the iterations. */
static int coarse_cg(Device *cpu, const BoxProblem *p, const CoarseOptions *o, const char *label) {
    CoarseSolver *cs;
    double cpu0 = thread_seconds();
    CHECK_OK(coarse_create(cpu, &p->A, o, &cs));
    double setup_cpu = thread_seconds() - cpu0;
    double *x = malloc(sizeof(double) * p->ndofs);
    apply_cpu_seconds = 0;
    CgRun run = pcg(&p->A, apply_host_timed, cs, p->b, x, 1e-8);
    CoarseStats st;
    coarse_stats(cs, &st);
    printf("%-10s %9lld dofs: %3d iterations, true residual %.1e, setup %.3f s (%.3f s CPU), %.4f s per "
           "application (%.4f s CPU); %s\n",
           label, (long long)p->ndofs, run.iterations, run.relres, st.setup_seconds, setup_cpu,
           st.apply_seconds / st.applications, apply_cpu_seconds / st.applications, coarse_describe(cs));
    CHECK(run.relres < 2e-8, "%s: true relative residual %.2e after CG to 1e-8", label, run.relres);
    free(x);
    coarse_destroy(&cs);
    CHECK(cs == NULL, "coarse_destroy nulls the handle");
    return run.iterations;
}

static void test_scaling(Device *cpu, int beam, int maxits, int argc, char **argv) {
    int prev = 0;
    for (int a = 0; a < argc; a++) {
        int n = atoi(argv[a]);
        BoxProblem p;
        CHECK_OK(beam ? box_beam(n, &p) : box_poisson(n, &p));
        CoarseOptions o = options(&p, COARSE_BOOMERAMG);
        char label[32];
        snprintf(label, sizeof label, "%s %d", beam ? "beam" : "poisson", n);
        int its = coarse_cg(cpu, &p, &o, label);
        CHECK(its <= maxits, "%s: %d iterations, expected at most %d", label, its, maxits);
        CHECK(!prev || its <= 1.5 * prev, "%s: %d iterations after %d on the coarser mesh (more than 1.5x)",
              label, its, prev);
        prev = its;
        box_destroy(&p);
    }
}

static void test_rbm(Device *cpu, int n, double ratio) {
    BoxProblem p;
    CHECK_OK(box_beam(n, &p));
    CoarseOptions o = options(&p, COARSE_BOOMERAMG);
    int nodal = coarse_cg(cpu, &p, &o, "nodal+rbm");
    o.amg.no_rigid_body_modes = 1;
    int plain = coarse_cg(cpu, &p, &o, "nodal");
    o.amg.unknown_based = 1;
    int scalar = coarse_cg(cpu, &p, &o, "unknown");
    printf("nodal coarsening with the rotations: %d iterations; nodal without: %d; unknown-based: %d\n",
           nodal, plain, scalar);
    CHECK(nodal <= ratio * scalar,
          "nodal + rigid-body modes %d iterations, unknown-based %d: expected a ratio <= %g", nodal, scalar,
          ratio);
    box_destroy(&p);
}

/* x.M^-1 y against y.M^-1 x for random x, y, and x.M^-1 x > 0. */
static void check_symmetric(Device *cpu, const BoxProblem *p, CoarseType type, int cycles) {
    CoarseOptions o = options(p, type);
    o.cycles = cycles;
    CoarseSolver *cs;
    CHECK_OK(coarse_create(cpu, &p->A, &o, &cs));
    int64_t n = p->ndofs;
    double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *Mx = malloc(sizeof(double) * n),
           *My = malloc(sizeof(double) * n);
    uint64_t seed = 0x2545f4914f6cdd1dull;
    for (int trial = 0; trial < 3; trial++) {
        for (int64_t i = 0; i < n; i++) x[i] = 2 * test_rand(&seed) - 1, y[i] = 2 * test_rand(&seed) - 1;
        CHECK_OK(coarse_apply(cs, x, Mx));
        CHECK_OK(coarse_apply(cs, y, My));
        double xMy = dot(n, x, My), yMx = dot(n, y, Mx), xMx = dot(n, x, Mx);
        double scale = sqrt(dot(n, x, x) * dot(n, My, My));
        printf("%lld dofs, %d cycle(s): x.My = %.15e, y.Mx = %.15e, relative difference %.1e, x.Mx = %.3e\n",
               (long long)n, cycles, xMy, yMx, fabs(xMy - yMx) / scale, xMx);
        CHECK(fabs(xMy - yMx) <= 1e-12 * scale, "M^-1 is not symmetric: x.My = %.17g, y.Mx = %.17g", xMy,
              yMx);
        CHECK(xMx > 0, "x.M^-1 x = %g is not positive", xMx);
    }
    free(x), free(y), free(Mx), free(My);
    coarse_destroy(&cs);
}

static void test_symmetric(Device *cpu, CoarseType type) {
    for (int beam = 0; beam < 2; beam++) {
        BoxProblem p;
        CHECK_OK(beam ? box_beam(4, &p) : box_poisson(12, &p));
        check_symmetric(cpu, &p, type, 1);
        if (type == COARSE_BOOMERAMG) check_symmetric(cpu, &p, type, 2);
        box_destroy(&p);
    }
}

/* On every fixed dof the result of M^-1 (or of a solve) must be the right-hand side itself. */
static void check_fixed_rows(const BoxProblem *p, const double *rhs, const double *x, double tol,
                             const char *what) {
    double worst = 0.0;
    for (int64_t i = 0; i < p->ndofs; i++)
        if (p->fixed[i]) worst = fmax(worst, fabs(x[i] - rhs[i]));
    CHECK(worst <= tol, "%s: a fixed dof differs from its prescribed value by %.2e", what, worst);
}

static void test_dirichlet(Device *cpu, CoarseType type) {
    for (int beam = 0; beam < 2; beam++) {
        BoxProblem p;
        CHECK_OK(beam ? box_beam(4, &p) : box_poisson(10, &p));
        CoarseOptions o = options(&p, type);
        CoarseSolver *cs;
        CHECK_OK(coarse_create(cpu, &p.A, &o, &cs));
        double *v = calloc(p.ndofs, sizeof(double)), *Mv = malloc(sizeof(double) * p.ndofs);
        for (int64_t i = 0; i < p.ndofs; i++)
            if (p.fixed[i]) v[i] = 1.0 + 0.001 * (double)(i % 7); /* prescribed values */
        CHECK_OK(coarse_apply(cs, v, Mv));
        check_fixed_rows(&p, v, Mv, 1e-14, "M^-1 of a vector on the fixed dofs");
        double mixed = 0.0; /* ... and nothing leaks to the free dofs, which the identity rows decouple */
        for (int64_t i = 0; i < p.ndofs; i++)
            if (!p.fixed[i]) mixed = fmax(mixed, fabs(Mv[i]));
        CHECK(mixed <= 1e-14, "M^-1 of a vector on the fixed dofs is %.2e on a free dof", mixed);
        for (int64_t i = 0; i < p.ndofs; i++) p.b[i] += v[i];
        CgRun run = pcg(&p.A, apply_host, cs, p.b, Mv, 1e-10);
        printf("%s with prescribed values on %s: %d iterations, true residual %.1e\n",
               beam ? "beam" : "poisson", beam ? "x = 0" : "the boundary", run.iterations, run.relres);
        check_fixed_rows(&p, v, Mv, 1e-9, "CG's solution (to 1e-10 relative)");
        free(v), free(Mv);
        coarse_destroy(&cs);
        box_destroy(&p);
    }
}

static void expect_failure(int status, int expected, const char *needle, const char *what) {
    CHECK(status == expected, "%s: status %d, expected %d (%s)", what, status, expected, fem_last_error());
    CHECK(strstr(fem_last_error(), needle) != NULL, "%s: message \"%s\" should mention \"%s\"", what,
          fem_last_error(), needle);
    fem_clear_error();
}

static void test_errors(Device *cpu) {
    BoxProblem p;
    CHECK_OK(box_beam(2, &p));
    CoarseSolver *cs = (CoarseSolver *)&p; /* must come back NULL on failure */
    CoarseOptions o = options(&p, COARSE_CUDSS);
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_USAGE,
                   device_available(DEV_CUDA) ? "CUDA device" : "cuDSS", "cuDSS on the CPU");
    CHECK(cs == NULL, "a failed coarse_create leaves *out NULL");
    o = options(&p, COARSE_BOOMERAMG);
    o.block_size = 5;
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_USAGE, "multiple of 5", "block size 5");
    CsrMatrix wide = p.A;
    wide.ncols += 1;
    o.block_size = 3;
    expect_failure(coarse_create(cpu, &wide, &o, &cs), FEM_ERR_USAGE, "square", "a non-square matrix");
    o.dim = 4;
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_USAGE, "dimension", "dimension 4");
    o = options(&p, COARSE_BOOMERAMG);
#ifndef FEMTO_HAVE_HYPRE
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_USAGE,
                   "BoomerAMG coarse solver is not built in", "a build without hypre");
#endif
    o = options(&p, COARSE_CHOLMOD);
#ifdef FEMTO_HAVE_CHOLMOD
    for (int64_t k = 0; k < p.A.nnz; k++) p.A.vals[k] = -p.A.vals[k]; /* negative definite */
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_SOLVER, "not positive definite (pivot 1 of 567",
                   "CHOLMOD on a negative definite matrix");
    CHECK(cs == NULL, "a failed coarse_create leaves *out NULL");
    o.type = COARSE_AUTO;
#ifdef FEMTO_HAVE_HYPRE
    CHECK_OK(coarse_create(cpu, &p.A, &o, &cs)); /* BoomerAMG sets up on it; the log line says why */
    printf("AUTO on a negative definite matrix: %s\n", coarse_describe(cs));
    CHECK(strstr(coarse_describe(cs), "BoomerAMG") == coarse_describe(cs) &&
              strstr(coarse_describe(cs),
                     " instead of CHOLMOD: CHOLMOD could not factorise the coarse matrix: it "
                     "is not positive definite") &&
              strstr(coarse_describe(cs), "CHOLMOD status 1)"),
          "AUTO after CHOLMOD failed: \"%s\"", coarse_describe(cs));
    coarse_destroy(&cs);
#endif
#else
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_USAGE, "CHOLMOD coarse solver is not built in",
                   "a build without SuiteSparse");
#endif
    o = options(&p, COARSE_MUMPS);
#ifdef FEMTO_HAVE_MUMPS
    double d0 = 0; /* negative definite (CHOLMOD's case above may have made it so already) */
    for (int64_t k = p.A.rowptr[0]; k < p.A.rowptr[1]; k++) d0 += p.A.cols[k] == 0 ? p.A.vals[k] : 0;
    for (int64_t k = 0; d0 > 0 && k < p.A.nnz; k++) p.A.vals[k] = -p.A.vals[k];
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_SOLVER,
                   "MUMPS could not factorise the coarse matrix: it is not positive definite (567 of "
                   "its 567 pivots",
                   "MUMPS on a negative definite matrix");
    CHECK(cs == NULL, "a failed coarse_create leaves *out NULL");
#else
    expect_failure(coarse_create(cpu, &p.A, &o, &cs), FEM_ERR_USAGE, "MUMPS coarse solver is not built in",
                   "a build without MUMPS");
#endif
    coarse_destroy(&cs); /* a NULL handle is fine */
    box_destroy(&p);
}

/* The 1D Laplacian tridiag(-1, 2, -1) of n rows: symmetric positive definite, and cheap at any size. */
static void laplacian_1d(int64_t n, CsrMatrix *A) {
    *A = (CsrMatrix){.nrows = n, .ncols = n, .nnz = 3 * n - 2};
    A->rowptr = malloc(sizeof *A->rowptr * (n + 1));
    A->cols = malloc(sizeof *A->cols * A->nnz);
    A->vals = malloc(sizeof *A->vals * A->nnz);
    int64_t k = 0;
    for (int64_t r = 0; r < n; r++) {
        A->rowptr[r] = k;
        for (int64_t c = r - 1; c <= r + 1; c++)
            if (c >= 0 && c < n) A->cols[k] = (int32_t)c, A->vals[k++] = c == r ? 2.0 : -1.0;
    }
    A->rowptr[n] = k;
}

/* coarse_refactor on p's matrix with its diagonal 10% larger (same pattern, still positive definite):
 * kept (done), and a solve of the new matrix with backward error <= tol (x, work: host arrays; apply: the
 * solve on the host's vectors); then on a matrix of another pattern: not kept, nothing changed. The diagonal
 * is put back. */
static void check_refactor(CoarseSolver *cs, BoxProblem *p, int (*apply)(void *, const double *, double *),
                           void *ctx, double *x, double *work, double tol) {
    for (int64_t r = 0; r < p->A.nrows; r++)
        for (int64_t k = p->A.rowptr[r]; k < p->A.rowptr[r + 1]; k++)
            if (p->A.cols[k] == r) p->A.vals[k] *= 1.1;
    int done = 0;
    CHECK_OK(coarse_refactor(cs, &p->A, &done));
    CHECK(done, "the same pattern with new values is refactorised, not refused");
    CHECK_OK(apply(ctx, p->b, x));
    double omega = backward_error(&p->A, p->b, x, work);
    printf("refactorised with new values: backward error %.2e\n", omega);
    CHECK(omega <= tol, "solve after the refactorisation: backward error %.2e, expected <= %.0e", omega, tol);
    for (int64_t r = 0; r < p->A.nrows; r++)
        for (int64_t k = p->A.rowptr[r]; k < p->A.rowptr[r + 1]; k++)
            if (p->A.cols[k] == r) p->A.vals[k] /= 1.1;
    CsrMatrix other;
    laplacian_1d(p->A.nrows, &other);
    done = 1;
    CHECK_OK(coarse_refactor(cs, &other, &done));
    CHECK(!done, "another pattern is refused (the caller makes a new solver)");
    csr_destroy(&other);
}

static CoarseType auto_choice(Device *cpu, const CsrMatrix *A, int block_size) {
    CoarseOptions o = {.type = COARSE_AUTO, .block_size = block_size};
    CoarseSolver *cs;
    CHECK_OK(coarse_create(cpu, A, &o, &cs));
    CoarseStats st;
    coarse_stats(cs, &st);
    printf("AUTO on the CPU, %lld rows: %s\n", (long long)A->nrows, coarse_describe(cs));
    coarse_destroy(&cs);
    return st.type;
}

/* AUTO on the CPU: CHOLMOD up to COARSE_DIRECT_MAX_ROWS rows (the beam, a 1D Laplacian of exactly that many),
 * BoomerAMG beyond (one row more) when it is built in. */
static void test_auto(Device *cpu) {
    BoxProblem p;
    CHECK_OK(box_beam(2, &p));
    CoarseType small = auto_choice(cpu, &p.A, 3);
    box_destroy(&p);
    CsrMatrix A;
    laplacian_1d(COARSE_DIRECT_MAX_ROWS, &A);
    CoarseType at = auto_choice(cpu, &A, 1);
    csr_destroy(&A);
    laplacian_1d(COARSE_DIRECT_MAX_ROWS + 1, &A);
    CoarseType above = auto_choice(cpu, &A, 1);
    csr_destroy(&A);
#if defined(FEMTO_HAVE_CHOLMOD)
    const CoarseType below_expected = COARSE_CHOLMOD;
#else
    const CoarseType below_expected = COARSE_BOOMERAMG;
#endif
#if defined(FEMTO_HAVE_HYPRE)
    const CoarseType above_expected = COARSE_BOOMERAMG;
#else
    const CoarseType above_expected = COARSE_CHOLMOD;
#endif
    CHECK(small == below_expected && at == below_expected,
          "AUTO on the CPU below the threshold: %s and %s, expected %s", coarse_type_name(small),
          coarse_type_name(at), coarse_type_name(below_expected));
    CHECK(above == above_expected, "AUTO on the CPU above %d rows: %s, expected %s", COARSE_DIRECT_MAX_ROWS,
          coarse_type_name(above), coarse_type_name(above_expected));
}

/* A direct solver (CHOLMOD, or MUMPS in one process) on the cube and the beam: backward stable, CG in one
 * iteration; both refactorise new values with their analysis. */
static void test_direct(Device *cpu, CoarseType type) {
    const char *name = coarse_type_name(type);
    for (int beam = 0; beam < 2; beam++) {
        BoxProblem p;
        CHECK_OK(beam ? box_beam(6, &p) : box_poisson(20, &p));
        CoarseOptions o = options(&p, type);
        CoarseSolver *cs;
        CHECK_OK(coarse_create(cpu, &p.A, &o, &cs));
        double *x = malloc(sizeof(double) * p.ndofs), *work = malloc(sizeof(double) * p.ndofs);
        CHECK_OK(coarse_apply(cs, p.b, x));
        double relres = true_residual(&p.A, p.b, x, work), omega = backward_error(&p.A, p.b, x, work);
        printf("%s, %lld dofs: %s solve, relative residual %.2e, backward error %.2e; %s\n",
               beam ? "beam" : "poisson", (long long)p.ndofs, name, relres, omega, coarse_describe(cs));
        CHECK(omega <= 1e-15, "%s solve: backward error %.2e, expected <= 1e-15", name, omega);
        /* the slender clamped beam is far worse conditioned than the cube: the residual of a solve with
         * backward error 2e-16 is 1.6e-10 */
        CHECK(relres <= (beam ? 1e-9 : 1e-12), "%s solve: relative residual %.2e", name, relres);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%s ", name);
        CHECK(strstr(coarse_describe(cs), prefix) == coarse_describe(cs), "description \"%s\"",
              coarse_describe(cs));
        CgRun run = pcg(&p.A, apply_host, cs, p.b, x, 1e-8);
        CHECK(run.iterations == 1 && run.relres <= 1e-8,
              "CG preconditioned by %s: %d iterations to relative residual %.1e, expected 1", name,
              run.iterations, run.relres);
        CoarseStats st;
        coarse_stats(cs, &st);
        CHECK(st.type == type && st.applications == 3, "stats: %s, %d applications", coarse_type_name(st.type),
              st.applications);
        if (type == COARSE_CHOLMOD || type == COARSE_MUMPS)
            check_refactor(cs, &p, apply_host, cs, x, work, 1e-15);
        free(x), free(work);
        coarse_destroy(&cs);
        box_destroy(&p);
    }
}

/* A coarse solver on a GPU device used by the host CG: r goes up, z comes down. */
typedef struct {
    Device *dev;
    CoarseSolver *cs;
    double *dr, *dz;
    size_t bytes;
} GpuPrecond;

static int apply_gpu(void *ctx, const double *r, double *z) {
    GpuPrecond *g = ctx;
    FEM_TRY(g->dev->ops.upload(g->dev, g->dr, r, g->bytes));
    FEM_TRY(coarse_apply(g->cs, g->dr, g->dz));
    return g->dev->ops.download(g->dev, z, g->dz, g->bytes);
}

static CgRun gpu_cg(GpuPrecond *g, const BoxProblem *p, CoarseType type, double rtol, const char *label) {
    CoarseOptions o = options(p, type);
    CHECK_OK(coarse_create(g->dev, &p->A, &o, &g->cs));
    double *x = malloc(g->bytes);
    CgRun run = pcg(&p->A, apply_gpu, g, p->b, x, rtol);
    CoarseStats st;
    coarse_stats(g->cs, &st);
    printf("%-22s %d iterations, true residual %.1e, setup %.3f s, %.2e s per application (%.2e s "
           "transfers); %s\n",
           label, run.iterations, run.relres, st.setup_seconds, st.apply_seconds / st.applications,
           st.transfer_seconds / st.applications, coarse_describe(g->cs));
    free(x);
    coarse_destroy(&g->cs);
    return run;
}

/* The beam of n cells across on a CUDA device with its two vectors for the host CG; TEST_SKIP without a
 * device. */
static int gpu_setup(Device *gpu, BoxProblem *p, GpuPrecond *g, int n) {
    if (test_device(gpu, DEV_CUDA, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    CHECK_OK(box_beam(n, p));
    *g = (GpuPrecond){.dev = gpu, .bytes = sizeof(double) * (size_t)p->ndofs};
    CHECK_OK(device_alloc(gpu, (void **)&g->dr, g->bytes));
    CHECK_OK(device_alloc(gpu, (void **)&g->dz, g->bytes));
    return 0;
}

static void gpu_teardown(Device *gpu, BoxProblem *p, GpuPrecond *g) {
    device_free(gpu, g->dr);
    device_free(gpu, g->dz);
    device_destroy(gpu);
    box_destroy(p);
}

/* 1, with a line saying why, where coarse_create's status says the build has no cuDSS (FEM_ERR_USAGE). */
static int without_cudss(int status) {
    if (status != FEM_ERR_USAGE) return 0;
    printf("skipped: %s\n", fem_last_error());
    return 1;
}

static int test_gpu_cudss(void) {
    Device gpu;
    BoxProblem p;
    GpuPrecond g;
    if (gpu_setup(&gpu, &p, &g, 4)) return TEST_SKIP;
    CoarseOptions o = options(&p, COARSE_CUDSS);
    o.inverse =
        COARSE_INVERSE_NO; /* the triangular solves: backward stable (test_gpu_cudss_inverse: the other) */
    int status = coarse_create(&gpu, &p.A, &o, &g.cs);
    if (without_cudss(status)) return TEST_SKIP;
    CHECK_OK(status);
    double *x = malloc(g.bytes), *work = malloc(g.bytes);
    CHECK_OK(apply_gpu(&g, p.b, x));
    double relres = true_residual(&p.A, p.b, x, work);
    printf("cuDSS direct solve: relative residual %.2e; %s\n", relres, coarse_describe(g.cs));
    CHECK(relres <= 1e-10, "cuDSS solve: relative residual %.2e, expected <= 1e-10", relres);
    check_refactor(g.cs, &p, apply_gpu, &g, x, work, 1e-14);
    coarse_destroy(&g.cs);
    CgRun run = gpu_cg(&g, &p, COARSE_CUDSS, 1e-8, "CG + cuDSS:");
    CHECK(run.iterations <= 1, "CG preconditioned by cuDSS took %d iterations, expected 1", run.iterations);
    o = options(&p, COARSE_AUTO);
    CHECK_OK(coarse_create(&gpu, &p.A, &o, &g.cs));
    CoarseStats st;
    coarse_stats(g.cs, &st);
    CHECK(st.type == COARSE_CUDSS, "AUTO on a CUDA device chose %s, expected cuDSS",
          coarse_type_name(st.type));
    coarse_destroy(&g.cs);
    free(x), free(work);
    gpu_teardown(&gpu, &p, &g);
    return 0;
}

/* cuDSS's factor in single precision: asked for, and AUTO's choice where the double-precision factor would
 * not fit (CoarseOptions.gpu_memory between the two factorisations' peaks); with double precision asked for,
 * cuDSS refuses and AUTO hands over to a host solver, saying why. */
static int test_gpu_cudss_precision(void) {
    Device gpu;
    BoxProblem p;
    GpuPrecond g;
    if (gpu_setup(&gpu, &p, &g, 8)) return TEST_SKIP;
    double peak[2] = {0, 0}, *x = malloc(g.bytes);
    int its[2] = {0, 0};
    for (int single = 0; single < 2; single++) {
        CoarseOptions o = options(&p, COARSE_CUDSS);
        o.precision = single ? COARSE_PRECISION_SINGLE : COARSE_PRECISION_DOUBLE;
        o.inverse = COARSE_INVERSE_NO;
        int status = coarse_create(&gpu, &p.A, &o, &g.cs);
        if (without_cudss(status)) return TEST_SKIP;
        CHECK_OK(status);
        CoarseStats st;
        coarse_stats(g.cs, &st);
        peak[single] = st.device_bytes;
        CgRun run = pcg(&p.A, apply_gpu, &g, p.b, x, 1e-8);
        its[single] = run.iterations;
        printf("%s factor of %lld rows: peak %.2f MB, CG to 1e-8 in %d iterations, true residual %.1e; %s\n",
               single ? "single-precision" : "double-precision", (long long)p.A.nrows, peak[single] / 1e6,
               run.iterations, run.relres, coarse_describe(g.cs));
        CHECK(!single == !strstr(coarse_describe(g.cs), "single-precision Cholesky"),
              "the description should say single-precision exactly when asked for: %s",
              coarse_describe(g.cs));
        CHECK(run.relres <= 1e-7, "CG's true residual %.1e, expected <= 1e-7", run.relres);
        coarse_destroy(&g.cs);
    }
    CHECK(its[0] <= 1, "CG with the double-precision factor took %d iterations, expected 1", its[0]);
    CHECK(its[1] >= 2 && its[1] <= 5,
          "CG with the single-precision factor took %d iterations, expected 2 to 5", its[1]);
    /* the factor halves; cuDSS's workspace, a large part of the peak at this size, does not */
    CHECK(peak[1] > 0 && peak[1] < 0.85 * peak[0],
          "peaks %.3g (single) and %.3g bytes (double): single "
          "should take less than 0.85 x double",
          peak[1], peak[0]);
    CoarseOptions o = options(&p, COARSE_CUDSS);
    o.gpu_memory = 0.5 * (peak[0] + peak[1]) / 0.95;
    CHECK_OK(coarse_create(&gpu, &p.A, &o, &g.cs));
    printf("AUTO precision under %.2f MB: %s\n", o.gpu_memory / 1e6, coarse_describe(g.cs));
    char said[96];
    snprintf(said, sizeof said, "as the double-precision factor would need %.2f GB of the %.2f GB free",
             peak[0] / 1e9, o.gpu_memory / 1e9);
    CHECK(strstr(coarse_describe(g.cs), "single-precision Cholesky") && strstr(coarse_describe(g.cs), said),
          "AUTO precision where double does not fit: %s", coarse_describe(g.cs));
    coarse_destroy(&g.cs);
    o.precision = COARSE_PRECISION_DOUBLE;
    expect_failure(coarse_create(&gpu, &p.A, &o, &g.cs), FEM_ERR_DEVICE, "matrix in double precision, and",
                   "cuDSS in double precision only, where it does not fit");
    o.type = COARSE_AUTO;
    CHECK_OK(coarse_create(&gpu, &p.A, &o, &g.cs));
    printf("AUTO solver, double precision only: %s\n", coarse_describe(g.cs));
    CHECK(strstr(coarse_describe(g.cs), " instead of cuDSS: cuDSS would need") != NULL,
          "AUTO should hand over from cuDSS and say why: %s", coarse_describe(g.cs));
    coarse_destroy(&g.cs);
    free(x);
    gpu_teardown(&gpu, &p, &g);
    return 0;
}

static double rel_diff(int64_t n, const double *x, const double *y) {
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) d += (x[i] - y[i]) * (x[i] - y[i]), s += y[i] * y[i];
    return sqrt(d / s);
}

/* cuDSS on the GPU of g with options o, its description checked for `said` (NULL: not checked) and `unsaid`;
 * x = its application to p's b (x has `count` entries; 0: all). */
static void inverse_run(GpuPrecond *g, const BoxProblem *p, const CoarseOptions *o, const char *said,
                        const char *unsaid, double *x) {
    CHECK_OK(coarse_create(g->dev, &p->A, o, &g->cs));
    const char *d = coarse_describe(g->cs);
    printf("inverse %d, precision %d, first %lld, count %lld: %s\n", (int)o->inverse, (int)o->precision,
           (long long)o->inverse_first, (long long)o->inverse_count, d);
    CHECK(!said || strstr(d, said), "the description should say \"%s\": %s", said, d);
    CHECK(!unsaid || !strstr(d, unsaid), "the description should not say \"%s\": %s", unsaid, d);
    int64_t n = o->inverse_count ? o->inverse_count : p->A.nrows;
    CHECK_OK(g->dev->ops.upload(g->dev, g->dr, p->b, g->bytes));
    CHECK_OK(coarse_apply(g->cs, g->dr, g->dz));
    CHECK_OK(g->dev->ops.download(g->dev, x, g->dz, sizeof(double) * (size_t)n));
}

/* cuDSS's factor as its explicit inverse (CoarseOptions.inverse), on the 3,075-row beam: the triangular
 * solves' x to 1e-9 relative, with a relative residual of at most 1e-9 (measured 6e-11 and 1.5e-10 on an
 * H200: the inverse's rounding grows with the condition of A, where the solves' does not), CG in 1 iteration,
 * a new factorisation of new values recomputes it; a band of its rows (inverse_first, inverse_count: one MPI
 * rank's share) is that band of the whole x; cuDSS's solves give cuSOLVER's inverse; YES says why it could
 * not make one; AUTO takes it up to COARSE_INVERSE_MAX_BYTES and not above, where YES does; in single
 * precision CG takes 2 to 5 iterations. */
static int test_gpu_cudss_inverse(void) {
    Device gpu;
    BoxProblem p;
    GpuPrecond g;
    if (gpu_setup(&gpu, &p, &g, 4)) return TEST_SKIP;
    int64_t n = p.A.nrows;
    double *x0 = malloc(g.bytes), *x1 = malloc(g.bytes), *work = malloc(g.bytes);
    CoarseOptions o = options(&p, COARSE_CUDSS);
    o.inverse = COARSE_INVERSE_NO;
    int status = coarse_create(&gpu, &p.A, &o, &g.cs);
    if (without_cudss(status)) return TEST_SKIP;
    CHECK_OK(status);
    coarse_destroy(&g.cs);
    inverse_run(&g, &p, &o, NULL, "explicit inverse", x0);
    o.inverse = COARSE_INVERSE_AUTO;
    inverse_run(&g, &p, &o, "applied as its explicit inverse (", NULL, x1);
    double diff = rel_diff(n, x1, x0), relres = true_residual(&p.A, p.b, x1, work);
    printf("explicit inverse against the triangular solves: x differs by %.2e, relative residual %.2e\n",
           diff, relres);
    CHECK(diff <= 1e-9, "the explicit inverse's x differs from the solves' by %.2e, expected <= 1e-9", diff);
    CHECK(relres <= 1e-9, "the explicit inverse's relative residual is %.2e, expected <= 1e-9", relres);
    double *xs = malloc(g.bytes); /* check_refactor overwrites x1 */
    memcpy(xs, x1, g.bytes);
    check_refactor(g.cs, &p, apply_gpu, &g, xs, work, 1e-12);
    free(xs);
    coarse_destroy(&g.cs);
    CgRun run = gpu_cg(&g, &p, COARSE_CUDSS, 1e-8, "CG + explicit inverse:");
    CHECK(run.iterations <= 1, "CG preconditioned by the explicit inverse took %d iterations, expected 1",
          run.iterations);
    /* one rank's band of rows */
    o.inverse_first = n / 3, o.inverse_count = n / 2;
    inverse_run(&g, &p, &o, "this rank's rows", NULL, x0);
    diff = rel_diff(o.inverse_count, x0, x1 + o.inverse_first);
    CHECK(diff <= 1e-13, "rows %lld.. of the inverse alone differ from the whole's by %.2e", (long long)n / 3,
          diff);
    coarse_destroy(&g.cs);
    o.inverse_first = o.inverse_count = 0;
    /* the same through cuDSS's solves (where cuSOLVER cannot be loaded) */
    setenv("FEMTO_COARSE_INVERSE_BY", "cudss", 1);
    inverse_run(&g, &p, &o, "computed by cuDSS's solves", NULL, x0);
    unsetenv("FEMTO_COARSE_INVERSE_BY");
    diff = rel_diff(n, x0, x1);
    CHECK(diff <= 1e-9, "the inverse through cuDSS's solves differs from cuSOLVER's by %.2e", diff);
    coarse_destroy(&g.cs);
    /* YES where the inverse (76 MB) does not fit: the triangular solves, and the description says why */
    o.inverse = COARSE_INVERSE_YES;
    o.gpu_memory = 50e6;
    inverse_run(&g, &p, &o, "not as its explicit inverse: it would take", NULL, x0);
    coarse_destroy(&g.cs);
    o.gpu_memory = 0;
    /* AUTO above COARSE_INVERSE_MAX_BYTES (19,683 rows: 3.1 GB): the solves; YES there: the inverse */
    BoxProblem big;
    CHECK_OK(box_beam(8, &big));
    CoarseOptions ob = options(&big, COARSE_CUDSS);
    for (int yes = 0; yes < 2; yes++) {
        ob.inverse = yes ? COARSE_INVERSE_YES : COARSE_INVERSE_AUTO;
        CHECK_OK(coarse_create(&gpu, &big.A, &ob, &g.cs));
        printf("%lld rows, inverse %s: %s\n", (long long)big.A.nrows, yes ? "yes" : "auto",
               coarse_describe(g.cs));
        CHECK(!yes == !strstr(coarse_describe(g.cs), "explicit inverse"),
              "%lld rows (%.2g bytes, above %.2g), inverse %s: %s", (long long)big.A.nrows,
              8.0 * (double)big.A.nrows * (double)big.A.nrows, COARSE_INVERSE_MAX_BYTES, yes ? "yes" : "auto",
              coarse_describe(g.cs));
        coarse_destroy(&g.cs);
    }
    box_destroy(&big);
    /* single precision: the factor and the inverse */
    o.inverse = COARSE_INVERSE_AUTO, o.precision = COARSE_PRECISION_SINGLE;
    CHECK_OK(coarse_create(&gpu, &p.A, &o, &g.cs));
    CHECK(strstr(coarse_describe(g.cs), "explicit inverse"), "%s", coarse_describe(g.cs));
    run = pcg(&p.A, apply_gpu, &g, p.b, x0, 1e-8);
    printf("CG + single-precision explicit inverse: %d iterations, true residual %.1e\n", run.iterations,
           run.relres);
    CHECK(run.iterations >= 2 && run.iterations <= 5,
          "CG with the single-precision inverse took %d iterations, expected 2 to 5", run.iterations);
    coarse_destroy(&g.cs);
    free(x0), free(x1), free(work);
    gpu_teardown(&gpu, &p, &g);
    return 0;
}

/* BoomerAMG behind a CUDA device: b comes down, x goes up, the cycle is the CPU's. */
static int test_gpu_boomeramg(Device *cpu) {
    Device gpu;
    BoxProblem p;
    GpuPrecond g;
    if (gpu_setup(&gpu, &p, &g, 4)) return TEST_SKIP;
    CoarseOptions o = options(&p, COARSE_BOOMERAMG);
    int cpu_its = coarse_cg(cpu, &p, &o, "cpu");
    CgRun run = gpu_cg(&g, &p, COARSE_BOOMERAMG, 1e-8, "CG + BoomerAMG on GPU:");
    CHECK(run.iterations == cpu_its, "BoomerAMG through the GPU device: %d iterations, on the CPU %d",
          run.iterations, cpu_its);
    gpu_teardown(&gpu, &p, &g);
    return 0;
}

/* Timings of one problem: assembly, setup, V-cycle (or CHOLMOD's solves), CG iterations. */
static void bench(Device *cpu, CoarseType type, const char *kind, int n, int argc, char **argv) {
    BoxProblem p;
    CHECK_OK(!strcmp(kind, "beam") ? box_beam(n, &p) : box_poisson(n, &p));
    printf("%s %d: %lld dofs, %lld triplets (element loop %.2f s), csr_from_triplets %.2f s (%.2f s CPU), "
           "nnz %lld\n",
           kind, n, (long long)p.ndofs, (long long)p.ntriplets, p.assemble_seconds, p.csr_seconds,
           p.csr_cpu_seconds, (long long)p.A.nnz);
    CoarseOptions o = options(&p, type);
    /* optional settings: THETA AGG_LEVELS COARSEN_TYPE UNKNOWN_BASED NO_RBM CYCLES */
    if (argc > 0) o.amg.strong_threshold = atof(argv[0]);
    if (argc > 1) o.amg.agg_levels = atoi(argv[1]);
    if (argc > 2) o.amg.coarsen_type = atoi(argv[2]);
    if (argc > 3) o.amg.unknown_based = atoi(argv[3]);
    if (argc > 4) o.amg.no_rigid_body_modes = atoi(argv[4]);
    if (argc > 5) o.cycles = atoi(argv[5]);
    coarse_cg(cpu, &p, &o, kind);
    box_destroy(&p);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    Device cpu;
    CHECK_OK(test_device(&cpu, DEV_CPU, 0, ASSEMBLE_GATHER));
    int status = 0;
    if ((!strcmp(mode, "poisson") || !strcmp(mode, "elasticity")) && argc > 3)
        test_scaling(&cpu, !strcmp(mode, "elasticity"), atoi(argv[2]), argc - 3, argv + 3);
    else if (!strcmp(mode, "rbm") && argc > 3)
        test_rbm(&cpu, atoi(argv[2]), atof(argv[3]));
    else if ((!strcmp(mode, "symmetric") || !strcmp(mode, "dirichlet")) && argc > 2) {
        CoarseType type = !strcmp(argv[2], "cholmod") ? COARSE_CHOLMOD
                          : !strcmp(argv[2], "mumps") ? COARSE_MUMPS
                                                      : COARSE_BOOMERAMG;
        (!strcmp(mode, "symmetric") ? test_symmetric : test_dirichlet)(&cpu, type);
    } else if (!strcmp(mode, "direct"))
        test_direct(&cpu, argc > 2 && !strcmp(argv[2], "mumps") ? COARSE_MUMPS : COARSE_CHOLMOD);
    else if (!strcmp(mode, "auto"))
        test_auto(&cpu);
    else if (!strcmp(mode, "errors"))
        test_errors(&cpu);
    else if (!strcmp(mode, "gpu") && argc > 2 && !strcmp(argv[2], "cudss"))
        status = test_gpu_cudss();
    else if (!strcmp(mode, "gpu") && argc > 2 && !strcmp(argv[2], "cudss-precision"))
        status = test_gpu_cudss_precision();
    else if (!strcmp(mode, "gpu") && argc > 2 && !strcmp(argv[2], "cudss-inverse"))
        status = test_gpu_cudss_inverse();
    else if (!strcmp(mode, "gpu") && argc > 2 && !strcmp(argv[2], "boomeramg"))
        status = test_gpu_boomeramg(&cpu);
    else if ((!strcmp(mode, "bench") || !strcmp(mode, "bench-direct")) && argc > 3)
        bench(&cpu, !strcmp(mode, "bench") ? COARSE_BOOMERAMG : COARSE_CHOLMOD, argv[2], atoi(argv[3]),
              argc - 4, argv + 4);
    else {
        fprintf(stderr,
                "usage: test_coarse poisson|elasticity MAXITS N... | rbm N RATIO | symmetric|dirichlet "
                "boomeramg|cholmod|mumps | direct [mumps] | auto | errors | gpu "
                "cudss|cudss-precision|cudss-inverse|boomeramg | "
                "bench|bench-direct "
                "poisson|beam N ...\n");
        return 2;
    }
    device_destroy(&cpu);
    return status ? status : test_result("test_coarse");
}
