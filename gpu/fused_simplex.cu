/* The register kernel: the fused residual and Jacobian action of a block of triangles or tetrahedra of up to
 * SIMPLEX_MAX_DOF nodes (orders 1 and 2, triangles of order 3), or of tetrahedra of order 3 (SIMPLEX_MAX_DOF3
 * nodes, instances of their own), one thread per element (or, for vector physics where that keeps more
 * blocks resident, one lane per component: k_fused_simplex_split), everything an element needs in registers.
 *
 * Why a second fused kernel: the shared-memory kernel of fused.cu spreads an element over many threads and
 * passes its q-point values through shared memory with a barrier per stage; on p = 2 tetrahedra it ran at 9%
 * (elasticity) and 33% (heat) of copy bandwidth, bound by shared-memory traffic and barriers rather than by
 * memory. Here a thread gathers its element's nodal values once into registers, and at each q-point forms the
 * values and reference gradients, calls the physics' own point function (the FEM_HD function of the physics'
 * _qf.h, a template argument) on per-thread arrays, and adds the test-function sums into per-thread
 * accumulators; the element's result goes out by atomics, or, with gather assembly, through the block's
 * element patch (deterministic: simplex_patch_out) or into the element vectors that k_gather_assemble reads.
 * The shape tables sit in shared memory and every thread of a warp reads the same entry at the same time (a
 * broadcast).
 *
 * Geometry: on affine cells (straight-sided simplices: order-1 geometry) J^{-1} is the same at every q-point,
 * so q-point 0's record is read once per element and w det J scaled by the weights' ratios: on p = 2
 * tetrahedra with 4 q-points that is 10 of the 40 stored geometry doubles. Curved cells read all of it. Where
 * the Jacobian has a compact q-point data form (fem/qfunction.h: steady constant-k heat) its action reads
 * that instead: on affine cells the 6 doubles of D once per element, scaled by the same ratios.
 *
 * The point function sees a QfArgs of one q-point whose dimension and component count are compile-time
 * constants and whose u, du, geo, s, f point to the thread's own arrays: once inlined, its loops unroll and
 * the arrays stay in registers (ptxas -v: no stack frame). The component count of each cell q-function comes
 * from physics/qfunctions.h's FEMTO_CELL_QFUNCTIONS list. */
#include "fem/element.h"
#include "fem/element_patch.h"
#include "fem/operator.h"
#include "gpu/elem_halves.cuh"
#include "gpu/internal.cuh"
#include "gpu/qfunction.cuh"
#include "physics/qfunctions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SIMPLEX_MAX_DOF: the per-thread arrays of orders 1 and 2 (and triangles of order 3); SIMPLEX_MAX_DOF3: the
 * instances for tetrahedra of order 3 (20 nodes) */
enum { SIMPLEX_THREADS = 128, SIMPLEX_MAX_DOF = 10, SIMPLEX_MAX_DOF3 = 20, SIMPLEX_MAX_Q = 64 };

/* Affine cells: w_q / w_0 of the rule, so that w_q det J = (w_0 det J) w_q / w_0 comes from q-point 0's
 * geometry alone (n = 0: not affine, or a rule of more than SIMPLEX_MAX_Q points: read every q-point's). */
typedef struct {
    int n;
    double ratio[SIMPLEX_MAX_Q];
} SimplexWeights;

/* The records the point function reads as geometry, GS = QF_GEO_DOUBLES(GL, D) doubles per q-point: the
 * cells' geometry (GL 0) or the compact q-point data of a Jacobian (fem/qfunction.h). On affine cells element
 * e's record of q-point 0 is read once and q-point q's follows from it: the geometry's w det J scales by w_q
 * / w_0 and J^{-1} stays (read once into geo[1..], base[0] keeps w_0 det J: base has SIMPLEX_BASE(GL, D)
 * doubles); the compact data (kept once per element, OpBlock.qdata_per_elem) scales whole (base keeps the
 * record). A whole copy of the geometry as base cost the elasticity kernels 17-28 registers, enough to take
 * the split layout's resident blocks from 4 to 3 an SM. */
#define SIMPLEX_BASE(GL, D) ((GL) ? QF_GEO_DOUBLES(GL, D) : 1)
template <int D, int GL>
static __device__ __forceinline__ const double *
simplex_geo_begin(const QfArgs &a, int64_t e, const SimplexWeights &w, double *base, double *geo) {
    constexpr int GS = QF_GEO_DOUBLES(GL, D);
    const double *ge = a.geo + e * (GL && w.n ? 1 : a.nq) * GS;
    if (w.n) {
#pragma unroll
        for (int k = 0; k < GS; k++)
            if (GL || k == 0)
                base[k] = __ldg(ge + k);
            else
                geo[k] = __ldg(ge + k);
    }
    return ge;
}

template <int D, int GL>
static __device__ __forceinline__ void simplex_geo(const double *ge, int q, const SimplexWeights &w,
                                                   const double *base, double *geo) {
    constexpr int GS = QF_GEO_DOUBLES(GL, D);
#pragma unroll
    for (int k = 0; k < GS; k++)
        if (!w.n)
            geo[k] = __ldg(ge + q * GS + k);
        else if (GL || k == 0)
            geo[k] = w.ratio[q] * base[k];
}

/* The one-thread and split kernels' end with deterministic patch assembly (po.part set): once every thread of
 * the block is past its q-point loop, the element sums go into shared memory from its start (the tables and
 * dof map are read no more), slot i epb + le of component c at S[c * epb nd + ...], and patch_put adds them.
 */
template <int NC, int MAXD>
static __device__ __forceinline__ void simplex_patch_out(const PatchView &po, int epb, int le, bool writes,
                                                         int nd, const double (&re)[NC][MAXD], double *smem,
                                                         double *out) {
    __syncthreads();
    const int nslot = epb * nd;
    if (writes)
#pragma unroll
        for (int i = 0; i < MAXD; i++)
            if (i < nd)
#pragma unroll
                for (int c = 0; c < NC; c++) smem[c * nslot + i * epb + le] = re[c][i];
    __syncthreads();
    patch_put<NC>(
        po, [&](int c, int slot) { return smem[c * nslot + slot]; }, out);
}

/* ND, NQ > 0: cells of ND nodes at a rule of NQ points, the tables in constant memory (c_patch_rows, below)
 * and the q-point loop unrolled; the block stages its dof map alone. */
template <int D, int ND, int NQ> struct ConstRows;
/* Whether the one-thread kernel on constant tables runs its q-points as a loop, the tables indexed at run
 * time, rather than unrolled: tetrahedra of order 3, heat's residual. Unrolled, its 14 q-points x 20 nodes
 * are 143 KB of code, whose time moved with the kernel's place in the binary (the same SASS 1,287-1,305 us in
 * one build, 1,485-1,492 in another); as a loop it keeps 162 registers, spills nothing and ran 1,171-1,223
 * us (gather 1,560-1,638) against 1,263-1,273 (1,689-1,699) unrolled in the same call (H100, ~1M elements).
 * The other q-functions spilled 400-680 bytes as a loop (ptxas) and stay unrolled. */
template <PointFn POINT, int ND> __host__ __device__ static constexpr bool simplex_const_rolled() {
    return ND > SIMPLEX_MAX_DOF && POINT == heat_cell_residual;
}
/* Whether the one-thread kernel has deterministic patch assembly's end (simplex_patch_out): not on tetrahedra
 * of order 3 with constant tables, whose kernels held to 168 registers then spilled (ptxas: heat's rolled
 * residual 676 bytes, the rd_cell test function's 28); their blocks keep the element vectors. */
template <int ND, int NQ> __host__ __device__ static constexpr bool simplex_one_patch_out() {
    return !(ND > SIMPLEX_MAX_DOF && NQ > 0);
}
template <int D, int NC, int GL, PointFn POINT, int MAXD = SIMPLEX_MAX_DOF, int MINB = 0, int ND = 0,
          int NQ = 0>
static __global__ void __launch_bounds__(SIMPLEX_THREADS, MINB)
    k_fused_simplex(ElemView v, SimplexWeights w, QfArgs a, const double *in, double *out, double *evec,
                    PatchView po) {
    extern __shared__ double smem[];
    constexpr int GS = QF_GEO_DOUBLES(GL, D);
    /* The Jacobians write no s (physics/qfunctions.h): its terms are not integrated, here and in the
     * split and patch kernels. Measured on an H100 at ~1M elements, J x, atomic: p = 2 tetrahedra, linear
     * elasticity 344 -> 326 us, neo-Hookean 1,537 -> 1,470; p = 3 tetrahedra, linear elasticity 1,538 ->
     * 1,456, constant-k heat 628 -> 602, neo-Hookean 7,350 -> 6,780; triangles within 1-2% either way. */
    constexpr bool HAS_S = qf_point_writes_s<POINT>();
    const int nd = NQ ? ND : v.ndof, nq = v.nq;
    const SimplexStage st = simplex_stage<D, false, NQ == 0>(v, SIMPLEX_THREADS, smem);
    const double *B = st.B, *G = st.G;
    /* with patches every thread reaches the block's barriers (those past the last element write nothing) */
    constexpr bool PO = simplex_one_patch_out<ND, NQ>();
    const bool writes = (int)threadIdx.x < st.nb;
    if (!writes && !(PO && po.part)) return;
    const int le = threadIdx.x;
    const int64_t e = st.e0 + le;
    const fem_idx *my = st.ids + le * nd;
    double re[NC][MAXD];
    simplex_zero(re);
    if (writes) {
        double ue[NC][MAXD];
        simplex_gather(my, nd, in, ue);
        double geo[GS], geo0[SIMPLEX_BASE(GL, D)];
        const double *ge = simplex_geo_begin<D, GL>(a, e, w, geo0, geo);
        auto point = [&](int q, const auto &rows) {
            simplex_geo<D, GL>(ge, q, w, geo0, geo);
            double uq[NC], du[NC * D], s[NC], f[NC * D];
            simplex_interp<D, NC>(nd, rows, ue, uq, du);
            QfArgs la = qf_point_args<D, NC>(a, e, q, uq, du, geo, s, f);
            POINT(&la, 0);
            simplex_integ<D, NC>(nd, rows, s, f, re, HAS_S);
        };
        if constexpr (NQ > 0 && simplex_const_rolled<POINT, ND>()) {
#pragma unroll 1
            for (int q = 0; q < NQ; q++) point(q, ConstRows<D, ND, NQ>{q});
        } else if constexpr (NQ > 0) {
#pragma unroll
            for (int q = 0; q < NQ; q++) point(q, ConstRows<D, ND, NQ>{q});
        } else {
            for (int q = 0; q < nq; q++) point(q, SplitRows<D>{B + q * nd, G + q * nd * D});
        }
    }
    if constexpr (PO)
        if (po.part) return simplex_patch_out<NC, MAXD>(po, SIMPLEX_THREADS, le, writes, nd, re, smem, out);
    simplex_put(my, nd, e, re, out, evec);
}

/* The shape tables of the patch kernels whose rule has a compile-time count of points (NQ > 0), in constant
 * memory as PackedRows records R[q][i] = (G0, G1, G2 | 0, B): with the q-point loop unrolled, every index is
 * a compile-time constant and the arithmetic reads the tables as operands from the constant bank, where the
 * shared-memory tables cost two 128-bit loads a row at every q-point. One table per cell kind, always the
 * canonical table of its order at heat's exact rule (simplex_const_rows). Measured on an H100 (~1M elements,
 * J x, docs/PERFORMANCE.md): p = 2 tetrahedra 9.5-9.8 -> 11.1-11.3 GDOF/s, p = 1 2.8-3.0 -> 3.1; on an H200
 * 10.0-10.1 -> 12.0-12.4, triangles p = 1 10.7 -> 11.3, p = 2 21.3 -> 21.8. Not unrolled (the tables indexed
 * at run time), or with the values in registers instead of read from the slots, the kernel spilled. */
template <int D, int ND, int NQ> __constant__ double c_patch_rows[NQ * ND * 4];
template <int D, int ND, int NQ> struct ConstRows {
    int q;
    __device__ __forceinline__ double row(int i, double *g) const {
#pragma unroll
        for (int r = 0; r < D; r++) g[r] = c_patch_rows<D, ND, NQ>[(q * ND + i) * 4 + r];
        return c_patch_rows<D, ND, NQ>[(q * ND + i) * 4 + D];
    }
};

/* NC > 1 (elasticity): NC lanes per element, lane c holding component c's nodal values and sums, 32 / NC
 * elements per warp (the lanes left over repeat the warp's last element). At each q-point a lane forms its
 * component's value and gradient, takes the element's other components from its neighbour lanes (shuffles),
 * runs the whole point function (every lane of an element computes the same point, so its state is written
 * with the same values) and integrates its own component's row. A third of the one-thread kernel's registers
 * (ptxas: 200 for 3D linear elasticity, 2 blocks per SM) for some repeated point-function work.
 * ND, NQ > 0: order 2 at linear elasticity's exact rule, the tables in constant memory as in the patch kernel
 * (c_patch_rows, the q-point loop unrolled), held to 4 blocks an SM: 3D linear elasticity J x on an H100, ~1M
 * p = 2 tetrahedra, 9.2-9.35 GDOF/s from shared memory (120 registers, 4 blocks) -> 10.1 unrolled without the
 * bound (134 registers, 3 blocks) -> 11.5 with it (128 registers, 16 bytes spilled); R(u) 8.4-8.5 -> 11.4.
 * The other instances get a minimum of 0, which is none: spelled as 1, it took the 3D kernel of the shared
 * tables from 120 to 134 registers. */
#ifndef SPLIT_CONST_MIN_BLOCKS
#define SPLIT_CONST_MIN_BLOCKS 4
#endif
/* Tetrahedra of order 3 (20 nodes a lane) with the tables in constant memory: 3 blocks an SM (168 registers,
 * 8 bytes spilled; 255 registers and 2 blocks unbound; the shared-table kernel has 164 and 3 blocks). */
#ifndef SPLIT3_CONST_MIN_BLOCKS
#define SPLIT3_CONST_MIN_BLOCKS 3
#endif
template <int D, int NC, int GL, PointFn POINT, int ND = 0, int NQ = 0, int MAXD = SIMPLEX_MAX_DOF,
          int MINB = 0>
static __global__ void __launch_bounds__(SIMPLEX_THREADS, NQ ? (ND > SIMPLEX_MAX_DOF ? SPLIT3_CONST_MIN_BLOCKS
                                                                                     : SPLIT_CONST_MIN_BLOCKS)
                                                             : MINB)
    k_fused_simplex_split(ElemView v, SimplexWeights w, QfArgs a, const double *in, double *out, double *evec,
                          PatchView po) {
    extern __shared__ double smem[];
    constexpr int GS = QF_GEO_DOUBLES(GL, D), EPW = 32 / NC, EPB = EPW * (SIMPLEX_THREADS / 32);
    constexpr bool HAS_S = qf_point_writes_s<POINT>(); /* else s = 0: not integrated */
    const int nd = NQ ? ND : v.ndof, nq = v.nq;
    const SimplexStage st = simplex_stage<D, false, NQ == 0>(v, EPB, smem);
    const double *B = st.B, *G = st.G;
    const int lane = threadIdx.x & 31, slot = min(lane / NC, EPW - 1), base = slot * NC;
    const int c = (lane - base) % NC, le = min((int)(threadIdx.x >> 5) * EPW + slot, st.nb - 1);
    const bool writes = lane < EPW * NC && (int)(threadIdx.x >> 5) * EPW + slot < st.nb;
    const int64_t e = st.e0 + le;
    const fem_idx *my = st.ids + le * nd;
    double ue[MAXD], re[MAXD];
#pragma unroll
    for (int i = 0; i < MAXD; i++) {
        ue[i] = i < nd ? __ldg(in + (int64_t)my[i] * NC + c) : 0.0;
        re[i] = 0.0;
    }
    double geo[GS], geo0[SIMPLEX_BASE(GL, D)];
    const double *ge = simplex_geo_begin<D, GL>(a, e, w, geo0, geo);
    auto point = [&](int q, const auto &rows) {
        simplex_geo<D, GL>(ge, q, w, geo0, geo);
        double u1 = 0.0, g1[D];
#pragma unroll
        for (int r = 0; r < D; r++) g1[r] = 0.0;
#pragma unroll
        for (int i = 0; i < MAXD; i++)
            if (i < nd) {
                double gi[D];
                const double bi = rows.row(i, gi);
                u1 += bi * ue[i];
#pragma unroll
                for (int r = 0; r < D; r++) g1[r] += gi[r] * ue[i];
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
        for (int i = 0; i < MAXD; i++)
            if (i < nd) {
                double gi[D];
                const double bi = rows.row(i, gi);
                double t = HAS_S ? bi * sc : 0.0;
#pragma unroll
                for (int r = 0; r < D; r++) t += gi[r] * fc[r];
                re[i] += t;
            }
    };
    if constexpr (NQ > 0) {
#pragma unroll
        for (int q = 0; q < NQ; q++) point(q, ConstRows<D, ND, NQ>{q});
    } else {
        for (int q = 0; q < nq; q++) point(q, SplitRows<D>{B + q * nd, G + q * nd * D});
    }
    if (po.part) {
        /* simplex_patch_out's end, each lane writing its own component's row of the sums */
        __syncthreads();
        const int nslot = EPB * nd;
        if (writes)
#pragma unroll
            for (int i = 0; i < MAXD; i++)
                if (i < nd) smem[c * nslot + i * EPB + le] = re[i];
        __syncthreads();
        patch_put<NC>(
            po, [&](int cc, int slot) { return smem[cc * nslot + slot]; }, out);
        return;
    }
    if (!writes) return;
#pragma unroll
    for (int i = 0; i < MAXD; i++)
        if (i < nd) {
            if (evec)
                evec[(e * NC + c) * nd + i] = re[i];
            else
                atomicAdd(&out[(int64_t)my[i] * NC + c], re[i]);
        }
}

/* ---- patches (fem/element_patch.h): with atomic assembly the Jacobian actions from compact q-point data run
 * on patches of SIMPLEX_THREADS consecutive elements. A block reads its patch's distinct nodes once into
 * shared memory (X), and each thread copies its element's values from there into its slots by the element's
 * patch-local node numbers (slot_node); at each q-point the thread reads its values from the slots, and it
 * writes its sums back to them; each node then sums its slots and goes out once: a plain add where the patch
 * holds all of the node's elements, an atomic add where another patch shares it. Elements are in curve order
 * (mesh_sort_cells), so a patch of 128 p = 2 tetrahedra has about 340 distinct nodes for its 1,280
 * element-node pairs: the plain kernel's 10 scattered loads and 10 global atomics an element fall to
 * about 2.7 loads and stores (Nsight Compute, H100: L2 throughput 60% -> 32%). What limits the kernel is
 * latency, not memory. Measured on an H100 (docs/PERFORMANCE.md), ~1M elements, J x, plain kernel -> patches
 * with the values in registers (78 registers, 6 blocks an SM): p = 2 tetrahedra 185 -> 148 us, p = 1 91 -> 68
 * us, triangles p = 1 64 -> 54 us, p = 2 114 -> 112 us; then this kernel (values read from the slots at each
 * q-point, 10 registers fewer: 62 registers, 8 blocks, no spills; the slots filled from X): p = 2 tetrahedra
 * 9.0-9.2 -> 9.7-10.0 GDOF/s, p = 1 2.5 -> 2.9-3.0, triangles p = 1 9.0 -> 9.4, p = 2 19.4 -> 19.2-19.9.
 * Tried and not kept: staging the patch's index arrays in shared memory (148 -> 194 us), atomics for the
 * private nodes too (no better), patches for the heavier point functions (neo-Hookean J x 3-12% slower), the
 * values in registers capped at 64 registers (40 bytes spilled: 148 -> 159 us), the slots filled straight
 * from global memory by the slot lists (H200, p = 2 tetrahedra 9.2-9.4 against 9.3-9.6 GDOF/s, p = 1 2.8
 * against 2.8-3.0), with the element's geometry asked for first (7.6-7.9), the node sums formed by
 * shared-memory atomics instead of the slot lists (7.4-8.0). FEMTO_GPU_PATCH=0 keeps the plain kernel. */
#ifndef PATCH_MIN_BLOCKS
#define PATCH_MIN_BLOCKS 8
#endif
/* Tetrahedra of order 3: 20 sums a thread (40 registers of the 64 that 8 blocks leave) */
#ifndef PATCH3_MIN_BLOCKS
#define PATCH3_MIN_BLOCKS 4
#endif

/* ND nodes an element, a compile-time constant here (the tables' loops unroll without predicates). NQ > 0: a
 * rule of NQ points, the tables in constant memory (c_patch_rows) and the q-point loop unrolled; NQ = 0: the
 * block's rule, the tables packed as R[q][i] = (G0, G1, G2 | 0, B) in shared memory, two 16-byte loads a row.
 */
template <int D, int NC, int GL, PointFn POINT, int ND, int NQ>
static __global__ void __launch_bounds__(SIMPLEX_THREADS,
                                         ND > SIMPLEX_MAX_DOF ? PATCH3_MIN_BLOCKS : PATCH_MIN_BLOCKS)
    k_fused_simplex_patch(ElemView v, SimplexWeights w, QfArgs a, const double *in, double *out,
                          PatchView pv) {
    extern __shared__ double smem[];
    constexpr int GS = QF_GEO_DOUBLES(GL, D), EPB = SIMPLEX_THREADS, NSLOT = EPB * ND;
    constexpr bool HAS_S = qf_point_writes_s<POINT>(); /* else s = 0: not integrated */
    const int nq = NQ ? NQ : v.nq, maxn = pv.maxn;
    /* two copies of the tables, R for the interpolation and T for the integration: from one, the compiler
     * kept a q-point's 40 table values in registers between the two (167 registers for 10 nodes) */
    double *R = smem, *T = smem + nq * ND * 4, *S = smem + (NQ ? 0 : 2 * nq * ND * 4); /* S[c][slot] */
    double *X = S + NC * NSLOT; /* X[c][patch-local node] */
    for (int k = threadIdx.x; k < (NQ ? 0 : nq * ND); k += blockDim.x) {
#pragma unroll
        for (int r = 0; r < D; r++) R[4 * k + r] = T[4 * k + r] = v.G[k * D + r];
        R[4 * k + D] = T[4 * k + D] = v.B[k];
        if (D == 2) R[4 * k + 3] = T[4 * k + 3] = 0.0;
    }
    const int64_t e0 = (int64_t)blockIdx.x * EPB;
    const int nb = (int)(v.nelem - e0 < EPB ? v.nelem - e0 : EPB);
    const int k0 = __ldg(pv.node_off + blockIdx.x), k1 = __ldg(pv.node_off + blockIdx.x + 1);
    const int le = threadIdx.x;
    const int64_t e = e0 + le;
    /* the element's patch-local node numbers, two to a 32-bit word, asked for before the patch's nodes (its
     * geometry after them: asked for before, it cost 28 bytes of spills for 10 nodes and 6-14%) */
    constexpr int NW = (ND + 1) / 2;
    uint32_t li[NW];
    if (le < nb) {
        const uint16_t *sn = pv.slot_node + (int64_t)blockIdx.x * NSLOT + le * ND;
        if constexpr (ND % 2 == 0) {
#pragma unroll
            for (int k = 0; k < NW; k++) li[k] = __ldg(reinterpret_cast<const uint32_t *>(sn) + k);
        } else {
#pragma unroll
            for (int k = 0; k < NW; k++)
                li[k] = __ldg(sn + 2 * k) | (2 * k + 1 < ND ? (uint32_t)__ldg(sn + 2 * k + 1) << 16 : 0u);
        }
    }
    for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
        const int64_t g = __ldg(pv.nodes + k);
#pragma unroll
        for (int c = 0; c < NC; c++) X[c * maxn + (k - k0)] = __ldg(in + g * NC + c);
    }
    __syncthreads();
    if (le < nb) {
        double geo[GS], geo0[SIMPLEX_BASE(GL, D)];
        const double *ge = simplex_geo_begin<D, GL>(a, e, w, geo0, geo);
#pragma unroll
        for (int i = 0; i < ND; i++) {
            const int n = (li[i / 2] >> (16 * (i % 2))) & 0xffffu;
#pragma unroll
            for (int c = 0; c < NC; c++) S[c * NSLOT + i * EPB + le] = X[c * maxn + n];
        }
        /* the thread's own slots (no other thread reads or writes them until the barrier below); volatile:
         * read at every q-point, not hoisted out of the loop into registers (10 registers fewer for 10 nodes)
         */
        volatile double *my = S + le;
        double re[NC][ND];
#pragma unroll
        for (int i = 0; i < ND; i++)
#pragma unroll
            for (int c = 0; c < NC; c++) re[c][i] = 0.0;
        /* q-point q: rows rr for the interpolation, rt for the integration */
        auto point = [&](int q, const auto &rr, const auto &rt) {
            simplex_geo<D, GL>(ge, q, w, geo0, geo);
            double uq[NC], du[NC * D], s[NC], f[NC * D];
#pragma unroll
            for (int c = 0; c < NC; c++) {
                uq[c] = 0.0;
#pragma unroll
                for (int r = 0; r < D; r++) du[c * D + r] = 0.0;
            }
#pragma unroll
            for (int i = 0; i < ND; i++) {
                double g[D];
                const double b = rr.row(i, g);
#pragma unroll
                for (int c = 0; c < NC; c++) {
                    const double x = my[c * NSLOT + i * EPB];
                    uq[c] += b * x;
#pragma unroll
                    for (int r = 0; r < D; r++) du[c * D + r] += g[r] * x;
                }
            }
            QfArgs la = qf_point_args<D, NC>(a, e, q, uq, du, geo, s, f);
            POINT(&la, 0);
            simplex_integ<D, NC>(ND, rt, s, f, re, HAS_S);
        };
        if constexpr (NQ > 0) {
#pragma unroll
            for (int q = 0; q < NQ; q++) point(q, ConstRows<D, ND, NQ>{q}, ConstRows<D, ND, NQ>{q});
        } else {
#pragma unroll 1 /* (unrolled, the q-point loop of 10-node cells took 167 registers) */
            for (int q = 0; q < nq; q++)
                point(q, PackedRows<D>{R + q * ND * 4}, PackedRows<D>{T + q * ND * 4});
        }
#pragma unroll
        for (int i = 0; i < ND; i++)
#pragma unroll
            for (int c = 0; c < NC; c++) my[c * NSLOT + i * EPB] = re[c][i];
    }
    __syncthreads();
    patch_put<NC>(
        pv, [&](int c, int slot) { return S[c * NSLOT + slot]; }, out);
}

typedef void (*SimplexKernel)(ElemView, SimplexWeights, QfArgs, const double *, double *, double *,
                              PatchView);
typedef void (*SimplexPatchKernel)(ElemView, SimplexWeights, QfArgs, const double *, double *, PatchView);
typedef struct {
    int id, ncomp; /* ncomp 0: one per space dimension */
    SimplexKernel k[2], split[2];
    SimplexKernel split_c[2][2]; /* [dim - 2][order - 2]: the split kernel with the tables in constant memory,
                                    or NULL */
    SimplexKernel k3, split3; /* tetrahedra of order 3: the 20-node instances (split3 NULL for scalar ones) */
    SimplexKernel one_c[2]; /* [dim - 2]: the one-thread kernel of order 3 with the tables in constant memory,
                               or NULL */
    SimplexPatchKernel patch[2][3]; /* [dim - 2][order - 1], for the q-point data kernels (GL > 0) */
    SimplexPatchKernel
        patch_c[2][3]; /* the same with the tables in constant memory (rules of patch_nq points) */
} SimplexEntry;
/* The degree of the constant tables' rule on cells of order 1 to 3: the exact degree of heat and linear
 * elasticity on affine cells, 2p - 2 and at least p (their OpPhysics.exact_degree, physics/heat.c and
 * physics/elasticity.c). */
static constexpr int patch_degree(int order) {
    return order == 1 ? 1 : 2 * order - 2;
}
/* The rule size of the constant-table kernels on cells of dimension dim and order 1 to 3: fem/quadrature.c's
 * cheapest rules of patch_degree (degree 1: 1 point; 2: 3 points on triangles, 4 on tetrahedra; 4: 6 points
 * on triangles, on tetrahedra the 14-point rule of degree 5). simplex_const_rows checks the count. */
static constexpr int patch_nq(int dim, int order) {
    return order == 1 ? 1 : order == 2 ? (dim == 2 ? 3 : 4) : (dim == 2 ? 6 : 14);
}
/* The nodes of a triangle (dim 2) or tetrahedron (3) of order 1 to 3. */
static constexpr int simplex_nodes(int dim, int order) {
    return dim == 2 ? (order + 1) * (order + 2) / 2 : (order + 1) * (order + 2) * (order + 3) / 6;
}
/* The split kernel of a vector q-function; none (and nothing instantiated) for a scalar one. */
template <int D, int NC, int GL, PointFn POINT> static constexpr SimplexKernel simplex_split() {
    if constexpr (NC == 1)
        return nullptr;
    else
        return k_fused_simplex_split<D, NC, GL, POINT>;
}
/* Tetrahedra of order 3 (20 nodes): the one-thread kernel for a scalar q-function, the split kernel (20 nodes
 * a lane) for a vector one; the other of each pair is not instantiated (3 x 20 values and sums a thread would
 * spill). Those that read compact q-point data (GL > 0) are held to 4 blocks an SM: 128 registers, no spills
 * (constant-k heat J x on an H200, ~1M p = 3 tetrahedra: 142 registers and 3 blocks an SM 834 us, held 610
 * us); the others spilled 64-650 bytes when held and ran 2-6% slower (docs/PERFORMANCE.md). */
template <int GL> static constexpr int simplex3_min_blocks() {
    return GL > 0 ? 4 : 0;
}
template <int NC, int GL, PointFn POINT> static constexpr SimplexKernel simplex_one3() {
    if constexpr (NC == 1)
        return k_fused_simplex<3, NC, GL, POINT, SIMPLEX_MAX_DOF3, simplex3_min_blocks<GL>()>;
    else
        return nullptr;
}
template <int NC, int GL, PointFn POINT> static constexpr SimplexKernel simplex_split3() {
    if constexpr (NC == 1)
        return nullptr;
    else
        return k_fused_simplex_split<3, NC, GL, POINT, 0, 0, SIMPLEX_MAX_DOF3, simplex3_min_blocks<GL>()>;
}
/* The split kernel of order 2 or 3 with its tables in constant memory, for the q-functions that run at the
 * rule of those tables (linear elasticity's exact degree 2p - 2; the neo-Hookean model's integrand is not
 * polynomial); NULL (nothing instantiated) for the others. */
template <int D, int NC, int GL, PointFn POINT, int ORDER> static constexpr SimplexKernel simplex_split_c() {
    constexpr int ND = simplex_nodes(D, ORDER);
    if constexpr (NC == 1 || !(POINT == elas_linear_jacobian || POINT == elas_linear_residual))
        return nullptr;
    else
        return k_fused_simplex_split<D, NC, GL, POINT, ND, patch_nq(D, ORDER),
                                     (ND > SIMPLEX_MAX_DOF ? SIMPLEX_MAX_DOF3 : SIMPLEX_MAX_DOF)>;
}
/* The one-thread kernel of order 3 with its tables in constant memory, for scalar q-functions and 2D linear
 * elasticity (tetrahedra's vector physics run split); NULL (nothing instantiated) for the others. On
 * tetrahedra it is held to ONE3_CONST_MIN_BLOCKS blocks an SM (3: 160-168 registers, no spills; unbound,
 * heat's R(u) took 162 registers and ran 1,307-1,316 us against 1,255 held, on an H100 at ~1M p = 3
 * tetrahedra; the shared-table kernel 1,393), and the Jacobian action from compact q-point data (GL > 0)
 * keeps the shared-table kernel: with constant tables it needed 201 registers (2 blocks an SM), 168 with 116
 * bytes spilled, or 128 with 576, and took 753, 611 and (patches) 644 us against the shared tables' 593.
 * Unrolled over 14 q-points these kernels are large (heat R(u): 143 KB of SASS): the same SASS ran
 * 1,287-1,305 us in one build, 1,485-1,492 in another that placed it elsewhere (instruction fetch, most
 * likely). */
#ifndef ONE3_CONST_MIN_BLOCKS
#define ONE3_CONST_MIN_BLOCKS 3
#endif
template <int D, int NC, int GL, PointFn POINT> static constexpr SimplexKernel simplex_one_c() {
    constexpr int ND = simplex_nodes(D, 3);
    if constexpr (!(NC == 1 ||
                    (D == 2 && (POINT == elas_linear_jacobian || POINT == elas_linear_residual))) ||
                  (D == 3 && GL > 0))
        return nullptr;
    else
        return k_fused_simplex<D, NC, GL, POINT, ND, (D == 3 ? ONE3_CONST_MIN_BLOCKS : 0), ND,
                               patch_nq(D, 3)>;
}
/* The patch kernels of a q-function on cells of ND nodes: only for those that read compact q-point data
 * (GL > 0: light, memory- and latency-bound kernels, where the patches gain 7-13%; the heavier point
 * functions measured 3-12% slower on patches, the residuals both ways), and not on tetrahedra of order 3
 * (constant-k heat J x on an H100 at ~1M elements: 644-648 us on patches with constant tables, 128 registers,
 * against 593-621 for the one-thread kernel; triangles of order 3 gain 2%: 179 against 183 us). */
template <int D, int NC, int GL, PointFn POINT, int ND, int NQ = 0>
static constexpr SimplexPatchKernel simplex_patch() {
    if constexpr (GL == 0 || ND > SIMPLEX_MAX_DOF)
        return nullptr;
    else
        return k_fused_simplex_patch<D, NC, GL, POINT, ND, NQ>;
}
#define SIMPLEX_NC_(nc, d) ((nc) ? (nc) : (d))
#define SIMPLEX_PATCH_(D, nc, gl, fn, ND, order, c)                                                          \
    simplex_patch<D, SIMPLEX_NC_(nc, D), gl, fn, ND, (c) ? patch_nq(D, order) : 0>()
#define SIMPLEX_PATCHES_(nc, gl, fn, c)                                                                      \
    {                                                                                                        \
        {SIMPLEX_PATCH_(2, nc, gl, fn, 3, 1, c), SIMPLEX_PATCH_(2, nc, gl, fn, 6, 2, c),                     \
         SIMPLEX_PATCH_(2, nc, gl, fn, 10, 3, c)},                                                           \
        {                                                                                                    \
            SIMPLEX_PATCH_(3, nc, gl, fn, 4, 1, c), SIMPLEX_PATCH_(3, nc, gl, fn, 10, 2, c),                 \
                SIMPLEX_PATCH_(3, nc, gl, fn, 20, 3, c)                                                      \
        }                                                                                                    \
    }
#define SIMPLEX_ENTRY_(fn, nc, gl, out)                                                                      \
    {QF_##fn,                                                                                                \
     nc,                                                                                                     \
     {k_fused_simplex<2, SIMPLEX_NC_(nc, 2), gl, fn>, k_fused_simplex<3, SIMPLEX_NC_(nc, 3), gl, fn>},       \
     {simplex_split<2, SIMPLEX_NC_(nc, 2), gl, fn>(), simplex_split<3, SIMPLEX_NC_(nc, 3), gl, fn>()},       \
     {{simplex_split_c<2, SIMPLEX_NC_(nc, 2), gl, fn, 2>(),                                                  \
       simplex_split_c<2, SIMPLEX_NC_(nc, 2), gl, fn, 3>()},                                                 \
      {simplex_split_c<3, SIMPLEX_NC_(nc, 3), gl, fn, 2>(),                                                  \
       simplex_split_c<3, SIMPLEX_NC_(nc, 3), gl, fn, 3>()}},                                                \
     simplex_one3<SIMPLEX_NC_(nc, 3), gl, fn>(),                                                             \
     simplex_split3<SIMPLEX_NC_(nc, 3), gl, fn>(),                                                           \
     {simplex_one_c<2, SIMPLEX_NC_(nc, 2), gl, fn>(), simplex_one_c<3, SIMPLEX_NC_(nc, 3), gl, fn>()},       \
     SIMPLEX_PATCHES_(nc, gl, fn, 0),                                                                        \
     SIMPLEX_PATCHES_(nc, gl, fn, 1)},
static const SimplexEntry simplex_kernels[] = {FEMTO_CELL_QFUNCTIONS(SIMPLEX_ENTRY_)};
#undef SIMPLEX_ENTRY_
#undef SIMPLEX_PATCHES_
#undef SIMPLEX_PATCH_

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

/* The order of a triangle or tetrahedron of nd nodes (1 to 3), else 0. */
static int simplex_order(int dim, int nd) {
    for (int order = 1; order <= 3; order++)
        if (nd == simplex_nodes(dim, order)) return order;
    return 0;
}

/* The kernel for q-function id on cells of dimension dim with nc components, or NULL; *split: the
 * component-split kernel, taken where it at least doubles the resident blocks of the one-thread kernel
 * (measured on an H100, p = 2 tetrahedra: linear elasticity 196 -> 119 registers, 2 -> 4 blocks per SM, J x
 * 611 -> 495 us; neo-Hookean 245 -> 174 registers, 2 blocks either way, and three lanes repeating its heavy
 * point function made J x 1669 -> 3515 us). FEMTO_GPU_SIMPLEX_SPLIT=0 or 1 forces the choice. *patch (where
 * asked for): the patch kernel of cells of nd nodes. const_rows: the block's tables are those in constant
 * memory (simplex_const_rows), so the constant-table kernels serve it where they exist; *took_const (where
 * asked for) says which of those were taken: CONST_KERNEL the kernel returned, CONST_PATCH *patch. */
enum { CONST_KERNEL = 1, CONST_PATCH = 2 };
static SimplexKernel simplex_kernel(GpuState *g, int id, int dim, int nc, int *split,
                                    SimplexPatchKernel *patch = NULL, int nd = 0, bool const_rows = false,
                                    int *took_const = NULL) {
    constexpr size_t n = sizeof simplex_kernels / sizeof simplex_kernels[0];
    static_assert(n <= sizeof g->simplex_layout / sizeof g->simplex_layout[0],
                  "GpuState.simplex_layout is too short");
    for (size_t k = 0; k < n; k++) {
        const SimplexEntry *s = &simplex_kernels[k];
        if (s->id != id || SIMPLEX_NC_(s->ncomp, dim) != nc) continue;
        /* tetrahedra of order 3: simplex_one3 for a scalar q-function, simplex_split3 for a vector one */
        const bool t3 = nd > SIMPLEX_MAX_DOF;
        SimplexKernel one = t3 ? s->k3 : s->k[dim - 2], sp = t3 ? s->split3 : s->split[dim - 2];
        signed char *layout = &g->simplex_layout[k][dim - 2];
        if (t3)
            *split = sp != NULL;
        else if (!*layout) {
            const char *env = getenv("FEMTO_GPU_SIMPLEX_SPLIT");
            int use = 0;
            if (sp && env && strcmp(env, "1") == 0)
                use = 1;
            else if (sp && !(env && strcmp(env, "0") == 0))
                use = simplex_blocks_per_sm(g, sp) >= 2 * simplex_blocks_per_sm(g, one);
            *layout = (signed char)(use ? 2 : 1);
        }
        if (!t3) *split = *layout == 2;
        const int order = simplex_order(dim, nd);
        const bool ct = const_rows && order;
        int took = 0;
        if (patch) {
            *patch = *split || !order ? NULL : s->patch[dim - 2][order - 1];
            if (*patch && ct) *patch = s->patch_c[dim - 2][order - 1], took |= CONST_PATCH;
        }
        SimplexKernel kernel = *split ? sp : one;
        if (*split && ct && order >= 2 && s->split_c[dim - 2][order - 2])
            kernel = s->split_c[dim - 2][order - 2], took |= CONST_KERNEL;
        if (!*split && ct && order == 3 && s->one_c[dim - 2])
            kernel = s->one_c[dim - 2], took |= CONST_KERNEL;
        if (took_const) *took_const = took;
        return kernel;
    }
    return NULL;
}

/* The one-thread and split kernels' shared memory: the tables (unless in constant memory) and the dof map. */
static size_t simplex_smem(const ElemView *v, bool const_rows = false) {
    return sizeof(double) * (const_rows ? 0 : (size_t)v->nq * v->ndof * (1 + v->dim)) +
           sizeof(fem_idx) * SIMPLEX_THREADS * v->ndof;
}

/* The weight ratios of an affine block's rule (n = 0 for curved cells, or a rule too long for the table). */
static SimplexWeights simplex_weights(const Operator *op, const OpBlock *b) {
    SimplexWeights w;
    memset(&w, 0, sizeof w);
    const Quadrature *q = &b->basis.tables.quad;
    (void)op;
    if (b->gorder != 1 || q->npts > SIMPLEX_MAX_Q) return w;
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
    if ((s != SHAPE_TRI && s != SHAPE_TET) || v->dim != (s == SHAPE_TET ? 3 : 2) ||
        v->ndof > (s == SHAPE_TET ? SIMPLEX_MAX_DOF3 : SIMPLEX_MAX_DOF))
        return 0;
    int split;
    if (b->nelem == 0 || !simplex_kernel(gpu_state(op->dev), q->id, v->dim, v->ncomp, &split, NULL, v->ndof))
        return 0;
    return simplex_smem(v) <= gpu_state(op->dev)->shared_optin;
}

/* The patch arrays a block uploads: node_off, npriv, inc_beg, nodes, inc_slot, slot_node, and for
 * deterministic assembly part_off, sh_node, sh_beg, sh_part. */
enum { PATCH_ARRAYS = 10 };
/* A cell block's patches of one size: [0] SIMPLEX_THREADS elements (the patch and one-thread kernels), [1]
 * the split kernel's block (simplex_epb). */
typedef struct {
    ElementPatches host; /* sizes only: the arrays are freed after the upload */
    PatchView view;
    const fem_idx *sh_node; /* deterministic assembly's second pass (device) */
    const int32_t *sh_beg, *sh_part;
    void *mem[PATCH_ARRAYS];
} PatchSet;
typedef struct {
    PatchSet set[MESH_MAX_BLOCKS][2];
    double
        *part; /* the partials of deterministic assembly, shared by the blocks (launched one after another) */
} SimplexPatches;

static void simplex_patches_destroy(Operator *op) {
    SimplexPatches *sp = (SimplexPatches *)op->impl;
    if (!sp) return;
    for (int b = 0; b < MESH_MAX_BLOCKS; b++)
        for (int kind = 0; kind < 2; kind++)
            for (int k = 0; k < PATCH_ARRAYS; k++) device_free(op->dev, sp->set[b][kind].mem[k]);
    device_free(op->dev, sp->part);
    free(sp);
    op->impl = NULL;
}

/* The tables (unless in constant memory), the slots and the patch's nodes (maxn: the most of one patch). */
static size_t simplex_patch_smem(const ElemView *v, int maxn, bool const_rows = false) {
    return sizeof(double) * ((const_rows ? 0 : (size_t)v->nq * v->ndof * 8) +
                             ((size_t)SIMPLEX_THREADS * v->ndof + maxn) * v->ncomp);
}

/* Block bi's patches of epb elements, built on the host (with the partials' numbering where `partials`) and
 * uploaded (slot_node only where `slot_node`: the patch kernel reads it); *nparts: the partials. */
static int simplex_patch_block(Operator *op, int bi, int epb, int partials, int slot_node, PatchSet *ps,
                               int64_t *nparts) {
    const OpBlock *b = &op->cells[bi];
    ElementPatches *h = &ps->host;
    const int64_t nn = op->space->nnodes;
    FEM_TRY(element_patches(op->space->cells[bi].dofs, b->nelem, b->view.ndof, nn, epb, h));
    if (!h->npatch) return FEM_OK;
    int status = partials ? element_patches_partials(h, nn) : FEM_OK;
    const int64_t np = h->npatch, npart = partials && !status ? h->part_off[np] : 0;
    const void *src[PATCH_ARRAYS] = {h->node_off,  h->npriv,    h->inc_beg, h->nodes,  h->inc_slot,
                                     h->slot_node, h->part_off, h->sh_node, h->sh_beg, h->sh_part};
    const size_t bytes[PATCH_ARRAYS] = {sizeof(int32_t) * (size_t)(np + 1),
                                        sizeof(int32_t) * (size_t)np,
                                        sizeof(int32_t) * (size_t)(h->ntotal + 1),
                                        sizeof(fem_idx) * (size_t)h->ntotal,
                                        sizeof(uint16_t) * (size_t)(b->nelem * b->view.ndof),
                                        slot_node ? sizeof(uint16_t) * (size_t)(np * epb * b->view.ndof) : 0,
                                        sizeof(int32_t) * (size_t)(np + 1),
                                        sizeof(fem_idx) * (size_t)h->nshared,
                                        sizeof(int32_t) * (size_t)(h->nshared + 1),
                                        sizeof(int32_t) * (size_t)npart};
    for (int k = 0; k < PATCH_ARRAYS && !status; k++)
        if (src[k] && bytes[k]) status = device_alloc_copy(op->dev, &ps->mem[k], src[k], bytes[k]);
    ElementPatches sizes = *h;
    element_patches_destroy(h);
    if (status) return status;
    sizes.node_off = sizes.npriv = sizes.inc_beg = sizes.part_off = sizes.sh_beg = sizes.sh_part = NULL;
    sizes.nodes = sizes.sh_node = NULL;
    sizes.inc_slot = sizes.slot_node = NULL;
    ps->host = sizes;
    void *const *m = ps->mem;
    ps->view = PatchView{(const int32_t *)m[0],
                         (const int32_t *)m[1],
                         (const int32_t *)m[2],
                         (const fem_idx *)m[3],
                         (const uint16_t *)m[4],
                         (const uint16_t *)m[5],
                         sizes.maxn,
                         (const int32_t *)m[6],
                         NULL};
    ps->sh_node = (const fem_idx *)m[7], ps->sh_beg = (const int32_t *)m[8],
    ps->sh_part = (const int32_t *)m[9];
    *nparts = npart;
    return FEM_OK;
}

/* Shape tables t packed as the patch kernels read them: rows[(q nd + i) 4 + r] = G[q][i][r], [.. + D] =
 * B[q][i]. */
static void patch_pack(const ElementTables *t, int D, double *rows) {
    for (int k = 0; k < t->nq * t->ndof; k++) {
        for (int r = 0; r < 4; r++) rows[4 * k + r] = 0.0;
        for (int r = 0; r < D; r++) rows[4 * k + r] = t->G[k * D + r];
        rows[4 * k + D] = t->B[k];
    }
}

/* Whether block b's shape tables are those of the constant-table kernels of its cells (patch, split and
 * one-thread of order 3): their constant memory only ever holds the canonical table of the cells' order at
 * the exact rule of heat and linear elasticity (patch_degree: 1, 2 or 4; patch_nq points), built and uploaded
 * at the first use on this Device. Every upload writes the same bytes, so Devices sharing one CUDA context
 * cannot disagree about what it holds; a block at another rule of the same size (none exists in
 * fem/quadrature.c's tables) would take the shared-memory kernel. A failure (host memory, the upload) leaves
 * the shared-memory kernel too. */
static bool simplex_const_rows(GpuState *g, const OpBlock *b) {
    const ElementTables *t = &b->basis.tables;
    const int D = b->view.dim, nd = b->view.ndof, nq = b->view.nq;
    const int order = simplex_order(D, nd);
    if (!g->const_tables || (D != 2 && D != 3) || !order || nq != patch_nq(D, order) || t->ndof != nd ||
        t->nq != nq)
        return false;
    const int n = nq * nd * 4;
    double *canon = g->patch_rows[D - 2][order - 1];
    int *held = &g->patch_rows_n[D - 2][order - 1];
    if (!*held) {
        ElementTables c;
        if (tables_create(D == 2 ? SHAPE_TRI : SHAPE_TET, order, patch_degree(order), &c))
            return fem_clear_error(), false;
        const bool fits = c.nq == nq && c.ndof == nd && n <= GPU_PATCH_ROWS;
        if (fits) patch_pack(&c, D, canon);
        tables_destroy(&c);
        if (!fits) return false;
        const size_t bytes = sizeof(double) * (size_t)n;
        cudaError_t e;
        if (D == 2 && order == 1)
            e = cudaMemcpyToSymbol(c_patch_rows<2, 3, patch_nq(2, 1)>, canon, bytes);
        else if (D == 2 && order == 2)
            e = cudaMemcpyToSymbol(c_patch_rows<2, 6, patch_nq(2, 2)>, canon, bytes);
        else if (D == 2)
            e = cudaMemcpyToSymbol(c_patch_rows<2, 10, patch_nq(2, 3)>, canon, bytes);
        else if (order == 1)
            e = cudaMemcpyToSymbol(c_patch_rows<3, 4, patch_nq(3, 1)>, canon, bytes);
        else if (order == 2)
            e = cudaMemcpyToSymbol(c_patch_rows<3, 10, patch_nq(3, 2)>, canon, bytes);
        else
            e = cudaMemcpyToSymbol(c_patch_rows<3, 20, patch_nq(3, 3)>, canon, bytes);
        if (e != cudaSuccess) return cudaGetLastError(), false;
        *held = n;
    }
    double rows[GPU_PATCH_ROWS];
    patch_pack(t, D, rows);
    return *held == n && memcmp(rows, canon, sizeof(double) * (size_t)n) == 0;
}

/* The kernel of a block's residual or Jacobian action: the q-function's, or (*qd set) the apply function of
 * the Jacobian's compact q-point data where op_block_qdata allows it and its records are laid out as the
 * kernel reads them (once per element exactly where the weights say the cells are affine); *patch, where
 * asked for, the patch kernel (with the constant-memory tables where the block's are theirs). */
static SimplexKernel simplex_pick(const Operator *op, const OpBlock *b, int residual, const SimplexWeights &w,
                                  const QfQdata **qd, int *split, SimplexPatchKernel *patch = NULL,
                                  int *const_rows = NULL) {
    *qd = op_block_qdata(op, b, residual);
    if (*qd && b->qdata_per_elem != (w.n != 0)) *qd = NULL;
    const int id = *qd ? (*qd)->apply : op_qfunction(op, 0, residual)->id;
    GpuState *g = gpu_state(op->dev);
    return simplex_kernel(g, id, b->view.dim, b->view.ncomp, split, patch, b->view.ndof,
                          simplex_const_rows(g, b), const_rows);
}

/* The one-thread and split kernels' shared memory with deterministic patch assembly: their staging, or the
 * block's element sums where those take more (simplex_patch_out). */
static size_t simplex_out_smem(const ElemView *v, int epb, bool const_rows) {
    const size_t sums = sizeof(double) * (size_t)epb * v->ndof * v->ncomp, st = simplex_smem(v, const_rows);
    return sums > st ? sums : st;
}

/* Whether the one-thread or split kernel of a block (ck: simplex_kernel's took_const) has deterministic patch
 * assembly's end: simplex_one_patch_out on the host. */
static bool simplex_out_ok(const OpBlock *b, int split, int ck) {
    return split || !(b->view.ndof > SIMPLEX_MAX_DOF && (ck & CONST_KERNEL));
}

/* Element patches where kernels run on them: with atomic assembly the patch kernels' (the Jacobian actions
 * from compact q-point data); with gather assembly, deterministic patch assembly for every block of the
 * register kernels (the patch kernel's where it serves, else the one-thread or split kernel's), each block's
 * patches of the size its kernels' blocks take. FEMTO_GPU_PATCH=0: none (gather assembly then writes the
 * element vectors for k_gather_assemble). */
extern "C" int gpu_fused_simplex_patch_setup(Operator *op) {
    const char *env = getenv("FEMTO_GPU_PATCH");
    if ((env && strcmp(env, "0") == 0) || op->impl) return FEM_OK;
    const int gather = op->dev->assembly == ASSEMBLE_GATHER;
    const size_t optin = gpu_state(op->dev)->shared_optin;
    SimplexPatches *sp = (SimplexPatches *)calloc(1, sizeof *sp);
    if (!sp) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for element patches");
    op->impl = sp;
    op->ops.destroy = simplex_patches_destroy;
    int64_t most = 0;
    for (int bi = 0; bi < op->ncells; bi++) {
        const OpBlock *b = &op->cells[bi];
        const int tepb = gather ? gpu_fused_tensor_epb(op, b) : 0;
        if (tepb > 0) { /* the sum-factorised kernel's blocks: deterministic patch assembly */
            int64_t n = 0;
            FEM_TRY(simplex_patch_block(op, bi, tepb, 1, 0, &sp->set[bi][0], &n));
            if (n * b->view.ncomp > most) most = n * b->view.ncomp;
            continue;
        }
        const SimplexWeights w = simplex_weights(op, b);
        const QfQdata *qd;
        int want[2] = {0, 0}, patch_kernel = 0;
        for (int residual = 0; residual < 2; residual++) {
            if (!gpu_fused_simplex_fits(op, b, residual)) continue;
            SimplexPatchKernel pk = NULL;
            int split = 0, ck = 0;
            simplex_pick(op, b, residual, w, &qd, &split, &pk, &ck);
            const bool ct = (ck & (pk ? CONST_PATCH : CONST_KERNEL)) != 0;
            if (pk) {
                const int fits = simplex_patch_smem(&b->view, SIMPLEX_THREADS * b->view.ndof, ct) <= optin;
                want[0] |= fits, patch_kernel |= fits;
            } else if (gather && simplex_out_ok(b, split, ck))
                want[split] |= simplex_out_smem(&b->view, simplex_epb(b->view.ncomp, split), ct) <= optin;
        }
        for (int kind = 0; kind < 2; kind++) {
            int64_t n = 0;
            if (want[kind])
                FEM_TRY(simplex_patch_block(op, bi, simplex_epb(b->view.ncomp, kind), gather,
                                            kind == 0 && patch_kernel, &sp->set[bi][kind], &n));
            if (n * b->view.ncomp > most) most = n * b->view.ncomp;
        }
    }
    /* (one patch has no partials, yet its view's part says that assembly is deterministic) */
    if (gather) FEM_TRY(device_alloc(op->dev, (void **)&sp->part, sizeof(double) * (size_t)(most + 1)));
    for (int bi = 0; bi < op->ncells; bi++)
        for (int kind = 0; kind < 2; kind++) sp->set[bi][kind].view.part = gather ? sp->part : NULL;
    return FEM_OK;
}

/* Block b's patches for its launch (the patch kernel pk, else the one-thread or split kernel: deterministic
 * assembly), or NULL where it runs without. */
static const PatchSet *simplex_patches(const Operator *op, const OpBlock *b, SimplexPatchKernel pk, int split,
                                       int ck) {
    const SimplexPatches *sp = (const SimplexPatches *)op->impl;
    const int bi = (int)(b - op->cells);
    if (!sp || (!pk && !simplex_out_ok(b, split, ck))) return NULL;
    const PatchSet *ps = &sp->set[bi][pk ? 0 : split];
    if (!ps->host.npatch || (!pk && !ps->view.part)) return NULL;
    return ps;
}

extern "C" const PatchView *gpu_op_patches(const Operator *op, int bi, int kind, int epb) {
    const SimplexPatches *sp = (const SimplexPatches *)op->impl;
    if (!sp || bi < 0 || bi >= op->ncells) return NULL;
    const PatchSet *ps = &sp->set[bi][kind];
    return ps->host.npatch && ps->host.epb == epb && ps->view.part ? &ps->view : NULL;
}

extern "C" int gpu_patch_partials(const Operator *op, int bi, int kind, double *out) {
    const SimplexPatches *sp = (const SimplexPatches *)op->impl;
    const PatchSet *ps = &sp->set[bi][kind];
    const int64_t nsh = ps->host.nshared;
    if (nsh <= 0) return FEM_OK;
    const unsigned blocks = gpu_vec_blocks(gpu_state(op->dev), nsh);
    const int nc = op->cells[bi].view.ncomp;
    if (nc < 1 || nc > 3)
        return fem_fail(FEM_ERR_INTERNAL, "deterministic patch assembly of %d components", nc);
    auto k = nc == 1 ? k_patch_partials<1> : nc == 2 ? k_patch_partials<2> : k_patch_partials<3>;
    k<<<blocks, GPU_VEC_THREADS>>>(nsh, ps->sh_node, ps->sh_beg, ps->sh_part, ps->view.part, out);
    GPU_LAUNCHED(k_patch_partials);
    return FEM_OK;
}

/* What a block's residual or Jacobian action launches: the kernel (the patch kernel pk on the patches pv
 * where they run, else k: fn), whether it reads constant tables, and its shared memory, to which its limit is
 * raised. */
typedef struct {
    SimplexWeights w;
    const QfQdata *qd;
    int split;
    SimplexKernel k;
    SimplexPatchKernel pk; /* the patch kernel where it runs, else NULL */
    const PatchSet *ps;    /* its patches, or the one-thread or split kernel's of deterministic assembly */
    const void *fn;
    bool const_rows;
    size_t smem;
} SimplexLaunch;

static int simplex_launch(const Operator *op, const OpBlock *b, int residual, SimplexLaunch *L) {
    int ck;
    L->w = simplex_weights(op, b);
    L->k = simplex_pick(op, b, residual, L->w, &L->qd, &L->split, &L->pk, &ck);
    L->ps = simplex_patches(op, b, L->pk, L->split, ck);
    if (!L->ps) L->pk = NULL;
    L->fn = L->pk ? (const void *)L->pk : (const void *)L->k;
    L->const_rows = (ck & (L->pk ? CONST_PATCH : CONST_KERNEL)) != 0;
    L->smem = L->pk   ? simplex_patch_smem(&b->view, L->ps->host.maxn, L->const_rows)
              : L->ps ? simplex_out_smem(&b->view, simplex_epb(b->view.ncomp, L->split), L->const_rows)
                      : simplex_smem(&b->view, L->const_rows);
    if (L->smem > 48 * 1024)
        GPU_CHECK(cudaFuncSetAttribute(L->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L->smem));
    return FEM_OK;
}

extern "C" int gpu_fused_simplex_block(Operator *op, OpBlock *b, int residual, const double *in,
                                       double *out) {
    Device *d = op->dev;
    GpuState *g = gpu_state(d);
    const ElemView *v = &b->view;
    const QFunction *q = op_qfunction(op, 0, residual);
    SimplexLaunch L;
    FEM_TRY(simplex_launch(op, b, residual, &L));
    if (residual) FEM_TRY(op_block_aux(op, b));
    QfArgs a = L.qd ? op_block_qdata_args(op, b) : op_block_args(op, b, 0, residual);
    const bool gather = d->assembly == ASSEMBLE_GATHER;
    if (gather && !L.ps) FEM_TRY(op_block_evec(op, b));
    double *evec = gather && !L.ps ? b->evec : NULL;
    const int epb = simplex_epb(v->ncomp, L.split);
    const unsigned blocks = (unsigned)((b->nelem + epb - 1) / epb);
    PatchView none;
    memset(&none, 0, sizeof none);
    if (L.pk)
        L.pk<<<blocks, SIMPLEX_THREADS, L.smem>>>(*v, L.w, a, in, out, L.ps->view);
    else
        L.k<<<blocks, SIMPLEX_THREADS, L.smem>>>(*v, L.w, a, in, out, evec, L.ps ? L.ps->view : none);
    GPU_LAUNCHED("fused simplex operator");
    if (L.ps && gather) FEM_TRY(gpu_patch_partials(op, (int)(b - op->cells), L.pk ? 0 : L.split, out));
    char layout[48] = "1 elem/thread";
    if (L.split) snprintf(layout, sizeof layout, "%d lanes/elem, %d elems/warp", v->ncomp, 32 / v->ncomp);
    snprintf(g->last_launch, sizeof g->last_launch,
             "fused-simplex %s%s%s%s: %s x %d threads, %.1f kB shared, geometry %s, %s", q->name,
             L.qd ? " (q-point data)" : "", L.pk ? " (patches)" : "",
             L.const_rows ? " (constant tables)" : "", layout, SIMPLEX_THREADS, (double)L.smem / 1024.0,
             L.w.n ? "affine (q-point 0)" : "per q-point",
             !gather ? "atomic assembly"
             : L.ps  ? "gather assembly on patches (deterministic)"
                     : "gather assembly");
    return evec ? gpu_assemble(d, v, evec, out) : FEM_OK;
}

extern "C" int gpu_fused_simplex_occupancy(const Operator *op, const OpBlock *b, int residual, int *regs,
                                           int *blocks_per_sm) {
    SimplexLaunch L;
    FEM_TRY(simplex_launch(op, b, residual, &L));
    cudaFuncAttributes at;
    GPU_CHECK(cudaFuncGetAttributes(&at, L.fn));
    *regs = at.numRegs;
    GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, L.fn, SIMPLEX_THREADS, L.smem));
    return FEM_OK;
}
