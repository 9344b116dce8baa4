/* Small dense linear algebra on the host (quadrature rules, Krylov eigenvalue estimates). */
#ifndef FEMTO_DENSE_H
#define FEMTO_DENSE_H
#include "hd.h"

FEM_EXTERN_C_BEGIN

/* Eigen-decomposition of a small symmetric n x n matrix (row-major) by cyclic Jacobi rotations: on return
 * A's diagonal holds the eigenvalues and the columns of V the eigenvectors. */
void dense_symmetric_eigen(int n, double *A, double *V);

FEM_EXTERN_C_END

#endif
