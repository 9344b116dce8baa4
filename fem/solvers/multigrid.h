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
    char description[256];
    /* the last setup's: assembly (pattern and values), the solver on the setup's path (its wait for the
     * analysis, the factorisation), and the analysis's own time on its thread (0: not on a thread) */
    double assembly_seconds, solver_seconds, beside_seconds;
    /* between mg_coarse_start and mg_coarse_setup: the matrix's pattern, its assembly plan (OpAssembly), the
     * analysis under way (CoarseStart) and the pattern's time */
    CsrMatrix pattern;
    void *plan, *start;
    double pattern_seconds;
} MgCoarse;

/* The coarsest level's matrix as its solver receives it: op assembled; over MPI ranks (op has a halo) this
 * rank's rows (coarse.h's CoarseOptions.global) with their rank-contiguous numbering in *global (malloc'ed,
 * NULL in one process), opt's global, nowned and first set. */
int mg_coarse_matrix(Operator *op, CsrMatrix *A, CoarseOptions *opt, int64_t **global);

/* The first setup's head start, in one process: op's pattern assembled, and the coarse solver's work on it
 * (cuDSS's analysis, CHOLMOD's symbolic factor: coarse_start) begun on a thread of its own while the caller
 * sets up the smoothers; mg_coarse_setup finishes it. Nothing is started over MPI ranks, for BoomerAMG, or
 * when a solver is already made (it is kept: coarse_refactor). */
int mg_coarse_start(MgCoarse *c, Operator *op, const PcSettings *set);
int mg_coarse_setup(MgCoarse *c, Operator *op, const Vec *diag, const PcSettings *set);
int mg_coarse_apply(MgCoarse *c, const Vec *b, Vec *x);
const char *mg_coarse_describe(const MgCoarse *c);
void mg_coarse_destroy(MgCoarse *c);

FEM_EXTERN_C_END

#endif
