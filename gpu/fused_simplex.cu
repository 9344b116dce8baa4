/* The register kernel: the fused residual and Jacobian action of a block of triangles or tetrahedra of up to
 * SIMPLEX_MAX_DOF nodes (orders 1 and 2), one thread per element, everything an element needs in registers.
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
#include "gpu/internal.cuh"
#include "gpu/qfunction.cuh"
#include "physics/qfunctions.h"

#include <stdio.h>
#include <string.h>

enum { SIMPLEX_THREADS = 128, SIMPLEX_MAX_DOF = 10 };

typedef void (*PointFn)(const QfArgs *, int64_t);

/* The element's values ue[c][i] at q-point q: value uq[c] and reference gradient du[c][r]. */
template <int D, int NC>
static __device__ __forceinline__ void simplex_interp(int nd, const double *Bq, const double *Gq,
                                                      const double (&ue)[NC][SIMPLEX_MAX_DOF], double *uq,
                                                      double *du) {
#pragma unroll
    for (int c = 0; c < NC; c++) {
        uq[c] = 0.0;
#pragma unroll
        for (int r = 0; r < D; r++) du[c * D + r] = 0.0;
    }
#pragma unroll
    for (int i = 0; i < SIMPLEX_MAX_DOF; i++) {
        if (i < nd) {
            const double b = Bq[i];
            double g[D];
#pragma unroll
            for (int r = 0; r < D; r++) g[r] = Gq[i * D + r];
#pragma unroll
            for (int c = 0; c < NC; c++) {
                uq[c] += b * ue[c][i];
#pragma unroll
                for (int r = 0; r < D; r++) du[c * D + r] += g[r] * ue[c][i];
            }
        }
    }
}

/* re[c][i] += B[q][i] s[c] + G[q][i][r] f[c][r] */
template <int D, int NC>
static __device__ __forceinline__ void simplex_integ(int nd, const double *Bq, const double *Gq, const double *s,
                                                     const double *f, double (&re)[NC][SIMPLEX_MAX_DOF]) {
#pragma unroll
    for (int i = 0; i < SIMPLEX_MAX_DOF; i++) {
        if (i < nd) {
            const double b = Bq[i];
            double g[D];
#pragma unroll
            for (int r = 0; r < D; r++) g[r] = Gq[i * D + r];
#pragma unroll
            for (int c = 0; c < NC; c++) {
                double v = b * s[c];
#pragma unroll
                for (int r = 0; r < D; r++) v += g[r] * f[c * D + r];
                re[c][i] += v;
            }
        }
    }
}

template <int D, int NC, PointFn POINT>
static __global__ void __launch_bounds__(SIMPLEX_THREADS)
    k_fused_simplex(ElemView v, int affine, QfArgs a, const double *in, double *out, double *evec) {
    extern __shared__ double smem[];
    constexpr int GS = GEO_STRIDE(D);
    const int nd = v.ndof, nq = v.nq;
    double *B = smem, *G = smem + nq * nd;
    fem_idx *ids = (fem_idx *)(G + nq * nd * D);
    for (int k = threadIdx.x; k < nq * nd; k += blockDim.x) B[k] = v.B[k];
    for (int k = threadIdx.x; k < nq * nd * D; k += blockDim.x) G[k] = v.G[k];
    /* the block's dof map, read coalesced; each thread then takes its element's row */
    const int64_t e0 = (int64_t)blockIdx.x * SIMPLEX_THREADS;
    const int nb = (int)(v.nelem - e0 < SIMPLEX_THREADS ? v.nelem - e0 : SIMPLEX_THREADS);
    for (int k = threadIdx.x; k < nb * nd; k += blockDim.x) ids[k] = v.dofs[e0 * nd + k];
    __syncthreads();
    if ((int)threadIdx.x >= nb) return;
    const int64_t e = e0 + threadIdx.x;
    const fem_idx *my = ids + threadIdx.x * nd;
    double ue[NC][SIMPLEX_MAX_DOF], re[NC][SIMPLEX_MAX_DOF];
#pragma unroll
    for (int i = 0; i < SIMPLEX_MAX_DOF; i++) {
        const int64_t n = i < nd ? (int64_t)my[i] : 0;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            ue[c][i] = i < nd ? __ldg(in + n * NC + c) : 0.0;
            re[c][i] = 0.0;
        }
    }
    const double *ge = a.geo + e * nq * GS;
    double geo[GS];
    if (affine) {
#pragma unroll
        for (int k = 1; k < GS; k++) geo[k] = __ldg(ge + k);
    }
    for (int q = 0; q < nq; q++) {
        if (affine) {
            geo[0] = __ldg(ge + q * GS);
        } else {
#pragma unroll
            for (int k = 0; k < GS; k++) geo[k] = __ldg(ge + q * GS + k);
        }
        double uq[NC], du[NC * D], s[NC], f[NC * D];
        simplex_interp<D, NC>(nd, B + q * nd, G + q * nd * D, ue, uq, du);
        QfArgs la = qf_point_args<D, NC>(a, e, q, uq, du, geo, s, f);
        POINT(&la, 0);
        simplex_integ<D, NC>(nd, B + q * nd, G + q * nd * D, s, f, re);
    }
#pragma unroll
    for (int i = 0; i < SIMPLEX_MAX_DOF; i++) {
        if (i < nd) {
#pragma unroll
            for (int c = 0; c < NC; c++) {
                if (evec)
                    evec[(e * NC + c) * nd + i] = re[c][i];
                else
                    atomicAdd(&out[(int64_t)my[i] * NC + c], re[c][i]);
            }
        }
    }
}

typedef void (*SimplexKernel)(ElemView, int, QfArgs, const double *, double *, double *);
typedef struct {
    int id, ncomp; /* ncomp 0: one per space dimension */
    SimplexKernel k[2];
} SimplexEntry;
#define SIMPLEX_NC_(nc, d) ((nc) ? (nc) : (d))
#define SIMPLEX_ENTRY_(fn, nc)                                                                               \
    {QF_##fn, nc, {k_fused_simplex<2, SIMPLEX_NC_(nc, 2), fn>, k_fused_simplex<3, SIMPLEX_NC_(nc, 3), fn>}},
static const SimplexEntry simplex_kernels[] = {FEMTO_CELL_QFUNCTIONS(SIMPLEX_ENTRY_)};
#undef SIMPLEX_ENTRY_

/* The kernel for q-function id on cells of dimension dim with nc components, or NULL. */
static SimplexKernel simplex_kernel(int id, int dim, int nc) {
    for (size_t k = 0; k < sizeof simplex_kernels / sizeof simplex_kernels[0]; k++) {
        const SimplexEntry *s = &simplex_kernels[k];
        if (s->id == id && SIMPLEX_NC_(s->ncomp, dim) == nc) return s->k[dim - 2];
    }
    return NULL;
}

static size_t simplex_smem(const ElemView *v) {
    return sizeof(double) * (size_t)v->nq * v->ndof * (1 + v->dim) + sizeof(fem_idx) * SIMPLEX_THREADS * v->ndof;
}

/* Whether cell block b runs on the register kernel: triangles and tetrahedra of up to SIMPLEX_MAX_DOF nodes
 * whose q-function is in the list, with the shape tables and dof map fitting in shared memory. */
extern "C" int gpu_fused_simplex_fits(const Operator *op, const OpBlock *b, int residual) {
    const ElemView *v = &b->view;
    const QFunction *q = residual ? &op->phys.cell_residual : &op->phys.cell_jacobian;
    const Shape s = b->basis.tables.shape;
    if ((s != SHAPE_TRI && s != SHAPE_TET) || v->dim != (s == SHAPE_TET ? 3 : 2) || v->ndof > SIMPLEX_MAX_DOF)
        return 0;
    if (b->nelem == 0 || !simplex_kernel(q->id, v->dim, v->ncomp)) return 0;
    return simplex_smem(v) <= gpu_state(op->dev)->shared_optin;
}

extern "C" int gpu_fused_simplex_block(Operator *op, OpBlock *b, int residual, const double *in, double *out) {
    Device *d = op->dev;
    GpuState *g = gpu_state(d);
    const ElemView *v = &b->view;
    const QFunction *q = residual ? &op->phys.cell_residual : &op->phys.cell_jacobian;
    SimplexKernel k = simplex_kernel(q->id, v->dim, v->ncomp);
    const int bi = (int)(b - op->cells);
    const int affine = op->space->mesh->cells[bi].order == 1;
    const size_t smem = simplex_smem(v);
    if (smem > 48 * 1024) GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    if (residual) FEM_TRY(op_block_aux(op, b));
    QfArgs a = op_block_args(op, b, 0, residual);
    double *evec = d->assembly == ASSEMBLE_GATHER ? b->evec : NULL;
    const unsigned blocks = (unsigned)((b->nelem + SIMPLEX_THREADS - 1) / SIMPLEX_THREADS);
    k<<<blocks, SIMPLEX_THREADS, smem>>>(*v, affine, a, in, out, evec);
    GPU_LAUNCHED("fused simplex operator");
    snprintf(g->last_launch, sizeof g->last_launch,
             "fused-simplex %s: 1 elem/thread x %d threads, %.1f kB shared, geometry %s, %s", q->name,
             SIMPLEX_THREADS, (double)smem / 1024.0, affine ? "affine" : "per q-point",
             evec ? "gather assembly" : "atomic assembly");
    return evec ? gpu_assemble(d, v, evec, out) : FEM_OK;
}

extern "C" int gpu_fused_simplex_occupancy(const Operator *op, const OpBlock *b, int residual, int *regs,
                                           int *blocks_per_sm) {
    const QFunction *q = residual ? &op->phys.cell_residual : &op->phys.cell_jacobian;
    SimplexKernel k = simplex_kernel(q->id, b->view.dim, b->view.ncomp);
    cudaFuncAttributes at;
    GPU_CHECK(cudaFuncGetAttributes(&at, k));
    *regs = at.numRegs;
    const size_t smem = simplex_smem(&b->view);
    if (smem > 48 * 1024) GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, SIMPLEX_THREADS, smem));
    return FEM_OK;
}
