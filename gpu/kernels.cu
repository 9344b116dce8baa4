/* The element kernels: interpolation, integration (atomic or gather assembly), the Jacobian diagonal and
 * gather assembly. See docs/gpu-backend.md for the design; in short:
 *
 *  - ONE kernel per operation for every order and quadrature rule: sizes are run-time values and all staging
 * buffers live in one runtime-sized dynamic shared-memory array, cut up by a Layout that the host computes
 * per launch (no templates on the order). The kernels are templates on the path and the reference
 * dimension only (five variants, GPU_V_*), which lets the dimension loops unroll without spilling.
 *  - A block handles epb consecutive elements with nt threads each. Sum-factorised paths (quads, hexes) map
 *    threadIdx.x to tid, the thread's index in its element's group of nt threads, and threadIdx.y to the
 *    element; the full-table path (tri, tet, line, and every diagonal) maps threadIdx.x to the element and
 *    threadIdx.y to tid, so the 32 lanes of a warp work on 32 elements at the same table entry: table reads
 *    are broadcasts, and each thread loops over several q-points or dofs. The element mathematics are the
 *    FEM_HD functions of fem/elem_ops.h, called with (tid, nt), with __syncthreads() between the stages of
 *    the sum-factorised paths.
 *  - Shape tables are staged once per block in shared memory; element values are gathered into shared memory;
 *    the q-point arrays of the block's elements (one contiguous piece of global memory) are copied between
 *    global and shared memory by the whole block, so those reads and writes are coalesced.
 *  - ElemView and Layout are passed by value. Anything that multiplies elements by q-points, dofs or
 *    components is 64-bit.
 *  - Every thread reaches every __syncthreads(): threads of the missing elements of the last block only skip
 *    the work between barriers.
 *
 * Shared memory of a block, in doubles: [tables][E: epb x sE][Q0: epb x sQ0][Q1: epb x sQ1][W: epb x sW],
 * each per-element stride s* the area's size n* rounded up to an odd number on the element-fastest path (so
 * the lanes of a warp, one element each, fall in different banks). E: element values (ue, interpolation) or
 * element residuals (re, integration), [c][i]; Q0, Q1: the q-point values / gradients (interpolation) or s /
 * f (integration) in their global layout; W: sum-factorisation scratch of one element. A size of 0 means "not
 * staged": the kernel then reads or writes global memory directly, which is the fallback when a block would
 * not fit. */
#include "fem/elem_ops.h"
#include "gpu/internal.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PATH_GENERIC = 0, PATH_QUAD = 2, PATH_HEX = 3 };
enum { OP_INTERP = 0, OP_INTEG = 1, OP_DIAG = 2 };
enum { MODE_ATOMIC = 0, MODE_EVEC = 1 };

/* Shape tables of generic elements larger than this are read from global memory (through the L1 cache)
 * rather than staged per block, unless tuning forces them into shared memory. */
static const size_t TABLE_SHARED_MAX = 48 * 1024;
/* Threads per block the automatic choice aims at on the sum-factorised paths. */
static const int TARGET_THREADS = 256;
/* Threads per block the automatic choice does not exceed on the full-table path. */
static const int FULL_TABLE_BLOCK = 256;

/* Register budgets of the variants (template arguments: the path P and the reference dimension D; see
 * docs/gpu-backend.md). The full-table path in one and two dimensions keeps to 40 registers, six blocks of
 * FULL_TABLE_BLOCK threads per SM (measured 5-13% faster on triangles than 64 registers and four blocks);
 * every other variant may use 64, two blocks of GPU_MAX_THREADS (in three dimensions a smaller budget was
 * not faster: docs/PERFORMANCE.md). */
#define ELEM_LOW(P, D) ((P) == PATH_GENERIC && (D) < 3)
#define ELEM_BOUNDS(P, D)                                                                                    \
    __launch_bounds__(ELEM_LOW(P, D) ? FULL_TABLE_BLOCK : GPU_MAX_THREADS,                                   \
                      ELEM_LOW(P, D) ? 6 : GPU_MIN_BLOCKS)

typedef struct {
    int path;
    int variant;            /* GPU_V_*: the compiled kernel that runs the launch */
    int efast;              /* threadIdx.x is the element (full-table path), else the thread in the element */
    int nt, epb;            /* threads per element, elements per block */
    int tab_smem;           /* tables staged in shared memory */
    int ntab, off_B, off_G; /* staged tables (doubles); off_* -1 when that table is not staged */
    int nE, nQ0, nQ1, nW;   /* doubles per element of each area (0: not staged / not needed) */
    int sE, sQ0, sQ1, sW;   /* per-element strides of the areas (>= the sizes) */
    size_t smem;            /* bytes */
    int resident;           /* blocks per SM at once (estimate, for the description) */
} Layout;

/* ------------------------------------------------------------------------------------------ device code */

static __device__ __forceinline__ void stage(double *dst, const double *src, int64_t n, int bt, int bn) {
    for (int64_t k = bt; k < n; k += bn) dst[k] = src[k];
}

/* Thread indices: tid/nt within the element, le the element in the block, bt/bn within the block. */
typedef struct {
    int tid, nt, le, bt, bn;
} Ids;
static __device__ __forceinline__ Ids ids(const Layout &L) {
    Ids i;
    i.bt = threadIdx.x + blockDim.x * threadIdx.y;
    i.bn = blockDim.x * blockDim.y;
    if (L.efast)
        i.le = threadIdx.x, i.tid = threadIdx.y, i.nt = blockDim.y;
    else
        i.tid = threadIdx.x, i.le = threadIdx.y, i.nt = blockDim.x;
    return i;
}

/* Block-wide copy of nb rows of n doubles, row strides ds (dst) and ss (src); one flat loop when both are n.
 */
static __device__ __forceinline__ void copy_rows(double *dst, int ds, const double *src, int ss, int nb,
                                                 int n, int bt, int bn) {
    if (ds == n && ss == n)
        for (int k = bt; k < nb * n; k += bn) dst[k] = src[k];
    else
        for (int k = bt; k < nb * n; k += bn) {
            int le = k / n, j = k - le * n;
            dst[le * ds + j] = src[le * ss + j];
        }
}

/* Copies between a contiguous global piece [nb][n] and a shared area of per-element stride s. */
static __device__ __forceinline__ void area_to_global(double *dst, const double *area, int nb, int n, int s,
                                                      int bt, int bn) {
    copy_rows(dst, n, area, s, nb, n, bt, bn);
}
static __device__ __forceinline__ void area_from_global(double *area, const double *src, int nb, int n, int s,
                                                        int bt, int bn) {
    copy_rows(area, s, src, n, nb, n, bt, bn);
}

/* The tables every thread reads: staged copies or the global arrays. Generic: full B, G. Tensor: B1, G1. */
static __device__ __forceinline__ void tables(int path, const ElemView &v, const Layout &L, double *sT,
                                              int bt, int bn, const double **B, const double **G) {
    if (path == PATH_GENERIC) {
        *B = v.B;
        *G = v.G;
        if (L.tab_smem && L.off_B >= 0) {
            stage(sT + L.off_B, v.B, (int64_t)v.nq * v.ndof, bt, bn);
            *B = sT + L.off_B;
        }
        if (L.tab_smem && L.off_G >= 0) {
            stage(sT + L.off_G, v.G, (int64_t)v.nq * v.ndof * v.dim, bt, bn);
            *G = sT + L.off_G;
        }
    } else {
        *B = v.B1;
        *G = v.G1;
        if (L.tab_smem) {
            int n1 = v.nq1 * v.nd1;
            stage(sT, v.B1, n1, bt, bn);
            stage(sT + n1, v.G1, n1, bt, bn);
            *B = sT;
            *G = sT + n1;
        }
    }
}

template <int P, int D>
static __global__ void ELEM_BOUNDS(P, D)
    k_interpolate(ElemView v, Layout L, const double *u, double *uq, double *duq) {
    extern __shared__ double smem[];
    const Ids I = ids(L);
    const int tid = I.tid, le = I.le, nt = I.nt, bt = I.bt, bn = I.bn;
    const int nc = v.ncomp, nd = v.ndof, nq = v.nq, dim = D;
    const int64_t e0 = (int64_t)blockIdx.x * L.epb, e = e0 + le;
    const int nb = (int)(v.nelem - e0 < L.epb ? v.nelem - e0 : L.epb); /* elements in this block */
    const bool active = le < nb;

    double *sT = smem, *sE = sT + (L.tab_smem ? L.ntab : 0), *sQ0 = sE + L.epb * L.sE,
           *sQ1 = sQ0 + L.epb * L.sQ0, *sW = sQ1 + L.epb * L.sQ1;
    const double *B, *G;
    tables(P, v, L, sT, bt, bn, &B, &G);

    /* gather the element's values: ue[c][i] = u[dof_i * nc + c] */
    double *ue = sE + le * L.sE, *w = sW + le * L.sW;
    if (active) {
        const fem_idx *dofs = v.dofs + e * nd;
        for (int k = tid; k < nd * nc; k += nt) {
            int i = k / nc, c = k - i * nc;
            ue[c * nd + i] = u[(int64_t)dofs[i] * nc + c];
        }
    }
    __syncthreads();

    /* where this element's q-point results go: the staging area or global memory */
    double *qu = NULL, *qd = NULL;
    if (uq) qu = L.nQ0 ? sQ0 + le * L.sQ0 : uq + e * nq * nc;
    if (duq) qd = L.nQ1 ? sQ1 + le * L.sQ1 : duq + e * nq * nc * dim;

    for (int c = 0; c < nc; c++) {
        const double *uc = ue + c * nd;
        double *quc = qu ? qu + c : NULL, *qdc = qd ? qd + c * dim : NULL;
        if (P == PATH_GENERIC) {
            if (active) eo_interp(tid, nt, nq, nd, dim, B, G, uc, quc, nc, qdc, nc * dim);
        } else if (P == PATH_QUAD) {
            const int n1 = v.nd1, q1 = v.nq1;
            double *AB = w, *AG = w + n1 * q1;
            if (active) eo_q2_interp1(tid, nt, n1, q1, B, G, uc, AB, AG);
            __syncthreads();
            if (active) eo_q2_interp2(tid, nt, n1, q1, B, G, AB, AG, quc, nc, qdc, nc * 2);
            __syncthreads();
        } else {
            const int n1 = v.nd1, q1 = v.nq1, a = n1 * n1 * q1, b = n1 * q1 * q1;
            double *AB = w, *AG = w + a, *CBB = w + 2 * a, *CBG = CBB + b, *CGB = CBG + b;
            if (active) eo_h3_interp1(tid, nt, n1, q1, B, G, uc, AB, AG);
            __syncthreads();
            if (active) eo_h3_interp2(tid, nt, n1, q1, B, G, AB, AG, CBB, CBG, CGB);
            __syncthreads();
            if (active) eo_h3_interp3(tid, nt, n1, q1, B, G, CBB, CBG, CGB, quc, nc, qdc, nc * 3);
            __syncthreads();
        }
    }

    /* the block's q-point arrays are contiguous in global memory: coalesced copy-out */
    if (L.nQ0 || L.nQ1) {
        __syncthreads();
        if (uq && L.nQ0) area_to_global(uq + e0 * nq * nc, sQ0, nb, L.nQ0, L.sQ0, bt, bn);
        if (duq && L.nQ1) area_to_global(duq + e0 * nq * nc * dim, sQ1, nb, L.nQ1, L.sQ1, bt, bn);
    }
}

/* mode MODE_ATOMIC: r[dof] += re with atomicAdd; MODE_EVEC: evec[e][c][i] = re (gather assembly follows) */
template <int P, int D>
static __global__ void ELEM_BOUNDS(P, D)
    k_integrate(ElemView v, Layout L, const double *sq, const double *fq, double *r, double *evec, int mode) {
    extern __shared__ double smem[];
    const Ids I = ids(L);
    const int tid = I.tid, le = I.le, nt = I.nt, bt = I.bt, bn = I.bn;
    const int nc = v.ncomp, nd = v.ndof, nq = v.nq, dim = D;
    const int64_t e0 = (int64_t)blockIdx.x * L.epb, e = e0 + le;
    const int nb = (int)(v.nelem - e0 < L.epb ? v.nelem - e0 : L.epb);
    const bool active = le < nb;

    double *sT = smem, *sE = sT + (L.tab_smem ? L.ntab : 0), *sQ0 = sE + L.epb * L.sE,
           *sQ1 = sQ0 + L.epb * L.sQ0, *sW = sQ1 + L.epb * L.sQ1;
    const double *B, *G;
    tables(P, v, L, sT, bt, bn, &B, &G);

    /* the block's q-point inputs are contiguous in global memory: coalesced copy-in */
    if (sq && L.nQ0) area_from_global(sQ0, sq + e0 * nq * nc, nb, L.nQ0, L.sQ0, bt, bn);
    if (fq && L.nQ1) area_from_global(sQ1, fq + e0 * nq * nc * dim, nb, L.nQ1, L.sQ1, bt, bn);
    __syncthreads();

    const double *se = NULL, *fe = NULL;
    if (sq) se = L.nQ0 ? sQ0 + le * L.sQ0 : sq + e * nq * nc;
    if (fq) fe = L.nQ1 ? sQ1 + le * L.sQ1 : fq + e * nq * nc * dim;
    double *re = sE + le * L.sE, *w = sW + le * L.sW;

    for (int c = 0; c < nc; c++) {
        const double *sc = se ? se + c : NULL, *fc = fe ? fe + c * dim : NULL;
        double *rc = re + c * nd;
        if (P == PATH_GENERIC) {
            if (active) eo_integ(tid, nt, nq, nd, dim, B, G, sc, nc, fc, nc * dim, rc);
        } else if (P == PATH_QUAD) {
            const int n1 = v.nd1, q1 = v.nq1;
            double *X = w, *Y = w + n1 * q1;
            if (active) eo_q2_integ1(tid, nt, n1, q1, B, G, sc, nc, fc, nc * 2, X, Y);
            __syncthreads();
            if (active) eo_q2_integ2(tid, nt, n1, q1, B, G, X, Y, rc);
            __syncthreads();
        } else {
            const int n1 = v.nd1, q1 = v.nq1, a = n1 * q1 * q1, b = n1 * n1 * q1;
            double *Xs = w, *X0 = w + a, *X1 = w + 2 * a, *Ya = w + 3 * a, *Yb = Ya + b;
            if (active) eo_h3_integ1(tid, nt, n1, q1, B, G, sc, nc, fc, nc * 3, Xs, X0, X1);
            __syncthreads();
            if (active) eo_h3_integ2(tid, nt, n1, q1, B, G, Xs, X0, X1, Ya, Yb);
            __syncthreads();
            if (active) eo_h3_integ3(tid, nt, n1, q1, B, G, Ya, Yb, rc);
            __syncthreads();
        }
    }
    __syncthreads();

    if (mode == MODE_ATOMIC) {
        if (active) {
            const fem_idx *dofs = v.dofs + e * nd;
            for (int k = tid; k < nd * nc; k += nt) {
                int i = k / nc, c = k - i * nc;
                atomicAdd(&r[(int64_t)dofs[i] * nc + c], re[c * nd + i]);
            }
        }
    } else {
        /* E is [le][c][i], the layout of evec: one coalesced copy for the block */
        area_to_global(evec + e0 * nc * nd, sE, nb, L.nE, L.sE, bt, bn);
    }
}

/* evec[e][c][i] += sum_q Phi_b(q,i) (B[q][i] s_q + sum_a G[q][i][a] f_q,a), as cpu_diag_add (full tables for
 * every shape). One thread per local dof. Q0/Q1 stage component c of s and f: [le][q], [le][q][a]. */
template <int D>
static __global__ void ELEM_BOUNDS(PATH_GENERIC, D)
    k_diag(ElemView v, Layout L, int c, int b, const double *sq, const double *fq, double *evec) {
    extern __shared__ double smem[];
    const Ids I = ids(L);
    const int tid = I.tid, le = I.le, nt = I.nt, bt = I.bt, bn = I.bn;
    const int nc = v.ncomp, nd = v.ndof, nq = v.nq, dim = D;
    const int64_t e0 = (int64_t)blockIdx.x * L.epb, e = e0 + le;
    const int nb = (int)(v.nelem - e0 < L.epb ? v.nelem - e0 : L.epb);
    const bool active = le < nb;

    double *sT = smem, *sQ0 = sT + (L.tab_smem ? L.ntab : 0), *sQ1 = sQ0 + L.epb * L.sQ0;
    const double *B, *G;
    tables(PATH_GENERIC, v, L, sT, bt, bn, &B, &G);
    if (sq && L.nQ0)
        for (int k = bt; k < nb * nq; k += bn) {
            int l = k / nq;
            sQ0[l * L.sQ0 + (k - l * nq)] = sq[(e0 * nq + k) * nc + c];
        }
    if (fq && L.nQ1)
        for (int k = bt; k < nb * nq * dim; k += bn) {
            int kq = k / dim, a = k - kq * dim, l = kq / nq;
            sQ1[l * L.sQ1 + (k - l * nq * dim)] = fq[((e0 * nq + kq) * nc + c) * dim + a];
        }
    __syncthreads();
    if (!active) return; /* no barrier follows */

    const double *se = NULL, *fe = NULL;
    int ss = 1, fs = dim;
    if (sq) {
        if (L.nQ0)
            se = sQ0 + le * L.sQ0;
        else
            se = sq + e * nq * nc + c, ss = nc;
    }
    if (fq) {
        if (L.nQ1)
            fe = sQ1 + le * L.sQ1;
        else
            fe = fq + (e * nq * nc + c) * dim, fs = nc * dim;
    }
    for (int i = tid; i < nd; i += nt) {
        double acc = 0.0;
        for (int q = 0; q < nq; q++) {
            const double *Gq = G + ((int64_t)q * nd + i) * dim;
            double Bqi = B[(int64_t)q * nd + i];
            double phi_b = b == 0 ? Bqi : Gq[b - 1];
            double t = se ? Bqi * se[q * ss] : 0.0;
            if (fe)
                for (int a = 0; a < dim; a++) t += Gq[a] * fe[q * fs + a];
            acc += phi_b * t;
        }
        evec[(e * nc + c) * nd + i] += acc;
    }
}

/* r[n][c] += sum of evec over the element slots of node n, in t_slots order: deterministic. A thread sums all
 * NC components of a node (one slot index and one division for NC values). Slots go four at a time: their
 * indices first, then every value, so that up to 4 NC loads are in flight before the first add; the adds keep
 * slot order, so the result is bitwise that of one slot at a time. A slot is el * nd + i (int32), so the
 * element is a 32-bit division, and none for one component. */
template <int NC>
static __global__ void __launch_bounds__(GPU_VEC_THREADS)
    k_gather_assemble(int64_t nnodes, int nd, const int64_t *__restrict__ toff,
                      const int32_t *__restrict__ slots, const double *__restrict__ evec,
                      double *__restrict__ r) {
    constexpr int U = 4; /* slots per batch */
    /* E-vector index of slot (el, i), component 0: el NC nd + i = slot + el (NC - 1) nd */
    auto at = [nd](int32_t slot) { return slot + (NC > 1 ? (int64_t)(slot / nd) * (NC - 1) * nd : 0); };
    for (int64_t n = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; n < nnodes;
         n += (int64_t)gridDim.x * blockDim.x) {
        double s[NC];
        for (int c = 0; c < NC; c++) s[c] = 0.0;
        int64_t k = toff[n];
        const int64_t end = toff[n + 1];
        for (; k + U <= end; k += U) {
            int64_t a[U];
            double v[U][NC];
            for (int j = 0; j < U; j++) a[j] = at(slots[k + j]);
            for (int j = 0; j < U; j++)
                for (int c = 0; c < NC; c++) v[j][c] = evec[a[j] + (int64_t)c * nd];
            for (int j = 0; j < U; j++)
                for (int c = 0; c < NC; c++) s[c] += v[j][c];
        }
        for (; k < end; k++) {
            int64_t a = at(slots[k]);
            for (int c = 0; c < NC; c++) s[c] += evec[a + (int64_t)c * nd];
        }
        for (int c = 0; c < NC; c++) r[n * NC + c] += s[c];
    }
}

/* -------------------------------------------------------------------------------------------- host side */

/* The compiled variants, indexed by GPU_V_* (the diagonal always runs on full tables). */
typedef void (*InterpKernel)(ElemView, Layout, const double *, double *, double *);
typedef void (*IntegKernel)(ElemView, Layout, const double *, const double *, double *, double *, int);
typedef void (*DiagKernel)(ElemView, Layout, int, int, const double *, const double *, double *);
static const InterpKernel interp_kernels[GPU_NVARIANTS] = {
    k_interpolate<PATH_GENERIC, 1>, k_interpolate<PATH_GENERIC, 2>, k_interpolate<PATH_GENERIC, 3>,
    k_interpolate<PATH_QUAD, 2>, k_interpolate<PATH_HEX, 3>};
static const IntegKernel integ_kernels[GPU_NVARIANTS] = {
    k_integrate<PATH_GENERIC, 1>, k_integrate<PATH_GENERIC, 2>, k_integrate<PATH_GENERIC, 3>,
    k_integrate<PATH_QUAD, 2>, k_integrate<PATH_HEX, 3>};
static const DiagKernel diag_kernels[GPU_NVARIANTS] = {k_diag<1>, k_diag<2>, k_diag<3>, k_diag<2>, k_diag<3>};

/* Quads and hexes with at most this many (q-point, dof) pairs use the full tables: measured on an H200
 * (docs/PERFORMANCE.md), the full-table path's warp-wide broadcast reads beat the sum-factorised stages and
 * their barriers for hexes p = 1 (8 x 8) and quads p <= 3 (16 x 16); from hexes p = 2 (27 x 27) on sum
 * factorisation wins. */
static const int64_t FULL_TABLE_MAX_PAIRS = 256;

static int path_of(const ElemView *v, GpuPath choice) {
    if (!v->tensor || v->dim < 2 || choice == GPU_PATH_FULL) return PATH_GENERIC;
    if (choice == GPU_PATH_AUTO && (int64_t)v->nq * v->ndof <= FULL_TABLE_MAX_PAIRS) return PATH_GENERIC;
    return v->dim == 3 ? PATH_HEX : PATH_QUAD;
}

static const char *path_name(int path) {
    return path == PATH_HEX    ? "hex sum-factorised"
           : path == PATH_QUAD ? "quad sum-factorised"
                               : "full tables";
}

static const char *op_name(int op) {
    return op == OP_INTERP ? "interpolation" : op == OP_INTEG ? "integration" : "diagonal";
}

static int kernel_of(int op) {
    return op == OP_INTERP ? GPU_K_INTERPOLATE : op == OP_INTEG ? GPU_K_INTEGRATE : GPU_K_DIAG;
}

static int64_t max3(int64_t a, int64_t b, int64_t c) {
    int64_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* Threads for `work` items, at most `cap`, so that every thread gets the same number of rounds (20 items with
 * at most 16 threads: 10 threads of 2 items rather than 16 threads of which 4 take a second round). */
static int64_t balanced(int64_t work, int64_t cap) {
    if (cap < 1) cap = 1;
    int64_t rounds = (work + cap - 1) / cap;
    if (rounds < 1) rounds = 1;
    return (work + rounds - 1) / rounds;
}

/* Blocks of `threads` threads and `smem` bytes of dynamic shared memory that fit on one SM at once. */
static int64_t resident(const GpuState *g, int kernel, int variant, int threads, size_t smem) {
    return gpu_resident_blocks(g, g->kernel_regs[kernel][variant], threads, smem);
}

/* What one element of a launch needs, in doubles: the staged tables (per block) and its areas, with the work
 * of the widest stage (items a thread group shares out). */
typedef struct {
    int64_t ntab, nE, nQ0, nQ1, nW, work;
} Needs;

/* Tables: on the full-table path B and G as the operation reads them (offsets into L); else the two 1D
 * tables. */
static void plan_tables(const ElemView *v, int op, int in0, int in1, Layout *L, Needs *n) {
    const int64_t nd = v->ndof, nq = v->nq, dim = v->dim, n1 = v->nd1, q1 = v->nq1;
    n->ntab = 0;
    L->off_B = L->off_G = -1;
    if (L->path == PATH_GENERIC) {
        int needB = op == OP_DIAG || in0, needG = op == OP_DIAG || in1;
        if (needB) L->off_B = (int)n->ntab, n->ntab += nq * nd;
        if (needG) L->off_G = (int)n->ntab, n->ntab += nq * nd * dim;
    } else {
        n->ntab = 2 * n1 * q1;
    }
}

/* Per-element areas (doubles) and the work of the widest stage. */
static void plan_areas(const ElemView *v, int op, int in0, int in1, const Layout *L, Needs *n) {
    const int64_t nd = v->ndof, nq = v->nq, dim = v->dim, nc = v->ncomp, n1 = v->nd1, q1 = v->nq1;
    n->nE = n->nW = 0;
    n->work = 1;
    if (op == OP_DIAG) {
        n->nQ0 = in0 ? nq : 0;
        n->nQ1 = in1 ? nq * dim : 0;
        n->work = nd;
        return;
    }
    n->nE = nc * nd;
    n->nQ0 = in0 ? nq * nc : 0;
    n->nQ1 = in1 ? nq * nc * dim : 0;
    if (L->path == PATH_GENERIC) {
        n->work = op == OP_INTERP ? nq : nd;
    } else if (L->path == PATH_QUAD) {
        n->nW = 2 * n1 * q1;
        n->work = op == OP_INTERP ? max3(n1 * q1, q1 * q1, 1) : max3(n1 * q1, n1 * n1, 1);
    } else {
        n->nW = op == OP_INTERP ? 2 * n1 * n1 * q1 + 3 * n1 * q1 * q1 : 3 * n1 * q1 * q1 + 2 * n1 * n1 * q1;
        n->work = op == OP_INTERP ? max3(n1 * n1 * q1, n1 * q1 * q1, q1 * q1 * q1)
                                  : max3(n1 * q1 * q1, n1 * n1 * q1, n1 * n1 * n1);
    }
}

/* Threads per element (*nt) and elements per block (*epb) for L's path and variant. Full-table path: a warp
 * of elements (more when the work per element is small) and one thread per pair of items (q-points or dofs),
 * as many as fit in a block. Sum-factorised paths: one thread per item of the widest stage, blocks of about
 * TARGET_THREADS. */
static void plan_threads(const GpuState *g, const ElemView *v, int kernel, int64_t work, const Layout *L,
                         int64_t *nt, int64_t *epb) {
    const GpuTuning *t = &g->tuning;
    const int64_t cap = g->kernel_threads[kernel][L->variant]; /* the variant's largest block */
    if (L->efast) {
        /* eo_interp / eo_integ give each thread two items per pass */
        int64_t pairs = (work + 1) / 2;
        *epb = t->elems_per_block > 0 ? t->elems_per_block : pairs < 4 ? 128 : pairs < 8 ? 64 : 32;
        if (*epb > cap) *epb = cap;
        /* at most FULL_TABLE_BLOCK threads: with 64 registers (3D), four such blocks fit an SM (50%
         * occupancy) where 384-thread blocks fit only two (37.5%, measured register-limited with Nsight
         * Compute); the 1D/2D variants are compiled for this size */
        *nt = t->threads_per_elem > 0 ? t->threads_per_elem : balanced(pairs, FULL_TABLE_BLOCK / *epb);
        if (*nt > cap) *nt = cap;
        if (*nt < 1) *nt = 1;
    } else {
        *nt = t->threads_per_elem > 0 ? t->threads_per_elem : balanced(work, cap);
        if (*nt > cap) *nt = cap;
        if (*nt < 1) *nt = 1;
        *epb = t->elems_per_block > 0 ? t->elems_per_block : (TARGET_THREADS + *nt - 1) / *nt;
    }
    if (*epb > cap / *nt) *epb = cap / *nt;
    if (*epb > v->nelem) *epb = v->nelem;
    if (*epb < 1) *epb = 1;
}

/* The placement of tables and q-data: elements per block that fit (fit), whether tables (tab) and q-data (q)
 * are staged, and the smallest footprint tried (least, doubles), for the message when nothing fits. */
typedef struct {
    int64_t fit, least;
    int tab, q;
} Placement;

/* The order in which a placement is tried: the forced one, or the preferred one then the other. */
static int place_order(GpuPlace forced, int preferred, int order[2]) {
    if (forced == GPU_PLACE_SHARED) return order[0] = 1, 1;
    if (forced == GPU_PLACE_GLOBAL) return order[0] = 0, 1;
    order[0] = preferred, order[1] = !preferred;
    return 2;
}

/* The first q-data placement with which all epb elements fit wins; within it, the table placement that leaves
 * more blocks resident on an SM (ties: the preferred one). Otherwise the most elements that fit. sQ: the
 * q-data strides of one element (sQ0 + sQ1); sEW: the other areas'. */
static Placement place(const GpuState *g, int kernel, const Layout *L, int64_t nt, int64_t epb, int64_t ntab,
                       int64_t sEW, int64_t sQ, size_t limit) {
    /* full tables: staged (measured: tets p = 2 279 us staged vs 329 us from global memory on an H200);
     * sum-factorised 1D tables are tiny and read from global memory through L1 (hexes p = 2, 3: 7% faster) */
    int tab_pref = L->path == PATH_GENERIC && (size_t)ntab * sizeof(double) <= TABLE_SHARED_MAX;
    int tab_order[2], q_order[2];
    int ntab_opts = place_order(g->tuning.tables, tab_pref, tab_order);
    int nq_opts = place_order(g->tuning.qdata, 1, q_order);
    Placement p = {0, -1, 0, 0};
    int64_t best_res = -1;
    for (int qi = 0; qi < nq_opts && p.fit < epb; qi++)
        for (int ti = 0; ti < ntab_opts; ti++) {
            int64_t fixed = tab_order[ti] ? ntab : 0;
            int64_t per = sEW + (q_order[qi] ? sQ : 0);
            if (p.least < 0 || fixed + per < p.least) p.least = fixed + per;
            int64_t room = (int64_t)(limit / sizeof(double)) - fixed;
            int64_t fit = room <= 0 ? 0 : per > 0 ? room / per : epb;
            if (fit > epb) fit = epb;
            int64_t res = fit < 1 ? 0
                                  : resident(g, kernel, L->variant, (int)(nt * fit),
                                             sizeof(double) * (size_t)(fixed + fit * per));
            if (fit > p.fit || (fit == epb && res > best_res))
                p.fit = fit, best_res = res, p.tab = tab_order[ti], p.q = q_order[qi];
        }
    return p;
}

/* Chooses threads per element, elements per block and what is staged in shared memory for one launch.
 * in0/in1: the value / gradient arrays that the operation reads or writes are present. */
static int plan(const GpuState *g, const ElemView *v, int op, int in0, int in1, Layout *L) {
    const int kernel = kernel_of(op);
    memset(L, 0, sizeof *L);
    const GpuTuning *t = &g->tuning;
    if (v->dim < 1 || v->dim > 3)
        return fem_fail(FEM_ERR_INTERNAL, "GPU element kernels: reference dimension %d", v->dim);
    L->path = op == OP_DIAG ? PATH_GENERIC : path_of(v, t->path);
    Needs n;
    plan_tables(v, op, in0, in1, L, &n);
    plan_areas(v, op, in0, in1, L, &n);
    L->efast = L->path == PATH_GENERIC;
    L->variant = L->path == PATH_QUAD  ? GPU_V_QUAD
                 : L->path == PATH_HEX ? GPU_V_HEX
                                       : GPU_V_FULL1 + v->dim - 1;
    int64_t nt, epb;
    plan_threads(g, v, kernel, n.work, L, &nt, &epb);
    /* per-element strides: odd on the element-fastest path (lanes of a warp in different banks) */
#define STRIDE(n) ((L->efast && (n) > 0) ? ((n) | 1) : (n))
    const int64_t sE = STRIDE(n.nE), sQ0 = STRIDE(n.nQ0), sQ1 = STRIDE(n.nQ1), sW = STRIDE(n.nW);
#undef STRIDE
    size_t limit = g->shared_optin;
    if (t->shared_limit > 0 && t->shared_limit < limit) limit = t->shared_limit;
    Placement p = place(g, kernel, L, nt, epb, n.ntab, sE + sW, sQ0 + sQ1, limit);
    if (p.fit < 1)
        return fem_fail(FEM_ERR_DEVICE,
                        "one element (%d dofs, %d q-points, %d components) needs %.1f kB of shared memory in "
                        "the GPU %s kernel, more than the %.1f kB a block may use",
                        v->ndof, v->nq, v->ncomp, (double)p.least * sizeof(double) / 1024.0, op_name(op),
                        (double)limit / 1024.0);
    L->nt = (int)nt;
    L->epb = (int)p.fit;
    L->tab_smem = p.tab;
    L->ntab = (int)n.ntab;
    L->nE = (int)n.nE;
    L->nW = (int)n.nW;
    L->sE = (int)sE;
    L->sW = (int)sW;
    if (p.q) L->nQ0 = (int)n.nQ0, L->nQ1 = (int)n.nQ1, L->sQ0 = (int)sQ0, L->sQ1 = (int)sQ1;
    L->smem = sizeof(double) * (size_t)((p.tab ? n.ntab : 0) + p.fit * (sE + sW + L->sQ0 + L->sQ1));
    L->resident = (int)resident(g, kernel, L->variant, L->nt * L->epb, L->smem);
    return FEM_OK;
}

static void describe(GpuState *g, int op, const Layout *L) {
    const int kernel = kernel_of(op);
    snprintf(g->last_launch, sizeof g->last_launch,
             "%s (%s): %d elems/block x %d threads/elem (%s), %.1f kB shared, tables %s, q-data %s, %d "
             "registers, %d blocks/SM",
             op_name(op), path_name(L->path), L->epb, L->nt,
             L->efast ? "lanes = elements" : "lanes = threads", (double)L->smem / 1024.0,
             L->tab_smem ? "shared" : "global", (L->nQ0 || L->nQ1) ? "shared" : "global",
             g->kernel_regs[kernel][L->variant], L->resident);
}

/* Raises a kernel's dynamic shared-memory limit when a launch needs more than the default 48 KB. */
template <typename K> static int allow_shared(GpuState *g, int which, int variant, K kernel, size_t bytes) {
    if (bytes <= 48 * 1024 || bytes <= g->shared_set[which][variant]) return FEM_OK;
    GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    g->shared_set[which][variant] = bytes;
    return FEM_OK;
}

static dim3 block_of(const Layout *L) {
    return L->efast ? dim3(L->epb, L->nt) : dim3(L->nt, L->epb);
}

static int64_t grid_of(const ElemView *v, const Layout *L) {
    return (v->nelem + L->epb - 1) / L->epb;
}

static int check_grid(int64_t blocks) {
    if (blocks > 2147483647LL)
        return fem_fail(FEM_ERR_DEVICE, "a GPU element kernel would need %lld blocks, more than CUDA allows",
                        (long long)blocks);
    return FEM_OK;
}

/* Everything before a launch of an element kernel: the plan, the compiled variant out of `variants`, the
 * shared-memory limit it needs, the grid, and the description of the launch. */
template <typename K>
static int prepare(GpuState *g, const ElemView *v, int op, int in0, int in1, const K *variants, Layout *L,
                   K *k, int64_t *blocks) {
    FEM_TRY(plan(g, v, op, in0, in1, L));
    *k = variants[L->variant];
    FEM_TRY(allow_shared(g, kernel_of(op), L->variant, *k, L->smem));
    *blocks = grid_of(v, L);
    FEM_TRY(check_grid(*blocks));
    describe(g, op, L);
    return FEM_OK;
}

int gpu_interpolate(Device *d, const ElemView *v, const double *u, double *uq, double *duq) {
    GpuState *g = gpu_state(d);
    if (v->nelem <= 0 || (!uq && !duq)) return FEM_OK;
    int done;
    FEM_TRY(gpu_special_interpolate(g, v, u, uq, duq, &done));
    if (done) return FEM_OK;
    Layout L;
    InterpKernel k;
    int64_t blocks;
    FEM_TRY(prepare(g, v, OP_INTERP, uq != NULL, duq != NULL, interp_kernels, &L, &k, &blocks));
    k<<<(unsigned)blocks, block_of(&L), L.smem>>>(*v, L, u, uq, duq);
    GPU_LAUNCHED(k);
    return FEM_OK;
}

static int integrate_launch(GpuState *g, const ElemView *v, const double *sq, const double *fq, double *r,
                            double *evec, int mode) {
    int done;
    FEM_TRY(gpu_special_integrate(g, v, sq, fq, r, evec, &done));
    if (done) return FEM_OK;
    Layout L;
    IntegKernel k;
    int64_t blocks;
    FEM_TRY(prepare(g, v, OP_INTEG, sq != NULL, fq != NULL, integ_kernels, &L, &k, &blocks));
    k<<<(unsigned)blocks, block_of(&L), L.smem>>>(*v, L, sq, fq, r, evec, mode);
    GPU_LAUNCHED(k);
    return FEM_OK;
}

int gpu_assemble(Device *d, const ElemView *v, const double *evec, double *r) {
    GpuState *g = gpu_state(d);
    if (v->nnodes <= 0 || v->nelem <= 0) return FEM_OK;
    int nc = v->ncomp;
    if (nc < 1 || nc > 3)
        return fem_fail(FEM_ERR_INTERNAL, "gather assembly of %d components (1 to 3 supported)", nc);
    auto k = nc == 1 ? k_gather_assemble<1> : nc == 2 ? k_gather_assemble<2> : k_gather_assemble<3>;
    k<<<gpu_vec_blocks(g, v->nnodes), GPU_VEC_THREADS>>>(v->nnodes, v->ndof, v->t_offsets, v->t_slots, evec,
                                                         r);
    GPU_LAUNCHED(k_gather_assemble);
    return FEM_OK;
}

/* Gather assembly needs the E-vector scratch; without one (evec NULL) the atomics are used. */
int gpu_integrate(Device *d, const ElemView *v, const double *sq, const double *fq, double *r, double *evec) {
    GpuState *g = gpu_state(d);
    if (v->nelem <= 0 || (!sq && !fq)) return FEM_OK;
    if (d->assembly == ASSEMBLE_GATHER && evec) {
        FEM_TRY(integrate_launch(g, v, sq, fq, NULL, evec, MODE_EVEC));
        return gpu_assemble(d, v, evec, r);
    }
    return integrate_launch(g, v, sq, fq, r, NULL, MODE_ATOMIC);
}

extern "C" int gpu_integrate_evec(Device *d, const ElemView *v, const double *sq, const double *fq,
                                  double *evec) {
    if (!d || d->kind != DEV_CUDA || !d->impl)
        return fem_fail(FEM_ERR_USAGE, "gpu_integrate_evec needs a CUDA device");
    if (v->nelem <= 0) return FEM_OK;
    if (!sq && !fq) return gpu_zero(d, evec, sizeof(double) * (size_t)(v->nelem * v->ncomp * v->ndof));
    return integrate_launch(gpu_state(d), v, sq, fq, NULL, evec, MODE_EVEC);
}

int gpu_diag_add(Device *d, const ElemView *v, int c, int b, const double *sq, const double *fq,
                 double *evec) {
    GpuState *g = gpu_state(d);
    if (v->nelem <= 0) return FEM_OK;
    if (c < 0 || c >= v->ncomp || b < 0 || b > v->dim)
        return fem_fail(FEM_ERR_INTERNAL, "diag_add: component %d or slot %d out of range", c, b);
    Layout L;
    DiagKernel k;
    int64_t blocks;
    FEM_TRY(prepare(g, v, OP_DIAG, sq != NULL, fq != NULL, diag_kernels, &L, &k, &blocks));
    k<<<(unsigned)blocks, block_of(&L), L.smem>>>(*v, L, c, b, sq, fq, evec);
    GPU_LAUNCHED(k);
    return FEM_OK;
}

int gpu_kernels_init(GpuState *g) {
    cudaFuncAttributes attr[GPU_NKERNELS][GPU_NVARIANTS];
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < GPU_NVARIANTS && e == cudaSuccess; k++) {
        e = cudaFuncGetAttributes(&attr[GPU_K_INTERPOLATE][k], interp_kernels[k]);
        if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr[GPU_K_INTEGRATE][k], integ_kernels[k]);
        if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr[GPU_K_DIAG][k], diag_kernels[k]);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        cudaDeviceProp prop;
        int major = 0, minor = 0;
        if (cudaGetDeviceProperties(&prop, g->device) == cudaSuccess) major = prop.major, minor = prop.minor;
        cudaGetLastError();
        return fem_fail(FEM_ERR_DEVICE,
                        "the GPU (compute capability %d.%d) cannot run femto's CUDA kernels, built for "
                        "architecture(s) %s (%s); reconfigure with -DCMAKE_CUDA_ARCHITECTURES=%d%d",
                        major, minor, FEMTO_CUDA_ARCHITECTURES, cudaGetErrorString(e), major, minor);
    }
    for (int k = 0; k < GPU_NKERNELS; k++)
        for (int n = 0; n < GPU_NVARIANTS; n++) {
            const cudaFuncAttributes *a = &attr[k][n];
            g->kernel_threads[k][n] =
                a->maxThreadsPerBlock < GPU_MAX_THREADS ? a->maxThreadsPerBlock : GPU_MAX_THREADS;
            g->kernel_regs[k][n] = a->numRegs;
            g->shared_set[k][n] = 48 * 1024;
        }
    /* FEMTO_GPU_SPECIAL: the specialised kernels (gpu/kernels_special.cu) on (default), off ("0"), or on with
     * the q-point arrays in global memory ("global") */
    const char *env = getenv("FEMTO_GPU_SPECIAL");
    g->special = !env ? 1 : strcmp(env, "0") == 0 ? 0 : strcmp(env, "global") == 0 ? 2 : 1;
    /* FEMTO_GPU_CONST_TABLES=0: the fused simplex kernels keep their shape tables in shared memory */
    env = getenv("FEMTO_GPU_CONST_TABLES");
    g->const_tables = !(env && strcmp(env, "0") == 0);
    /* the opt-in limit applies to dynamic shared memory on top of each kernel's static shared memory (none)
     */
    return FEM_OK;
}
