/* The cuDSS coarse solver (see gpu.h and fem/solvers/coarse.h): NVIDIA's sparse direct solver on the GPU.
 *
 * The matrix is symmetric positive definite, so cuDSS gets its upper triangle only (CUDSS_MTYPE_SPD, upper
 * view: half the memory) and computes a Cholesky factorisation once, at setup; an application is the forward
 * and backward solve, reading b and writing x in GPU memory on the default stream, where femto's kernels run.
 * The factor is in double precision, or in single precision (CoarseOptions.precision: asked for, or where the
 * double-precision one would not fit), where the values, the factor and a solve's two vectors are float and
 * two small kernels convert b and x. Every cuDSS status is checked and becomes one FEM_ERR_DEVICE sentence.
 */
#include "fem/solvers/order_cache.h"
#include "gpu/internal.cuh"

#ifdef FEMTO_HAVE_CUDSS

#include <cudss.h>
#include <cusolverDn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <omp.h>

typedef struct {
    Device *dev;
    int64_t n, nnz;       /* rows, nonzeros of the upper triangle */
    int *rowptr, *cols;   /* device: the upper triangle in CSR, 32-bit indices */
    void *vals, *scratch; /* device: its values; b and x (double, or float for a single-precision factor) */
    int single;           /* the factor in single precision (CoarsePrecision): half the bytes */
    double gpu_memory;    /* CoarseOptions.gpu_memory */
    double need, avail;   /* a factorisation refused for its memory: bytes it needed, bytes there were */
    double peak;          /* cuDSS's estimate of the factorisation's peak GPU memory */
    cudssHandle_t handle;
    cudssConfig_t config;
    cudssData_t data;
    cudssMatrix_t A, b, x;
    int host_threads; /* host threads of cuDSS's reordering (1 without its threading layer) */
    const char
        *cache_dir; /* where the reordering is cached (fem/solvers/order_cache.h), or NULL; setup only */
    uint64_t key;   /* the pattern's key there */
    /* The explicit inverse (CoarseOptions.inverse): columns inv_first .. inv_first + inv_count - 1 of A^-1,
     * column-major (n entries apart), in the factor's precision; NULL: the triangular solves. A^-1 is
     * symmetric, so column j is row j, and an application is x = inv^T b. */
    void *inv;
    int64_t inv_first, inv_count;
    int dense;           /* the inverse computed by cuSOLVER (dense Cholesky), else by cuDSS's factor */
    double inv_seconds;  /* its computation at the last factorisation */
    double load_seconds; /* cuSOLVER's loading, the first time */
    char inv_why[300];   /* one process: why the inverse that was wanted is not there */
} Dss;

static const char *status_name(cudssStatus_t s) {
    switch (s) {
    case CUDSS_STATUS_SUCCESS:
        return "success";
    case CUDSS_STATUS_NOT_INITIALIZED:
        return "not initialised";
    case CUDSS_STATUS_ALLOC_FAILED:
        return "a memory allocation failed";
    case CUDSS_STATUS_INVALID_VALUE:
        return "invalid value";
    case CUDSS_STATUS_NOT_SUPPORTED:
        return "not supported";
    case CUDSS_STATUS_EXECUTION_FAILED:
        return "execution failed";
    case CUDSS_STATUS_INTERNAL_ERROR:
        return "internal error";
    }
    return "unknown status";
}

static int dss_check(cudssStatus_t s, const char *what) {
    if (s == CUDSS_STATUS_SUCCESS) return FEM_OK;
    cudaGetLastError(); /* a failed allocation inside cuDSS must not poison later CUDA calls */
    return fem_fail(FEM_ERR_DEVICE, "cuDSS failed while %s (%s)", what, status_name(s));
}

/* The upper triangle of A (columns >= row) with 32-bit indices, on the host: rows rp, columns ci, values v
 * (malloc'ed), *nnz entries and *key, the hash of the pattern (the reordering cache's key). */
static int upper_triangle(const CsrMatrix *A, int **rp, int **ci, double **v, int64_t *nnz, uint64_t *key) {
    *nnz = 0;
    for (int64_t r = 0; r < A->nrows; r++)
        for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) *nnz += A->cols[k] >= r;
    if (*nnz > INT32_MAX)
        return fem_fail(FEM_ERR_USAGE,
                        "the coarse matrix's upper triangle has %lld nonzeros, beyond the 32-bit "
                        "indices femto hands to cuDSS",
                        (long long)*nnz);
    *rp = (int *)malloc(sizeof(int) * (size_t)(A->nrows + 1));
    *ci = (int *)malloc(sizeof(int) * (size_t)(*nnz + 1));
    *v = (double *)malloc(sizeof(double) * (size_t)(*nnz + 1));
    if (!*rp || !*ci || !*v) {
        free(*rp), free(*ci), free(*v);
        *rp = *ci = NULL, *v = NULL;
        return fem_fail(FEM_ERR_INTERNAL, "out of memory (coarse matrix for cuDSS)");
    }
    int64_t q = 0;
    (*rp)[0] = 0;
    for (int64_t r = 0; r < A->nrows; r++) {
        for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++)
            if (A->cols[k] >= r) (*ci)[q] = A->cols[k], (*v)[q++] = A->vals[k];
        (*rp)[r + 1] = (int)q;
    }
    char tag[64];
    const char *alg = getenv("FEMTO_CUDSS_REORDERING");
    snprintf(tag, sizeof tag, "cuDSS %d SPD upper, reordering %s", CUDSS_VERSION,
             alg && alg[0] ? alg : "default");
    *key = order_cache_key(A->nrows, *nnz, tag, *rp, sizeof(int) * (size_t)(A->nrows + 1), *ci,
                           sizeof(int) * (size_t)*nnz);
    return FEM_OK;
}

/* The values v of the upper triangle to the device, as the factor's precision wants them; alloc: first time.
 */
static int upload_values(Dss *s, const double *v, int alloc) {
    size_t size = s->single ? sizeof(float) : sizeof(double);
    float *f = NULL;
    if (s->single) {
        f = (float *)malloc(sizeof(float) * (size_t)(s->nnz + 1));
        if (!f) return fem_fail(FEM_ERR_INTERNAL, "out of memory (coarse matrix for cuDSS)");
        for (int64_t k = 0; k < s->nnz; k++) f[k] = (float)v[k];
    }
    const void *src = s->single ? (const void *)f : (const void *)v;
    int status = alloc ? device_alloc_copy(s->dev, &s->vals, src, size * (size_t)s->nnz)
                       : s->dev->ops.upload(s->dev, s->vals, src, size * (size_t)s->nnz);
    free(f);
    return status;
}

/* The upper triangle of A uploaded to the device. */
static int upload_upper(Dss *s, const CsrMatrix *A) {
    int *rp = NULL, *ci = NULL;
    double *v = NULL;
    int status = upper_triangle(A, &rp, &ci, &v, &s->nnz, &s->key);
    if (!status)
        status = device_alloc_copy(s->dev, (void **)&s->rowptr, rp, sizeof(int) * (size_t)(A->nrows + 1));
    if (!status) status = device_alloc_copy(s->dev, (void **)&s->cols, ci, sizeof(int) * (size_t)s->nnz);
    if (!status) status = upload_values(s, v, 1);
    free(rp), free(ci), free(v);
    return status;
}

/* cuDSS's host-side reordering runs on the host threads when its threading layer (libcudss_mtlayer_gomp,
 * shipped beside libcudss) loads: from CUDSS_THREADING_LIB when set, else from the folder femto was built
 * against. Without it cuDSS reorders on one thread; nothing else changes. FEMTO_CUDSS_REORDERING=0..5 picks
 * cuDSS's reordering algorithm (CUDSS_ALG_DEFAULT, _1, ...) for measurements. */
static void configure_host_side(Dss *s) {
    const char *env = getenv("CUDSS_THREADING_LIB");
    int have_env = env && env[0];
#ifdef FEMTO_CUDSS_MTLAYER
    const char *lib = have_env ? NULL : FEMTO_CUDSS_MTLAYER;
    int can = have_env || access(FEMTO_CUDSS_MTLAYER, R_OK) == 0;
#else
    const char *lib = NULL;
    int can = have_env;
#endif
    if (can && cudssSetThreadingLayer(s->handle, lib) == CUDSS_STATUS_SUCCESS) {
        int threads = omp_get_max_threads();
        s->host_threads = cudssConfigSet(s->config, CUDSS_CONFIG_HOST_NTHREADS, &threads, sizeof threads) ==
                                  CUDSS_STATUS_SUCCESS
                              ? threads
                              : 1;
    }
    const char *alg = getenv("FEMTO_CUDSS_REORDERING");
    if (alg && alg[0] >= '0' && alg[0] <= '5') {
        cudssAlgType_t a = (cudssAlgType_t)(alg[0] - '0');
        cudssConfigSet(s->config, CUDSS_CONFIG_REORDERING_ALG, &a, sizeof a);
    }
}

static int create_objects(Dss *s) {
    s->host_threads = 1;
    FEM_TRY(dss_check(cudssCreate(&s->handle), "creating its handle"));
    FEM_TRY(dss_check(cudssConfigCreate(&s->config), "creating its configuration"));
    configure_host_side(s);
    FEM_TRY(dss_check(cudssDataCreate(s->handle, &s->data), "creating its data"));
    cudaDataType_t type = s->single ? CUDA_R_32F : CUDA_R_64F;
    size_t size = s->single ? sizeof(float) : sizeof(double);
    FEM_TRY(
        dss_check(cudssMatrixCreateCsr(&s->A, s->n, s->n, s->nnz, s->rowptr, NULL, s->cols, s->vals,
                                       CUDA_R_32I, type, CUDSS_MTYPE_SPD, CUDSS_MVIEW_UPPER, CUDSS_BASE_ZERO),
                  "wrapping the coarse matrix"));
    FEM_TRY(device_alloc(s->dev, &s->scratch, size * 2 * (size_t)s->n));
    char *scratch = (char *)s->scratch;
    FEM_TRY(dss_check(cudssMatrixCreateDn(&s->b, s->n, 1, s->n, scratch, type, CUDSS_LAYOUT_COL_MAJOR),
                      "wrapping a right-hand side"));
    FEM_TRY(dss_check(cudssMatrixCreateDn(&s->x, s->n, 1, s->n, scratch + size * (size_t)s->n, type,
                                          CUDSS_LAYOUT_COL_MAJOR),
                      "wrapping a solution"));
    return FEM_OK;
}

/* Refuses a factorisation that would not fit: cuDSS's peak estimate after the analysis against free memory.
 */
static int check_memory(Dss *s, int64_t est[16]) {
    size_t written = 0, free_b = 0, total_b = 0;
    memset(est, 0, 16 * sizeof(int64_t));
    FEM_TRY(dss_check(
        cudssDataGet(s->handle, s->data, CUDSS_DATA_MEMORY_ESTIMATES, est, 16 * sizeof(int64_t), &written),
        "estimating its memory"));
    GPU_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double avail = s->gpu_memory > 0 && s->gpu_memory < (double)free_b ? s->gpu_memory : (double)free_b;
    s->peak = (double)est[1];
    if (est[1] > 0 && (double)est[1] > 0.95 * avail) {
        s->need = (double)est[1], s->avail = avail;
        return fem_fail(FEM_ERR_DEVICE,
                        "cuDSS would need %.2f GB of GPU memory to factorise the %lld-row coarse "
                        "matrix in %s precision, and %.2f GB are free",
                        (double)est[1] / 1e9, (long long)s->n, s->single ? "single" : "double", avail / 1e9);
    }
    return FEM_OK;
}

/* The analysis (reordering, symbolic factorisation), with the reordering from the cache when it holds this
 * pattern's, else stored there for the next run. *cache: 0 no cache, 1 the reordering came from it, 2 stored.
 */
static int analyse(Dss *s, int *cache) {
    *cache = 0;
    int *perm = s->cache_dir ? (int *)malloc(sizeof(int) * (size_t)s->n) : NULL;
    if (perm && order_cache_load(s->cache_dir, s->key, s->n, perm) &&
        cudssDataSet(s->handle, s->data, CUDSS_DATA_USER_PERM, perm, sizeof(int) * (size_t)s->n) ==
            CUDSS_STATUS_SUCCESS)
        *cache = 1;
    int status =
        dss_check(cudssExecute(s->handle, CUDSS_PHASE_ANALYSIS, s->config, s->data, s->A, s->x, s->b),
                  "analysing the coarse matrix (reordering, symbolic factorisation)");
    size_t written = 0;
    if (!status && perm && !*cache &&
        cudssDataGet(s->handle, s->data, CUDSS_DATA_PERM_REORDER_ROW, perm, sizeof(int) * (size_t)s->n,
                     &written) == CUDSS_STATUS_SUCCESS &&
        written == sizeof(int) * (size_t)s->n && order_cache_store(s->cache_dir, s->key, s->n, perm) == 0)
        *cache = 2;
    free(perm);
    return status;
}

/* The numeric factorisation of the values in s->vals, with the analysis done. */
static int numeric(Dss *s) {
    FEM_TRY(
        dss_check(cudssExecute(s->handle, CUDSS_PHASE_FACTORIZATION, s->config, s->data, s->A, s->x, s->b),
                  "factorising the coarse matrix"));
    GPU_CHECK(cudaDeviceSynchronize());
    int info = 0;
    size_t written = 0;
    FEM_TRY(dss_check(cudssDataGet(s->handle, s->data, CUDSS_DATA_INFO, &info, sizeof info, &written),
                      "reporting on the factorisation"));
    if (info != 0)
        return fem_fail(FEM_ERR_DEVICE,
                        "cuDSS's Cholesky factorisation of the %lld-row coarse matrix failed "
                        "(info %d): the matrix is not positive definite",
                        (long long)s->n, info);
    return FEM_OK;
}

static int factorize(Dss *s, char *description, size_t len) {
    double t0 = omp_get_wtime();
    int cache = 0;
    FEM_TRY(analyse(s, &cache));
    int64_t est[16];
    FEM_TRY(check_memory(s, est));
    double t1 = omp_get_wtime();
    FEM_TRY(numeric(s));
    double t2 = omp_get_wtime();
    size_t written = 0;
    int64_t lu_nnz = 0;
    if (cudssDataGet(s->handle, s->data, CUDSS_DATA_LU_NNZ, &lu_nnz, sizeof lu_nnz, &written) !=
        CUDSS_STATUS_SUCCESS)
        lu_nnz = -1; /* for the description only */
    int k = snprintf(description, len, "cuDSS (%sCholesky of %lld rows", s->single ? "single-precision " : "",
                     (long long)s->n);
    if (lu_nnz > 0) k += snprintf(description + k, len - (size_t)k, ", nnz(L) = %.3g", (double)lu_nnz);
    if (est[0] > 0)
        k += snprintf(description + k, len - (size_t)k, ", %.2f GB on the GPU", (double)est[0] / 1e9);
    snprintf(description + k, len - (size_t)k,
             "; analysis %.2f s on %d host thread%s%s, factorisation %.2f s)", t1 - t0, s->host_threads,
             s->host_threads == 1 ? "" : "s",
             cache == 1   ? " with the cached reordering"
             : cache == 2 ? ", reordering cached"
                          : "",
             t2 - t1);
    return FEM_OK;
}

static __global__ void to_float(const double *__restrict__ a, float *__restrict__ b, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        b[i] = (float)a[i];
}

static __global__ void to_double(const float *__restrict__ a, double *__restrict__ b, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

/* Column j < k of the n x k block B (column-major) is the unit vector e_{first + j}; B is zero elsewhere. */
template <typename T> static __global__ void unit_columns(T *B, int64_t n, int64_t first, int64_t k) {
    int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (j < k) B[first + j + j * n] = (T)1;
}

enum { INV_THREADS = 256, INV_COLS = 4 };

/* x[j] = sum_i X[i + j n] b[i] for j < count: each block reads INV_COLS columns of the inverse once (the
 * memory traffic) and b once for all of them; sums in double precision whatever X's. */
template <typename T>
static __global__ void __launch_bounds__(INV_THREADS)
    inverse_apply(const T *__restrict__ X, int64_t n, int64_t count, const double *__restrict__ b,
                  double *__restrict__ x) {
    int64_t c0 = (int64_t)blockIdx.x * INV_COLS;
    const T *col[INV_COLS];
    for (int c = 0; c < INV_COLS; c++) col[c] = X + (c0 + c < count ? c0 + c : count - 1) * n;
    double sum[INV_COLS] = {0};
    for (int64_t i = threadIdx.x; i < n; i += INV_THREADS) {
        double bi = b[i];
#pragma unroll
        for (int c = 0; c < INV_COLS; c++) sum[c] += (double)col[c][i] * bi;
    }
    __shared__ double part[INV_COLS][INV_THREADS / 32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int c = 0; c < INV_COLS; c++) {
        for (int o = 16; o > 0; o /= 2) sum[c] += __shfl_down_sync(0xffffffffu, sum[c], o);
        if (lane == 0) part[c][warp] = sum[c];
    }
    __syncthreads();
    if (threadIdx.x < INV_COLS && c0 + threadIdx.x < count) {
        double t = 0;
        for (int w = 0; w < INV_THREADS / 32; w++) t += part[threadIdx.x][w];
        x[c0 + threadIdx.x] = t;
    }
}

/* ---- Through cuSOLVER (dense Cholesky, then the inverse from the factor: n^3 flops at the GPU's dense rate;
 * 13,632 rows in well under a second); else through cuDSS's factor (below). */

/* The lower triangle of A into the n x n column-major F (zero elsewhere): A's upper triangle in CSR, row r's
 * entry (r, c >= r) read as F's (c, r). */
template <typename T>
static __global__ void densify_lower(const int *rowptr, const int *cols, const T *vals, int64_t n,
                                     double *F) {
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n;
         r += (int64_t)gridDim.x * blockDim.x)
        for (int k = rowptr[r]; k < rowptr[r + 1]; k++) F[cols[k] + r * n] = (double)vals[k];
}

/* F's strict upper triangle from its lower one, 32 x 32 tiles through shared memory: block (bi, bj), bi <=
 * bj, writes the upper tile (rows 32 bi.., columns 32 bj..) from the lower tile (rows 32 bj.., columns 32
 * bi..). */
static __global__ void symmetrize_lower(double *F, int64_t n) {
    __shared__ double t[32][33];
    int64_t bi = blockIdx.x, bj = blockIdx.y;
    if (bi > bj) return;
    int x = threadIdx.x;
    for (int y = threadIdx.y; y < 32; y += blockDim.y) {
        int64_t r = bj * 32 + x, c = bi * 32 + y;
        if (r < n && c < n) t[y][x] = F[r + c * n];
    }
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += blockDim.y) {
        int64_t r = bi * 32 + x, c = bj * 32 + y;
        if (r < n && c < n && r < c) F[r + c * n] = t[x][y];
    }
}

static int solver_check(cusolverStatus_t st, const char *what) {
    if (st == CUSOLVER_STATUS_SUCCESS) return FEM_OK;
    cudaGetLastError();
    return fem_fail(FEM_ERR_DEVICE, "cuSOLVER failed while %s (status %d)", what, (int)st);
}

/* potrf then potri on F (lower) with the handle h, each checked for its info. */
static int dense_cholesky_inverse(cusolverDnHandle_t h, double *F, int n, void *work, int lwork, int *info) {
    int status =
        solver_check(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, F, n, (double *)work, lwork, info),
                     "factorising the dense coarse matrix");
    int host_info = 0;
    if (!status) status = gpu_download(NULL, &host_info, info, sizeof host_info);
    if (!status && host_info != 0)
        status = fem_fail(
            FEM_ERR_DEVICE,
            "the dense Cholesky factorisation of the %d-row coarse matrix failed (info %d): the matrix "
            "is not positive definite",
            n, host_info);
    if (!status)
        status =
            solver_check(cusolverDnDpotri(h, CUBLAS_FILL_MODE_LOWER, n, F, n, (double *)work, lwork, info),
                         "inverting the dense coarse matrix");
    if (!status) status = gpu_download(NULL, &host_info, info, sizeof host_info);
    if (!status && host_info != 0)
        status = fem_fail(FEM_ERR_DEVICE, "inverting the %d-row coarse matrix's factor failed (info %d)", n,
                          host_info);
    return status;
}

/* The whole inverse in the dense n x n F (allocated here), in double precision. */
static int dense_inverse(Dss *s, double **F) {
    int n = (int)s->n;
    size_t full = sizeof(double) * (size_t)n * (size_t)n;
    FEM_TRY(device_alloc(s->dev, (void **)F, full));
    GPU_CHECK(cudaMemsetAsync(*F, 0, full));
    unsigned blocks = gpu_vec_blocks(gpu_state(s->dev), s->n);
    if (s->single)
        densify_lower<float>
            <<<blocks, GPU_VEC_THREADS>>>(s->rowptr, s->cols, (const float *)s->vals, s->n, *F);
    else
        densify_lower<double>
            <<<blocks, GPU_VEC_THREADS>>>(s->rowptr, s->cols, (const double *)s->vals, s->n, *F);
    GPU_LAUNCHED("densify_lower");
    cusolverDnHandle_t h = NULL;
    int l1 = 0, l2 = 0;
    void *work = NULL;
    FEM_TRY(solver_check(cusolverDnCreate(&h), "starting"));
    int status = solver_check(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, *F, n, &l1),
                              "sizing its workspace");
    if (!status)
        status = solver_check(cusolverDnDpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, *F, n, &l2),
                              "sizing its workspace");
    int lwork = l1 > l2 ? l1 : l2;
    if (!status) status = device_alloc(s->dev, &work, sizeof(double) * (size_t)lwork + sizeof(int));
    if (!status) status = dense_cholesky_inverse(h, *F, n, work, lwork, (int *)((double *)work + lwork));
    device_free(s->dev, work);
    cusolverDnDestroy(h);
    FEM_TRY(status);
    dim3 tiles((unsigned)((n + 31) / 32), (unsigned)((n + 31) / 32)), threads(32, 8);
    symmetrize_lower<<<tiles, threads>>>(*F, s->n);
    GPU_LAUNCHED("symmetrize_lower");
    return FEM_OK;
}

/* The inverse's columns through cuSOLVER into s->inv: F itself where it holds them in the stored precision,
 * else copied (and converted) from it. */
static int compute_inverse_dense(Dss *s) {
    double *F = NULL;
    int status = dense_inverse(s, &F);
    size_t size = s->single ? sizeof(float) : sizeof(double), cols = (size_t)s->n * (size_t)s->inv_count;
    if (!status && !s->single && s->inv_count == s->n) {
        s->inv = F, F = NULL;
    } else if (!status) {
        status = device_alloc(s->dev, &s->inv, size * cols);
        const double *from = F + (size_t)s->inv_first * (size_t)s->n;
        if (!status && s->single) {
            to_float<<<gpu_vec_blocks(gpu_state(s->dev), (int64_t)cols), GPU_VEC_THREADS>>>(
                from, (float *)s->inv, (int64_t)cols);
            status = cudaGetLastError() == cudaSuccess ? FEM_OK : fem_fail(FEM_ERR_DEVICE, "to_float failed");
        } else if (!status) {
            GPU_CHECK(cudaMemcpyAsync(s->inv, from, size * cols, cudaMemcpyDeviceToDevice));
        }
    }
    cudaError_t e = cudaDeviceSynchronize();
    device_free(s->dev, F);
    FEM_TRY(status);
    GPU_CHECK(e);
    return FEM_OK;
}

/* ---- Through cuDSS's factor, where cuSOLVER cannot be loaded: solves with many right-hand sides (slower:
 * about 0.5 s for 13,632 rows on an H200). */

/* Columns c0 .. c0 + k - 1 of the inverse's (block c0 / k of them): one cuDSS solve with k right-hand sides,
 * the unit vectors, in the n x k blocks B and X of tmp, then X copied into place. */
static int inverse_block(Dss *s, void *tmp, int64_t c0, int64_t k) {
    size_t size = s->single ? sizeof(float) : sizeof(double);
    cudaDataType_t type = s->single ? CUDA_R_32F : CUDA_R_64F;
    char *B = (char *)tmp, *X = B + size * (size_t)s->n * (size_t)k;
    GPU_CHECK(cudaMemsetAsync(B, 0, size * (size_t)s->n * (size_t)k));
    unsigned blocks = (unsigned)((k + 255) / 256);
    if (s->single)
        unit_columns<float><<<blocks, 256>>>((float *)B, s->n, s->inv_first + c0, k);
    else
        unit_columns<double><<<blocks, 256>>>((double *)B, s->n, s->inv_first + c0, k);
    GPU_LAUNCHED("unit_columns");
    cudssMatrix_t mb = NULL, mx = NULL;
    int status = dss_check(cudssMatrixCreateDn(&mb, s->n, k, s->n, B, type, CUDSS_LAYOUT_COL_MAJOR),
                           "wrapping the unit vectors of the explicit inverse");
    if (!status)
        status = dss_check(cudssMatrixCreateDn(&mx, s->n, k, s->n, X, type, CUDSS_LAYOUT_COL_MAJOR),
                           "wrapping columns of the explicit inverse");
    if (!status)
        status = dss_check(cudssExecute(s->handle, CUDSS_PHASE_SOLVE, s->config, s->data, s->A, mx, mb),
                           "computing columns of the coarse matrix's explicit inverse");
    if (mb) cudssMatrixDestroy(mb);
    if (mx) cudssMatrixDestroy(mx);
    FEM_TRY(status);
    GPU_CHECK(cudaMemcpyAsync((char *)s->inv + size * (size_t)s->n * (size_t)c0, X,
                              size * (size_t)s->n * (size_t)k, cudaMemcpyDeviceToDevice));
    return FEM_OK;
}

/* The right-hand sides of one block of compute_inverse_solves: about 256 MB of them, and as many solutions.
 */
static int64_t inverse_block_columns(const Dss *s) {
    size_t size = s->single ? sizeof(float) : sizeof(double);
    int64_t k = (int64_t)(256e6 / ((double)size * (double)s->n));
    if (k < 1) k = 1;
    return k < s->inv_count ? k : s->inv_count;
}

static int compute_inverse_solves(Dss *s) {
    size_t size = s->single ? sizeof(float) : sizeof(double);
    int64_t k = inverse_block_columns(s);
    void *tmp = NULL;
    FEM_TRY(device_alloc(s->dev, &s->inv, size * (size_t)s->n * (size_t)s->inv_count));
    FEM_TRY(device_alloc(s->dev, &tmp, 2 * size * (size_t)s->n * (size_t)k));
    int status = FEM_OK;
    for (int64_t c0 = 0; c0 < s->inv_count && !status; c0 += k)
        status = inverse_block(s, tmp, c0, s->inv_count - c0 < k ? s->inv_count - c0 : k);
    cudaError_t e = cudaDeviceSynchronize();
    device_free(s->dev, tmp);
    FEM_TRY(status);
    GPU_CHECK(e);
    return FEM_OK;
}

/* The inverse's columns inv_first .. inv_first + inv_count - 1 into s->inv (a previous one freed first): with
 * cuSOLVER when it loads (s->dense), else with cuDSS's factor. */
static int compute_inverse(Dss *s) {
    double t0 = omp_get_wtime();
    device_free(s->dev, s->inv);
    s->inv = NULL;
    FEM_TRY(s->dense ? compute_inverse_dense(s) : compute_inverse_solves(s));
    s->inv_seconds = omp_get_wtime() - t0;
    return FEM_OK;
}

/* Bytes of GPU memory compute_inverse takes at its peak, the inverse included. */
static double inverse_peak(const Dss *s) {
    double size = s->single ? sizeof(float) : sizeof(double), n = (double)s->n,
           cols = n * (double)s->inv_count;
    if (s->dense)
        return 8.0 * n * n + (!s->single && s->inv_count == s->n ? 0.0 : size * cols) + 64.0 * 8 * n;
    return size * cols + 2.0 * size * n * (double)inverse_block_columns(s);
}

/* Whether to apply the factor as its explicit inverse (CoarseOptions.inverse, coarse.h), and if so the
 * inverse made: *made = 1. Asked for by the ranks' coarse level (inverse_count > 0), a failure is the status;
 * else (one process) an inverse that cannot be made leaves the triangular solves, and the description says
 * why where it was asked for. */
static int maybe_invert(Dss *s, const CoarseOptions *opt, int *made) {
    *made = 0;
    CoarseInverse mode = opt ? opt->inverse : COARSE_INVERSE_AUTO;
    int asked = opt && opt->inverse_count > 0;
    if (!asked && mode == COARSE_INVERSE_NO) return FEM_OK;
    double bytes = (s->single ? sizeof(float) : sizeof(double)) * (double)s->n * (double)s->n;
    if (!asked && mode == COARSE_INVERSE_AUTO && bytes > COARSE_INVERSE_MAX_BYTES) return FEM_OK;
    s->inv_first = asked ? opt->inverse_first : 0;
    s->inv_count = asked ? opt->inverse_count : s->n;
    /* FEMTO_COARSE_INVERSE_BY=cudss: cuDSS's solves even where cuSOLVER loads (tests, measurements) */
    const char *by = getenv("FEMTO_COARSE_INVERSE_BY");
    double t0 = omp_get_wtime();
    /* the dense matrix kept below 2^31 entries for cuSOLVER's 32-bit (int) dense API */
    s->dense = !(by && !strcmp(by, "cudss")) && s->n <= 46000 && gpu_cusolver_load() == FEM_OK;
    s->load_seconds = omp_get_wtime() - t0;
    if (!s->dense) fem_clear_error();
    double size = s->single ? sizeof(float) : sizeof(double), peak = inverse_peak(s);
    size_t free_b = 0, total_b = 0;
    GPU_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double avail = s->gpu_memory > 0 && s->gpu_memory < (double)free_b ? s->gpu_memory : (double)free_b;
    int status = FEM_OK;
    if (peak > 0.9 * avail)
        status = fem_fail(
            FEM_ERR_DEVICE,
            "it would take %.2f GB of GPU memory (%.2f GB while it is computed), and %.2f GB are free",
            size * (double)s->n * (double)s->inv_count / 1e9, peak / 1e9, avail / 1e9);
    if (!status) status = compute_inverse(s);
    if (status && !asked) { /* one process: the triangular solves still work */
        snprintf(s->inv_why, sizeof s->inv_why, "%s", fem_last_error());
        fem_clear_error();
        device_free(s->dev, s->inv);
        s->inv = NULL;
        return FEM_OK;
    }
    *made = !status;
    return status;
}

static int dss_apply(void *impl, const double *b, double *x) {
    Dss *s = (Dss *)impl;
    if (s->inv) {
        unsigned blocks = (unsigned)((s->inv_count + INV_COLS - 1) / INV_COLS);
        if (s->single)
            inverse_apply<float><<<blocks, INV_THREADS>>>((const float *)s->inv, s->n, s->inv_count, b, x);
        else
            inverse_apply<double><<<blocks, INV_THREADS>>>((const double *)s->inv, s->n, s->inv_count, b, x);
        GPU_LAUNCHED("inverse_apply");
        return FEM_OK;
    }
    if (s->single) { /* b and x through the float scratch vectors */
        float *fb = (float *)s->scratch, *fx = fb + s->n;
        unsigned blocks = gpu_vec_blocks(gpu_state(s->dev), s->n);
        to_float<<<blocks, GPU_VEC_THREADS>>>(b, fb, s->n);
        GPU_LAUNCHED("to_float");
        FEM_TRY(dss_check(cudssMatrixSetValues(s->b, fb), "taking a right-hand side"));
        FEM_TRY(dss_check(cudssMatrixSetValues(s->x, fx), "taking a solution vector"));
        FEM_TRY(dss_check(cudssExecute(s->handle, CUDSS_PHASE_SOLVE, s->config, s->data, s->A, s->x, s->b),
                          "solving with the factorised coarse matrix"));
        to_double<<<blocks, GPU_VEC_THREADS>>>(fx, x, s->n);
        GPU_LAUNCHED("to_double");
        return FEM_OK;
    }
    FEM_TRY(dss_check(cudssMatrixSetValues(s->b, (void *)b), "taking a right-hand side"));
    FEM_TRY(dss_check(cudssMatrixSetValues(s->x, x), "taking a solution vector"));
    return dss_check(cudssExecute(s->handle, CUDSS_PHASE_SOLVE, s->config, s->data, s->A, s->x, s->b),
                     "solving with the factorised coarse matrix");
}

/* New values of the same pattern (a later Newton step): the analysis kept, the values uploaded in place and
 * factorised again. Another pattern: *done = 0, nothing changed. */
static int dss_refactor(void *impl, const CsrMatrix *A, int *done) {
    Dss *s = (Dss *)impl;
    int *rp = NULL, *ci = NULL;
    double *v = NULL;
    int64_t nnz = 0;
    uint64_t key = 0;
    *done = 0;
    int status = A->nrows == s->n ? upper_triangle(A, &rp, &ci, &v, &nnz, &key) : FEM_OK;
    if (!status && A->nrows == s->n && nnz == s->nnz && key == s->key) {
        status = upload_values(s, v, 0);
        if (!status) status = numeric(s);
        if (!status && s->inv) status = compute_inverse(s);
        *done = !status;
    }
    free(rp), free(ci), free(v);
    return status;
}

static void dss_destroy(void *impl) {
    Dss *s = (Dss *)impl;
    if (!s) return;
    /* statuses ignored: nothing can be reported from here, and each object is destroyed at most once */
    if (s->A) cudssMatrixDestroy(s->A);
    if (s->b) cudssMatrixDestroy(s->b);
    if (s->x) cudssMatrixDestroy(s->x);
    if (s->data) cudssDataDestroy(s->handle, s->data);
    if (s->config) cudssConfigDestroy(s->config);
    if (s->handle) cudssDestroy(s->handle);
    device_free(s->dev, s->rowptr);
    device_free(s->dev, s->cols);
    device_free(s->dev, s->vals);
    device_free(s->dev, s->scratch);
    device_free(s->dev, s->inv);
    free(s);
}

/* One try at a factorisation in the given precision; *need > 0 when it was refused for its memory. */
static int dss_create(Device *d, const CsrMatrix *A, const CoarseOptions *opt, int single, CoarseBackend *out,
                      double *need, double *avail) {
    Dss *s = (Dss *)calloc(1, sizeof *s);
    if (!s) return fem_fail(FEM_ERR_INTERNAL, "out of memory (cuDSS solver)");
    s->dev = d;
    s->n = A->nrows;
    s->cache_dir = opt ? opt->cache_dir : NULL;
    s->gpu_memory = opt ? opt->gpu_memory : 0;
    s->single = single;
    int status = gpu_cudss_load();
    if (!status) status = upload_upper(s, A);
    if (!status) status = create_objects(s);
    if (!status) status = factorize(s, out->description, sizeof out->description);
    int inverted = 0;
    if (!status) status = maybe_invert(s, opt, &inverted);
    if (inverted) {
        size_t k = strlen(out->description), size = s->single ? sizeof(float) : sizeof(double);
        snprintf(out->description + k, sizeof out->description - k,
                 ", applied as its explicit inverse (%s%.2f GB, computed by %s in %.2f s, loading it %.2f s)",
                 s->inv_count < s->n ? "this rank's rows, " : "",
                 (double)size * (double)s->n * (double)s->inv_count / 1e9,
                 s->dense ? "cuSOLVER" : "cuDSS's solves", s->inv_seconds, s->load_seconds);
    } else if (!status && s->inv_why[0]) {
        size_t k = strlen(out->description);
        snprintf(out->description + k, sizeof out->description - k, ", not as its explicit inverse: %s",
                 s->inv_why);
    }
    *need = s->need, *avail = s->avail;
    double peak = s->peak;
    status = coarse_backend_finish(out, status, s, 1, dss_apply, dss_destroy);
    if (!status) out->refactor = dss_refactor, out->device_bytes = peak;
    return status;
}

int gpu_cudss_create(Device *d, const CsrMatrix *A, const CoarseOptions *opt, CoarseBackend *out) {
    /* a direct solver needs neither the block size nor the rigid-body modes */
    memset(out, 0, sizeof *out);
    if (d->kind != DEV_CUDA)
        return fem_fail(FEM_ERR_USAGE, "the cuDSS coarse solver needs a CUDA device, not the %s", d->name);
    CoarsePrecision precision = opt ? opt->precision : COARSE_PRECISION_AUTO;
    double need = 0, avail = 0;
    int status = dss_create(d, A, opt, precision == COARSE_PRECISION_SINGLE, out, &need, &avail);
    if (status != FEM_ERR_DEVICE || need <= 0 || precision != COARSE_PRECISION_AUTO) return status;
    /* the double-precision factor does not fit: the same in single precision, half the bytes */
    fem_clear_error();
    double need1 = need, avail1 = avail;
    FEM_TRY(dss_create(d, A, opt, 1, out, &need, &avail));
    size_t k = strlen(out->description);
    snprintf(out->description + k, sizeof out->description - k,
             ", in single precision as the double-precision factor would need %.2f GB of the %.2f GB free",
             need1 / 1e9, avail1 / 1e9);
    return FEM_OK;
}

#endif /* FEMTO_HAVE_CUDSS */
