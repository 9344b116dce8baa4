/* CSR matrices from triplets (see sparse.h). */
#include "sparse.h"

#include "fem/error.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

void csr_destroy(CsrMatrix *A) {
    if (!A) return;
    free(A->rowptr);
    free(A->cols);
    free(A->vals);
    memset(A, 0, sizeof *A);
}

/* The first triplet whose row or column is out of range, or -1. */
static int64_t first_bad_triplet(int64_t nrows, int64_t ncols, int64_t n, const int32_t *rows,
                                 const int32_t *cols) {
    int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n > 100000)
    for (int64_t k = 0; k < n; k++)
        if (rows[k] < 0 || rows[k] >= nrows || cols[k] < 0 || cols[k] >= ncols) bad = k < bad ? k : bad;
    return bad < n ? bad : -1;
}

/* Sorts (c[i], v[i]) by c, i < m: insertion sort on short rows, Shell sort (Ciura's gaps) on long ones. */
static void sort_row(int32_t *c, double *v, int64_t m) {
    static const int64_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        int64_t h = gaps[g];
        if (h >= m || (m <= 32 && h > 1)) continue;
        for (int64_t i = h; i < m; i++) {
            int32_t ci = c[i];
            double vi = v[i];
            int64_t j = i;
            for (; j >= h && c[j - h] > ci; j -= h) c[j] = c[j - h], v[j] = v[j - h];
            c[j] = ci, v[j] = vi;
        }
    }
}

/* Merges repeated columns of the row segment [s, e) of (c, v) into its start, in segment order, then sorts
 * it; returns the number of distinct columns. where[col] is scratch of the calling thread: a position in this
 * segment's merged prefix holding col, or anything else (it is verified, never cleared). */
static int64_t merge_row(int32_t *c, double *v, int64_t s, int64_t e, int64_t *where) {
    int64_t out = s;
    for (int64_t k = s; k < e; k++) {
        int32_t col = c[k];
        int64_t p = where[col];
        if (p >= s && p < out && c[p] == col) {
            v[p] += v[k];
        } else {
            where[col] = out;
            c[out] = col, v[out] = v[k];
            out++;
        }
    }
    sort_row(c + s, v + s, out - s);
    return out - s;
}

/* Counting sort of the triplets by row into (tc, tv), keeping their order within a row; start[r] is where
 * row r begins ([nrows + 1]). Thread t sorts the t-th contiguous chunk of the triplets into the slots of each
 * row that follow those of chunks 0 .. t-1, so the result is the serial one for any number of threads. */
static int bucket_by_row(int64_t nrows, int64_t n, const int32_t *rows, const int32_t *cols,
                         const double *vals, int64_t *start, int32_t *tc, double *tv) {
    int T = omp_get_max_threads();
    if (n < 100000 || T < 1) T = 1;
    int64_t *next = NULL; /* [T][nrows]: thread t's next slot in row r */
    while (!(next = calloc((size_t)T * (size_t)nrows + 1, sizeof *next)) && T > 1) T /= 2; /* less memory */
    if (!next) return fem_fail(FEM_ERR_INTERNAL, "out of memory (row counts of %lld rows)", (long long)nrows);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        int64_t k0 = n * t / T, k1 = n * (t + 1) / T, *mine = next + (size_t)t * (size_t)nrows;
        for (int64_t k = k0; k < k1; k++) mine[rows[k]]++;
#pragma omp barrier
#pragma omp for schedule(static)
        for (int64_t r = 0; r < nrows; r++) { /* row sizes, and each chunk's offset within its row */
            int64_t sum = 0;
            for (int u = 0; u < T; u++) {
                int64_t c = next[(size_t)u * (size_t)nrows + r];
                next[(size_t)u * (size_t)nrows + r] = sum;
                sum += c;
            }
            start[r + 1] = sum;
        }
#pragma omp single
        {
            start[0] = 0;
            for (int64_t r = 0; r < nrows; r++) start[r + 1] += start[r];
        }
        for (int64_t k = k0; k < k1; k++) {
            int64_t p = start[rows[k]] + mine[rows[k]]++;
            tc[p] = cols[k], tv[p] = vals[k];
        }
    }
    free(next);
    return FEM_OK;
}

/* Merges every row of the bucketed triplets in place; count[r] = distinct columns of row r. */
static int merge_rows(int64_t nrows, int64_t ncols, const int64_t *start, int32_t *tc, double *tv,
                      int64_t *count) {
    int threads = omp_get_max_threads(), status = FEM_OK;
#pragma omp parallel num_threads(threads)
    {
        int64_t *where = calloc((size_t)ncols + 1, sizeof *where);
        if (!where) {
#pragma omp atomic write
            status = FEM_ERR_INTERNAL;
        }
        /* every thread reaches the loop (its barrier), with or without scratch */
#pragma omp for schedule(dynamic, 1024)
        for (int64_t r = 0; r < nrows; r++)
            if (where) count[r] = merge_row(tc, tv, start[r], start[r + 1], where);
        free(where);
    }
    if (status)
        return fem_fail(status, "out of memory (column scratch of %lld entries per thread)",
                        (long long)ncols);
    return FEM_OK;
}

int csr_from_triplets(int64_t nrows, int64_t ncols, int64_t n, const int32_t *rows, const int32_t *cols,
                      const double *vals, CsrMatrix *A) {
    memset(A, 0, sizeof *A);
    if (nrows < 0 || ncols < 0 || n < 0)
        return fem_fail(FEM_ERR_INPUT, "a %lld x %lld sparse matrix from %lld triplets: negative size",
                        (long long)nrows, (long long)ncols, (long long)n);
    int64_t bad = first_bad_triplet(nrows, ncols, n, rows, cols);
    if (bad >= 0)
        return fem_fail(FEM_ERR_INPUT,
                        "triplet %lld of a %lld x %lld sparse matrix is (%d, %d): out of range",
                        (long long)bad, (long long)nrows, (long long)ncols, rows[bad], cols[bad]);
    int64_t *start = fem_malloc(sizeof *start * ((size_t)nrows + 1), "sparse-matrix row starts");
    int64_t *count = fem_malloc(sizeof *count * ((size_t)nrows + 1), "sparse-matrix row counts");
    int32_t *tc = fem_malloc(sizeof *tc * ((size_t)n + 1), "sparse-matrix triplet columns");
    double *tv = fem_malloc(sizeof *tv * ((size_t)n + 1), "sparse-matrix triplet values");
    A->rowptr = fem_malloc(sizeof *A->rowptr * ((size_t)nrows + 1), "a sparse matrix");
    int status = start && count && tc && tv && A->rowptr ? FEM_OK : FEM_ERR_INTERNAL;
    if (!status) status = bucket_by_row(nrows, n, rows, cols, vals, start, tc, tv);
    if (!status) status = merge_rows(nrows, ncols, start, tc, tv, count);
    if (!status) {
        A->nrows = nrows, A->ncols = ncols;
        A->rowptr[0] = 0;
        for (int64_t r = 0; r < nrows; r++) A->rowptr[r + 1] = A->rowptr[r] + count[r];
        A->nnz = A->rowptr[nrows];
        A->cols = fem_malloc(sizeof *A->cols * ((size_t)A->nnz + 1), "a sparse matrix's columns");
        A->vals = fem_malloc(sizeof *A->vals * ((size_t)A->nnz + 1), "a sparse matrix's values");
        if (!A->cols || !A->vals) status = FEM_ERR_INTERNAL;
    }
    if (!status) {
#pragma omp parallel for schedule(static) if (nrows > 10000)
        for (int64_t r = 0; r < nrows; r++) {
            memcpy(A->cols + A->rowptr[r], tc + start[r], sizeof *tc * (size_t)count[r]);
            memcpy(A->vals + A->rowptr[r], tv + start[r], sizeof *tv * (size_t)count[r]);
        }
    }
    free(start), free(count), free(tc), free(tv);
    if (status) csr_destroy(A);
    return status;
}

int csr_matvec(const CsrMatrix *A, const double *x, double *y) {
#pragma omp parallel for schedule(static) if (A->nnz > 50000)
    for (int64_t r = 0; r < A->nrows; r++) {
        double s = 0.0;
        for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) s += A->vals[k] * x[A->cols[k]];
        y[r] = s;
    }
    return FEM_OK;
}
