/* CSR matrices from triplets (fem/solvers/sparse.h).
 *
 * usage: test_sparse random | order | errors
 *   random: 5000 random triplets with many repeats in a 37 x 23 matrix (one row left empty) against a dense
 *     accumulation of the same triplets: every row's columns strictly increase, nnz is the number of distinct
 *     (row, column) pairs, every stored value equals the dense entry to 1e-14 relative, and A x equals the
 *     dense product to 1e-14 relative; 1 and 2 threads give bitwise the same matrix.
 *   order: repeats are summed in the order of the triplets: 1e16 + 1 - 1e16 is exactly 0 (1 would show
 * another order); a 0 x 0 matrix and a matrix of only empty rows are valid. errors: a row or column out of
 * range is FEM_ERR_INPUT with a sentence naming the triplet. */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/solvers/sparse.h"

#include <math.h>
#include <omp.h>
#include <string.h>

enum { NR = 37, NC = 23, NT = 5000, EMPTY_ROW = 11 };

static void random_triplets(int32_t *r, int32_t *c, double *v) {
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < NT; k++) {
        do r[k] = (int32_t)(test_rand(&seed) * NR);
        while (r[k] == EMPTY_ROW);
        c[k] = (int32_t)(test_rand(&seed) * NC);
        v[k] = 2 * test_rand(&seed) - 1;
    }
}

static int same_matrix(const CsrMatrix *a, const CsrMatrix *b) {
    if (a->nrows != b->nrows || a->ncols != b->ncols || a->nnz != b->nnz) return 0;
    return !memcmp(a->rowptr, b->rowptr, sizeof(int64_t) * (NR + 1)) &&
           !memcmp(a->cols, b->cols, sizeof(int32_t) * a->nnz) &&
           !memcmp(a->vals, b->vals, sizeof(double) * a->nnz);
}

static void check_against_dense(const CsrMatrix *A, double dense[NR][NC], int used[NR][NC]) {
    int64_t distinct = 0;
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NC; j++) distinct += used[i][j];
    CHECK(A->nnz == distinct, "nnz %lld, expected %lld distinct pairs", (long long)A->nnz,
          (long long)distinct);
    CHECK(A->rowptr[EMPTY_ROW + 1] == A->rowptr[EMPTY_ROW], "row %d should be empty", EMPTY_ROW);
    for (int i = 0; i < NR; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (k > A->rowptr[i]) CHECK(A->cols[k] > A->cols[k - 1], "row %d: columns not increasing", i);
            int j = A->cols[k];
            CHECK(used[i][j] && fabs(A->vals[k] - dense[i][j]) <= 1e-14 * fmax(1.0, fabs(dense[i][j])),
                  "A(%d,%d) = %.17g, dense sum %.17g", i, j, A->vals[k], dense[i][j]);
        }
    double x[NC], y[NR];
    uint64_t seed = 42;
    for (int j = 0; j < NC; j++) x[j] = 2 * test_rand(&seed) - 1;
    CHECK_OK(csr_matvec(A, x, y));
    for (int i = 0; i < NR; i++) {
        double s = 0.0, mag = 0.0;
        for (int j = 0; j < NC; j++) s += dense[i][j] * x[j], mag += fabs(dense[i][j] * x[j]);
        CHECK(fabs(y[i] - s) <= 1e-14 * fmax(mag, 1e-300), "row %d of A x: %.17g, dense %.17g", i, y[i], s);
    }
}

static void test_random(void) {
    static int32_t r[NT], c[NT];
    static double v[NT], dense[NR][NC];
    static int used[NR][NC];
    random_triplets(r, c, v);
    for (int k = 0; k < NT; k++) dense[r[k]][c[k]] += v[k], used[r[k]][c[k]] = 1;
    CsrMatrix A, B;
    omp_set_num_threads(1);
    CHECK_OK(csr_from_triplets(NR, NC, NT, r, c, v, &A));
    omp_set_num_threads(2);
    CHECK_OK(csr_from_triplets(NR, NC, NT, r, c, v, &B));
    check_against_dense(&B, dense, used);
    CHECK(same_matrix(&A, &B), "1 and 2 threads built different matrices");
    csr_destroy(&A);
    csr_destroy(&B);
    CHECK(!A.rowptr && !A.cols && !A.vals && A.nnz == 0, "csr_destroy leaves a zeroed matrix");
    csr_destroy(&A); /* twice is harmless */
}

static void test_order(void) {
    int32_t r[] = {1, 0, 1, 1, 0}, c[] = {2, 0, 2, 2, 0};
    double v[] = {1e16, 5.0, 1.0, -1e16, 2.0};
    CsrMatrix A;
    CHECK_OK(csr_from_triplets(2, 3, 5, r, c, v, &A));
    CHECK(A.nnz == 2 && A.rowptr[1] == 1 && A.rowptr[2] == 2, "two entries, one per row (nnz %lld)",
          (long long)A.nnz);
    CHECK(A.vals[0] == 7.0, "A(0,0) = %g, expected 7", A.vals[0]);
    CHECK(A.vals[1] == 0.0, "A(1,2) = %g: 1e16 + 1 - 1e16 summed in triplet order is exactly 0", A.vals[1]);
    csr_destroy(&A);
    CHECK_OK(csr_from_triplets(0, 0, 0, NULL, NULL, NULL, &A));
    CHECK(A.nrows == 0 && A.nnz == 0 && A.rowptr[0] == 0, "0 x 0 matrix");
    csr_destroy(&A);
    CHECK_OK(csr_from_triplets(4, 4, 0, r, c, v, &A));
    CHECK(A.nnz == 0 && A.rowptr[4] == 0, "4 empty rows");
    double x[4] = {1, 2, 3, 4}, y[4] = {9, 9, 9, 9};
    CHECK_OK(csr_matvec(&A, x, y));
    CHECK(y[0] == 0 && y[3] == 0, "the product with empty rows is 0");
    csr_destroy(&A);
}

static void test_errors(void) {
    int32_t r[] = {0, 1, 5}, c[] = {0, 1, 1};
    double v[] = {1, 1, 1};
    CsrMatrix A;
    fem_clear_error();
    int status = csr_from_triplets(3, 3, 3, r, c, v, &A);
    CHECK(status == FEM_ERR_INPUT, "row 5 of 3: status %d, expected %d", status, FEM_ERR_INPUT);
    CHECK(strstr(fem_last_error(), "triplet 2") && strstr(fem_last_error(), "(5, 1)"), "message: %s",
          fem_last_error());
    CHECK(!A.rowptr && A.nnz == 0, "a failed build leaves an empty matrix");
    c[0] = -1, r[2] = 2;
    status = csr_from_triplets(3, 3, 3, r, c, v, &A);
    CHECK(status == FEM_ERR_INPUT && strstr(fem_last_error(), "triplet 0"), "column -1: %d, %s", status,
          fem_last_error());
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "random"))
        test_random();
    else if (!strcmp(what, "order"))
        test_order();
    else if (!strcmp(what, "errors"))
        test_errors();
    else {
        fprintf(stderr, "usage: test_sparse random|order|errors\n");
        return 2;
    }
    return test_result("test_sparse");
}
