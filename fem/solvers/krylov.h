/* Krylov solvers on Vecs: CG for symmetric positive definite operators, GMRES(m) and BiCGStab for the others,
 * each with a preconditioner (pc.h). The method is picked by type from a table of implementations. The
 * operator is any LinOp (the matrix-free Jacobian); only scalars (dot products, through vec_dot) come back to
 * the host. */
#ifndef FEMTO_KRYLOV_H
#define FEMTO_KRYLOV_H

#include "pc.h"

FEM_EXTERN_C_BEGIN

typedef enum { KSP_CG = 1, KSP_GMRES = 2, KSP_BICGSTAB = 3 } KspType;

/* Called after every iteration of a solve (progress lines on long solves): the iteration, the residual norm
 * (the recursively updated one, as the method sees it), the right-hand side's norm and the target. */
typedef void (*KspMonitor)(void *ctx, int iteration, double rnorm, double bnorm, double target);

typedef struct {
    KspType type;
    double rtol, atol; /* stop when ||r|| <= max(rtol ||b||, atol) */
    int max_iterations;
    int restart; /* GMRES */
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

enum { KSP_WORK = 8 };

typedef struct {
    KspSettings set;
    Vec v[KSP_WORK]; /* work vectors */
    Vec *basis;      /* GMRES: restart + 1 vectors */
    int nbasis;
} Ksp;

/* A solver for vectors laid out like `like`. */
int ksp_create(Ksp *k, const Vec *like, const KspSettings *set);
void ksp_destroy(Ksp *k);
/* Solves A x = b from x = 0, preconditioned by pc (set up by the caller). Not converging is reported in res,
 * not as an error; a breakdown (NaN, indefinite matrix in CG) sets res->reason too. */
int ksp_solve(Ksp *k, LinOp A, Pc *pc, const Vec *b, Vec *x, KspResult *res);

const char *ksp_name(KspType t);

FEM_EXTERN_C_END

#endif
