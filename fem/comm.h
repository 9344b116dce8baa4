/* The processes of a run and the one place where their partial results meet.
 *
 * Every global reduction in femto (dot products and norms in Krylov and Newton, balances and extremes in
 * summaries) sums its rank-local part and then calls comm_sum: today a run is one process and comm_sum returns
 * at once; with MPI it becomes one MPI_Allreduce, and nothing above it changes. */
#ifndef FEMTO_COMM_H
#define FEMTO_COMM_H

#include "hd.h"

FEM_EXTERN_C_BEGIN

/* v[0..n) = the sum over all processes of v[0..n). */
int comm_sum(double *v, int n);

FEM_EXTERN_C_END

#endif
