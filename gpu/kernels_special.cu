/* The host side of the specialised separate element kernels (gpu/kernels_special.cuh, which says what they
 * are): which kernel serves a launch, its block and shared memory, and the launch itself. gpu/kernels.cu
 * calls gpu_special_interpolate / gpu_special_integrate first. */
#include "gpu/internal.cuh"
#include "gpu/kernels_special.cuh"

#include <stdio.h>
#include <string.h>

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
    const size_t tab = sizeof(double) * (size_t)v->nq * v->ndof * 4; /* PackedRows */
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
