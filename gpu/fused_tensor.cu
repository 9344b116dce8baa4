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
#include "gpu/fused_tensor.cuh"
#include "gpu/internal.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ host side */

/* The orders the kernel is instantiated for. */
enum { TENSOR_MIN_ORDER = 1, TENSOR_MAX_ORDER = 6 };
enum { TENSOR_NORDERS = TENSOR_MAX_ORDER - TENSOR_MIN_ORDER + 1 };

typedef void (*TensorKernel)(ElemView, QfArgs, const double *, double *, double *, PatchView);

/* Every cell q-function of physics/qfunctions.h, for quads and hexes of orders 1..6 (P1D = Q1D = p + 1);
 * ncomp 0 is the dimension's; gl the layout of the records it reads as geometry. */
#define TENSOR_K_(D, P, NC, GL, fn) k_fused_tensor<D, P, P, NC, GL, fn>
#define TENSOR_ORDERS_(D, NC, GL, fn)                                                                        \
    TENSOR_K_(D, 2, NC, GL, fn), TENSOR_K_(D, 3, NC, GL, fn), TENSOR_K_(D, 4, NC, GL, fn),                   \
        TENSOR_K_(D, 5, NC, GL, fn), TENSOR_K_(D, 6, NC, GL, fn), TENSOR_K_(D, 7, NC, GL, fn)
#define TENSOR_ROW_(fn, nc, gl, out)                                                                         \
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

/* Elements per block: at most `most` (TENSOR_THREADS threads, or what shared memory holds), fewer where a
 * smaller block keeps at least half as many elements again resident on an SM. Shared memory or registers
 * bind the heavy kernels. Linear elasticity on hexahedra at p = 2 takes 5.2 kB an element: 28 elements make
 * one block an SM, 22 make two (44 elements), and the launch got 25% faster (H100, docs/PERFORMANCE.md); the
 * neo-Hookean kernels at p = 1 and 2 gained 22-26% the same way. Heat's kernels at p = 1 and 2 would gain
 * only 29-31% more elements (two blocks to three) and ran 2-6% slower for it, so a gain under half is not
 * taken. */
static int64_t tensor_epb_resident(const GpuState *g, TensorKernel k, int threads, int64_t tab, int64_t per,
                                   int64_t most) {
    cudaFuncAttributes at;
    if (cudaFuncGetAttributes(&at, k) != cudaSuccess) return (void)cudaGetLastError(), most;
    auto elements = [&](int64_t e) {
        return e * gpu_resident_blocks(g, at.numRegs, (int)(e * threads),
                                       sizeof(double) * (size_t)(tab + e * per));
    };
    const int64_t full = elements(most);
    int64_t best = most, best_n = full;
    for (int64_t e = most - 1; e >= 1; e--) { /* the largest block of the most elements */
        const int64_t n = elements(e);
        if (2 * n >= 3 * full && n > best_n) best = e, best_n = n;
    }
    return best;
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
    epb = tensor_epb_resident(g, p->k, P * P, tab, per, epb);
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

int gpu_fused_tensor_epb(const Operator *op, const OpBlock *b) {
    TensorPlan p;
    int ok = 0;
    if (tensor_plan(op, b, 0, &p, &ok)) return fem_clear_error(), 0;
    return ok && p.qdata ? p.epb : 0;
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
    /* deterministic patch assembly for the Jacobian action from compact q-point data (gpu_fused_tensor_epb);
     * the others keep the element vectors: on an H200, ~1M hexahedra, gather, µs, E-vector against patches:
     * heat J x p = 2 1,186 -> 1,071, p = 3 2,672 -> 2,471, but heat R(u) p = 2 1,922 -> 2,141 and linear
     * elasticity J x p = 2 4,693 -> 5,155, p = 3 10,706 -> 11,744 (the heavier kernels lose more to the
     * patch sums at their end than they save on the element vectors) */
    const PatchView *pv = gather && p.qdata ? gpu_op_patches(op, (int)(b - op->cells), 0, p.epb) : NULL;
    if (gather && !pv) FEM_TRY(op_block_evec(op, b));
    PatchView none;
    memset(&none, 0, sizeof none);
    p.k<<<(unsigned)blocks, dim3(p.threads, p.epb), p.smem>>>(
        b->view, a, in, out, gather && !pv ? b->evec : NULL, pv ? *pv : none);
    GPU_LAUNCHED("fused tensor operator");
    if (pv) FEM_TRY(gpu_patch_partials(op, (int)(b - op->cells), 0, out));
    snprintf(g->last_launch, sizeof g->last_launch,
             "fused-tensor %s%s: %s p = %d, %d elems/block x %d threads, %.1f kB shared, %s", p.q->name,
             p.qdata ? " (q-point data)" : "", b->view.dim == 3 ? "hex" : "quad", b->view.nd1 - 1, p.epb,
             p.threads, (double)p.smem / 1024.0,
             !gather ? "atomic assembly"
             : pv    ? "gather assembly on patches (deterministic)"
                     : "gather assembly");
    return gather && !pv ? gpu_assemble(d, &b->view, b->evec, out) : FEM_OK;
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
