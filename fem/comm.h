/* The processes of a run and the one place where their partial results meet; the one place where femto meets
 * MPI.
 *
 * Every global reduction in femto (dot products and norms in Krylov and Newton, balances and extremes in
 * summaries) sums its rank-local part and then calls comm_sum: today a run is one process and comm_sum
 * returns at once; with MPI over several ranks it is one MPI_Allreduce, and nothing above it changes. hypre
 * (the BoomerAMG coarse solver) needs MPI initialised even on one process: comm_ensure_init. Built without
 * MPI (FEMTO_HAVE_MPI undefined), every function here is the one-process answer, so callers never need an
 * #ifdef. */
#ifndef FEMTO_COMM_H
#define FEMTO_COMM_H

#include "hd.h"

FEM_EXTERN_C_BEGIN

/* Initialises MPI (MPI_Init_thread, funneled) unless it already is, and finalises it at exit when it was
 * initialised here. Open MPI's informational warnings are switched off unless the user set them. Safe to call
 * any number of times; FEM_ERR_INTERNAL with one sentence when MPI refuses to start. */
int comm_ensure_init(void);

/* v[0..n) = the sum over all processes of v[0..n) (in place). A no-op on one process or without MPI. */
int comm_sum(double *v, int n);

/* This process's rank and the number of ranks (0 and 1 without MPI or before comm_ensure_init). */
int comm_rank(void);
int comm_size(void);

FEM_EXTERN_C_END

#endif
