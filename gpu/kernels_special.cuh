/* The specialised separate element kernels: interpolation and integration (atomic assembly, or the element
 * vectors of gather assembly) for the element types, orders and quadrature rules that femto uses by default,
 * in the register kernel shape of the fused kernels and built from the same halves (gpu/elem_halves.cuh):
 *
 *  - full tables (k_full_*): triangles and tetrahedra of 3, 6, 10 and 4, 10, 20 nodes (p = 1..3), and quads
 *    of p <= 3 and hexes of p = 1 (the sizes where full tables measured faster than sum factorisation), any
 *    rule: one thread per element, its nodal values (interpolation) or sums (integration) in registers, the
 *    shape tables (packed, 128-bit reads) and the block's dof map in shared memory (every lane of a warp
 *    reads the same table entry: a broadcast);
 *  - sum factorised (k_tensor_*): quadrilaterals and hexahedra of p = 1..3 with P1D = Q1D (the default rule
 *    of straight and quadratic cells): Q x Q threads per element, through shared memory as in the fused
 *    kernel; in 3D each thread walks its column of q-points.
 *
 * Templates on the dimension, the nodes (or 1D size) and the components (1 and the dimension: scalar and
 * vector fields), so that loops unroll and per-thread arrays are registers. gpu/kernels.cu calls
 * gpu_special_interpolate / gpu_special_integrate first and runs its run-time-size kernels where these say
 * they do not serve the launch (other orders, rules, component counts, element types, a forced tuning).
 *
 * The q-point arrays keep their global layout (fem/device.h: uq[e][q][c], duq[e][q][c][d]). Full tables: a
 * thread's q-point results are one element's contiguous piece, so they are staged in shared memory per
 * element (rows of odd stride: the lanes, one element each, fall in different banks) and the block copies its
 * elements' piece, contiguous in global memory, with consecutive threads on consecutive addresses
 * (coalesced); integration copies its inputs in the same way, and its element vectors out (gather assembly).
 * Where the staging would not fit, or FEMTO_GPU_SPECIAL=global / GpuTuning.qdata = GPU_PLACE_GLOBAL asks,
 * each thread reads and writes its element's piece directly. Sum factorised: thread t of an element owns
 * q-point t of each layer qz, so consecutive threads already touch consecutive q-points: read and written
 * directly.
 *
 * FEMTO_GPU_SPECIAL=0 turns these kernels off (the run-time-size kernels run everything), for comparison.
 *
 * This header holds the kernels, gpu/kernels_special.cu the host side; tests/gpu/test_special_emulated.cpp
 * runs the same kernels on the host (one thread per CUDA thread) against fem/elem_ops.h. */
#ifndef FEMTO_GPU_KERNELS_SPECIAL_CUH
#define FEMTO_GPU_KERNELS_SPECIAL_CUH

#include "gpu/elem_halves.cuh"

/* Threads per block: simplices (one element each, at most), tensor elements (aimed at). */
enum { SPECIAL_SIMPLEX_THREADS = 128, SPECIAL_TENSOR_THREADS = 256 };

/* ------------------------------------------------------------------------------------------ device code */

/* A block-wide walk over nb rows of n doubles, contiguous in global memory: f(k, le, j) for word k = le n +
 * j, consecutive threads on consecutive words (coalesced); the row and column advance without a division per
 * word. */
template <typename F> static __device__ __forceinline__ void rows_walk(int nb, int n, F f) {
    const int bn = blockDim.x, dq = bn / n, dr = bn - dq * n;
    int le = threadIdx.x / n, j = threadIdx.x - le * n;
    for (int k = threadIdx.x; k < nb * n; k += bn) {
        f(k, le, j);
        le += dq, j += dr;
        if (j >= n) j -= n, le++;
    }
}

/* The q-point staging area of a full-table block: after the packed tables (4 doubles per q-point and node)
 * and the dof map of epb elements (8-byte aligned). */
static __device__ __forceinline__ double *full_area(double *smem, int nq, int nd, int epb) {
    return smem + nq * nd * 4 + (epb * nd + 1) / 2;
}

/* How a full-table kernel stages its q-point arrays: per element a row of `stride` doubles (0: not staged,
 * read and written in global memory directly), holding qc q-points at a time (the last chunk may be
 * shorter); each chunk is copied between the rows and global memory by the whole block, each element's part
 * of a chunk contiguous in global memory. Chunks keep the rows short, so that more blocks stay resident. */
typedef struct {
    int stride, qc;
} SpecialStage;

/* A full-table kernel's block: the staged tables and dof map (st), the staging area and the thread's row of
 * it, the staging's stride and q-points per chunk (all of them where not staged), the thread's element. */
typedef struct {
    SimplexStage st;
    double *area, *row;
    int stride, qc;
    int64_t e;
    bool active;
} FullBlock;

template <int D, int ND>
static __device__ __forceinline__ FullBlock full_begin(const ElemView &v, SpecialStage sg, double *smem) {
    FullBlock b;
    const int epb = blockDim.x, le = threadIdx.x;
    b.st = simplex_stage<D, true>(v, epb, smem);
    b.stride = sg.stride;
    b.qc = sg.stride ? sg.qc : v.nq;
    b.area = full_area(smem, v.nq, ND, epb);
    b.row = b.area + le * b.stride;
    b.e = b.st.e0 + le;
    b.active = le < b.st.nb;
    return b;
}

template <int D, int ND, int NC>
static __global__ void __launch_bounds__(SPECIAL_SIMPLEX_THREADS)
    k_full_interp(ElemView v, SpecialStage sg, const double *in, double *uq, double *duq) {
    extern __shared__ double smem[];
    const int nq = v.nq;
    const FullBlock b = full_begin<D, ND>(v, sg, smem);
    double ue[NC][ND];
    if (b.active) simplex_gather(b.st.ids + threadIdx.x * ND, ND, in, ue);
    for (int q0 = 0; q0 < nq; q0 += b.qc) { /* uniform over the block */
        const int qn = nq - q0 < b.qc ? nq - q0 : b.qc, n0 = uq ? qn * NC : 0;
        if (b.active)
            for (int q = q0; q < q0 + qn; q++) {
                double u[NC], du[NC * D];
                simplex_interp<D, NC>(ND, PackedRows<D>{b.st.B + q * ND * 4}, ue, u, du, uq != nullptr);
                const int64_t qi = b.e * nq + q;
                const int r = q - q0;
                if (uq)
#pragma unroll
                    for (int c = 0; c < NC; c++) (b.stride ? b.row + r * NC : uq + qi * NC)[c] = u[c];
                if (duq)
#pragma unroll
                    for (int k = 0; k < NC * D; k++)
                        (b.stride ? b.row + n0 + r * NC * D : duq + qi * NC * D)[k] = du[k];
            }
        if (!b.stride) continue;
        __syncthreads();
        const int64_t g0 = b.st.e0 * nq + q0; /* element e0's first q-point of the chunk */
        if (uq)
            rows_walk(b.st.nb, qn * NC, [&](int, int l, int j) {
                uq[(g0 + (int64_t)l * nq) * NC + j] = b.area[l * b.stride + j];
            });
        if (duq)
            rows_walk(b.st.nb, qn * NC * D, [&](int, int l, int j) {
                duq[(g0 + (int64_t)l * nq) * NC * D + j] = b.area[l * b.stride + n0 + j];
            });
        __syncthreads(); /* before the next chunk overwrites the rows */
    }
}

/* evec NULL: atomics into out; else the element vectors evec[b.e][c][i] (staged and copied out coalesced
 * where the q-point arrays are). */
template <int D, int ND, int NC>
static __global__ void __launch_bounds__(SPECIAL_SIMPLEX_THREADS)
    k_full_integ(ElemView v, SpecialStage sg, const double *sq, const double *fq, double *out, double *evec) {
    extern __shared__ double smem[];
    const int nq = v.nq;
    const FullBlock b = full_begin<D, ND>(v, sg, smem);
    double re[NC][ND];
    simplex_zero(re);
    for (int q0 = 0; q0 < nq; q0 += b.qc) { /* uniform over the block */
        const int qn = nq - q0 < b.qc ? nq - q0 : b.qc, n0 = sq ? qn * NC : 0;
        if (b.stride) {
            if (q0) __syncthreads(); /* every thread has read the previous chunk */
            const int64_t g0 = b.st.e0 * nq + q0;
            if (sq)
                rows_walk(b.st.nb, qn * NC, [&](int, int l, int j) {
                    b.area[l * b.stride + j] = sq[(g0 + (int64_t)l * nq) * NC + j];
                });
            if (fq)
                rows_walk(b.st.nb, qn * NC * D, [&](int, int l, int j) {
                    b.area[l * b.stride + n0 + j] = fq[(g0 + (int64_t)l * nq) * NC * D + j];
                });
            __syncthreads();
        }
        if (b.active)
            for (int q = q0; q < q0 + qn; q++) {
                const int r = q - q0;
                const double *ps = b.stride ? b.row + r * NC : sq + (b.e * nq + q) * NC;
                const double *pf = b.stride ? b.row + n0 + r * NC * D : fq + (b.e * nq + q) * NC * D;
                double s[NC], f[NC * D];
#pragma unroll
                for (int c = 0; c < NC; c++) s[c] = sq ? ps[c] : 0.0;
#pragma unroll
                for (int k = 0; k < NC * D; k++) f[k] = fq ? pf[k] : 0.0;
                simplex_integ<D, NC>(ND, PackedRows<D>{b.st.B + q * ND * 4}, s, f, re, sq != nullptr,
                                     fq != nullptr);
            }
    }
    if (evec && b.stride) {
        __syncthreads(); /* every thread has read its inputs: the rows take the element vectors */
        if (b.active)
#pragma unroll
            for (int c = 0; c < NC; c++)
#pragma unroll
                for (int i = 0; i < ND; i++) b.row[c * ND + i] = re[c][i];
        __syncthreads();
        double *ev = evec + b.st.e0 * NC * ND;
        rows_walk(b.st.nb, NC * ND, [&](int k, int l, int j) { ev[k] = b.area[l * b.stride + j]; });
    } else if (b.active) {
        simplex_put(b.st.ids + threadIdx.x * ND, ND, b.e, re, out, evec);
    }
}

/* Point qi's values and gradients into the global arrays (either may be NULL). */
template <int D, int NC>
static __device__ __forceinline__ void store_point(double *uq, double *duq, int64_t qi, const double *u,
                                                   const double *du) {
    if (uq)
#pragma unroll
        for (int c = 0; c < NC; c++) uq[qi * NC + c] = u[c];
    if (duq)
#pragma unroll
        for (int k = 0; k < NC * D; k++) duq[qi * NC * D + k] = du[k];
}

/* Point qi's s and f from the global arrays (0 where NULL). */
template <int D, int NC>
static __device__ __forceinline__ void load_point(const double *sq, const double *fq, int64_t qi, double *s,
                                                  double *f) {
#pragma unroll
    for (int c = 0; c < NC; c++) s[c] = sq ? __ldg(sq + qi * NC + c) : 0.0;
#pragma unroll
    for (int k = 0; k < NC * D; k++) f[k] = fq ? __ldg(fq + qi * NC * D + k) : 0.0;
}

/* Block (P*P, epb): the tensor kernels of Q = P (the staging unused: the signature of the full-table
 * kernels). */
template <int D, int P, int NC>
static __global__ void __launch_bounds__(SPECIAL_TENSOR_THREADS)
    k_tensor_interp(ElemView v, SpecialStage stride, const double *in, double *uq, double *duq) {
    extern __shared__ double smem[];
    constexpr int ND = D == 3 ? P * P * P : P * P;
    (void)stride;
    const TensorElem te = tensor_begin<D, P, P, NC>(v, smem);
    const int64_t q0 = te.e * v.nq;
    if (te.active) gather<ND, NC>(te.dofs, in, te.U, te.t, blockDim.x);
    __syncthreads();
    if (D == 3) {
        if (te.active) hex_x<P, P, NC>(te.t, te.T, te.U, te.V);
        __syncthreads();
        if (!te.active) return; /* no barrier follows */
        hex_y<P, P, NC>(te.t, te.T, te.V, te.U);
#pragma unroll 1
        for (int qz = 0; qz < P; qz++) {
            double u[NC], du[NC * 3];
            hex_z_interp<P, P, NC>(te.T, te.U, te.t, qz, u, du);
            store_point<3, NC>(uq, duq, q0 + te.t + P * P * qz, u, du);
        }
    } else {
        if (te.active) quad_x<P, P, NC>(te.t, te.T, te.U, te.V);
        __syncthreads();
        if (!te.active) return;
        double u[NC], du[NC * 2];
        quad_interp_point<P, P, NC>(te.t, te.T, te.V, u, du);
        store_point<2, NC>(uq, duq, q0 + te.t, u, du);
    }
}

template <int D, int P, int NC>
static __global__ void __launch_bounds__(SPECIAL_TENSOR_THREADS)
    k_tensor_integ(ElemView v, SpecialStage stride, const double *sq, const double *fq, double *out,
                   double *evec) {
    extern __shared__ double smem[];
    (void)stride;
    const TensorElem te = tensor_begin<D, P, P, NC>(v, smem);
    const int64_t q0 = te.e * v.nq;
    const int t = te.t;
    __syncthreads(); /* the tables */
    if (D == 3) {
        constexpr bool XS = tensor_xshared(3, P, NC);
        if (te.active)
            hex_zt<P, P, NC, XS>(t, te.T, te.U, te.W, [&](int qz, double *s, double *f) {
                load_point<3, NC>(sq, fq, q0 + t + P * P * qz, s, f);
            });
        __syncthreads();
        if (te.active) hex_yt<P, P, NC>(t, te.T, XS ? te.W : te.U, te.V);
        __syncthreads();
        if (te.active) hex_xt<P, P, NC>(t, te.T, te.V, te.dofs, te.e, out, evec);
    } else {
        if (te.active) {
            double s[NC], f[NC * 2];
            load_point<2, NC>(sq, fq, q0 + t, s, f);
            quad_put_point<P, NC>(t, te.U, s, f);
        }
        __syncthreads();
        if (te.active) quad_yt<P, P, NC>(t, te.T, te.U, te.V);
        __syncthreads();
        if (te.active) quad_xt<P, P, NC>(t, te.T, te.V, te.dofs, te.e, out, evec);
    }
}

#endif
