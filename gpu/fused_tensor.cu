/* The sum-factorised fused operator of quadrilateral and hexahedral cell blocks: one kernel per block for the
 * residual and for the Jacobian action, which gpu/fused.cu dispatches to before its full-table kernel.
 *
 * A thread block takes epb elements, Q x Q threads each (Q = nq1, the 1D q-points; t = qx + Q qy). The
 * element values are gathered into shared memory and contracted with the 1D tables one direction at a time
 * (x, then y, with a barrier between); in 3D each thread then walks its column of q-points (qz), finishing
 * the z contraction from its own column of shared memory, calls the physics' point function (the FEM_HD
 * function of physics/ *_qf.h, a template argument, so it is inlined) on local arrays, and accumulates the
 * transposed z contraction (in registers, or in its column of shared memory where registers would spill).
 * The transposed y and x contractions follow through shared memory,
 * and each thread adds its element dofs into the output (atomicAdd), or writes the element vector for the
 * deterministic gather assembly on a gather-assembly device. Global memory sees the input and output vectors,
 * the dof map, the geometry, the tags and the physics' q-point state.
 *
 * The kernel is a template on the reference dimension, the 1D sizes (P1D = Q1D: the default quadrature of
 * straight-sided and quadratic cells, orders 1..TENSOR_MAX_ORDER), the components and the point function,
 * so every loop over them unrolls and the point function's arrays live in registers. An operator set up with
 * GpuTuning.fused_shared ("cuda-fused-shared") does not use it: the full-table kernel of fused.cu serves p <=
 * 2 and the separate kernels the rest, for comparison. */
#include "fem/element.h"
#include "fem/operator.h"
#include "gpu/internal.cuh"
#include "gpu/qfunction.cuh"
#include "physics/qfunctions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Threads per block the elements per block aim at (and the kernels' launch bound). */
enum { TENSOR_THREADS = 256, TENSOR_MIN_ORDER = 1, TENSOR_MAX_ORDER = 6 };

enum { TENSOR_NORDERS = TENSOR_MAX_ORDER - TENSOR_MIN_ORDER + 1 };

static __host__ __device__ constexpr int cmax(int a, int b) {
    return a > b ? a : b;
}

/* Shared memory of one element, in doubles: U holds the element values [c][dof], then the partial
 * contractions C[c][3][k][Q*Q] (3D; each thread reads and rewrites only its own column t), or s, f
 * [c][3][Q*Q] (2D); V holds the x contractions [c][2][k][j][qx] and the transposed y contractions (the same
 * shape); W the z accumulators where they are not registers (tensor_xshared). */
static __host__ __device__ constexpr int tensor_nu(int D, int P, int Q, int NC) {
    return D == 3 ? cmax(NC * P * P * P, 3 * NC * P * Q * Q) : cmax(NC * P * P, 3 * NC * Q * Q);
}
static __host__ __device__ constexpr int tensor_nv(int D, int P, int Q, int NC) {
    return D == 3 ? 2 * NC * P * P * Q : 2 * NC * P * Q;
}
/* Hexahedra whose z accumulators (3 NC P doubles a thread) would not fit in registers beside the point
 * function keep them in shared memory, W[c][3][k][Q*Q] (ptxas: elasticity from p = 2 on spilled). */
static __host__ __device__ constexpr bool tensor_xshared(int D, int P, int NC) {
    return D == 3 && 3 * NC * P > 24;
}
static __host__ __device__ constexpr int tensor_nw(int D, int P, int Q, int NC) {
    return tensor_xshared(D, P, NC) ? 3 * NC * P * Q * Q : 0;
}

/* The stride between elements, padded so that word t of element le + 1 falls in the bank of word Q*Q + t of
 * element le: the lanes of a warp run over t and then over elements, so each stage's accesses (all at some
 * base + t of their element) then hit consecutive banks, as in one array. */
static __host__ __device__ constexpr int tensor_per(int D, int P, int Q, int NC) {
    const int n = tensor_nu(D, P, Q, NC) + tensor_nv(D, P, Q, NC) + tensor_nw(D, P, Q, NC);
    return n + ((Q * Q - n) % 16 + 16) % 16;
}

/* The 1D tables, staged in shared memory: B[q][i], G[q][i] and their transposes Bt[i][q], Gt[i][q] (a stage
 * whose lanes run along q reads the transposes, so that neighbouring lanes read neighbouring words). */
typedef struct {
    const double *B, *G, *Bt, *Gt;
} Tables;

template <int P, int Q>
static __device__ __forceinline__ Tables stage_tables(const ElemView &v, double *sm, int bt, int bn) {
    for (int k = bt; k < P * Q; k += bn) {
        const int q = k / P, i = k - q * P;
        const double b = v.B1[k], g = v.G1[k];
        sm[k] = b;
        sm[P * Q + k] = g;
        sm[2 * P * Q + i * Q + q] = b;
        sm[3 * P * Q + i * Q + q] = g;
    }
    Tables T = {sm, sm + P * Q, sm + 2 * P * Q, sm + 3 * P * Q};
    return T;
}

/* ue[c][f] = in[dofs[f] NC + c] for the element's ND dofs. */
template <int ND, int NC>
static __device__ __forceinline__ void gather(const fem_idx *dofs, const double *in, double *ue, int t,
                                              int nt) {
    for (int f = t; f < ND; f += nt) {
        const int64_t n = (int64_t)dofs[f] * NC;
#pragma unroll
        for (int c = 0; c < NC; c++) ue[c * ND + f] = in[n + c];
    }
}

/* Element dof f, component c: into the output vector, or into the element vector evec[e][c][f]. */
template <int ND, int NC>
static __device__ __forceinline__ void put(const fem_idx *dofs, int64_t e, int f, int c, double r,
                                           double *out, double *evec) {
    if (evec)
        evec[(e * NC + c) * ND + f] = r;
    else
        atomicAdd(&out[(int64_t)dofs[f] * NC + c], r);
}

/* The physics at q-point q of element e: a QfArgs of one point whose u, du, geo, s and f are the thread's
 * local arrays and whose dimension and components are constants, so that after inlining they are
 * registers; the global arrays the point function may read or write are offset to the point. */
template <int D, int NC, int GL, PointFn POINT>
static __device__ __forceinline__ void point_at(const QfArgs &a, int64_t e, int q, const double *u,
                                                const double *du, double *s, double *f) {
    constexpr int GS = QF_GEO_DOUBLES(GL, D); /* GL: the cells' geometry, or a compact q-point data layout */
    const double *gq = a.geo + (e * a.nq + q) * GS;
    double geo[GS];
    if constexpr (GS % 2 == 0) { /* 16-byte aligned (cudaMalloc'ed, an even stride): 5 loads, not 10 (3 for D) */
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

/* The y contraction of thread (qx, qy) from x contractions AB[j], AG[j] (j stride Q): bb = sum_j B(qy, j) AB,
 * bg = sum_j B(qy, j) AG, gb = sum_j G(qy, j) AB. */
template <int P, int Q>
static __device__ __forceinline__ void contract_y(const Tables &T, int qy, const double *AB, const double *AG,
                                                  double &bb, double &bg, double &gb) {
    bb = bg = gb = 0.0;
#pragma unroll
    for (int j = 0; j < P; j++) {
        const double b = T.Bt[j * Q + qy], ab = AB[j * Q];
        bb += b * ab;
        bg += b * AG[j * Q];
        gb += T.Gt[j * Q + qy] * ab;
    }
}

/* ------------------------------------------------------------------------------------------ hexahedra */

/* A stage of thread (qx, j) that writes a pair of arrays V[c][0..1][k][j][qx]: pair(c, k, qx, j, first,
 * second) computes both. */
template <int P, int Q, int NC, typename F>
static __device__ __forceinline__ void hex_pairs(int t, double *V, F pair) {
    const int qx = t % Q, j = t / Q;
    if (j >= P) return;
#pragma unroll 1
    for (int c = 0; c < NC; c++)
#pragma unroll 1
        for (int k = 0; k < P; k++) {
            double *A = V + ((c * 2) * P + k) * P * Q + j * Q + qx;
            pair(c, k, qx, j, A[0], A[P * P * Q]);
        }
}

/* x: thread (qx, j): AB[c][k][j][qx] = sum_i B(qx, i) ue[c][k][j][i], AG the same with G. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_x(int t, const Tables &T, const double *ue, double *V) {
    hex_pairs<P, Q, NC>(t, V, [&](int c, int k, int qx, int j, double &b, double &g) {
        const double *u = ue + c * P * P * P + (k * P + j) * P;
        b = g = 0.0;
#pragma unroll
        for (int i = 0; i < P; i++) b += T.Bt[i * Q + qx] * u[i], g += T.Gt[i * Q + qx] * u[i];
    });
}

/* y: thread (qx, qy): C[c][0 BB, 1 BG (G in x), 2 GB (G in y)][k][t], contracting j. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_y(int t, const Tables &T, const double *V, double *C) {
    const int qx = t % Q, qy = t / Q;
#pragma unroll 1
    for (int c = 0; c < NC; c++)
#pragma unroll 1
        for (int k = 0; k < P; k++) {
            const double *AB = V + ((c * 2) * P + k) * P * Q + qx, *AG = AB + P * P * Q;
            double bb, bg, gb;
            contract_y<P, Q>(T, qy, AB, AG, bb, bg, gb);
            double *Ck = C + ((c * 3) * P + k) * Q * Q + t;
            Ck[0] = bb;
            Ck[P * Q * Q] = bg;
            Ck[2 * P * Q * Q] = gb;
        }
}

/* One step of the transposed z contraction: the accumulators of (c, k) += the point's s, f times B(qz, k) =
 * b, G(qz, k) = g. */
template <int P, int NC, int XST>
static __device__ __forceinline__ void hex_accumulate(double *X, double b, double g, const double *s,
                                                      const double *f, int c, int k) {
    X[((c * 3) * P + k) * XST] += b * s[c] + g * f[c * 3 + 2];
    X[((c * 3 + 1) * P + k) * XST] += b * f[c * 3];
    X[((c * 3 + 2) * P + k) * XST] += b * f[c * 3 + 1];
}

/* z and the physics: thread t walks its column qz = 0..Q-1, finishes the interpolation from its column of
 * C, runs the point function and accumulates the transposed z contraction, Xs = B s + G f2, X0 = B f0,
 * X1 = B f1 [c][k]: in registers, written over its column of C at the end (same layout), or, where they would
 * not fit in registers beside the point function (tensor_xshared), in its column of W. */
template <int P, int Q, int NC, bool XS, int GL, PointFn POINT>
static __device__ __forceinline__ void hex_points(const QfArgs &a, int64_t e, int t, const Tables &T,
                                                  double *C, double *W) {
    constexpr int CS = P * Q * Q, NX = NC * 3 * P,
                  XST = XS ? Q * Q : 1; /* XST: stride between accumulators */
    double Xr[XS ? 1 : NX];
    double *X = XS ? W + t : Xr;
#pragma unroll
    for (int k = 0; k < NX; k++) X[k * XST] = 0.0;
#pragma unroll 1
    for (int qz = 0; qz < Q; qz++) {
        double u[NC], du[NC * 3], s[NC], f[NC * 3];
#pragma unroll
        for (int c = 0; c < NC; c++) {
            double v = 0.0, d0 = 0.0, d1 = 0.0, d2 = 0.0;
#pragma unroll 1
            for (int k = 0; k < P; k++) {
                const double b = T.B[qz * P + k], g = T.G[qz * P + k];
                const double *col = C + (c * 3 * P + k) * Q * Q + t;
                v += b * col[0];
                d0 += b * col[CS];
                d1 += b * col[2 * CS];
                d2 += g * col[0];
            }
            u[c] = v, du[c * 3] = d0, du[c * 3 + 1] = d1, du[c * 3 + 2] = d2;
        }
        point_at<3, NC, GL, POINT>(a, e, t + Q * Q * qz, u, du, s, f);
#pragma unroll
        for (int c = 0; c < NC; c++)
            if (XS) /* shared: a loop (its loads hoisted would take the registers this saves) */
#pragma unroll 1
                for (int k = 0; k < P; k++)
                    hex_accumulate<P, NC, XST>(X, T.B[qz * P + k], T.G[qz * P + k], s, f, c, k);
            else
#pragma unroll
                for (int k = 0; k < P; k++)
                    hex_accumulate<P, NC, XST>(X, T.B[qz * P + k], T.G[qz * P + k], s, f, c, k);
    }
    if (!XS)
#pragma unroll
        for (int k = 0; k < NX; k++) C[k * Q * Q + t] = X[k];
}

/* y transposed: thread (qx, j): Ya[c][k][j][qx] = sum_qy B(qy, j) Xs + G(qy, j) X1, Yb = sum_qy B(qy, j) X0.
 */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_yt(int t, const Tables &T, const double *X, double *V) {
    hex_pairs<P, Q, NC>(t, V, [&](int c, int k, int qx, int j, double &ya, double &yb) {
        const double *Xs = X + ((c * 3) * P + k) * Q * Q + qx, *X0 = Xs + P * Q * Q, *X1 = X0 + P * Q * Q;
        ya = yb = 0.0;
#pragma unroll
        for (int qy = 0; qy < Q; qy++) {
            const double b = T.B[qy * P + j];
            ya += b * Xs[qy * Q] + T.G[qy * P + j] * X1[qy * Q];
            yb += b * X0[qy * Q];
        }
    });
}

/* x transposed and assembly: thread (i, j): r[c][k][j][i] = sum_qx B(qx, i) Ya + G(qx, i) Yb. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_xt(int t, const Tables &T, const double *V, const fem_idx *dofs,
                                              int64_t e, double *out, double *evec) {
    const int i = t % Q, j = t / Q;
    if (i >= P || j >= P) return;
#pragma unroll 1
    for (int c = 0; c < NC; c++)
#pragma unroll 1
        for (int k = 0; k < P; k++) {
            const double *Ya = V + ((c * 2) * P + k) * P * Q + j * Q, *Yb = Ya + P * P * Q;
            double r = 0.0;
#pragma unroll
            for (int qx = 0; qx < Q; qx++) r += T.B[qx * P + i] * Ya[qx] + T.G[qx * P + i] * Yb[qx];
            put<P * P * P, NC>(dofs, e, (k * P + j) * P + i, c, r, out, evec);
        }
}

/* ------------------------------------------------------------------------------------- quadrilaterals */

/* x: thread (qx, j): AB[c][j][qx] = sum_i B(qx, i) ue[c][j][i], AG the same with G (V: [c][2][j][qx]). */
template <int P, int Q, int NC>
static __device__ __forceinline__ void quad_x(int t, const Tables &T, const double *ue, double *V) {
    const int qx = t % Q, j = t / Q;
    if (j >= P) return;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const double *u = ue + c * P * P + j * P;
        double b = 0.0, g = 0.0;
#pragma unroll
        for (int i = 0; i < P; i++) b += T.Bt[i * Q + qx] * u[i], g += T.Gt[i * Q + qx] * u[i];
        V[(c * 2) * P * Q + j * Q + qx] = b;
        V[(c * 2 + 1) * P * Q + j * Q + qx] = g;
    }
}

/* y and the physics: thread (qx, qy) interpolates, runs the point function and writes s, f0, f1 into
 * SF[c][3][t]. */
template <int P, int Q, int NC, int GL, PointFn POINT>
static __device__ __forceinline__ void quad_points(const QfArgs &a, int64_t e, int t, const Tables &T,
                                                   const double *V, double *SF) {
    const int qx = t % Q, qy = t / Q;
    double u[NC], du[NC * 2], s[NC], f[NC * 2];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const double *AB = V + (c * 2) * P * Q + qx, *AG = AB + P * Q;
        contract_y<P, Q>(T, qy, AB, AG, u[c], du[c * 2], du[c * 2 + 1]);
    }
    point_at<2, NC, GL, POINT>(a, e, t, u, du, s, f);
#pragma unroll
    for (int c = 0; c < NC; c++) {
        SF[(c * 3) * Q * Q + t] = s[c];
        SF[(c * 3 + 1) * Q * Q + t] = f[c * 2];
        SF[(c * 3 + 2) * Q * Q + t] = f[c * 2 + 1];
    }
}

/* y transposed: thread (qx, j): X[c][j][qx] = sum_qy B(qy, j) s + G(qy, j) f1, Y = sum_qy B(qy, j) f0. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void quad_yt(int t, const Tables &T, const double *SF, double *V) {
    const int qx = t % Q, j = t / Q;
    if (j >= P) return;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const double *s = SF + (c * 3) * Q * Q + qx, *f0 = s + Q * Q, *f1 = f0 + Q * Q;
        double x = 0.0, y = 0.0;
#pragma unroll
        for (int qy = 0; qy < Q; qy++) {
            const double b = T.B[qy * P + j];
            x += b * s[qy * Q] + T.G[qy * P + j] * f1[qy * Q];
            y += b * f0[qy * Q];
        }
        V[(c * 2) * P * Q + j * Q + qx] = x;
        V[(c * 2 + 1) * P * Q + j * Q + qx] = y;
    }
}

/* x transposed and assembly: thread (i, j): r[c][j][i] = sum_qx B(qx, i) X + G(qx, i) Y. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void quad_xt(int t, const Tables &T, const double *V, const fem_idx *dofs,
                                               int64_t e, double *out, double *evec) {
    const int i = t % Q, j = t / Q;
    if (i >= P || j >= P) return;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const double *X = V + (c * 2) * P * Q + j * Q, *Y = X + P * Q;
        double r = 0.0;
#pragma unroll
        for (int qx = 0; qx < Q; qx++) r += T.B[qx * P + i] * X[qx] + T.G[qx * P + i] * Y[qx];
        put<P * P, NC>(dofs, e, j * P + i, c, r, out, evec);
    }
}

/* ------------------------------------------------------------------------------------------ the kernel */

/* Block (Q*Q, epb): threadIdx.x the thread in the element, threadIdx.y the element. evec NULL: atomics.
 * Every thread reaches every barrier; threads of the missing elements of the last block skip the work. */
template <int D, int P, int Q, int NC, int GL, PointFn POINT>
static __global__ void __launch_bounds__(TENSOR_THREADS)
    k_fused_tensor(ElemView v, QfArgs a, const double *in, double *out, double *evec) {
    extern __shared__ double smem[];
    constexpr int ND = D == 3 ? P * P * P : P * P, NU = tensor_nu(D, P, Q, NC);
    constexpr int NV = tensor_nv(D, P, Q, NC), PER = tensor_per(D, P, Q, NC);
    constexpr bool XS = tensor_xshared(D, P, NC);
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
            hex_points<P, Q, NC, XS, GL, POINT>(a, e, t, T, U, W); /* own columns of U, W: no barrier before */
        }
        __syncthreads();
        if (active) hex_yt<P, Q, NC>(t, T, XS ? W : U, V);
        __syncthreads();
        if (active) hex_xt<P, Q, NC>(t, T, V, dofs, e, out, evec);
    } else {
        if (active) quad_x<P, Q, NC>(t, T, U, V);
        __syncthreads();
        if (active) quad_points<P, Q, NC, GL, POINT>(a, e, t, T, V, U);
        __syncthreads();
        if (active) quad_yt<P, Q, NC>(t, T, U, V);
        __syncthreads();
        if (active) quad_xt<P, Q, NC>(t, T, V, dofs, e, out, evec);
    }
}

/* ------------------------------------------------------------------------------------------ host side */

typedef void (*TensorKernel)(ElemView, QfArgs, const double *, double *, double *);

/* Every cell q-function of physics/qfunctions.h, for quads and hexes of orders 1..6 (P1D = Q1D = p + 1);
 * ncomp 0 is the dimension's; gl the layout of the records it reads as geometry. */
#define TENSOR_K_(D, P, NC, GL, fn) k_fused_tensor<D, P, P, NC, GL, fn>
#define TENSOR_ORDERS_(D, NC, GL, fn)                                                                        \
    TENSOR_K_(D, 2, NC, GL, fn), TENSOR_K_(D, 3, NC, GL, fn), TENSOR_K_(D, 4, NC, GL, fn),                   \
        TENSOR_K_(D, 5, NC, GL, fn), TENSOR_K_(D, 6, NC, GL, fn), TENSOR_K_(D, 7, NC, GL, fn)
#define TENSOR_ROW_(fn, nc, gl)                                                                              \
    {QF_##fn,                                                                                                \
     nc,                                                                                                     \
     {{TENSOR_ORDERS_(2, ((nc) ? (nc) : 2), gl, fn)}, {TENSOR_ORDERS_(3, ((nc) ? (nc) : 3), gl, fn)}}},
static const struct {
    int id, ncomp;
    TensorKernel k[2][TENSOR_NORDERS];
} tensor_kernels[] = {FEMTO_CELL_QFUNCTIONS(TENSOR_ROW_)};
#undef TENSOR_ROW_
#undef TENSOR_ORDERS_
#undef TENSOR_K_

typedef struct {
    TensorKernel k;
    const QFunction *q;
    const QfQdata *qdata; /* the Jacobian action from the compact q-point data (op_block_qdata), or NULL */
    int threads, epb;     /* threads per element (Q*Q), elements per block */
    size_t smem;
} TensorPlan;

/* The operator runs the shared-memory fused kernel alone: named so when it was set up (GpuTuning.fused_shared
 * then; the tuning may have changed since), or being set up with that tuning. */
static int shared_only(const Operator *op) {
    const char *impl = op->implementation;
    if (impl && strncmp(impl, "cuda-fused", 10) == 0) return strcmp(impl, "cuda-fused-shared") == 0;
    return gpu_state(op->dev)->tuning.fused_shared;
}

/* The kernel and launch of a block's residual or Jacobian action, or 0 in *ok where this kernel does not
 * serve it (not a quad or hex block at the default 1D rule of an instantiated order, a q-function not in the
 * list, an operator of the shared-memory fused kernel alone). */
static int tensor_plan(const Operator *op, const OpBlock *b, int residual, TensorPlan *p, int *ok) {
    const ElemView *v = &b->view;
    const GpuState *g = gpu_state(op->dev);
    memset(p, 0, sizeof *p);
    *ok = 0;
    p->q = op_qfunction(op, 0, residual);
    const int P = v->nd1, D = v->dim, order = P - 1;
    if (!v->tensor || shared_only(op) || b->nelem == 0 || (D != 2 && D != 3) || v->nq1 != P ||
        order < TENSOR_MIN_ORDER || order > TENSOR_MAX_ORDER || !p->q->name || p->q->id < 0)
        return FEM_OK;
    const int nd = D == 3 ? P * P * P : P * P;
    if (v->ndof != nd || v->nq != nd || op->space->mesh->dim != D) return FEM_OK;
    p->qdata = b->qdata_per_elem ? NULL : op_block_qdata(op, b, residual);
    const int id = p->qdata ? p->qdata->apply : p->q->id;
    for (size_t r = 0; r < sizeof tensor_kernels / sizeof tensor_kernels[0]; r++) {
        const int nc = tensor_kernels[r].ncomp ? tensor_kernels[r].ncomp : D;
        if (tensor_kernels[r].id == id && nc == v->ncomp) p->k = tensor_kernels[r].k[D - 2][order - 1];
    }
    if (!p->k) return FEM_OK;
    const int nc = v->ncomp;
    const int64_t per = tensor_per(D, P, P, nc), tab = 4 * P * P;
    int64_t epb = TENSOR_THREADS / (P * P), room = (int64_t)(g->shared_optin / sizeof(double)) - tab;
    if (epb > room / per) epb = room / per;
    if (epb > b->nelem) epb = b->nelem;
    if (epb < 1) return FEM_OK;
    p->threads = P * P;
    p->epb = (int)epb;
    p->smem = sizeof(double) * (size_t)(tab + epb * per);
    *ok = 1;
    return FEM_OK;
}

static int tensor_allow_shared(const TensorPlan *p) {
    if (p->smem > 48 * 1024)
        GPU_CHECK(cudaFuncSetAttribute(p->k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p->smem));
    return FEM_OK;
}

int gpu_fused_tensor_ready(const Operator *op, const OpBlock *b) {
    TensorPlan p;
    int res = 0, jac = 0;
    if (tensor_plan(op, b, 1, &p, &res) || tensor_plan(op, b, 0, &p, &jac)) return 0;
    return res || jac;
}

int gpu_fused_tensor_block(Operator *op, OpBlock *b, int residual, const double *in, double *out, int *done) {
    Device *d = op->dev;
    GpuState *g = gpu_state(d);
    TensorPlan p;
    FEM_TRY(tensor_plan(op, b, residual, &p, done));
    if (!*done) return FEM_OK;
    if (residual) FEM_TRY(op_block_aux(op, b));
    FEM_TRY(tensor_allow_shared(&p));
    const int gather = d->assembly == ASSEMBLE_GATHER;
    QfArgs a = p.qdata ? op_block_qdata_args(op, b) : op_block_args(op, b, 0, residual);
    const int64_t blocks = (b->nelem + p.epb - 1) / p.epb;
    if (blocks > 2147483647LL)
        return fem_fail(FEM_ERR_DEVICE,
                        "the fused tensor kernel would need %lld blocks, more than CUDA allows",
                        (long long)blocks);
    p.k<<<(unsigned)blocks, dim3(p.threads, p.epb), p.smem>>>(b->view, a, in, out, gather ? b->evec : NULL);
    GPU_LAUNCHED("fused tensor operator");
    snprintf(g->last_launch, sizeof g->last_launch,
             "fused-tensor %s%s: %s p = %d, %d elems/block x %d threads, %.1f kB shared, %s", p.q->name,
             p.qdata ? " (q-point data)" : "", b->view.dim == 3 ? "hex" : "quad", b->view.nd1 - 1, p.epb, p.threads,
             (double)p.smem / 1024.0, gather ? "gather assembly" : "atomic assembly");
    return gather ? gpu_assemble(d, &b->view, b->evec, out) : FEM_OK;
}

int gpu_fused_tensor_occupancy(const Operator *op, const OpBlock *b, int residual, int *regs,
                               int *blocks_per_sm, int *handled) {
    TensorPlan p;
    FEM_TRY(tensor_plan(op, b, residual, &p, handled));
    if (!*handled) return FEM_OK;
    cudaFuncAttributes at;
    GPU_CHECK(cudaFuncGetAttributes(&at, p.k));
    *regs = at.numRegs;
    FEM_TRY(tensor_allow_shared(&p));
    GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, p.k, p.threads * p.epb, p.smem));
    return FEM_OK;
}
