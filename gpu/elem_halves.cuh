/* The halves of an element operator that the fused kernels and the specialised separate kernels share: the
 * interpolation half (nodal values -> values and reference gradients at the q-points) and the integration
 * half (q-point values s, f -> element sums, assembled by atomics or written as element vectors), in the
 * register kernel shape of gpu/fused_simplex.cu (simplices: one thread per element, values and sums in
 * registers, tables in shared memory) and gpu/fused_tensor.cu (quads and hexes: Q x Q threads per element,
 * sum factorised through shared memory, each thread walking its column of q-points in 3D).
 *
 * A fused kernel is interpolation half + the physics' point function + integration half (q-point data in
 * registers); a separate kernel (gpu/kernels_special.cu) is one half, reading or writing the q-point arrays
 * of fem/device.h's ElemView layout in global memory. Everything here is a template on the sizes (dimension,
 * 1D sizes or dofs, components), so loops unroll and per-thread arrays are registers. */
#ifndef FEMTO_GPU_ELEM_HALVES_CUH
#define FEMTO_GPU_ELEM_HALVES_CUH

#include "fem/device.h"

#include <cuda_runtime.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------------------ simplices */

/* The rows of the shape tables at one q-point, row(i, g) returning B[q][i] and writing G[q][i][0..D-1] into
 * g: from the split tables B[q][i], G[q][i][r] (SplitRows), or from packed records of 4 doubles [G0 G1 G2 B]
 * (3D) or [G0 G1 B -] (2D), 16-byte aligned, which a row reads with two 128-bit loads (3D) instead of four
 * 64-bit ones (PackedRows: simplex_stage<D, true>). Every lane of a warp reads the same row (a broadcast). */
template <int D> struct SplitRows {
    const double *Bq, *Gq;
    __device__ __forceinline__ double row(int i, double *g) const {
#pragma unroll
        for (int r = 0; r < D; r++) g[r] = Gq[i * D + r];
        return Bq[i];
    }
};
template <int D> struct PackedRows {
    const double *Rq;
    __device__ __forceinline__ double row(int i, double *g) const {
        const double2 *p = reinterpret_cast<const double2 *>(Rq + 4 * i);
        const double2 a = p[0];
        g[0] = a.x, g[1] = a.y;
        if (D == 2) return Rq[4 * i + 2];
        const double2 b = p[1];
        g[D - 1] = b.x;
        return b.y;
    }
};

/* f(i, B[q][i], G[q][i][0..D-1]) for the rows i < nd (of at most MAXD: the loop unrolls). */
template <int D, int MAXD, typename R, typename F>
static __device__ __forceinline__ void simplex_rows(int nd, const R &rows, F f) {
#pragma unroll
    for (int i = 0; i < MAXD; i++) {
        if (i < nd) {
            double g[D];
            const double b = rows.row(i, g);
            f(i, b, g);
        }
    }
}

/* The element's values ue[c][i] (the first nd of MAXD) at q-point q: value uq[c] (where val) and reference
 * gradient du[c][r]. (A flag, not a NULL uq: a pointer that may be a local array or NULL would put the
 * array on the stack.) */
template <int D, int NC, int MAXD, typename R>
static __device__ __forceinline__ void simplex_interp(int nd, const R &rows, const double (&ue)[NC][MAXD],
                                                      double *uq, double *du, bool val = true) {
#pragma unroll
    for (int c = 0; c < NC; c++) {
        if (val) uq[c] = 0.0;
#pragma unroll
        for (int r = 0; r < D; r++) du[c * D + r] = 0.0;
    }
    simplex_rows<D, MAXD>(nd, rows, [&](int i, double b, const double *g) {
#pragma unroll
        for (int c = 0; c < NC; c++) {
            if (val) uq[c] += b * ue[c][i];
#pragma unroll
            for (int r = 0; r < D; r++) du[c * D + r] += g[r] * ue[c][i];
        }
    });
}
template <int D, int NC, int MAXD>
static __device__ __forceinline__ void simplex_interp(int nd, const double *Bq, const double *Gq,
                                                      const double (&ue)[NC][MAXD], double *uq, double *du) {
    simplex_interp<D, NC>(nd, SplitRows<D>{Bq, Gq}, ue, uq, du);
}

/* re[c][i] += B[q][i] s[c] + G[q][i][r] f[c][r] for the first nd of MAXD dofs (the terms of has_s, has_f) */
template <int D, int NC, int MAXD, typename R>
static __device__ __forceinline__ void simplex_integ(int nd, const R &rows, const double *s, const double *f,
                                                     double (&re)[NC][MAXD], bool has_s = true,
                                                     bool has_f = true) {
    simplex_rows<D, MAXD>(nd, rows, [&](int i, double b, const double *g) {
#pragma unroll
        for (int c = 0; c < NC; c++) {
            double v = has_s ? b * s[c] : 0.0;
            if (has_f)
#pragma unroll
                for (int r = 0; r < D; r++) v += g[r] * f[c * D + r];
            re[c][i] += v;
        }
    });
}
template <int D, int NC, int MAXD>
static __device__ __forceinline__ void simplex_integ(int nd, const double *Bq, const double *Gq,
                                                     const double *s, const double *f,
                                                     double (&re)[NC][MAXD]) {
    simplex_integ<D, NC>(nd, SplitRows<D>{Bq, Gq}, s, f, re);
}

/* The element's nodal values ue[c][i] = in[my[i] NC + c] (0 beyond nd). */
template <int NC, int MAXD>
static __device__ __forceinline__ void simplex_gather(const fem_idx *my, int nd, const double *in,
                                                      double (&ue)[NC][MAXD]) {
#pragma unroll
    for (int i = 0; i < MAXD; i++) {
        const int64_t n = i < nd ? (int64_t)my[i] : 0;
#pragma unroll
        for (int c = 0; c < NC; c++) ue[c][i] = i < nd ? __ldg(in + n * NC + c) : 0.0;
    }
}

template <int NC, int MAXD> static __device__ __forceinline__ void simplex_zero(double (&re)[NC][MAXD]) {
#pragma unroll
    for (int i = 0; i < MAXD; i++)
#pragma unroll
        for (int c = 0; c < NC; c++) re[c][i] = 0.0;
}

/* The element's sums into the output vector (atomics) or, where evec is given, into evec[e][c][i]. */
template <int NC, int MAXD>
static __device__ __forceinline__ void simplex_put(const fem_idx *my, int nd, int64_t e,
                                                   const double (&re)[NC][MAXD], double *out, double *evec) {
#pragma unroll
    for (int i = 0; i < MAXD; i++) {
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

/* What a block stages in shared memory: the shape tables, and the dof map of its epb elements from e0 on,
 * read coalesced (each thread then takes its element's row). */
typedef struct {
    const double *B, *G;
    const fem_idx *ids;
    int64_t e0;
    int nb; /* the block's elements (epb, fewer in the last block) */
} SimplexStage;

/* PACKED: the tables as PackedRows records R[q][i][4] (in SimplexStage.B; G NULL), else B and G as they are.
 * TABLES false: the dof map alone (kernels that read their tables from constant memory; B and G NULL). */
template <int D, bool PACKED = false, bool TABLES = true>
static __device__ __forceinline__ SimplexStage simplex_stage(const ElemView &v, int epb, double *smem) {
    const int nd = v.ndof, nq = TABLES ? v.nq : 0;
    double *B = TABLES ? smem : nullptr, *G = PACKED || !TABLES ? nullptr : smem + nq * nd;
    fem_idx *ids = (fem_idx *)(smem + nq * nd * (PACKED ? 4 : 1 + D));
    if constexpr (TABLES && PACKED) {
        for (int k = threadIdx.x; k < nq * nd; k += blockDim.x) {
#pragma unroll
            for (int r = 0; r < D; r++) B[4 * k + r] = v.G[k * D + r];
            B[4 * k + D] = v.B[k];
            if (D == 2) B[4 * k + 3] = 0.0;
        }
    } else if constexpr (TABLES) {
        for (int k = threadIdx.x; k < nq * nd; k += blockDim.x) B[k] = v.B[k];
        for (int k = threadIdx.x; k < nq * nd * D; k += blockDim.x) G[k] = v.G[k];
    }
    const int64_t e0 = (int64_t)blockIdx.x * epb;
    const int nb = (int)(v.nelem - e0 < epb ? v.nelem - e0 : epb);
    for (int k = threadIdx.x; k < nb * nd; k += blockDim.x) ids[k] = v.dofs[e0 * nd + k];
    __syncthreads();
    return SimplexStage{B, G, ids, e0, nb};
}

/* ------------------------------------------------------------------------------------ tensor elements */

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

/* Element dof f, component c: into the output vector, or into the element vector evec[e][c][f], or (loc set:
 * deterministic patch assembly) into the element's own loc[c][f] in shared memory. */
template <int ND, int NC>
static __device__ __forceinline__ void put(const fem_idx *dofs, int64_t e, int f, int c, double r,
                                           double *out, double *evec, double *loc) {
    if (loc)
        loc[c * ND + f] = r;
    else if (evec)
        evec[(e * NC + c) * ND + f] = r;
    else
        atomicAdd(&out[(int64_t)dofs[f] * NC + c], r);
}

/* The table entries a hexahedral stage's thread uses for every (c, k) of its loop, read from shared memory
 * once into registers: col[i] = M[i * stride + x], i < N. (Inside the loop the compiler reloads them: the
 * stage's stores to shared memory might alias the tables.) */
template <int N>
static __device__ __forceinline__ void table_column(const double *M, int stride, int x, double *col) {
#pragma unroll
    for (int i = 0; i < N; i++) col[i] = M[i * stride + x];
}

/* The y contraction of thread (qx, qy) from x contractions AB[j], AG[j] (j stride Q): bb = sum_j B(qy, j) AB,
 * bg = sum_j B(qy, j) AG, gb = sum_j G(qy, j) AB; by[j] = B(qy, j) and gy[j] = G(qy, j) in registers, or read
 * from the tables. */
template <int P, int Q>
static __device__ __forceinline__ void contract_y(const double *by, const double *gy, const double *AB,
                                                  const double *AG, double &bb, double &bg, double &gb) {
    bb = bg = gb = 0.0;
#pragma unroll
    for (int j = 0; j < P; j++) {
        const double b = by[j], ab = AB[j * Q];
        bb += b * ab;
        bg += b * AG[j * Q];
        gb += gy[j] * ab;
    }
}
template <int P, int Q>
static __device__ __forceinline__ void contract_y(const Tables &T, int qy, const double *AB, const double *AG,
                                                  double &bb, double &bg, double &gb) {
    double by[P], gy[P];
    table_column<P>(T.Bt, Q, qy, by);
    table_column<P>(T.Gt, Q, qy, gy);
    contract_y<P, Q>(by, gy, AB, AG, bb, bg, gb);
}

/* An element of a tensor kernel's block: epb elements (threadIdx.y), Q x Q threads each (threadIdx.x = t);
 * the block's staged 1D tables (a barrier must follow before they are read) and the element's areas U, V, W
 * (tensor_per doubles an element, after the tables). Threads of the missing elements of the last block are
 * not active: they skip the work but reach every barrier. */
typedef struct {
    Tables T;
    double *U, *V, *W;
    const fem_idx *dofs;
    int64_t e;
    int t;
    bool active;
} TensorElem;

template <int D, int P, int Q, int NC>
static __device__ __forceinline__ TensorElem tensor_begin(const ElemView &v, double *smem) {
    constexpr int ND = D == 3 ? P * P * P : P * P;
    TensorElem te;
    const int nt = blockDim.x, le = threadIdx.y;
    te.t = threadIdx.x;
    te.e = (int64_t)blockIdx.x * blockDim.y + le;
    te.active = te.e < v.nelem;
    te.T = stage_tables<P, Q>(v, smem, te.t + nt * le, nt * blockDim.y);
    te.U = smem + 4 * P * Q + le * tensor_per(D, P, Q, NC);
    te.V = te.U + tensor_nu(D, P, Q, NC);
    te.W = te.V + tensor_nv(D, P, Q, NC);
    te.dofs = v.dofs + (te.active ? te.e : 0) * ND;
    return te;
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
    double bx[P], gx[P];
    table_column<P>(T.Bt, Q, t % Q, bx);
    table_column<P>(T.Gt, Q, t % Q, gx);
    hex_pairs<P, Q, NC>(t, V, [&](int c, int k, int, int j, double &b, double &g) {
        const double *u = ue + c * P * P * P + (k * P + j) * P;
        b = g = 0.0;
#pragma unroll
        for (int i = 0; i < P; i++) b += bx[i] * u[i], g += gx[i] * u[i];
    });
}

/* y: thread (qx, qy): C[c][0 BB, 1 BG (G in x), 2 GB (G in y)][k][t], contracting j. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_y(int t, const Tables &T, const double *V, double *C) {
    const int qx = t % Q, qy = t / Q;
    double by[P], gy[P];
    table_column<P>(T.Bt, Q, qy, by);
    table_column<P>(T.Gt, Q, qy, gy);
#pragma unroll 1
    for (int c = 0; c < NC; c++)
#pragma unroll 1
        for (int k = 0; k < P; k++) {
            const double *AB = V + ((c * 2) * P + k) * P * Q + qx, *AG = AB + P * P * Q;
            double bb, bg, gb;
            contract_y<P, Q>(by, gy, AB, AG, bb, bg, gb);
            double *Ck = C + ((c * 3) * P + k) * Q * Q + t;
            Ck[0] = bb;
            Ck[P * Q * Q] = bg;
            Ck[2 * P * Q * Q] = gb;
        }
}

/* One step of the transposed z contraction: the accumulators of (c, k) += the point's s, f times B(qz, k) =
 * b, G(qz, k) = g. */
template <int P, int NC, int XST, bool HS = true>
static __device__ __forceinline__ void hex_accumulate(double *X, double b, double g, const double *s,
                                                      const double *f, int c, int k) {
    X[((c * 3) * P + k) * XST] += HS ? b * s[c] + g * f[c * 3 + 2] : g * f[c * 3 + 2];
    X[((c * 3 + 1) * P + k) * XST] += b * f[c * 3];
    X[((c * 3 + 2) * P + k) * XST] += b * f[c * 3 + 1];
}

/* The z contraction of thread t's column at point qz, from its column of C: value u[c] and reference
 * gradient du[c][0..2]. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_z_interp(const Tables &T, const double *C, int t, int qz,
                                                    double *u, double *du) {
    constexpr int CS = P * Q * Q;
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
}

/* The transposed z contraction of thread t's column: for qz = 0..Q-1, sf(qz, s, f) gives the point's s[c]
 * and f[c][0..2], accumulated into Xs = B s + G f2, X0 = B f0, X1 = B f1 [c][k]: in registers, written over
 * the thread's column of C at the end (the layout hex_yt reads), or, where they would not fit in registers
 * beside the point function (XS: tensor_xshared), in its column of W. HS false: s is zero (the point function
 * writes none), Xs = G f2. */
template <int P, int Q, int NC, bool XS, bool HS = true, typename SF>
static __device__ __forceinline__ void hex_zt(int t, const Tables &T, double *C, double *W, SF sf) {
    constexpr int NX = NC * 3 * P, XST = XS ? Q * Q : 1; /* XST: stride between accumulators */
    double Xr[XS ? 1 : NX];
    double *X = XS ? W + t : Xr;
#pragma unroll
    for (int k = 0; k < NX; k++) X[k * XST] = 0.0;
#pragma unroll 1
    for (int qz = 0; qz < Q; qz++) {
        double s[NC], f[NC * 3];
        sf(qz, s, f);
#pragma unroll
        for (int c = 0; c < NC; c++)
            if (XS) /* shared: a loop (its loads hoisted would take the registers this saves) */
#pragma unroll 1
                for (int k = 0; k < P; k++)
                    hex_accumulate<P, NC, XST, HS>(X, T.B[qz * P + k], T.G[qz * P + k], s, f, c, k);
            else
#pragma unroll
                for (int k = 0; k < P; k++)
                    hex_accumulate<P, NC, XST, HS>(X, T.B[qz * P + k], T.G[qz * P + k], s, f, c, k);
    }
    if (!XS)
#pragma unroll
        for (int k = 0; k < NX; k++) C[k * Q * Q + t] = X[k];
}

/* y transposed: thread (qx, j): Ya[c][k][j][qx] = sum_qy B(qy, j) Xs + G(qy, j) X1, Yb = sum_qy B(qy, j) X0.
 */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_yt(int t, const Tables &T, const double *X, double *V) {
    if (t / Q >= P) return;
    double by[Q], gy[Q];
    table_column<Q>(T.B, P, t / Q, by);
    table_column<Q>(T.G, P, t / Q, gy);
    hex_pairs<P, Q, NC>(t, V, [&](int c, int k, int qx, int, double &ya, double &yb) {
        const double *Xs = X + ((c * 3) * P + k) * Q * Q + qx, *X0 = Xs + P * Q * Q, *X1 = X0 + P * Q * Q;
        ya = yb = 0.0;
#pragma unroll
        for (int qy = 0; qy < Q; qy++) {
            ya += by[qy] * Xs[qy * Q] + gy[qy] * X1[qy * Q];
            yb += by[qy] * X0[qy * Q];
        }
    });
}

/* x transposed and assembly: thread (i, j): r[c][k][j][i] = sum_qx B(qx, i) Ya + G(qx, i) Yb. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void hex_xt(int t, const Tables &T, const double *V, const fem_idx *dofs,
                                              int64_t e, double *out, double *evec, double *loc = nullptr) {
    const int i = t % Q, j = t / Q;
    if (i >= P || j >= P) return;
    double bx[Q], gx[Q];
    table_column<Q>(T.B, P, i, bx);
    table_column<Q>(T.G, P, i, gx);
#pragma unroll 1
    for (int c = 0; c < NC; c++)
#pragma unroll 1
        for (int k = 0; k < P; k++) {
            const double *Ya = V + ((c * 2) * P + k) * P * Q + j * Q, *Yb = Ya + P * P * Q;
            double r = 0.0;
#pragma unroll
            for (int qx = 0; qx < Q; qx++) r += bx[qx] * Ya[qx] + gx[qx] * Yb[qx];
            put<P * P * P, NC>(dofs, e, (k * P + j) * P + i, c, r, out, evec, loc);
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

/* y: thread (qx, qy) = t finishes the interpolation from the x contractions V: u[c], du[c][0..1]. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void quad_interp_point(int t, const Tables &T, const double *V, double *u,
                                                         double *du) {
    const int qx = t % Q, qy = t / Q;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const double *AB = V + (c * 2) * P * Q + qx, *AG = AB + P * Q;
        contract_y<P, Q>(T, qy, AB, AG, u[c], du[c * 2], du[c * 2 + 1]);
    }
}

/* The point's s[c], f[c][0..1] into SF[c][3][t], which quad_yt reads (s not where HS is false: zero). */
template <int Q, int NC, bool HS = true>
static __device__ __forceinline__ void quad_put_point(int t, double *SF, const double *s, const double *f) {
#pragma unroll
    for (int c = 0; c < NC; c++) {
        if (HS) SF[(c * 3) * Q * Q + t] = s[c];
        SF[(c * 3 + 1) * Q * Q + t] = f[c * 2];
        SF[(c * 3 + 2) * Q * Q + t] = f[c * 2 + 1];
    }
}

/* y transposed: thread (qx, j): X[c][j][qx] = sum_qy B(qy, j) s + G(qy, j) f1, Y = sum_qy B(qy, j) f0 (HS
 * false: s is zero, and not read). */
template <int P, int Q, int NC, bool HS = true>
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
            x += HS ? b * s[qy * Q] + T.G[qy * P + j] * f1[qy * Q] : T.G[qy * P + j] * f1[qy * Q];
            y += b * f0[qy * Q];
        }
        V[(c * 2) * P * Q + j * Q + qx] = x;
        V[(c * 2 + 1) * P * Q + j * Q + qx] = y;
    }
}

/* x transposed and assembly: thread (i, j): r[c][j][i] = sum_qx B(qx, i) X + G(qx, i) Y. */
template <int P, int Q, int NC>
static __device__ __forceinline__ void quad_xt(int t, const Tables &T, const double *V, const fem_idx *dofs,
                                               int64_t e, double *out, double *evec, double *loc = nullptr) {
    const int i = t % Q, j = t / Q;
    if (i >= P || j >= P) return;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const double *X = V + (c * 2) * P * Q + j * Q, *Y = X + P * Q;
        double r = 0.0;
#pragma unroll
        for (int qx = 0; qx < Q; qx++) r += T.B[qx * P + i] * X[qx] + T.G[qx * P + i] * Y[qx];
        put<P * P, NC>(dofs, e, j * P + i, c, r, out, evec, loc);
    }
}

/* ---------------------------------------------------------------------------------- element patches */

/* A cell block's element patches on the device (fem/element_patch.h), and where a block's sums go: with part
 * NULL a shared node's sum is added atomically; with part set (deterministic assembly) patch p writes its
 * j-th shared node's sum to part[(part_off[p] + j) * NC ...], which gpu_patch_partials then adds in patch
 * order. */
typedef struct PatchView {
    const int32_t *node_off, *npriv, *inc_beg;
    const fem_idx *nodes;
    const uint16_t *inc_slot, *slot_node;
    int maxn; /* the most distinct nodes of one patch: the patch kernel's X row length */
    const int32_t *part_off;
    double *part;
} PatchView;

/* The end of a block on patch blockIdx.x: each of its distinct nodes sums its slots, at(c, slot) being
 * component c of slot i epb + le (element le's node i), in slot order, and goes out once: a plain add for a
 * node private to the patch (no other block of the launch touches it), else an atomic add, or with pv.part
 * the partial of deterministic assembly. All threads of the block (1D or 2D) share the nodes. */
template <int NC, typename At>
static __device__ __forceinline__ void patch_put(const PatchView &pv, At at, double *out) {
    const int k0 = __ldg(pv.node_off + blockIdx.x), k1 = __ldg(pv.node_off + blockIdx.x + 1);
    const int kp = k0 + __ldg(pv.npriv + blockIdx.x);
    const int64_t p0 = pv.part ? (int64_t)__ldg(pv.part_off + blockIdx.x) - kp : 0; /* p0 + k: node k's */
    const int nt = blockDim.x * blockDim.y;
    for (int k = k0 + threadIdx.x + threadIdx.y * blockDim.x; k < k1; k += nt) {
        const int64_t g = __ldg(pv.nodes + k);
        double y[NC];
#pragma unroll
        for (int c = 0; c < NC; c++) y[c] = 0.0;
        const int j1 = __ldg(pv.inc_beg + k + 1);
        for (int j = __ldg(pv.inc_beg + k); j < j1; j++) {
            const int slot = __ldg(pv.inc_slot + j);
#pragma unroll
            for (int c = 0; c < NC; c++) y[c] += at(c, slot);
        }
#pragma unroll
        for (int c = 0; c < NC; c++) {
            if (k < kp)
                out[g * NC + c] += y[c];
            else if (pv.part)
                pv.part[(p0 + k) * NC + c] = y[c];
            else
                atomicAdd(&out[g * NC + c], y[c]);
        }
    }
}

/* Deterministic assembly's second pass, one thread per shared node k (a grid-stride loop): out[sh_node[k]]
 * += its partials part[sh_part[j]], j in sh_beg[k] .. sh_beg[k + 1] (patch order), component by component. */
template <int NC>
static __global__ void __launch_bounds__(256)
    k_patch_partials(int64_t nshared, const fem_idx *sh_node, const int32_t *sh_beg, const int32_t *sh_part,
                     const double *part, double *out) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nshared;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t g = sh_node[k];
        const int j0 = sh_beg[k], j1 = sh_beg[k + 1];
        double y[NC];
#pragma unroll
        for (int c = 0; c < NC; c++) y[c] = 0.0;
        for (int j = j0; j < j1; j++) {
            const double *pj = part + (int64_t)sh_part[j] * NC;
#pragma unroll
            for (int c = 0; c < NC; c++) y[c] += pj[c];
        }
#pragma unroll
        for (int c = 0; c < NC; c++) out[g * NC + c] += y[c];
    }
}

#endif
