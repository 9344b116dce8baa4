/* Krylov solvers on device vectors: CG for symmetric positive definite operators, GMRES(m) and BiCGStab for
 * the others, with Jacobi or Chebyshev-Jacobi preconditioning. The operator is any function y = A x (the
 * matrix-free Jacobian); only scalars (dot products) come back to the host. */
#ifndef FEMTO_KRYLOV_H
#define FEMTO_KRYLOV_H

#include "device.h"

FEM_EXTERN_C_BEGIN

typedef enum { KSP_CG = 1, KSP_GMRES = 2, KSP_BICGSTAB = 3 } KspType;
typedef enum { PC_NONE = 0, PC_JACOBI = 1, PC_CHEBYSHEV = 2 } PcType;

typedef struct {
    int (*apply)(void *ctx, const double *x, double *y);
    void *ctx;
} LinOp;

/* Called after every iteration of a solve (progress lines on long solves): the iteration, the residual norm
 * (the recursively updated one, as the method sees it), the right-hand side's norm and the target. */
typedef void (*KspMonitor)(void *ctx, int iteration, double rnorm, double bnorm, double target);

typedef struct {
    KspType type;
    PcType pc;
    double rtol, atol; /* stop when ||r|| <= max(rtol ||b||, atol) */
    int max_iterations;
    int restart;     /* GMRES */
    int cheb_degree; /* Chebyshev polynomial degree (default 3) */
    KspMonitor monitor;
    void *monitor_ctx;
} KspSettings;

typedef struct {
    int iterations;
    double rnorm0, rnorm;
    int converged;
    int capped;      /* stopped at max_iterations without converging */
    char reason[96]; /* why it stopped, when it did not converge */
} KspResult;

typedef struct {
    Device *dev;
    int64_t n;
    KspSettings set;
    double *inv_diag;  /* Jacobi */
    double lmin, lmax; /* Chebyshev interval for D^-1 A */
    double *v[8];      /* work vectors */
    double **basis;    /* GMRES: restart + 1 vectors */
    int nbasis;
} Ksp;

int ksp_create(Ksp *k, Device *dev, int64_t n, const KspSettings *set);
void ksp_destroy(Ksp *k);
/* Preconditioner for A with diagonal diag (device vector; NULL for PC_NONE). Chebyshev estimates the
 * eigenvalue interval of D^-1 A with a few Lanczos steps (CG coefficients) on A. */
int ksp_setup(Ksp *k, LinOp A, const double *diag);
/* Solves A x = b from x = 0. Not converging is reported in res, not as an error; a breakdown (NaN,
 * indefinite matrix in CG) sets res->reason too. */
int ksp_solve(Ksp *k, LinOp A, const double *b, double *x, KspResult *res);

const char *ksp_name(KspType t);
const char *pc_name(PcType t);

FEM_EXTERN_C_END

#endif
