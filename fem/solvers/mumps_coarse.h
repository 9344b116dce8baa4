/* The MUMPS backend of the coarse solver (coarse.h): a sparse direct solver whose factorisation and triangular
 * solves are spread over the MPI ranks. Internal to fem/solvers; built in with FEMTO_HAVE_MUMPS. */
#ifndef FEMTO_SOLVERS_MUMPS_COARSE_H
#define FEMTO_SOLVERS_MUMPS_COARSE_H

#include "fem/solvers/coarse.h"

/* Factorises A (symmetric positive definite; only its upper triangle in the global numbering is read) as
 * L D L^T over every rank of the run when opt->global is set (each rank hands in its rows, partial rows of
 * ghost dofs included, and MUMPS sums them), or in this process alone when it is NULL. The backend applies
 * x = A^-1 b to host arrays of A's nrows entries; over ranks b's ghosts are not read and x's are set to 0.
 * Collective over the ranks; a failure on any rank is every rank's status. */
int mumps_coarse_create(const CsrMatrix *A, const CoarseOptions *opt, CoarseBackend *out);

#endif
