/* p-multigrid's pieces (multigrid.c is the preconditioner, PC_MULTIGRID in pc.h): the order of the level
 * below a level, and the coarsest level's solve. */
#ifndef FEMTO_MULTIGRID_H
#define FEMTO_MULTIGRID_H

#include "coarse.h"
#include "pc.h"

FEM_EXTERN_C_BEGIN

/* The order of the level below order p: p - 1 up to p = 3, then about half (8 -> 4 -> 2 -> 1). */
int mg_next_order(int p);

/* The coarsest level's solver: the level's operator assembled into a sparse matrix and handed to a library
 * (mg_coarse.c). */
typedef struct {
    Operator *op;
    void *solver; /* CoarseSolver */
    char description[800];
    double assembly_seconds, solver_seconds; /* the last setup's */
} MgCoarse;

/* The coarsest level's matrix as its solver receives it: op assembled; over MPI ranks (op has a halo) this
 * rank's rows (coarse.h's CoarseOptions.global) with their rank-contiguous numbering in *global (malloc'ed,
 * NULL in one process), opt's global, nowned and first set. */
int mg_coarse_matrix(Operator *op, CsrMatrix *A, CoarseOptions *opt, int64_t **global);

int mg_coarse_setup(MgCoarse *c, Operator *op, const Vec *diag, const PcSettings *set);
int mg_coarse_apply(MgCoarse *c, const Vec *b, Vec *x);
const char *mg_coarse_describe(const MgCoarse *c);
void mg_coarse_destroy(MgCoarse *c);

FEM_EXTERN_C_END

#endif
