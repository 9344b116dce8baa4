/* Preconditioners for the Krylov solvers, picked by type from a table of implementations (each fills a
 * PcOps): none, Jacobi (the operator's exact matrix-free diagonal), Chebyshev-Jacobi (a fixed polynomial in
 * D^-1 A, symmetric positive, so CG may use it) and p-multigrid (multigrid.h). A preconditioner is set up for
 * one operator and reused until its setup is called again (Newton does so when the Jacobian changes). */
#ifndef FEMTO_PC_H
#define FEMTO_PC_H

#include "fem/operator.h"

FEM_EXTERN_C_BEGIN

/* y = A x, for any linear operator (the Jacobian of an Operator, a level of multigrid). */
typedef struct {
    int (*apply)(void *ctx, const Vec *x, Vec *y);
    void *ctx;
} LinOp;

/* The Jacobian of an Operator as a LinOp. */
LinOp op_linop(Operator *op);
/* The same on consistent vectors (op_jacobian_consistent: input and output consistent over MPI ranks). */
LinOp op_linop_consistent(Operator *op);

typedef enum { PC_NONE = 0, PC_JACOBI = 1, PC_CHEBYSHEV = 2, PC_MULTIGRID = 3, PC_NTYPES = 4 } PcType;

typedef struct {
    PcType type;
    int cheb_degree;      /* Chebyshev polynomial degree (default 3), also multigrid's smoother */
    int mg_levels;        /* multigrid: the most levels (0: down to order 1) */
    int coarse;           /* multigrid: the coarse solver (CoarseType, fem/solvers/coarse.h); 0: automatic */
    int coarse_cycles;    /* multigrid: AMG V-cycles per coarse solve (0: 3) */
    int coarse_precision; /* multigrid: cuDSS's factor (CoarsePrecision, fem/solvers/coarse.h); 0: automatic
                           */
    int coarse_inverse; /* multigrid: cuDSS's factor as its explicit inverse (CoarseInverse); 0: automatic */
    const char *cache_dir; /* multigrid: CoarseOptions.cache_dir (NULL: none) */
} PcSettings;

/* Chebyshev-Jacobi: z = p(D^-1 A) D^-1 r, the polynomial of the Chebyshev iteration on [lmin, lmax], an
 * interval of D^-1 A's spectrum estimated by a few Lanczos steps. Also multigrid's smoother. */
typedef struct {
    int degree;
    double lmin, lmax;
    Vec inv_diag, d, t;
} Chebyshev;

int chebyshev_create(Chebyshev *c, const Vec *like, int degree);
void chebyshev_destroy(Chebyshev *c);
/* Sets up on A with diagonal diag; lower: the bottom of the interval as a fraction of lmax (0: estimated). */
int chebyshev_setup(Chebyshev *c, LinOp A, const Vec *diag, double lower);
int chebyshev_apply(Chebyshev *c, LinOp A, const Vec *r, Vec *z);

typedef struct Pc Pc;
typedef struct {
    const char *name;
    /* op: the operator A is the Jacobian of; state: the u it was linearised at (its last residual) */
    int (*setup)(Pc *pc, LinOp A, Operator *op, const Vec *state);
    int (*apply)(Pc *pc, const Vec *r, Vec *z);
    void (*destroy)(Pc *pc);
    const char *(*describe)(const Pc *pc); /* one line for the run log (NULL: the name) */
} PcOps;

struct Pc {
    const PcOps *ops;
    PcSettings set;
    LinOp A;
    Vec diag; /* Chebyshev-Jacobi: the diagonal; Jacobi: its inverse */
    Chebyshev cheb;
    void *data; /* multigrid's hierarchy */
    /* Over MPI ranks: the vectors it is applied to are consistent (every ghost its owner's value), as a
     * Krylov solve on op_linop_consistent keeps them (fem/solvers/newton.c); multigrid then forwards nothing
     * first */
    int consistent;
};

int pc_create(Pc *pc, const Vec *like, const PcSettings *set);
int pc_setup(Pc *pc, LinOp A, Operator *op, const Vec *state);
int pc_apply(Pc *pc, const Vec *r, Vec *z);
/* Whether its output is consistent over MPI ranks whenever its input is (none, Jacobi and multigrid: a Krylov
 * solve with it may then run on op_linop_consistent; Chebyshev's own operator applications are not). */
int pc_keeps_consistent(const Pc *pc);
void pc_destroy(Pc *pc);
const char *pc_name(PcType t);
const char *pc_describe(const Pc *pc);

FEM_EXTERN_C_END

#endif
