/* The fused operator: one kernel per cell block for the residual and for the Jacobian action, the CUDA
 * backend's override of the operator entries `residual` and `apply_add` (fem/operator.h).
 *
 * A block of FUSED_THREADS threads takes epb elements through every stage with the q-point data in shared
 * memory: gather the element values, interpolate values and reference gradients at the q-points, run the
 * physics' own point function (the FEM_HD function of the physics' _qf.h header, a template argument, so it is inlined)
 * on every q-point of the block, integrate against the test functions and add into the output vector
 * (atomically, or through the element vectors and the deterministic gather when the device assembles by
 * gathering). Global memory sees the input and output vectors, the dof map, the geometry and whatever
 * q-point state the physics keeps; the separate kernels pass four q-point arrays through it.
 *
 * Full tables on every shape (staged in shared memory when small): simplices, and quadrilaterals and
 * hexahedra whose full tables are small; other blocks, and boundary facets, take the default path. Every
 * q-function of physics/qfunctions.h is instantiated for cells of dimension 2 and 3. FEMTO_GPU_FUSED=0 in the
 * environment (or GpuTuning.unfused) turns the override off. Triangles and tetrahedra of order 1 and 2 take the
 * register kernel of fused_simplex.cu instead (GpuTuning.fused_shared keeps them here). */
#include "fem/elem_ops.h"
#include "fem/operator.h"
#include "gpu/internal.cuh"
#include "gpu/qfunction.cuh"
#include "physics/qfunctions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FUSED_THREADS = 256 };
/* Full tables up to this many (q-point, dof) pairs are fused (as the separate kernels' full-table path). */
static const int64_t FUSED_MAX_PAIRS = 4096;
/* Tables up to this size are staged in shared memory; larger ones are read through L1. */
static const size_t FUSED_TABLE_SHARED = 16 * 1024;
/* Items (element dofs x components) a block aims at. */
static const int FUSED_ITEMS = 512;

typedef struct {
    int epb;      /* elements per block */
    int tab_smem; /* B and G staged in shared memory */
    int ntab;     /* their doubles */
    int evec;     /* write element vectors (gather assembly follows) instead of adding atomically */
    size_t smem;  /* bytes */
} FusedLayout;

/* The block's q-function arguments: the global arrays from element e0 on, the q-point arrays in shared
 * memory (values and s share an array, gradients and f another: a point function reads its inputs at i
 * before it writes its outputs at i, and no other thread touches i). */
static __device__ __forceinline__ QfArgs block_args(const QfArgs &a, int64_t e0, int nb, double *qu, double *qd) {
    QfArgs la = a;
    const int nq = a.nq, nc = a.ncomp;
    la.n = (int64_t)nb * nq;
    la.u = qu;
    la.du = qd;
    la.s = qu;
    la.f = qd;
    la.geo = a.geo + e0 * nq * GEO_STRIDE(a.dim);
    if (a.x) la.x = a.x + e0 * nq * 3;
    if (a.aux) la.aux = a.aux + e0 * nq;
    if (a.src) la.src = a.src + e0 * nq * nc;
    if (a.tag) la.tag = a.tag + e0;
    if (a.state) la.state = a.state + e0 * nq * a.nstate;
    return la;
}

template <int D, PointFn POINT>
static __global__ void __launch_bounds__(FUSED_THREADS)
    k_fused(ElemView v, FusedLayout L, QfArgs a, const double *in, double *out, double *evec) {
    extern __shared__ double smem[];
    const int bt = threadIdx.x, bn = blockDim.x;
    const int nc = v.ncomp, nd = v.ndof, nq = v.nq, m = nd * nc;
    const int64_t e0 = (int64_t)blockIdx.x * L.epb;
    const int nb = (int)(v.nelem - e0 < L.epb ? v.nelem - e0 : L.epb);
    double *ue = smem + (L.tab_smem ? L.ntab : 0), *qu = ue + L.epb * m, *qd = qu + L.epb * nq * nc;
    const double *B = v.B, *G = v.G;
    if (L.tab_smem) {
        for (int k = bt; k < nq * nd; k += bn) smem[k] = v.B[k];
        for (int k = bt; k < nq * nd * D; k += bn) smem[nq * nd + k] = v.G[k];
        B = smem;
        G = smem + nq * nd;
    }
    /* gather: ue[le][c][i] */
    const fem_idx *dofs = v.dofs + e0 * nd;
    for (int k = bt; k < nb * m; k += bn) {
        int le = k / m, r = k - le * m, i = r / nc, c = r - i * nc;
        ue[(le * nc + c) * nd + i] = in[(int64_t)dofs[le * nd + i] * nc + c];
    }
    __syncthreads();
    /* interpolate: qu[(le nq + q) nc + c], qd[((le nq + q) nc + c) D + r] */
    for (int k = bt; k < nb * nq * nc; k += bn) {
        int le = k / (nq * nc), r = k - le * nq * nc, q = r / nc, c = r - q * nc;
        const double *u = ue + (le * nc + c) * nd, *Bq = B + q * nd, *Gq = G + q * nd * D;
        double val = 0.0, g[D];
        for (int d = 0; d < D; d++) g[d] = 0.0;
        for (int i = 0; i < nd; i++) {
            double x = u[i];
            val += Bq[i] * x;
            for (int d = 0; d < D; d++) g[d] += Gq[i * D + d] * x;
        }
        qu[k] = val;
        for (int d = 0; d < D; d++) qd[k * D + d] = g[d];
    }
    __syncthreads();
    /* the physics at every q-point of the block */
    QfArgs la = block_args(a, e0, nb, qu, qd);
    for (int64_t i = bt; i < la.n; i += bn) POINT(&la, i);
    __syncthreads();
    /* integrate against the test functions and assemble */
    for (int k = bt; k < nb * m; k += bn) {
        int le = k / m, r = k - le * m, i = r / nc, c = r - i * nc;
        double acc = 0.0;
        for (int q = 0; q < nq; q++) {
            const int64_t qi = ((int64_t)le * nq + q) * nc + c;
            const double *Gqi = G + (q * nd + i) * D;
            acc += B[q * nd + i] * qu[qi];
            for (int d = 0; d < D; d++) acc += Gqi[d] * qd[qi * D + d];
        }
        if (L.evec)
            evec[((e0 + le) * nc + c) * nd + i] = acc;
        else
            atomicAdd(&out[(int64_t)dofs[le * nd + i] * nc + c], acc);
    }
}

typedef void (*FusedKernel)(ElemView, FusedLayout, QfArgs, const double *, double *, double *);
#define FUSED_ENTRY_(fn) {k_fused<2, fn>, k_fused<3, fn>},
static const FusedKernel fused_kernels[QF_COUNT][2] = {FEMTO_QFUNCTIONS(FUSED_ENTRY_)};
#undef FUSED_ENTRY_

/* The launch of a block, or 0 in *ok when the block is not fused (too large, not a cell of dimension 2, 3). */
static int fused_plan(const GpuState *g, const Device *d, const OpBlock *b, FusedLayout *L, int *ok) {
    const ElemView *v = &b->view;
    memset(L, 0, sizeof *L);
    *ok = 0;
    if (v->dim < 2 || v->dim > 3 || (int64_t)v->nq * v->ndof > FUSED_MAX_PAIRS || b->nelem == 0) return FEM_OK;
    /* quadrilaterals and hexahedra from order 3 on: the separate sum-factorised kernels are faster than this
     * kernel's full tables (femto-bench on an H100, ~1M hexahedra: p = 2 fused 6.1 ms and separate 6.2 ms for
     * heat J x; p = 3 fused 74 ms and separate 14 ms) */
    if (shape_is_tensor(b->basis.tables.shape) && b->basis.tables.order >= 3) return FEM_OK;
    const int64_t m = (int64_t)v->ndof * v->ncomp, per = m + (int64_t)v->nq * v->ncomp * (1 + v->dim);
    const int64_t ntab = (int64_t)v->nq * v->ndof * (1 + v->dim);
    L->tab_smem = (size_t)ntab * sizeof(double) <= FUSED_TABLE_SHARED;
    L->ntab = (int)ntab;
    int64_t epb = (FUSED_ITEMS + m - 1) / m;
    int64_t room = (int64_t)(g->shared_optin / sizeof(double)) - (L->tab_smem ? ntab : 0);
    if (epb > room / per) epb = room / per;
    if (epb > b->nelem) epb = b->nelem;
    if (epb < 1) return FEM_OK;
    L->epb = (int)epb;
    L->evec = d->assembly == ASSEMBLE_GATHER;
    L->smem = sizeof(double) * (size_t)((L->tab_smem ? ntab : 0) + epb * per);
    *ok = 1;
    return FEM_OK;
}

static int fused_block(Operator *op, OpBlock *b, int residual, const double *in, double *out, int *done) {
    FEM_TRY(gpu_fused_tensor_block(op, b, residual, in, out, done)); /* quads and hexes: gpu/fused_tensor.cu */
    if (*done) return FEM_OK;
    Device *d = op->dev;
    GpuState *g = gpu_state(d);
    /* the operator's kind was chosen at its set-up (gpu_operator_setup), from the tuning then */
    if (strcmp(op->implementation, "cuda-fused") == 0 && gpu_fused_simplex_fits(op, b, residual)) {
        *done = 1;
        return gpu_fused_simplex_block(op, b, residual, in, out);
    }
    FusedLayout L;
    FEM_TRY(fused_plan(g, d, b, &L, done));
    const QFunction *q = op_qfunction(op, 0, residual);
    if (!*done || q->id < 0 || q->id >= QF_COUNT) return *done = 0, FEM_OK;
    if (residual) FEM_TRY(op_block_aux(op, b));
    FusedKernel k = fused_kernels[q->id][b->view.dim - 2];
    if (L.smem > 48 * 1024) GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
    QfArgs a = op_block_args(op, b, 0, residual);
    if (L.evec) FEM_TRY(op_block_evec(op, b));
    unsigned blocks = (unsigned)((b->nelem + L.epb - 1) / L.epb);
    k<<<blocks, FUSED_THREADS, L.smem>>>(b->view, L, a, in, out, b->evec);
    GPU_LAUNCHED("fused operator");
    snprintf(g->last_launch, sizeof g->last_launch, "fused %s: %d elems/block x %d threads, %.1f kB shared, tables %s, %s",
             q->name, L.epb, FUSED_THREADS, (double)L.smem / 1024.0, L.tab_smem ? "shared" : "global",
             L.evec ? "gather assembly" : "atomic assembly");
    return L.evec ? gpu_assemble(d, &b->view, b->evec, out) : FEM_OK;
}

static int fused_all(Operator *op, int residual, const Vec *in, Vec *out) {
    for (int b = 0; b < op->ncells; b++) {
        if (!op_block_runs(op, 0, b)) continue;
        int done = 0;
        FEM_TRY(fused_block(op, &op->cells[b], residual, in->data, out->data, &done));
        if (!done) FEM_TRY(op_ref_apply_block(op, &op->cells[b], 0, residual, in->data, out->data));
    }
    for (int b = 0; b < op->nfacets; b++)
        if (op_block_runs(op, 1, b)) FEM_TRY(op_ref_apply_block(op, &op->facets[b], 1, residual, in->data, out->data));
    return FEM_OK;
}

static int fused_residual(Operator *op, const Vec *u, Vec *r) {
    if (op_zeroes_output(op)) FEM_TRY(vec_zero(r));
    return fused_all(op, 1, u, r);
}

static int fused_apply_add(Operator *op, const Vec *x, Vec *y) {
    return fused_all(op, 0, x, y);
}

extern "C" int gpu_fused_occupancy(const Operator *op, int block, int residual, int *regs,
                                   int *blocks_per_sm) {
    *regs = *blocks_per_sm = 0;
    const OpBlock *b = &op->cells[block];
    int tensor = 0;
    if (strcmp(op->implementation, "cuda-fused") == 0)
        FEM_TRY(gpu_fused_tensor_occupancy(op, b, residual, regs, blocks_per_sm, &tensor));
    if (tensor) return FEM_OK;
    const QFunction *q = op_qfunction(op, 0, residual);
    if (strcmp(op->implementation, "cuda-fused") == 0 && gpu_fused_simplex_fits(op, b, residual))
        return gpu_fused_simplex_occupancy(op, b, residual, regs, blocks_per_sm);
    FusedLayout L;
    int ok = 0;
    FEM_TRY(fused_plan(gpu_state(op->dev), op->dev, b, &L, &ok));
    if (!ok || q->id < 0 || q->id >= QF_COUNT || strncmp(op->implementation, "cuda-fused", 10) != 0) return FEM_OK;
    FusedKernel k = fused_kernels[q->id][b->view.dim - 2];
    cudaFuncAttributes at;
    GPU_CHECK(cudaFuncGetAttributes(&at, k));
    *regs = at.numRegs;
    if (L.smem > 48 * 1024)
        GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem));
    GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, FUSED_THREADS, L.smem));
    return FEM_OK;
}

extern "C" int gpu_operator_setup(Operator *op) {
    const GpuState *g = gpu_state(op->dev);
    const char *env = getenv("FEMTO_GPU_FUSED");
    if (g->tuning.unfused || (env && strcmp(env, "0") == 0)) return FEM_OK;
    int any = 0;
    for (int b = 0; b < op->ncells; b++) {
        FusedLayout L;
        int ok = 0;
        FEM_TRY(fused_plan(g, op->dev, &op->cells[b], &L, &ok));
        any |= ok || gpu_fused_simplex_fits(op, &op->cells[b], 0) || gpu_fused_simplex_fits(op, &op->cells[b], 1) ||
               gpu_fused_tensor_ready(op, &op->cells[b]);
    }
    if (!any) return FEM_OK;
    op->ops.residual = fused_residual;
    op->ops.apply_add = fused_apply_add;
    op->implementation = g->tuning.fused_shared ? "cuda-fused-shared" : "cuda-fused";
    return g->tuning.fused_shared ? FEM_OK : gpu_fused_simplex_patch_setup(op);
}
