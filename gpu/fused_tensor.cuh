/* The device code of gpu/fused_tensor.cu's sum-factorised fused operator (the kernel and what it calls; the
 * file's head describes it), in a header so that tests/gpu/test_special_emulated.cpp runs the same kernel on
 * the host through tests/gpu/emulate/. */
#ifndef FEMTO_GPU_FUSED_TENSOR_CUH
#define FEMTO_GPU_FUSED_TENSOR_CUH

#include "gpu/elem_halves.cuh"
#include "gpu/qfunction.cuh"
#include "physics/qfunctions.h"

/* Threads per block the elements per block aim at (and the kernels' launch bound). */
enum { TENSOR_THREADS = 256 };

/* The physics at q-point q of element e: a QfArgs of one point whose u, du, geo, s and f are the thread's
 * local arrays and whose dimension and components are constants, so that after inlining they are
 * registers; the global arrays the point function may read or write are offset to the point. */
template <int D, int NC, int GL, PointFn POINT>
static __device__ __forceinline__ void point_at(const QfArgs &a, int64_t e, int q, const double *u,
                                                const double *du, double *s, double *f) {
    constexpr int GS = QF_GEO_DOUBLES(GL, D); /* GL: the cells' geometry, or a compact q-point data layout */
    const double *gq = a.geo + (e * a.nq + q) * GS;
    double geo[GS];
    /* 16-byte aligned (cudaMalloc'ed, an even stride): 5 loads, not 10 (3 for D) */
    if constexpr (GS % 2 == 0) {
#pragma unroll
        for (int k = 0; k < GS / 2; k++) {
            const double2 x = __ldg(reinterpret_cast<const double2 *>(gq) + k);
            geo[2 * k] = x.x, geo[2 * k + 1] = x.y;
        }
    } else {
#pragma unroll
        for (int k = 0; k < GS; k++) geo[k] = __ldg(gq + k);
    }
    const QfArgs la = qf_point_args<D, NC>(a, e, q, u, du, geo, s, f);
    POINT(&la, 0);
}

/* z and the physics: thread t walks its column qz = 0..Q-1, finishes the interpolation from its column of
 * C, runs the point function and accumulates the transposed z contraction, Xs = B s + G f2, X0 = B f0,
 * X1 = B f1 [c][k]: in registers, written over its column of C at the end (same layout), or, where they would
 * not fit in registers beside the point function (tensor_xshared), in its column of W. */
template <int P, int Q, int NC, bool XS, int GL, PointFn POINT>
static __device__ __forceinline__ void hex_points(const QfArgs &a, int64_t e, int t, const Tables &T,
                                                  double *C, double *W) {
    hex_zt<P, Q, NC, XS, qf_point_writes_s<POINT>()>(t, T, C, W, [&](int qz, double *s, double *f) {
        double u[NC], du[NC * 3];
        hex_z_interp<P, Q, NC>(T, C, t, qz, u, du);
        point_at<3, NC, GL, POINT>(a, e, t + Q * Q * qz, u, du, s, f);
    });
}

/* y and the physics: thread (qx, qy) interpolates, runs the point function and writes s, f0, f1 into
 * SF[c][3][t]. */
template <int P, int Q, int NC, int GL, PointFn POINT>
static __device__ __forceinline__ void quad_points(const QfArgs &a, int64_t e, int t, const Tables &T,
                                                   const double *V, double *SF) {
    double u[NC], du[NC * 2], s[NC], f[NC * 2];
    quad_interp_point<P, Q, NC>(t, T, V, u, du);
    point_at<2, NC, GL, POINT>(a, e, t, u, du, s, f);
    quad_put_point<Q, NC, qf_point_writes_s<POINT>()>(t, SF, s, f);
}

/* ------------------------------------------------------------------------------------------ the kernel */

/* Block (Q*Q, epb): threadIdx.x the thread in the element, threadIdx.y the element. evec NULL: atomics.
 * Every thread reaches every barrier; threads of the missing elements of the last block skip the work. */
template <int D, int P, int Q, int NC, int GL, PointFn POINT>
static __global__ void __launch_bounds__(TENSOR_THREADS)
    k_fused_tensor(ElemView v, QfArgs a, const double *in, double *out, double *evec, PatchView po) {
    extern __shared__ double smem[];
    constexpr int ND = D == 3 ? P * P * P : P * P, NU = tensor_nu(D, P, Q, NC);
    constexpr int NV = tensor_nv(D, P, Q, NC), PER = tensor_per(D, P, Q, NC);
    constexpr bool XS = tensor_xshared(D, P, NC);
    /* deterministic patch assembly's end: only in the Jacobian actions from compact q-point data (GL > 0),
     * the one launch that takes it (gpu_fused_tensor_block); the others compile without it */
    constexpr bool PO = GL > 0;
    const int t = threadIdx.x, nt = blockDim.x, le = threadIdx.y;
    const int64_t e = (int64_t)blockIdx.x * blockDim.y + le;
    const bool active = e < v.nelem;
    const Tables T = stage_tables<P, Q>(v, smem, t + nt * le, nt * blockDim.y);
    double *U = smem + 4 * P * Q + le * PER, *V = U + NU, *W = V + NV;
    const fem_idx *dofs = v.dofs + (active ? e : 0) * ND;
    if (active) gather<ND, NC>(dofs, in, U, t, nt);
    __syncthreads();
    if (D == 3) {
        if (active) hex_x<P, Q, NC>(t, T, U, V);
        __syncthreads();
        if (active) {
            hex_y<P, Q, NC>(t, T, V, U);
            /* own columns of U, W: no barrier before */
            hex_points<P, Q, NC, XS, GL, POINT>(a, e, t, T, U, W);
        }
        __syncthreads();
        if (active) hex_yt<P, Q, NC>(t, T, XS ? W : U, V);
        __syncthreads();
        /* with patches (deterministic assembly) the element's sums into its own U, which no stage reads
         * any more */
        if (active) hex_xt<P, Q, NC>(t, T, V, dofs, e, out, evec, PO && po.part ? U : nullptr);
    } else {
        if (active) quad_x<P, Q, NC>(t, T, U, V);
        __syncthreads();
        if (active) quad_points<P, Q, NC, GL, POINT>(a, e, t, T, V, U);
        __syncthreads();
        if (active) quad_yt<P, Q, NC, qf_point_writes_s<POINT>()>(t, T, U, V);
        __syncthreads();
        if (active) quad_xt<P, Q, NC>(t, T, V, dofs, e, out, evec, PO && po.part ? U : nullptr);
    }
    if (!PO || !po.part) return;
    __syncthreads();
    const int epb = blockDim.y;
    const double *base = smem + 4 * P * Q;
    patch_put<NC>(
        po, [&](int c, int slot) { return base[(slot % epb) * PER + c * ND + slot / epb]; }, out);
}

#endif
