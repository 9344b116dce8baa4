/* The register kernel: the fused residual and Jacobian action of a block of triangles or tetrahedra of up to
 * SIMPLEX_MAX_DOF nodes (orders 1 and 2), one thread per element (or, for vector physics where that keeps more
 * blocks resident, one lane per component: k_fused_simplex_split), everything an element needs in registers.
 *
 * Why a second fused kernel: the shared-memory kernel of fused.cu spreads an element over many threads and
 * passes its q-point values through shared memory with a barrier per stage; on p = 2 tetrahedra it ran at 9%
 * (elasticity) and 33% (heat) of copy bandwidth, bound by shared-memory traffic and barriers rather than by
 * memory. Here a thread gathers its element's nodal values once into registers, and at each q-point forms the
 * values and reference gradients, calls the physics' own point function (the FEM_HD function of the physics'
 * _qf.h, a template argument) on per-thread arrays, and adds the test-function sums into per-thread
 * accumulators; the element's result goes out by atomics (or into the element vectors that the gather
 * assembly reads). The shape tables sit in shared memory and every thread of a warp reads the same entry at
 * the same time (a broadcast).
 *
 * Geometry: on affine cells (straight-sided simplices: order-1 geometry) J^{-1} is the same at every q-point,
 * so it is read once per element and only w det J per q-point: on p = 2 tetrahedra with 4 q-points that is 13
 * of the 40 stored geometry doubles. Curved cells read all of it.
 *
 * The point function sees a QfArgs of one q-point whose dimension and component count are compile-time
 * constants and whose u, du, geo, s, f point to the thread's own arrays: once inlined, its loops unroll and the
 * arrays stay in registers (ptxas -v: no stack frame). The component count of each cell q-function comes from
 * physics/qfunctions.h's FEMTO_CELL_QFUNCTIONS list. */
#include "fem/element.h"
#include "fem/operator.h"
#include "gpu/elem_halves.cuh"
#include "gpu/internal.cuh"
#include "gpu/qfunction.cuh"
#include "physics/qfunctions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SIMPLEX_THREADS = 128, SIMPLEX_MAX_DOF = 10, SIMPLEX_MAX_Q = 64 };

/* Affine cells: w_q / w_0 of the rule, so that w_q det J = (w_0 det J) w_q / w_0 comes from q-point 0's
 * geometry alone (n = 0: not affine, or a rule of more than SIMPLEX_MAX_Q points: read every q-point's). */
typedef struct {
    int n;
    double ratio[SIMPLEX_MAX_Q];
} SimplexWeights;

/* The geometry of q-point q of the element whose stored geometry starts at ge (GEO_STRIDE(D) per q-point):
 * on affine cells J^{-1} was read once (geo[1..]) and only w det J changes, from q-point 0's. */
template <int D>
static __device__ __forceinline__ void simplex_geo(const double *ge, int q, const SimplexWeights &w, double *geo) {
    constexpr int GS = GEO_STRIDE(D);
    if (w.n) {
        geo[0] = w.ratio[q] * __ldg(ge);
    } else {
#pragma unroll
        for (int k = 0; k < GS; k++) geo[k] = __ldg(ge + q * GS + k);
    }
}

/* Element e's stored geometry, and on affine cells J^{-1} read once into geo[1..] (simplex_geo does the rest). */
template <int D>
static __device__ __forceinline__ const double *simplex_geo_begin(const QfArgs &a, int64_t e, const SimplexWeights &w,
                                                                  double *geo) {
    const double *ge = a.geo + e * a.nq * GEO_STRIDE(D);
    if (w.n) {
#pragma unroll
        for (int k = 1; k < GEO_STRIDE(D); k++) geo[k] = __ldg(ge + k);
    }
    return ge;
}

template <int D, int NC, PointFn POINT>
static __global__ void __launch_bounds__(SIMPLEX_THREADS)
    k_fused_simplex(ElemView v, SimplexWeights w, QfArgs a, const double *in, double *out, double *evec) {
    extern __shared__ double smem[];
    constexpr int GS = GEO_STRIDE(D);
    const int nd = v.ndof, nq = v.nq;
    const SimplexStage st = simplex_stage<D>(v, SIMPLEX_THREADS, smem);
    const double *B = st.B, *G = st.G;
    if ((int)threadIdx.x >= st.nb) return;
    const int64_t e = st.e0 + threadIdx.x;
    const fem_idx *my = st.ids + threadIdx.x * nd;
    double ue[NC][SIMPLEX_MAX_DOF], re[NC][SIMPLEX_MAX_DOF];
    simplex_gather(my, nd, in, ue);
    simplex_zero(re);
    double geo[GS];
    const double *ge = simplex_geo_begin<D>(a, e, w, geo);
    for (int q = 0; q < nq; q++) {
        simplex_geo<D>(ge, q, w, geo);
        double uq[NC], du[NC * D], s[NC], f[NC * D];
        simplex_interp<D, NC>(nd, B + q * nd, G + q * nd * D, ue, uq, du);
        QfArgs la = qf_point_args<D, NC>(a, e, q, uq, du, geo, s, f);
        POINT(&la, 0);
        simplex_integ<D, NC>(nd, B + q * nd, G + q * nd * D, s, f, re);
    }
    simplex_put(my, nd, e, re, out, evec);
}

/* NC > 1 (elasticity): NC lanes per element, lane c holding component c's nodal values and sums, 32 / NC
 * elements per warp (the lanes left over repeat the warp's last element). At each q-point a lane forms its
 * component's value and gradient, takes the element's other components from its neighbour lanes (shuffles),
 * runs the whole point function (every lane of an element computes the same point, so its state is written
 * with the same values) and integrates its own component's row. A third of the one-thread kernel's registers
 * (ptxas: 200 for 3D linear elasticity, 2 blocks per SM) for some repeated point-function work. */
template <int D, int NC, PointFn POINT>
static __global__ void __launch_bounds__(SIMPLEX_THREADS)
    k_fused_simplex_split(ElemView v, SimplexWeights w, QfArgs a, const double *in, double *out, double *evec) {
    extern __shared__ double smem[];
    constexpr int GS = GEO_STRIDE(D), EPW = 32 / NC, EPB = EPW * (SIMPLEX_THREADS / 32);
    const int nd = v.ndof, nq = v.nq;
    const SimplexStage st = simplex_stage<D>(v, EPB, smem);
    const double *B = st.B, *G = st.G;
    const int lane = threadIdx.x & 31, slot = min(lane / NC, EPW - 1), base = slot * NC;
    const int c = (lane - base) % NC, le = min((int)(threadIdx.x >> 5) * EPW + slot, st.nb - 1);
    const bool writes = lane < EPW * NC && (int)(threadIdx.x >> 5) * EPW + slot < st.nb;
    const int64_t e = st.e0 + le;
    const fem_idx *my = st.ids + le * nd;
    double ue[SIMPLEX_MAX_DOF], re[SIMPLEX_MAX_DOF];
#pragma unroll
    for (int i = 0; i < SIMPLEX_MAX_DOF; i++) {
        ue[i] = i < nd ? __ldg(in + (int64_t)my[i] * NC + c) : 0.0;
        re[i] = 0.0;
    }
    double geo[GS];
    const double *ge = simplex_geo_begin<D>(a, e, w, geo);
    for (int q = 0; q < nq; q++) {
        simplex_geo<D>(ge, q, w, geo);
        const double *Bq = B + q * nd, *Gq = G + q * nd * D;
        double u1 = 0.0, g1[D];
#pragma unroll
        for (int r = 0; r < D; r++) g1[r] = 0.0;
#pragma unroll
        for (int i = 0; i < SIMPLEX_MAX_DOF; i++)
            if (i < nd) {
                u1 += Bq[i] * ue[i];
#pragma unroll
                for (int r = 0; r < D; r++) g1[r] += Gq[i * D + r] * ue[i];
            }
        double uq[NC], du[NC * D], s[NC], f[NC * D];
#pragma unroll
        for (int cc = 0; cc < NC; cc++) {
            uq[cc] = __shfl_sync(0xffffffffu, u1, base + cc);
#pragma unroll
            for (int r = 0; r < D; r++) du[cc * D + r] = __shfl_sync(0xffffffffu, g1[r], base + cc);
        }
        QfArgs la = qf_point_args<D, NC>(a, e, q, uq, du, geo, s, f);
        POINT(&la, 0);
        double sc = 0.0, fc[D];
#pragma unroll
        for (int r = 0; r < D; r++) fc[r] = 0.0;
#pragma unroll
        for (int cc = 0; cc < NC; cc++)
            if (cc == c) {
                sc = s[cc];
#pragma unroll
                for (int r = 0; r < D; r++) fc[r] = f[cc * D + r];
            }
#pragma unroll
        for (int i = 0; i < SIMPLEX_MAX_DOF; i++)
            if (i < nd) {
                double t = Bq[i] * sc;
#pragma unroll
                for (int r = 0; r < D; r++) t += Gq[i * D + r] * fc[r];
                re[i] += t;
            }
    }
    if (!writes) return;
#pragma unroll
    for (int i = 0; i < SIMPLEX_MAX_DOF; i++)
        if (i < nd) {
            if (evec)
                evec[(e * NC + c) * nd + i] = re[i];
            else
                atomicAdd(&out[(int64_t)my[i] * NC + c], re[i]);
        }
}

typedef void (*SimplexKernel)(ElemView, SimplexWeights, QfArgs, const double *, double *, double *);
typedef struct {
    int id, ncomp; /* ncomp 0: one per space dimension */
    SimplexKernel k[2], split[2];
} SimplexEntry;
/* The split kernel of a vector q-function; none (and nothing instantiated) for a scalar one. */
template <int D, int NC, PointFn POINT>
static constexpr SimplexKernel simplex_split() {
    if constexpr (NC == 1)
        return nullptr;
    else
        return k_fused_simplex_split<D, NC, POINT>;
}
#define SIMPLEX_NC_(nc, d) ((nc) ? (nc) : (d))
#define SIMPLEX_ENTRY_(fn, nc)                                                                               \
    {QF_##fn,                                                                                                \
     nc,                                                                                                     \
     {k_fused_simplex<2, SIMPLEX_NC_(nc, 2), fn>, k_fused_simplex<3, SIMPLEX_NC_(nc, 3), fn>},               \
     {simplex_split<2, SIMPLEX_NC_(nc, 2), fn>(), simplex_split<3, SIMPLEX_NC_(nc, 3), fn>()}},
static const SimplexEntry simplex_kernels[] = {FEMTO_CELL_QFUNCTIONS(SIMPLEX_ENTRY_)};
#undef SIMPLEX_ENTRY_

/* Elements per block of a kernel: one per thread, or 32 / nc per warp for the split kernel. */
static int simplex_epb(int nc, int split) {
    return split ? (32 / nc) * (SIMPLEX_THREADS / 32) : SIMPLEX_THREADS;
}

/* Resident blocks per SM of a kernel, as its registers allow. */
static int simplex_blocks_per_sm(const GpuState *g, SimplexKernel k) {
    cudaFuncAttributes at;
    if (cudaFuncGetAttributes(&at, k) != cudaSuccess || at.numRegs <= 0) return cudaGetLastError(), 0;
    return g->regs_per_sm / (at.numRegs * SIMPLEX_THREADS);
}

/* The kernel for q-function id on cells of dimension dim with nc components, or NULL; *split: the
 * component-split kernel, taken where it at least doubles the resident blocks of the one-thread kernel
 * (measured on an H100, p = 2 tetrahedra: linear elasticity 196 -> 119 registers, 2 -> 4 blocks per SM, J x
 * 611 -> 495 us; neo-Hookean 245 -> 174 registers, 2 blocks either way, and three lanes repeating its heavy
 * point function made J x 1669 -> 3515 us). FEMTO_GPU_SIMPLEX_SPLIT=0 or 1 forces the choice. */
static SimplexKernel simplex_kernel(GpuState *g, int id, int dim, int nc, int *split) {
    constexpr size_t n = sizeof simplex_kernels / sizeof simplex_kernels[0];
    static_assert(n <= sizeof g->simplex_layout / sizeof g->simplex_layout[0], "GpuState.simplex_layout is too short");
    for (size_t k = 0; k < n; k++) {
        const SimplexEntry *s = &simplex_kernels[k];
        if (s->id != id || SIMPLEX_NC_(s->ncomp, dim) != nc) continue;
        SimplexKernel one = s->k[dim - 2], sp = s->split[dim - 2];
        signed char *layout = &g->simplex_layout[k][dim - 2];
        if (!*layout) {
            const char *env = getenv("FEMTO_GPU_SIMPLEX_SPLIT");
            int use = 0;
            if (sp && env && strcmp(env, "1") == 0)
                use = 1;
            else if (sp && !(env && strcmp(env, "0") == 0))
                use = simplex_blocks_per_sm(g, sp) >= 2 * simplex_blocks_per_sm(g, one);
            *layout = (signed char)(use ? 2 : 1);
        }
        *split = *layout == 2;
        return *split ? sp : one;
    }
    return NULL;
}

static size_t simplex_smem(const ElemView *v) {
    return sizeof(double) * (size_t)v->nq * v->ndof * (1 + v->dim) + sizeof(fem_idx) * SIMPLEX_THREADS * v->ndof;
}

/* The weight ratios of an affine block's rule (n = 0 for curved cells, or a rule too long for the table). */
static SimplexWeights simplex_weights(const Operator *op, const OpBlock *b) {
    SimplexWeights w;
    memset(&w, 0, sizeof w);
    const Quadrature *q = &b->basis.tables.quad;
    const int bi = (int)(b - op->cells);
    if (op->space->mesh->cells[bi].order != 1 || q->npts > SIMPLEX_MAX_Q) return w;
    w.n = q->npts;
    for (int k = 0; k < q->npts; k++) w.ratio[k] = q->w[k] / q->w[0];
    return w;
}

/* Whether cell block b runs on the register kernel: triangles and tetrahedra of up to SIMPLEX_MAX_DOF nodes
 * whose q-function is in the list, with the shape tables and dof map fitting in shared memory. */
extern "C" int gpu_fused_simplex_fits(const Operator *op, const OpBlock *b, int residual) {
    const ElemView *v = &b->view;
    const QFunction *q = op_qfunction(op, 0, residual);
    const Shape s = b->basis.tables.shape;
    if ((s != SHAPE_TRI && s != SHAPE_TET) || v->dim != (s == SHAPE_TET ? 3 : 2) || v->ndof > SIMPLEX_MAX_DOF)
        return 0;
    int split;
    if (b->nelem == 0 || !simplex_kernel(gpu_state(op->dev), q->id, v->dim, v->ncomp, &split)) return 0;
    return simplex_smem(v) <= gpu_state(op->dev)->shared_optin;
}

extern "C" int gpu_fused_simplex_block(Operator *op, OpBlock *b, int residual, const double *in, double *out) {
    Device *d = op->dev;
    GpuState *g = gpu_state(d);
    const ElemView *v = &b->view;
    const QFunction *q = op_qfunction(op, 0, residual);
    int split;
    SimplexKernel k = simplex_kernel(g, q->id, v->dim, v->ncomp, &split);
    const SimplexWeights w = simplex_weights(op, b);
    const size_t smem = simplex_smem(v);
    if (smem > 48 * 1024) GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    if (residual) FEM_TRY(op_block_aux(op, b));
    QfArgs a = op_block_args(op, b, 0, residual);
    double *evec = d->assembly == ASSEMBLE_GATHER ? b->evec : NULL;
    const int epb = simplex_epb(v->ncomp, split);
    const unsigned blocks = (unsigned)((b->nelem + epb - 1) / epb);
    k<<<blocks, SIMPLEX_THREADS, smem>>>(*v, w, a, in, out, evec);
    GPU_LAUNCHED("fused simplex operator");
    char layout[48] = "1 elem/thread";
    if (split) snprintf(layout, sizeof layout, "%d lanes/elem, %d elems/warp", v->ncomp, 32 / v->ncomp);
    snprintf(g->last_launch, sizeof g->last_launch,
             "fused-simplex %s: %s x %d threads, %.1f kB shared, geometry %s, %s", q->name, layout, SIMPLEX_THREADS,
             (double)smem / 1024.0, w.n ? "affine (q-point 0)" : "per q-point", evec ? "gather assembly" : "atomic assembly");
    return evec ? gpu_assemble(d, v, evec, out) : FEM_OK;
}

extern "C" int gpu_fused_simplex_occupancy(const Operator *op, const OpBlock *b, int residual, int *regs,
                                           int *blocks_per_sm) {
    const QFunction *q = op_qfunction(op, 0, residual);
    int split;
    SimplexKernel k = simplex_kernel(gpu_state(op->dev), q->id, b->view.dim, b->view.ncomp, &split);
    cudaFuncAttributes at;
    GPU_CHECK(cudaFuncGetAttributes(&at, k));
    *regs = at.numRegs;
    const size_t smem = simplex_smem(&b->view);
    if (smem > 48 * 1024) GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, SIMPLEX_THREADS, smem));
    return FEM_OK;
}
