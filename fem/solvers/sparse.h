/* Assembled sparse matrices on the host, in compressed sparse row (CSR) form.
 *
 * Matrix-free operators serve every multigrid level but the coarsest; that one (order 1) is assembled into a
 * CsrMatrix and handed to a library (fem/solvers/coarse.h). The assembly produces (row, column, value)
 * triplets element by element, with many repeats; csr_from_triplets sums them into a CSR matrix whose rows
 * hold sorted, distinct columns, which is what hypre and cuDSS expect. */
#ifndef FEMTO_SOLVERS_SPARSE_H
#define FEMTO_SOLVERS_SPARSE_H

#include "fem/hd.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    int64_t nrows, ncols, nnz;
    int64_t *rowptr; /* [nrows + 1]: row i holds entries rowptr[i] .. rowptr[i + 1] - 1 */
    int32_t *cols;   /* [nnz], increasing within each row, no repeats */
    double *vals;    /* [nnz] */
} CsrMatrix;

/* Builds A from n triplets (rows[k], cols[k], vals[k]); repeated (row, column) pairs are summed, in the order
 * of the triplets (so the result is bitwise reproducible for any thread count). O(n) work and O(n) extra
 * memory: a counting sort by row, then per row a pass that merges repeats and sorts the distinct columns.
 * FEM_ERR_INPUT when an index is out of range; A is empty on failure. */
int csr_from_triplets(int64_t nrows, int64_t ncols, int64_t n, const int32_t *rows, const int32_t *cols,
                      const double *vals, CsrMatrix *A);

/* Frees A's arrays and zeroes it (safe on a zeroed or destroyed matrix). */
void csr_destroy(CsrMatrix *A);

/* y = A x (host arrays; OpenMP over rows). */
int csr_matvec(const CsrMatrix *A, const double *x, double *y);

FEM_EXTERN_C_END

#endif
