/* Vector operations: grid-stride loops, and a deterministic dot product.
 *
 * dot: a grid of min(GPU_DOT_BLOCKS, n / 256) blocks (a function of n only, not of the GPU), each thread
 * summing its strided share in index order, each block reducing its threads by a fixed tree into one partial
 * sum; the last block to finish reduces the partials in the same fixed way and writes the scalar into
 * pinned host memory, so the same vectors give bitwise the same dot product on every run. */
#include "gpu/internal.cuh"

#include <string.h>

enum { FILL_INLINE = 32 };

typedef struct {
    double v[FILL_INLINE];
} FillPattern;

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_axpby(int64_t n, double a, const double *x, double b, double *y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = a * x[i] + (b == 0.0 ? 0.0 : b * y[i]);
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_mult(int64_t n, const double *a, const double *x, double *y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = a[i] * x[i];
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_cheb_step(int64_t n, double a, const double *__restrict__ inv_diag, const double *__restrict__ r,
                const double *__restrict__ t, double b, double *__restrict__ d, double *__restrict__ z) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double di = a * (inv_diag[i] * (r[i] - t[i])) + b * d[i];
        d[i] = di;
        z[i] += di;
    }
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS) k_recip(int64_t n, const double *x, double *y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = 1.0 / x[i];
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_scatter(int64_t n, const int32_t *idx, const double *vals, double *y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[idx[i]] = vals ? vals[i] : 0.0;
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_gather(int64_t n, const int32_t *idx, const double *x, double *out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = x[idx[i]];
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_take(int64_t n, const int32_t *idx, double *x, double *out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        out[i] = x[idx[i]];
        x[idx[i]] = 0.0;
    }
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_sum_copies(int64_t n, const int32_t *dof, const int32_t *off, const int32_t *src, const double *vals,
                 double *v) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double own = v[dof[i]];
        double s = 0.0;
        for (int32_t k = off[i]; k < off[i + 1]; k++) s += src[k] < 0 ? own : vals[src[k]];
        v[dof[i]] = s;
    }
}

/* One thread per (row, component): the components of a row are neighbours, so a warp reads each row's
 * columns and values once (broadcast) and x's interleaved components side by side. */
static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_node_spmv(int64_t n, int ncomp, const int32_t *ptr, const int32_t *col, const double *val,
                const double *x, double *y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / ncomp;
        const int c = (int)(i - r * ncomp);
        double s = 0.0;
        for (int32_t k = ptr[r]; k < ptr[r + 1]; k++) s += val[k] * x[(int64_t)col[k] * ncomp + c];
        y[i] = s;
    }
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_put2(int64_t n, const int32_t *idx, const double *vals, double *y, double *z) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[idx[i]] = z[idx[i]] = vals[i];
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_fill_inline(int64_t total, int m, FillPattern p, double *y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = p.v[i % m];
}

static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_fill_array(int64_t total, int m, const double *p, double *y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = p[i % m];
}

/* Fixed-order tree reduction of s[0 .. GPU_VEC_THREADS) into s[0] (blockDim.x == GPU_VEC_THREADS). */
static __device__ void block_sum(double *s) {
    for (int w = GPU_VEC_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
}

/* One pass: each block writes its partial sum; the block that finishes last (a ticket taken after a fence)
 * reduces the partials in index order, exactly as a second kernel would, and writes the result for the host
 * and resets the ticket counter. One launch and no copy: the latency of a dot product is most of its cost on
 * a vector of a million entries. */
static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_dot(int64_t n, const double *x, const double *y, double *partial, unsigned *count, double *host) {
    __shared__ double s[GPU_VEC_THREADS];
    __shared__ bool last;
    double acc = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        acc += x[i] * y[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    block_sum(s);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    acc = 0.0;
    for (int i = threadIdx.x; i < (int)gridDim.x; i += blockDim.x) acc += ((volatile double *)partial)[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    block_sum(s);
    if (threadIdx.x == 0) {
        *host = s[0];
        *count = 0;
    }
}

int gpu_axpby(Device *d, int64_t n, double a, const double *x, double b, double *y) {
    if (n <= 0) return FEM_OK;
    k_axpby<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, a, x, b, y);
    GPU_LAUNCHED(k_axpby);
    return FEM_OK;
}

int gpu_cheb_step(Device *dev, int64_t n, double a, const double *inv_diag, const double *r, const double *t,
                  double b, double *d, double *z) {
    if (n <= 0) return FEM_OK;
    k_cheb_step<<<gpu_vec_blocks(gpu_state(dev), n), GPU_VEC_THREADS>>>(n, a, inv_diag, r, t, b, d, z);
    GPU_LAUNCHED(k_cheb_step);
    return FEM_OK;
}

int gpu_dot(Device *d, int64_t n, const double *x, const double *y, double *out) {
    GpuState *g = gpu_state(d);
    *out = 0.0;
    if (n <= 0) return FEM_OK;
    int64_t blocks = (n + GPU_VEC_THREADS - 1) / GPU_VEC_THREADS;
    if (blocks > GPU_DOT_BLOCKS) blocks = GPU_DOT_BLOCKS;
    k_dot<<<(unsigned)blocks, GPU_VEC_THREADS>>>(n, x, y, g->dot_partial,
                                                 (unsigned *)(g->dot_partial + GPU_DOT_BLOCKS), g->dot_host_dev);
    GPU_LAUNCHED(k_dot);
    GPU_CHECK(cudaStreamSynchronize(0));
    *out = *(volatile double *)g->dot_host;
    return FEM_OK;
}

int gpu_recip(Device *d, int64_t n, const double *x, double *y) {
    if (n <= 0) return FEM_OK;
    k_recip<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, x, y);
    GPU_LAUNCHED(k_recip);
    return FEM_OK;
}

int gpu_mult(Device *d, int64_t n, const double *a, const double *x, double *y) {
    if (n <= 0) return FEM_OK;
    k_mult<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, a, x, y);
    GPU_LAUNCHED(k_mult);
    return FEM_OK;
}

int gpu_scatter(Device *d, int64_t n, const int32_t *idx, const double *vals, double *y) {
    if (n <= 0) return FEM_OK;
    k_scatter<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, idx, vals, y);
    GPU_LAUNCHED(k_scatter);
    return FEM_OK;
}

int gpu_gather(Device *d, int64_t n, const int32_t *idx, const double *x, double *out) {
    if (n <= 0) return FEM_OK;
    k_gather<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, idx, x, out);
    GPU_LAUNCHED(k_gather);
    return FEM_OK;
}

int gpu_take(Device *d, int64_t n, const int32_t *idx, double *x, double *out) {
    if (n <= 0) return FEM_OK;
    k_take<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, idx, x, out);
    GPU_LAUNCHED(k_take);
    return FEM_OK;
}

int gpu_sum_copies(Device *d, int64_t n, const int32_t *dof, const int32_t *off, const int32_t *src,
                   const double *vals, double *v) {
    if (n <= 0) return FEM_OK;
    k_sum_copies<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, dof, off, src, vals, v);
    GPU_LAUNCHED(k_sum_copies);
    return FEM_OK;
}

int gpu_node_spmv(Device *d, int64_t nrows, int ncomp, const int32_t *ptr, const int32_t *col, const double *val,
                  const double *x, double *y) {
    const int64_t n = nrows * ncomp;
    if (n <= 0) return FEM_OK;
    k_node_spmv<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, ncomp, ptr, col, val, x, y);
    GPU_LAUNCHED(k_node_spmv);
    return FEM_OK;
}

int gpu_put2(Device *d, int64_t n, const int32_t *idx, const double *vals, double *y, double *z) {
    if (n <= 0) return FEM_OK;
    k_put2<<<gpu_vec_blocks(gpu_state(d), n), GPU_VEC_THREADS>>>(n, idx, vals, y, z);
    GPU_LAUNCHED(k_put2);
    return FEM_OK;
}

/* pattern is host memory (a few doubles: one q-point record) */
int gpu_fill(Device *d, int64_t n, int m, const double *pattern, double *y) {
    GpuState *g = gpu_state(d);
    if (n <= 0 || m <= 0) return FEM_OK;
    int64_t total = n * m;
    unsigned blocks = gpu_vec_blocks(g, total);
    if (m <= FILL_INLINE) {
        FillPattern p;
        memset(&p, 0, sizeof p);
        memcpy(p.v, pattern, sizeof(double) * (size_t)m);
        k_fill_inline<<<blocks, GPU_VEC_THREADS>>>(total, m, p, y);
        GPU_LAUNCHED(k_fill_inline);
        return FEM_OK;
    }
    if (m > g->fill_capacity) {
        cudaFree(g->fill_pattern);
        g->fill_pattern = NULL;
        g->fill_capacity = 0;
        FEM_TRY(gpu_alloc(d, (void **)&g->fill_pattern, sizeof(double) * (size_t)m));
        g->fill_capacity = m;
    }
    /* ordered after any earlier fill that read the buffer: same (default) stream */
    GPU_CHECK(cudaMemcpy(g->fill_pattern, pattern, sizeof(double) * (size_t)m, cudaMemcpyHostToDevice));
    k_fill_array<<<blocks, GPU_VEC_THREADS>>>(total, m, g->fill_pattern, y);
    GPU_LAUNCHED(k_fill_array);
    return FEM_OK;
}
