/* SuiteSparse CHOLMOD as the coarse solver (see coarse.h, cholmod_coarse.h).
 *
 * The coarse matrix is factorised once, P A P^T = L L^T, with the fill-reducing ordering CHOLMOD picks (AMD,
 * or METIS nested dissection when AMD fills in much: the 3D matrices of femto get METIS) and, for the 3D
 * matrices that matter, the supernodal method, whose dense blocks go to BLAS and LAPACK (OpenBLAS through
 * Debian's alternatives, threaded with OpenMP). One application is a forward and a backward solve: A^-1 to
 * rounding, symmetric positive definite, so CG converges in one iteration when it is the whole
 * preconditioner. Identity rows (eliminated Dirichlet dofs) are columns of L with a single 1 on the diagonal:
 * x = b there, exactly. The 64-bit interface (cholmod_l_*) is used, so a factor with more than 2^31 entries
 * is no limit. */
#include "cholmod_coarse.h"

#ifdef FEMTO_HAVE_CHOLMOD

#include "fem/error.h"
#include "order_cache.h"

#include <cholmod.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    cholmod_common c;
    cholmod_factor *L;
    cholmod_dense *X, *Y, *E; /* the solves' result and workspace, kept from one application to the next */
    int64_t n;
    int cache; /* the ordering: 0 computed, 1 from the cache (order_cache.h), 2 computed and stored there */
    uint64_t key; /* the lower triangle's pattern (order_cache_key), for coarse_refactor */
} Direct;

/* CHOLMOD's status after a failed call as one sentence (its status code included), and femto's status; `what`
 * is what it was doing ("factorising the coarse matrix"). */
static int failure(const Direct *d, const char *what) {
    int s = d->c.status;
    if (s == CHOLMOD_OUT_OF_MEMORY)
        return fem_fail(FEM_ERR_INTERNAL,
                        "CHOLMOD ran out of host memory while %s (%lld rows; CHOLMOD status %d)", what,
                        (long long)d->n, s);
    if (s == CHOLMOD_NOT_POSDEF)
        return fem_fail(
            FEM_ERR_SOLVER,
            "CHOLMOD could not factorise the coarse matrix: it is not positive definite (pivot %zu "
            "of %lld in its ordering is not positive; CHOLMOD status %d)",
            d->L ? d->L->minor + 1 : (size_t)0, (long long)d->n, s);
    const char *why = s == CHOLMOD_TOO_LARGE ? "a size overflows its integers"
                      : s == CHOLMOD_INVALID ? "invalid input"
                                             : "an error";
    return fem_fail(FEM_ERR_SOLVER, "CHOLMOD failed while %s: %s (CHOLMOD status %d)", what, why, s);
}

/* The lower triangle of A in CHOLMOD's compressed-column form: A is symmetric, so row r of its upper triangle
 * (the columns c >= r of the CSR row, sorted) is column r of the lower triangle. */
static cholmod_sparse *lower_triangle(const CsrMatrix *A, Direct *d) {
    int64_t n = A->nrows, nnz = 0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) nnz += A->cols[k] >= r;
    cholmod_sparse *S =
        cholmod_l_allocate_sparse((size_t)n, (size_t)n, (size_t)nnz, 1, 1, -1, CHOLMOD_REAL, &d->c);
    if (!S) return NULL;
    SuiteSparse_long *p = S->p, *i = S->i;
    double *x = S->x;
    int64_t q = 0;
    p[0] = 0;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++)
            if (A->cols[k] >= r) i[q] = A->cols[k], x[q++] = A->vals[k];
        p[r + 1] = q;
    }
    return S;
}

static const char *ordering_name(int ordering) {
    switch (ordering) {
    case CHOLMOD_AMD:
        return "AMD";
    case CHOLMOD_METIS:
        return "METIS";
    case CHOLMOD_NESDIS:
        return "nested dissection";
    case CHOLMOD_NATURAL:
        return "natural";
    case CHOLMOD_GIVEN:
        return "cached";
    default:
        return "CHOLMOD's";
    }
}

/* The key of S's pattern. */
static uint64_t pattern_key(const cholmod_sparse *S, int64_t n) {
    int64_t nnz = ((SuiteSparse_long *)S->p)[n];
    char tag[64];
    snprintf(tag, sizeof tag, "CHOLMOD %d.%d lower", CHOLMOD_MAIN_VERSION, CHOLMOD_SUB_VERSION);
    return order_cache_key(n, nnz, tag, S->p, sizeof(SuiteSparse_long) * (size_t)(n + 1), S->i,
                           sizeof(SuiteSparse_long) * (size_t)nnz);
}

/* The symbolic analysis: with the ordering of this pattern from cache_dir when it holds one (CHOLMOD then
 * orders by it alone), else CHOLMOD's own, stored there for the next run (cache_dir NULL: none). */
static void analyse(Direct *d, cholmod_sparse *S, const char *cache_dir) {
    int64_t n = d->n;
    uint64_t key = d->key = pattern_key(S, n);
    int *perm = cache_dir ? malloc(sizeof(int) * (size_t)n) : NULL;
    SuiteSparse_long *given = perm ? malloc(sizeof(SuiteSparse_long) * (size_t)n) : NULL;
    if (given && order_cache_load(cache_dir, key, n, perm)) {
        for (int64_t i = 0; i < n; i++) given[i] = perm[i];
        d->c.nmethods = 1;
        d->c.method[0].ordering = CHOLMOD_GIVEN;
        d->L = cholmod_l_analyze_p(S, given, NULL, 0, &d->c);
        d->cache = d->L != NULL;
    }
    if (!d->L) {
        d->c.nmethods = 0; /* CHOLMOD's default choice */
        d->L = cholmod_l_analyze(S, &d->c);
        if (d->L && given) {
            for (int64_t i = 0; i < n; i++) perm[i] = (int)((SuiteSparse_long *)d->L->Perm)[i];
            if (order_cache_store(cache_dir, key, n, perm) == 0) d->cache = 2;
        }
    }
    free(perm);
    free(given);
}

/* The OpenMP threads CHOLMOD's factorisation runs on. Debian's CHOLMOD has its own parallel loops,
 * built for 4 threads (CHOLMOD_OMP_NUM_THREADS), and calls BLAS once per supernode: OpenBLAS's OpenMP build,
 * which takes every thread the program has for each call, most of them on small supernodes, where its
 * threads spend their time waiting for one another. Measured on the 747k-dof cantilever's order-1 level
 * (99,846 rows, nnz(L) = 5.8e7), the factorisation took 8.4, 5.2, 3.1, 4.1 and 7.5-19.4 s on 1, 2, 4, 8 and 16
 * threads of the 16-core GPU machine's host, and 2.8 s on one thread of the 2-core development machine
 * against 10-13 s on both. So the factorisation gets half the program's threads, at least 1 and at most 4.
 * The solves keep every thread: one right-hand side is a memory-bound pass over L, and with them capped at 4
 * threads the cantilever's solve (14 CG iterations, a coarse solve each) took 2.45-2.86 s on the 16-core host
 * against 2.04-2.14 s. */
static int cholmod_threads(void) {
    int n = omp_get_max_threads() / 2;
    return n < 1 ? 1 : n > 4 ? 4 : n;
}

/* The numeric factorisation of S into d->L, whose analysis is done. DSMALL (a tiny pivot) is a warning: the
 * factor is complete and the solve well defined. */
static int numeric(Direct *d, cholmod_sparse *S) {
    const int threads = omp_get_max_threads();
    omp_set_num_threads(cholmod_threads());
    int ok = cholmod_l_factorize(S, d->L, &d->c) && (d->c.status == CHOLMOD_OK || d->c.status == CHOLMOD_DSMALL);
    omp_set_num_threads(threads);
    return ok;
}

static int factorise(Direct *d, const CsrMatrix *A, const char *cache_dir) {
    cholmod_sparse *S = lower_triangle(A, d);
    if (!S) return failure(d, "receiving the coarse matrix");
    analyse(d, S, cache_dir);
    int ok = d->L != NULL && numeric(d, S);
    cholmod_l_free_sparse(&S, &d->c);
    return ok ? FEM_OK : failure(d, d->L ? "factorising the coarse matrix" : "ordering the coarse matrix");
}

/* New values of the same pattern (a later Newton step): the symbolic factor kept, the numeric one made again.
 * Another pattern: *done = 0, nothing changed. */
static int direct_refactor(void *impl, const CsrMatrix *A, int *done) {
    Direct *d = impl;
    *done = 0;
    if (A->nrows != d->n) return FEM_OK;
    cholmod_sparse *S = lower_triangle(A, d);
    if (!S) return failure(d, "receiving the coarse matrix");
    int same = pattern_key(S, d->n) == d->key, ok = !same || numeric(d, S);
    cholmod_l_free_sparse(&S, &d->c);
    *done = same && ok;
    return ok ? FEM_OK : failure(d, "factorising the coarse matrix");
}

static void describe(const Direct *d, char *out, size_t len) {
    const cholmod_factor *L = d->L;
    double entries = L->is_super ? (double)L->xsize : (double)L->nzmax;
    snprintf(out, len, "CHOLMOD (%s Cholesky, %s ordering%s, nnz(L) = %.2g, %.0f MB)",
             L->is_super ? "supernodal" : "simplicial", ordering_name(L->ordering),
             d->cache == 2 ? ", ordering cached" : "", entries, (double)d->c.memory_inuse / 1e6);
}

static int direct_apply(void *impl, const double *b, double *x) {
    Direct *d = impl;
    /* a view of b: cholmod_l_solve2 reads its right-hand side and never writes or frees it */
    cholmod_dense B = {.nrow = (size_t)d->n,
                       .ncol = 1,
                       .nzmax = (size_t)d->n,
                       .d = (size_t)d->n,
                       .x = (void *)b,
                       .xtype = CHOLMOD_REAL,
                       .dtype = CHOLMOD_DOUBLE};
    if (!cholmod_l_solve2(CHOLMOD_A, d->L, &B, NULL, &d->X, NULL, &d->Y, &d->E, &d->c))
        return failure(d, "solving with the coarse factor");
    memcpy(x, d->X->x, sizeof(double) * (size_t)d->n);
    return FEM_OK;
}

static void direct_destroy(void *impl) {
    Direct *d = impl;
    if (!d) return;
    cholmod_l_free_factor(&d->L, &d->c);
    cholmod_l_free_dense(&d->X, &d->c);
    cholmod_l_free_dense(&d->Y, &d->c);
    cholmod_l_free_dense(&d->E, &d->c);
    cholmod_l_finish(&d->c);
    free(d);
}

int cholmod_coarse_create(const CsrMatrix *A, const char *cache_dir, CoarseBackend *out) {
    memset(out, 0, sizeof *out);
    Direct *d = fem_calloc(1, sizeof *d, "the CHOLMOD solver");
    if (!d) return FEM_ERR_INTERNAL;
    d->n = A->nrows;
    cholmod_l_start(&d->c);
    d->c.print = 0; /* errors become femto's sentences, never CHOLMOD's lines on the terminal */
    int status = factorise(d, A, cache_dir);
    if (!status) describe(d, out->description, sizeof out->description);
    status = coarse_backend_finish(out, status, d, 0, direct_apply, direct_destroy);
    if (!status) out->refactor = direct_refactor;
    return status;
}

#endif /* FEMTO_HAVE_CHOLMOD */
