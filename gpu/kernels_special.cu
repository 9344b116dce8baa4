/* The host side of the specialised separate element kernels (gpu/kernels_special.cuh, which says what they
 * are): which kernel serves a launch, its block and shared memory, and the launch itself. gpu/kernels.cu
 * calls gpu_special_interpolate / gpu_special_integrate first. */
#include "gpu/internal.cuh"
#include "gpu/kernels_special.cuh"

#include <stdio.h>
#include <string.h>

/* -------------------------------------------------------------------------------------------- host side */

typedef void (*SpecialInterp)(ElemView, SpecialStage, const double *, double *, double *);
typedef void (*SpecialInteg)(ElemView, SpecialStage, const double *, const double *, double *, double *);
typedef struct {
    int tensor, dim, n, ncomp; /* tensor: sum factorised, n the 1D size; else full tables, n the nodes */
    SpecialInterp interp;
    SpecialInteg integ;
} SpecialEntry;

#define FULL_(D, ND, NC)                                                                                     \
    { 0, D, ND, NC, k_full_interp<D, ND, NC>, k_full_integ<D, ND, NC> }
#define TENSOR_(D, P, NC)                                                                                    \
    { 1, D, P, NC, k_tensor_interp<D, P, NC>, k_tensor_integ<D, P, NC> }
#define ORDERS_(K, D, A, B, C, NC) K(D, A, NC), K(D, B, NC), K(D, C, NC)
/* Full tables: triangles (3, 6, 10 nodes), tetrahedra (4, 10, 20), quads p = 1..3 (4, 9, 16), hexes p = 1
 * (8); sum factorised: quads and hexes p = 1..3. Components 1 and the dimension. */
static const SpecialEntry special_kernels[] = {ORDERS_(FULL_, 2, 3, 6, 10, 1),
                                               ORDERS_(FULL_, 2, 3, 6, 10, 2),
                                               ORDERS_(FULL_, 3, 4, 10, 20, 1),
                                               ORDERS_(FULL_, 3, 4, 10, 20, 3),
                                               ORDERS_(FULL_, 2, 4, 9, 16, 1),
                                               ORDERS_(FULL_, 2, 4, 9, 16, 2),
                                               FULL_(3, 8, 1),
                                               FULL_(3, 8, 3),
                                               ORDERS_(TENSOR_, 2, 2, 3, 4, 1),
                                               ORDERS_(TENSOR_, 2, 2, 3, 4, 2),
                                               ORDERS_(TENSOR_, 3, 2, 3, 4, 1),
                                               ORDERS_(TENSOR_, 3, 2, 3, 4, 3)};
#undef ORDERS_
#undef TENSOR_
#undef FULL_

/* Quads and hexes with at most this many (q-point, dof) pairs (quads p <= 3, hexes p = 1) take the full-table
 * kernel unless GpuTuning.path asks for sum factorisation: the rule the run-time-size kernels measured
 * (gpu/kernels.cu, docs/PERFORMANCE.md); femto-bench --path full|tensor compares the two. */
static const int64_t SPECIAL_FULL_MAX_PAIRS = 256;

/* Where femto chooses (GpuTuning.path AUTO), the full-table kernels serve only the linear cells (triangles,
 * tetrahedra and quadrilaterals of p = 1): measured on an H100 at 1M elements (docs/PERFORMANCE.md, the seed's
 * table), they were faster there (interpolation 19-26%, the rest within 5%) but 4-45% slower than the
 * run-time-size kernels at p = 2 and 3 and on hexahedra of p = 1, which keep those. The sum-factorised
 * kernels serve hexahedra of p = 2, 3 (1.9-2.1x faster). */
static int special_full_wins(const ElemView *v) {
    return v->ndof == v->dim + 1 || (v->tensor && v->dim == 2 && v->ndof == 4);
}

/* The entry serving v, or NULL: the tuning must leave the kernel's shape to femto (or name a path), and v be
 * a triangle or tetrahedron (not tensor, reference dimension 2 or 3), or a quad or hex on full tables (see
 * above) or at Q1D = P1D. */
static const SpecialEntry *special_entry(const GpuState *g, const ElemView *v) {
    const GpuTuning *t = &g->tuning;
    if (!g->special || t->generic || t->threads_per_elem > 0 || v->nelem <= 0) return NULL;
    const int full = !v->tensor || t->path == GPU_PATH_FULL ||
                     (t->path == GPU_PATH_AUTO && (int64_t)v->nq * v->ndof <= SPECIAL_FULL_MAX_PAIRS);
    if (!full && (v->nq1 != v->nd1 || v->nq != v->ndof)) return NULL;
    if (full && t->path == GPU_PATH_AUTO && !special_full_wins(v)) return NULL;
    const int n = full ? v->ndof : v->nd1;
    for (size_t k = 0; k < sizeof special_kernels / sizeof special_kernels[0]; k++) {
        const SpecialEntry *s = &special_kernels[k];
        if (s->tensor == !full && s->dim == v->dim && s->n == n && s->ncomp == v->ncomp) return s;
    }
    return NULL;
}

/* Doubles of a staging row's chunk of q-points that the full-table kernels aim at: rows of at most about 33
 * doubles keep a block of 128 elements near 34 kB, so that the staging does not limit the resident blocks
 * (tetrahedra p = 3 gradients, 72 doubles an element, would otherwise fit 2 blocks an SM). */
static const int SPECIAL_CHUNK = 32;

typedef struct {
    int epb;         /* elements per block */
    SpecialStage sg; /* full-table kernels' staging (stride 0: global memory) */
    unsigned blocks;
    dim3 block;
    size_t smem;
} SpecialLaunch;

/* Full tables: perq doubles of staged q-point data per q-point (0: nothing to stage), rows of at least
 * min_row doubles (the element vectors). Blocks of SPECIAL_SIMPLEX_THREADS elements (or the tuning's), fewer
 * where the staging would not fit, none (global memory) where even a warp's would not. *ok = 0 where the
 * tables and dof map alone do not fit. */
static void full_launch(const GpuState *g, const ElemView *v, int perq, int min_row, SpecialLaunch *L,
                        int *ok) {
    size_t limit = g->shared_optin;
    if (g->tuning.shared_limit > 0 && g->tuning.shared_limit < limit) limit = g->tuning.shared_limit;
    const int staged = perq > 0 && g->special == 1 && g->tuning.qdata != GPU_PLACE_GLOBAL;
    int epb = g->tuning.elems_per_block > 0 ? g->tuning.elems_per_block : SPECIAL_SIMPLEX_THREADS;
    if (epb > SPECIAL_SIMPLEX_THREADS) epb = SPECIAL_SIMPLEX_THREADS;
    const size_t tab = sizeof(double) * (size_t)v->nq * v->ndof * 4; /* PackedRows */
    const int chunks = (v->nq * perq + SPECIAL_CHUNK - 1) / SPECIAL_CHUNK;
    L->sg.qc = chunks > 1 ? (v->nq + chunks - 1) / chunks : v->nq;
    L->sg.stride = staged ? ((L->sg.qc * perq > min_row ? L->sg.qc * perq : min_row) | 1) : 0;
    for (;;) {
        L->smem =
            tab + sizeof(double) * (size_t)(((int64_t)epb * v->ndof + 1) / 2 + (int64_t)epb * L->sg.stride);
        if (L->smem <= limit) break;
        if (L->sg.stride && epb > 32)
            epb = epb > 64 ? 64 : 32;
        else if (L->sg.stride)
            L->sg.stride = 0;
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
    L->sg.stride = 0, L->sg.qc = 0;
    L->epb = epb;
    L->block = dim3(P * P, epb);
    L->blocks = (unsigned)((v->nelem + epb - 1) / epb);
    L->smem = sizeof(double) * (size_t)(4 * P * P + epb * per);
    *ok = L->smem <= g->shared_optin;
}

/* The launch of entry s for v (*ok = 0: it does not fit), its shared-memory limit raised where needed, and
 * the description in g->last_launch. perq, min_row: the full-table kernels' staging (full_launch). */
template <typename K>
static int special_prepare(GpuState *g, const ElemView *v, const SpecialEntry *s, K k, const char *what,
                           int perq, int min_row, SpecialLaunch *L, int *ok) {
    if (s->tensor)
        tensor_launch(g, v, L, ok);
    else
        full_launch(g, v, perq, min_row, L, ok);
    if (*ok && (v->nelem + L->epb - 1) / L->epb > 2147483647LL) *ok = 0;
    if (!*ok) return FEM_OK;
    if (L->smem > 48 * 1024)
        GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L->smem));
    cudaFuncAttributes at;
    GPU_CHECK(cudaFuncGetAttributes(&at, k));
    snprintf(g->last_launch, sizeof g->last_launch,
             "special %s %s (%s %d, %d comp): %d elems/block x %d threads/elem, %.1f kB shared, q-data %s%s, "
             "%d registers",
             s->tensor ? "tensor" : "full-table", what, s->tensor ? "P1D" : "nodes", s->n, s->ncomp, L->epb,
             (int)(L->block.x * L->block.y) / L->epb, (double)L->smem / 1024.0,
             s->tensor      ? "global (coalesced by q-point)"
             : L->sg.stride ? "staged"
                            : "global",
             L->sg.stride && L->sg.qc < v->nq ? " in chunks" : "", at.numRegs);
    return FEM_OK;
}

int gpu_special_interpolate(GpuState *g, const ElemView *v, const double *u, double *uq, double *duq,
                            int *done) {
    *done = 0;
    const SpecialEntry *s = special_entry(g, v);
    if (!s) return FEM_OK;
    SpecialLaunch L;
    const int perq = (uq ? v->ncomp : 0) + (duq ? v->ncomp * v->dim : 0);
    FEM_TRY(special_prepare(g, v, s, s->interp, "interpolation", perq, 0, &L, done));
    if (!*done) return FEM_OK;
    s->interp<<<L.blocks, L.block, L.smem>>>(*v, L.sg, u, uq, duq);
    GPU_LAUNCHED("special interpolation");
    return FEM_OK;
}

int gpu_special_integrate(GpuState *g, const ElemView *v, const double *sq, const double *fq, double *r,
                          double *evec, int *done) {
    *done = 0;
    const SpecialEntry *s = special_entry(g, v);
    if (!s) return FEM_OK;
    SpecialLaunch L;
    const int perq = (sq ? v->ncomp : 0) + (fq ? v->ncomp * v->dim : 0);
    FEM_TRY(special_prepare(g, v, s, s->integ, evec ? "integration to E-vector" : "integration + atomics",
                            perq, evec ? v->ncomp * v->ndof : 0, &L, done));
    if (!*done) return FEM_OK;
    s->integ<<<L.blocks, L.block, L.smem>>>(*v, L.sg, sq, fq, r, evec);
    GPU_LAUNCHED("special integration");
    return FEM_OK;
}
