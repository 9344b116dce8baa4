/* The specialised separate element kernels: interpolation and integration (atomic assembly, or the element
 * vectors of gather assembly) for the element types, orders and quadrature rules that femto uses by default,
 * in the register kernel shape of the fused kernels and built from the same halves (gpu/elem_halves.cuh):
 *
 *  - triangles and tetrahedra of 3, 6, 10 and 4, 10, 20 nodes (p = 1..3), any rule: one thread per element,
 *    its nodal values (interpolation) or sums (integration) in registers, the shape tables and the block's
 * dof map in shared memory (every lane of a warp reads the same table entry: a broadcast);
 *  - quadrilaterals and hexahedra of p = 1..3 with P1D = Q1D (the default rule of straight and quadratic
 *    cells): Q x Q threads per element, sum factorised through shared memory; in 3D each thread walks its
 *    column of q-points.
 *
 * Templates on the dimension, the nodes (or 1D size) and the components (1 and the dimension: scalar and
 * vector fields), so that loops unroll and per-thread arrays are registers. gpu/kernels.cu calls
 * gpu_special_interpolate / gpu_special_integrate first and runs its run-time-size kernels where these say
 * they do not serve the launch (other orders, rules, component counts, element types, a forced tuning).
 *
 * The q-point arrays keep their global layout (fem/device.h: uq[e][q][c], duq[e][q][c][d]). Simplices: a
 * thread's q-point results are one element's contiguous piece, so they are staged in shared memory per
 * element (rows of odd stride: the lanes, one element each, fall in different banks) and the block copies its
 * elements' piece, contiguous in global memory, with consecutive threads on consecutive addresses
 * (coalesced); integration copies its inputs in the same way, and its element vectors out (gather assembly).
 * Where the staging would not fit, or FEMTO_GPU_SPECIAL=global / GpuTuning.qdata = GPU_PLACE_GLOBAL asks,
 * each thread reads and writes its element's piece directly. Tensor elements: thread t of an element owns
 * q-point t of each layer qz, so consecutive threads already touch consecutive q-points: read and written
 * directly.
 *
 * FEMTO_GPU_SPECIAL=0 turns these kernels off (the run-time-size kernels run everything), for comparison. */
#include "gpu/elem_halves.cuh"
#include "gpu/internal.cuh"

#include <stdio.h>
#include <string.h>

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

/* The q-point staging area of a simplex block: after the tables and the dof map of epb elements (8-byte
 * aligned). */
template <int D>
static __device__ __forceinline__ double *simplex_area(double *smem, int nq, int nd, int epb) {
    return smem + nq * nd * (1 + D) + (epb * nd + 1) / 2;
}

template <int D, int ND, int NC>
static __global__ void __launch_bounds__(SPECIAL_SIMPLEX_THREADS)
    k_simplex_interp(ElemView v, int stride, const double *in, double *uq, double *duq) {
    extern __shared__ double smem[];
    const int nq = v.nq, epb = blockDim.x, le = threadIdx.x;
    const SimplexStage st = simplex_stage<D>(v, epb, smem);
    double *area = simplex_area<D>(smem, nq, ND, epb), *row = area + le * stride;
    const int n0 = uq ? nq * NC : 0, n1 = duq ? nq * NC * D : 0;
    if (le < st.nb) {
        const int64_t e = st.e0 + le;
        double ue[NC][ND];
        simplex_gather(st.ids + le * ND, ND, in, ue);
        for (int q = 0; q < nq; q++) {
            double u[NC], du[NC * D];
            simplex_interp<D, NC>(ND, st.B + q * ND, st.G + q * ND * D, ue, u, du, uq != nullptr);
            const int64_t qi = e * nq + q;
            if (uq)
#pragma unroll
                for (int c = 0; c < NC; c++) (stride ? row + q * NC : uq + qi * NC)[c] = u[c];
            if (duq)
#pragma unroll
                for (int k = 0; k < NC * D; k++)
                    (stride ? row + n0 + q * NC * D : duq + qi * NC * D)[k] = du[k];
        }
    }
    if (!stride) return;
    __syncthreads();
    const int64_t q0 = st.e0 * nq * NC;
    if (uq) rows_walk(st.nb, n0, [&](int k, int l, int j) { uq[q0 + k] = area[l * stride + j]; });
    if (duq) rows_walk(st.nb, n1, [&](int k, int l, int j) { duq[q0 * D + k] = area[l * stride + n0 + j]; });
}

/* evec NULL: atomics into out; else the element vectors evec[e][c][i] (staged and copied out coalesced). */
template <int D, int ND, int NC>
static __global__ void __launch_bounds__(SPECIAL_SIMPLEX_THREADS)
    k_simplex_integ(ElemView v, int stride, const double *sq, const double *fq, double *out, double *evec) {
    extern __shared__ double smem[];
    const int nq = v.nq, epb = blockDim.x, le = threadIdx.x;
    const SimplexStage st = simplex_stage<D>(v, epb, smem);
    double *area = simplex_area<D>(smem, nq, ND, epb), *row = area + le * stride;
    const int n0 = sq ? nq * NC : 0, n1 = fq ? nq * NC * D : 0;
    const int64_t q0 = st.e0 * nq * NC, e = st.e0 + le;
    if (stride) {
        if (sq) rows_walk(st.nb, n0, [&](int k, int l, int j) { area[l * stride + j] = sq[q0 + k]; });
        if (fq)
            rows_walk(st.nb, n1, [&](int k, int l, int j) { area[l * stride + n0 + j] = fq[q0 * D + k]; });
        __syncthreads();
    }
    const bool active = le < st.nb;
    double re[NC][ND];
    simplex_zero(re);
    if (active)
        for (int q = 0; q < nq; q++) {
            const double *ps = stride ? row + q * NC : sq + (e * nq + q) * NC;
            const double *pf = stride ? row + n0 + q * NC * D : fq + (e * nq + q) * NC * D;
            double s[NC], f[NC * D];
#pragma unroll
            for (int c = 0; c < NC; c++) s[c] = sq ? ps[c] : 0.0;
#pragma unroll
            for (int k = 0; k < NC * D; k++) f[k] = fq ? pf[k] : 0.0;
            simplex_integ<D, NC>(ND, st.B + q * ND, st.G + q * ND * D, s, f, re, sq != nullptr,
                                 fq != nullptr);
        }
    if (evec && stride) {
        __syncthreads(); /* every thread has read its inputs: the rows take the element vectors */
        if (active)
#pragma unroll
            for (int c = 0; c < NC; c++)
#pragma unroll
                for (int i = 0; i < ND; i++) row[c * ND + i] = re[c][i];
        __syncthreads();
        double *ev = evec + st.e0 * NC * ND;
        rows_walk(st.nb, NC * ND, [&](int k, int l, int j) { ev[k] = area[l * stride + j]; });
    } else if (active) {
        simplex_put(st.ids + le * ND, ND, e, re, out, evec);
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

/* Block (P*P, epb): the tensor kernels of Q = P (stride unused: the signature of the simplex kernels). */
template <int D, int P, int NC>
static __global__ void __launch_bounds__(SPECIAL_TENSOR_THREADS)
    k_tensor_interp(ElemView v, int stride, const double *in, double *uq, double *duq) {
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
    k_tensor_integ(ElemView v, int stride, const double *sq, const double *fq, double *out, double *evec) {
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

/* -------------------------------------------------------------------------------------------- host side */

typedef void (*SpecialInterp)(ElemView, int, const double *, double *, double *);
typedef void (*SpecialInteg)(ElemView, int, const double *, const double *, double *, double *);
typedef struct {
    int tensor, dim, n, ncomp; /* n: nodes (simplices) or 1D size (tensor elements) */
    SpecialInterp interp;
    SpecialInteg integ;
} SpecialEntry;

#define SIMPLEX_(D, ND, NC)                                                                                  \
    { 0, D, ND, NC, k_simplex_interp<D, ND, NC>, k_simplex_integ<D, ND, NC> }
#define TENSOR_(D, P, NC)                                                                                    \
    { 1, D, P, NC, k_tensor_interp<D, P, NC>, k_tensor_integ<D, P, NC> }
#define ORDERS_(K, D, A, B, C, NC) K(D, A, NC), K(D, B, NC), K(D, C, NC)
static const SpecialEntry special_kernels[] = {
    ORDERS_(SIMPLEX_, 2, 3, 6, 10, 1),  ORDERS_(SIMPLEX_, 2, 3, 6, 10, 2), ORDERS_(SIMPLEX_, 3, 4, 10, 20, 1),
    ORDERS_(SIMPLEX_, 3, 4, 10, 20, 3), ORDERS_(TENSOR_, 2, 2, 3, 4, 1),   ORDERS_(TENSOR_, 2, 2, 3, 4, 2),
    ORDERS_(TENSOR_, 3, 2, 3, 4, 1),    ORDERS_(TENSOR_, 3, 2, 3, 4, 3)};
#undef ORDERS_
#undef TENSOR_
#undef SIMPLEX_

/* The entry serving v, or NULL: the tuning must leave the choice to femto, and v be a triangle or tetrahedron
 * (not tensor, reference dimension 2 or 3) or a quad or hex at Q1D = P1D. */
static const SpecialEntry *special_entry(const GpuState *g, const ElemView *v) {
    const GpuTuning *t = &g->tuning;
    if (!g->special || t->generic || t->threads_per_elem > 0 || t->path != GPU_PATH_AUTO || v->nelem <= 0)
        return NULL;
    if (v->tensor && (v->nq1 != v->nd1 || v->nq != v->ndof)) return NULL;
    const int n = v->tensor ? v->nd1 : v->ndof;
    for (size_t k = 0; k < sizeof special_kernels / sizeof special_kernels[0]; k++) {
        const SpecialEntry *s = &special_kernels[k];
        if (s->tensor == v->tensor && s->dim == v->dim && s->n == n && s->ncomp == v->ncomp) return s;
    }
    return NULL;
}

typedef struct {
    int epb, stride; /* elements per block; simplex staging rows (0: global memory) */
    unsigned blocks;
    dim3 block;
    size_t smem;
} SpecialLaunch;

/* Simplices: need doubles of staging per element (0: nothing to stage). Blocks of SPECIAL_SIMPLEX_THREADS
 * elements (or the tuning's), fewer where the staging would not fit, none (global memory) where even a warp's
 * would not. *ok = 0 where the tables and dof map alone do not fit. */
static void simplex_launch(const GpuState *g, const ElemView *v, int64_t need, SpecialLaunch *L, int *ok) {
    size_t limit = g->shared_optin;
    if (g->tuning.shared_limit > 0 && g->tuning.shared_limit < limit) limit = g->tuning.shared_limit;
    const int staged = need > 0 && g->special == 1 && g->tuning.qdata != GPU_PLACE_GLOBAL;
    int epb = g->tuning.elems_per_block > 0 ? g->tuning.elems_per_block : SPECIAL_SIMPLEX_THREADS;
    if (epb > SPECIAL_SIMPLEX_THREADS) epb = SPECIAL_SIMPLEX_THREADS;
    const size_t tab = sizeof(double) * (size_t)v->nq * v->ndof * (1 + v->dim);
    L->stride = staged ? (int)(need | 1) : 0;
    for (;;) {
        L->smem =
            tab + sizeof(double) * (size_t)(((int64_t)epb * v->ndof + 1) / 2 + (int64_t)epb * L->stride);
        if (L->smem <= limit) break;
        if (L->stride && epb > 32)
            epb = epb > 64 ? 64 : 32;
        else if (L->stride)
            L->stride = 0;
        else
            break;
    }
    *ok = L->smem <= limit;
    L->epb = epb;
    L->block = dim3(epb);
    L->blocks = (unsigned)((v->nelem + epb - 1) / epb);
}

/* Tensor elements: P x P threads per element, about SPECIAL_TENSOR_THREADS a block (or the tuning's). */
static void tensor_launch(const GpuState *g, const ElemView *v, SpecialLaunch *L, int *ok) {
    const int P = v->nd1, per = tensor_per(v->dim, P, P, v->ncomp);
    int epb = g->tuning.elems_per_block > 0 ? g->tuning.elems_per_block : SPECIAL_TENSOR_THREADS / (P * P);
    if (epb > SPECIAL_TENSOR_THREADS / (P * P)) epb = SPECIAL_TENSOR_THREADS / (P * P);
    L->stride = 0;
    L->epb = epb;
    L->block = dim3(P * P, epb);
    L->blocks = (unsigned)((v->nelem + epb - 1) / epb);
    L->smem = sizeof(double) * (size_t)(4 * P * P + epb * per);
    *ok = L->smem <= g->shared_optin;
}

/* The launch of entry s for v (*ok = 0: it does not fit), its shared-memory limit raised where needed, and
 * the description in g->last_launch. need: the simplex staging per element. */
template <typename K>
static int special_prepare(GpuState *g, const ElemView *v, const SpecialEntry *s, K k, const char *what,
                           int64_t need, SpecialLaunch *L, int *ok) {
    if (s->tensor)
        tensor_launch(g, v, L, ok);
    else
        simplex_launch(g, v, need, L, ok);
    if (*ok && (v->nelem + L->epb - 1) / L->epb > 2147483647LL) *ok = 0;
    if (!*ok) return FEM_OK;
    if (L->smem > 48 * 1024)
        GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L->smem));
    cudaFuncAttributes at;
    GPU_CHECK(cudaFuncGetAttributes(&at, k));
    snprintf(g->last_launch, sizeof g->last_launch,
             "special %s %s (%s %d, %d comp): %d elems/block x %d threads/elem, %.1f kB shared, q-data %s, "
             "%d registers",
             s->tensor ? "tensor" : "simplex", what, s->tensor ? "P1D" : "nodes", s->n, s->ncomp, L->epb,
             (int)(L->block.x * L->block.y) / L->epb, (double)L->smem / 1024.0,
             s->tensor   ? "global (coalesced by q-point)"
             : L->stride ? "staged"
                         : "global",
             at.numRegs);
    return FEM_OK;
}

int gpu_special_interpolate(GpuState *g, const ElemView *v, const double *u, double *uq, double *duq,
                            int *done) {
    *done = 0;
    const SpecialEntry *s = special_entry(g, v);
    if (!s) return FEM_OK;
    SpecialLaunch L;
    const int64_t need =
        (uq ? (int64_t)v->nq * v->ncomp : 0) + (duq ? (int64_t)v->nq * v->ncomp * v->dim : 0);
    FEM_TRY(special_prepare(g, v, s, s->interp, "interpolation", need, &L, done));
    if (!*done) return FEM_OK;
    s->interp<<<L.blocks, L.block, L.smem>>>(*v, L.stride, u, uq, duq);
    GPU_LAUNCHED("special interpolation");
    return FEM_OK;
}

int gpu_special_integrate(GpuState *g, const ElemView *v, const double *sq, const double *fq, double *r,
                          double *evec, int *done) {
    *done = 0;
    const SpecialEntry *s = special_entry(g, v);
    if (!s) return FEM_OK;
    SpecialLaunch L;
    int64_t need = (sq ? (int64_t)v->nq * v->ncomp : 0) + (fq ? (int64_t)v->nq * v->ncomp * v->dim : 0);
    if (evec && need < (int64_t)v->ncomp * v->ndof) need = (int64_t)v->ncomp * v->ndof;
    FEM_TRY(special_prepare(g, v, s, s->integ, evec ? "integration to E-vector" : "integration + atomics",
                            need, &L, done));
    if (!*done) return FEM_OK;
    s->integ<<<L.blocks, L.block, L.smem>>>(*v, L.stride, sq, fq, r, evec);
    GPU_LAUNCHED("special integration");
    return FEM_OK;
}
