/* One chunk of the fused CPU operator (cpu/fused.h): batches of FUSED_LANES elements through gather,
 * interpolation, the physics' point function, integration and assembly.
 *
 * Element-level arrays of a batch keep the element innermost ([component][dof][lane], [component][q][lane]),
 * as GCC vectors of FUSED_LANES doubles (Lanes), so that interpolation and integration, where the flops are,
 * run as SIMD instructions across the elements of the batch, each lane doing what the default kernels do for
 * one element (fem/elem_ops.h: the same sums in the same order, with fused multiply-adds). The point
 * functions read and write q-point records [lane][q][component] (the QfArgs layout); interpolation stores
 * into that layout, integration transposes out of it (a few values per q-point against the table products
 * per q-point and dof). The geometry, the bulk of what the point functions read, is kept in processing order
 * (cpu/fused.c), so that a batch's is one contiguous slice of it; the rest (state, tags, sources, the
 * auxiliary field) is copied into the batch, since the batch's elements are not neighbours in the block's
 * arrays.
 *
 * fused_chunk is compiled for several x86-64 levels (FUSED_CLONES); the AVX2 and AVX-512 versions give
 * bitwise the same results (the same operations lane by lane; the vector width does not change a sum's
 * order). */
#include "cpu/fused.h"

#include <string.h>

#define L FUSED_LANES
#define FUSED_INLINE static inline __attribute__((always_inline))

/* The values of one quantity for the L elements of a batch: a GCC/Clang vector, which the compiler keeps in
 * SIMD registers (L / 4 AVX2 registers, L / 8 AVX-512 ones) and operates on lane by lane. */
typedef double Lanes __attribute__((vector_size(8 * L)));
/* The same over scratch arrays of doubles (aliasing them, 8-byte aligned). */
typedef double LanesMem __attribute__((vector_size(8 * L), aligned(8), may_alias));
#define lanes_load(p) ((Lanes)(*(const LanesMem *)(p)))
#define lanes_store(p, x) (*(LanesMem *)(p) = (x))

/* A batch's scratch: element ids and tags, element values and vectors, the point function's q-point records
 * and their transposes, and the per-element data the point function reads, copied in. */
typedef struct {
    int64_t *eid;
    int32_t *tag;
    double *ue, *re, *qu, *qs, *sT, *qd, *qf, *fT;
    double *state, *x, *aux, *src;
    double *ts; /* the sum-factorised stages' partial sums (quadrilaterals, hexahedra) */
} Batch;

/* Doubles per lane of the sum-factorised stages of a cell of n nodes and m q-points a direction, for the
 * interpolation and again (reused) for the integration: a hexahedron's two arrays of n n m and three of n m m,
 * a quadrilateral's two of n m. */
static size_t tensor_scratch(const ElemView *v) {
    const size_t n = (size_t)v->nd1, m = (size_t)v->nq1;
    if (!v->tensor) return 0;
    return v->dim == 3 ? 2 * n * n * m + 3 * n * m * m : 2 * n * m;
}

/* The sizes (doubles per lane) of the batch's arrays, in the order batch_scratch lays them out. */
static void batch_sizes(const FusedJob *job, size_t n[15]) {
    const ElemView *v = job->v;
    const QfArgs *a = &job->a;
    size_t nc = (size_t)v->ncomp, nd = (size_t)v->ndof, nq = (size_t)v->nq, d = (size_t)v->dim;
    /* eid, tag, ue, re, qu, qs, sT, qd, qf, fT, state, x, aux, src, ts */
    size_t sizes[15] = {1,
                        1,
                        nc * nd,
                        nc * nd,
                        nq * nc,
                        nq * nc,
                        nq * nc,
                        nq * nc * d,
                        nq * nc * d,
                        nq * nc * d,
                        nq * (size_t)a->nstate,
                        a->x ? nq * 3 : 0,
                        a->aux ? nq : 0,
                        a->src ? nq * nc : 0,
                        job->facet ? 0 : tensor_scratch(v)};
    memcpy(n, sizes, sizeof sizes);
}

size_t fused_scratch_doubles(const FusedJob *job) {
    size_t n[15], total = 0;
    batch_sizes(job, n);
    for (int k = 0; k < 15; k++) total += L * n[k];
    return total;
}

static Batch batch_scratch(const FusedJob *job, double *w) {
    size_t n[15];
    double *p[15];
    batch_sizes(job, n);
    for (int k = 0; k < 15; k++) p[k] = w, w += L * n[k];
    return (Batch){(int64_t *)p[0], (int32_t *)p[1], p[2],  p[3], p[4], p[5], p[6], p[7], p[8], p[9],
                   p[10],           p[11],           p[12], p[13], p[14]};
}

/* ue[c][i][l] = in[dofs of element eid[l]] (lanes past nb: zero). */
static inline void gather(const ElemView *v, const double *in, const int64_t *eid, int nb,
                          double *restrict ue) {
    const int nd = v->ndof, nc = v->ncomp;
    for (int l = 0; l < nb; l++) {
        const fem_idx *dofs = v->dofs + eid[l] * nd;
        for (int i = 0; i < nd; i++)
            for (int c = 0; c < nc; c++) ue[(c * nd + i) * L + l] = in[(int64_t)dofs[i] * nc + c];
    }
    for (int l = nb; l < L; l++)
        for (int k = 0; k < nc * nd; k++) ue[k * L + l] = 0.0;
}

/* Asks for the input and output values of the elements eid[0 .. nb) ahead of their use: in the curve order
 * the batch's nodes are neighbours in space but not in memory, and their cache misses are what a batch waits
 * on. */
static inline void prefetch(const ElemView *v, const double *in, const double *out, const int64_t *eid,
                            int nb) {
    const int nd = v->ndof, nc = v->ncomp;
    for (int l = 0; l < nb; l++) {
        const fem_idx *dofs = v->dofs + eid[l] * nd;
        for (int i = 0; i < nd; i++) {
            __builtin_prefetch(in + (int64_t)dofs[i] * nc, 0, 3);
            __builtin_prefetch(out + (int64_t)dofs[i] * nc, 1, 3);
        }
    }
}

/* out[dofs of element eid[l]] += re[c][i][l], element by element. */
static inline void scatter(const ElemView *v, const double *restrict re, const int64_t *eid, int nb,
                           double *out) {
    const int nd = v->ndof, nc = v->ncomp;
    for (int l = 0; l < nb; l++) {
        const fem_idx *dofs = v->dofs + eid[l] * nd;
        for (int i = 0; i < nd; i++)
            for (int c = 0; c < nc; c++) out[(int64_t)dofs[i] * nc + c] += re[(c * nd + i) * L + l];
    }
}

/* The records of per_elem doubles of each batch element: from the block's array ([nelem][per_elem]) into the
 * batch's ([lane][per_elem]), and back. */
static inline void records_in(const int64_t *eid, int nb, size_t per_elem, const double *restrict block,
                              double *restrict batch) {
    for (int l = 0; l < nb; l++)
        for (size_t k = 0; k < per_elem; k++) batch[l * per_elem + k] = block[eid[l] * per_elem + k];
}

static inline void records_out(const int64_t *eid, int nb, size_t per_elem, const double *restrict batch,
                               double *restrict block) {
    for (int l = 0; l < nb; l++)
        for (size_t k = 0; k < per_elem; k++) block[eid[l] * per_elem + k] = batch[l * per_elem + k];
}

/* The point function's arguments for the batch of the elements order[k .. k + nb): its q-point records and
 * its elements' data. */
static QfArgs batch_args(const FusedJob *job, int64_t k, int nb, const Batch *b) {
    const int64_t *eid = job->order + k;
    const QfArgs *a = &job->a;
    const size_t nq = (size_t)a->nq;
    QfArgs la = *a;
    la.n = (int64_t)nb * a->nq;
    la.threads = 1;
    la.u = b->qu;
    la.du = b->qd;
    la.s = b->qs;
    la.f = job->facet ? NULL : b->qf;
    la.geo = job->geo + k * a->nq * job->geo_stride;
    if (a->tag) {
        for (int l = 0; l < nb; l++) b->tag[l] = a->tag[eid[l]];
        la.tag = b->tag;
    }
    if (a->nstate > 0) {
        la.state = b->state;
        if (!a->residual) records_in(eid, nb, nq * a->nstate, a->state, b->state);
    }
    if (a->x) records_in(eid, nb, nq * 3, a->x, b->x), la.x = b->x;
    if (a->aux) records_in(eid, nb, nq, a->aux, b->aux), la.aux = b->aux;
    if (a->src) records_in(eid, nb, nq * a->ncomp, a->src, b->src), la.src = b->src;
    return la;
}

/* ---------------------------------------------------------------- full tables (any shape) */

/* qu[l][q][c] = sum_i B[q][i] ue[c][i][l] and, with G, qd[l][q][c][r] = sum_i G[q][i][r] ue[c][i][l]. */
FUSED_INLINE void interp_full(const ElemView *v, const int D, const int G, const double *restrict ue,
                              double *restrict qu, double *restrict qd) {
    const int nd = v->ndof, nq = v->nq, nc = v->ncomp;
    for (int c = 0; c < nc; c++)
        for (int q = 0; q < nq; q++) {
            Lanes val = {0}, g0 = {0}, g1 = {0}, g2 = {0};
            const double *Bq = v->B + q * nd, *Gq = v->G + q * nd * D;
            for (int i = 0; i < nd; i++) {
                const Lanes u = lanes_load(ue + (c * nd + i) * L);
                val += Bq[i] * u;
                if (G) g0 += Gq[i * D] * u;
                if (G && D > 1) g1 += Gq[i * D + 1] * u;
                if (G && D > 2) g2 += Gq[i * D + 2] * u;
            }
            for (int l = 0; l < L; l++) {
                int64_t k = ((int64_t)l * nq + q) * nc + c;
                qu[k] = val[l];
                if (G) qd[k * D] = g0[l];
                if (G && D > 1) qd[k * D + 1] = g1[l];
                if (G && D > 2) qd[k * D + 2] = g2[l];
            }
        }
}

/* sT[c][q][l] = qs[l][q][c] and, with F, fT[c][q][r][l] = qf[l][q][c][r] (lanes past nb: zero). */
FUSED_INLINE void transpose_out(const ElemView *v, const int D, const int F, int nb,
                                const double *restrict qs, const double *restrict qf, double *restrict sT,
                                double *restrict fT) {
    const int nq = v->nq, nc = v->ncomp;
    for (int c = 0; c < nc; c++)
        for (int q = 0; q < nq; q++)
            for (int l = 0; l < L; l++) {
                int64_t k = ((int64_t)l * nq + q) * nc + c, t = (int64_t)c * nq + q;
                sT[t * L + l] = l < nb ? qs[k] : 0.0;
                for (int r = 0; F && r < D; r++) fT[(t * D + r) * L + l] = l < nb ? qf[k * D + r] : 0.0;
            }
}

/* re[c][i][l] = sum_q B[q][i] sT[c][q][l] (+ with F: sum_r G[q][i][r] fT[c][q][r][l]), four dofs per pass
 * so that the sums of a pass are independent chains. */
FUSED_INLINE void integ_full(const ElemView *v, const int D, const int F, const double *restrict sT,
                             const double *restrict fT, double *restrict re) {
    enum { NI = 4 };
    const int nd = v->ndof, nq = v->nq, nc = v->ncomp;
    for (int c = 0; c < nc; c++)
        for (int i0 = 0; i0 < nd; i0 += NI) {
            Lanes acc[NI] = {{0}};
            const int ni = nd - i0 < NI ? nd - i0 : NI;
            for (int q = 0; q < nq; q++) {
                const double *sq = sT + ((int64_t)c * nq + q) * L, *fq = fT + ((int64_t)c * nq + q) * D * L;
                const Lanes s = lanes_load(sq);
                const Lanes f0 = F ? lanes_load(fq) : s, f1 = F && D > 1 ? lanes_load(fq + L) : s;
                const Lanes f2 = F && D > 2 ? lanes_load(fq + 2 * L) : s;
                for (int k = 0; k < NI; k++) {
                    const int i = i0 + (k < ni ? k : 0);
                    const double *gi = v->G + (q * nd + i) * D;
                    Lanes t = acc[k] + v->B[q * nd + i] * s;
                    if (F) t += gi[0] * f0;
                    if (F && D > 1) t += gi[1] * f1;
                    if (F && D > 2) t += gi[2] * f2;
                    acc[k] = t;
                }
            }
            for (int k = 0; k < ni; k++) lanes_store(re + (c * nd + i0 + k) * L, acc[k]);
        }
}

/* ---------------------------------------------------------------- hexahedra, sum factorised
 * The same three contractions a direction as fem/elem_ops.h's eo_h3_*, each lane one element: n = nd1 nodes
 * and m = nq1 q-points a direction, nodes in lattice order (ue[c][k][j][i]), q = qx + m (qy + m qz). Per
 * element and component 3 (n^3 m + n^2 m^2 + n m^3) multiply-adds each way where the full tables take
 * 4 n^3 m^3: at p = 2 (n = m = 3) 486 against 2,916. */

/* The first contraction of a tensor cell's interpolation, the same in 2D and 3D: the x index of each of `rows`
 * rows of n values (u[row][i]) against B1 and G1, AB and AG [row][qx]. */
FUSED_INLINE void x_interp(int n, int m, int rows, const double *B1, const double *G1, const double *restrict u,
                           double *restrict AB, double *restrict AG) {
    for (int row = 0; row < rows; row++)
        for (int qx = 0; qx < m; qx++) {
            Lanes b = {0}, g = {0};
            for (int i = 0; i < n; i++) {
                const Lanes x = lanes_load(u + (row * n + i) * L);
                b += B1[qx * n + i] * x;
                g += G1[qx * n + i] * x;
            }
            lanes_store(AB + (row * m + qx) * L, b);
            lanes_store(AG + (row * m + qx) * L, g);
        }
}

/* The last contraction of a tensor cell's integration, its transpose: re[row][i] = sum_qx B1(qx, i) Ya[row][qx]
 * + G1(qx, i) Yb[row][qx] for `rows` rows. */
FUSED_INLINE void x_integ(int n, int m, int rows, const double *B1, const double *G1, const double *restrict Ya,
                          const double *restrict Yb, double *restrict re) {
    for (int row = 0; row < rows; row++)
        for (int i = 0; i < n; i++) {
            Lanes r = {0};
            for (int qx = 0; qx < m; qx++)
                r += B1[qx * n + i] * lanes_load(Ya + (row * m + qx) * L) +
                     G1[qx * n + i] * lanes_load(Yb + (row * m + qx) * L);
            lanes_store(re + (row * n + i) * L, r);
        }
}

/* qu[l][q][c], qd[l][q][c][r] of component c from ue[c] (T: 2 n n m + 3 n m m lanes of scratch) */
FUSED_INLINE void interp_hex(const ElemView *v, int c, const double *restrict ue, double *restrict qu,
                               double *restrict qd, double *restrict T) {
    const int n = v->nd1, m = v->nq1, nd = v->ndof, nq = v->nq, nc = v->ncomp;
    const double *B1 = v->B1, *G1 = v->G1;
    const double *u = ue + (int64_t)c * nd * L;
    double *AB = T, *AG = AB + n * n * m * L, *CBB = AG + n * n * m * L, *CBG = CBB + n * m * m * L,
           *CGB = CBG + n * m * m * L;
    x_interp(n, m, n * n, B1, G1, u, AB, AG); /* x: AB, AG [k][j][qx] */
    for (int kk = 0; kk < n; kk++) /* y: CBB, CBG (G in x), CGB (G in y) [k][qy][qx] */
        for (int qy = 0; qy < m; qy++)
            for (int qx = 0; qx < m; qx++) {
                Lanes bb = {0}, bg = {0}, gb = {0};
                for (int j = 0; j < n; j++) {
                    const int a = ((kk * n + j) * m + qx) * L;
                    const double b = B1[qy * n + j];
                    const Lanes ab = lanes_load(AB + a);
                    bb += b * ab;
                    bg += b * lanes_load(AG + a);
                    gb += G1[qy * n + j] * ab;
                }
                const int o = ((kk * m + qy) * m + qx) * L;
                lanes_store(CBB + o, bb), lanes_store(CBG + o, bg), lanes_store(CGB + o, gb);
            }
    for (int qz = 0; qz < m; qz++) /* z: the values and the three derivatives at q */
        for (int qxy = 0; qxy < m * m; qxy++) {
            Lanes val = {0}, d0 = {0}, d1 = {0}, d2 = {0};
            for (int kk = 0; kk < n; kk++) {
                const int a = (kk * m * m + qxy) * L;
                const double b = B1[qz * n + kk];
                const Lanes cbb = lanes_load(CBB + a);
                val += b * cbb;
                d0 += b * lanes_load(CBG + a);
                d1 += b * lanes_load(CGB + a);
                d2 += G1[qz * n + kk] * cbb;
            }
            const int q = qxy + m * m * qz;
            for (int l = 0; l < L; l++) {
                const int64_t k = ((int64_t)l * nq + q) * nc + c;
                qu[k] = val[l];
                qd[k * 3] = d0[l], qd[k * 3 + 1] = d1[l], qd[k * 3 + 2] = d2[l];
            }
        }
}

/* re[c][k][j][i] = sum_q B(q, i) sT[c][q] + sum_r G_r(q, i) fT[c][q][r], the transpose of interp_hex */
FUSED_INLINE void integ_hex(const ElemView *v, int c, const double *restrict sT, const double *restrict fT,
                              double *restrict re, double *restrict T) {
    const int n = v->nd1, m = v->nq1, nd = v->ndof, nq = v->nq;
    const double *B1 = v->B1, *G1 = v->G1;
    const double *sc = sT + (int64_t)c * nq * L, *fc = fT + (int64_t)c * nq * 3 * L;
    double *Xs = T, *X0 = Xs + n * m * m * L, *X1 = X0 + n * m * m * L, *Ya = X1 + n * m * m * L,
           *Yb = Ya + n * n * m * L;
    for (int kk = 0; kk < n; kk++) /* z: Xs = B s + G f2, X0 = B f0, X1 = B f1 [k][qy][qx] */
        for (int qxy = 0; qxy < m * m; qxy++) {
            Lanes xs = {0}, x0 = {0}, x1 = {0};
            for (int qz = 0; qz < m; qz++) {
                const int q = qxy + m * m * qz;
                const double b = B1[qz * n + kk];
                xs += b * lanes_load(sc + q * L) + G1[qz * n + kk] * lanes_load(fc + (q * 3 + 2) * L);
                x0 += b * lanes_load(fc + q * 3 * L);
                x1 += b * lanes_load(fc + (q * 3 + 1) * L);
            }
            const int o = (kk * m * m + qxy) * L;
            lanes_store(Xs + o, xs), lanes_store(X0 + o, x0), lanes_store(X1 + o, x1);
        }
    for (int kk = 0; kk < n; kk++) /* y: Ya = B Xs + G X1, Yb = B X0 [k][j][qx] */
        for (int j = 0; j < n; j++)
            for (int qx = 0; qx < m; qx++) {
                Lanes ya = {0}, yb = {0};
                for (int qy = 0; qy < m; qy++) {
                    const int a = ((kk * m + qy) * m + qx) * L;
                    const double b = B1[qy * n + j];
                    ya += b * lanes_load(Xs + a) + G1[qy * n + j] * lanes_load(X1 + a);
                    yb += b * lanes_load(X0 + a);
                }
                const int o = ((kk * n + j) * m + qx) * L;
                lanes_store(Ya + o, ya), lanes_store(Yb + o, yb);
            }
    x_integ(n, m, n * n, B1, G1, Ya, Yb, re + (int64_t)c * nd * L); /* x: re[k][j][i] = B Ya + G Yb */
}

/* ---------------------------------------------------------------- quadrilaterals, sum factorised
 * As fem/elem_ops.h's eo_q2_*: ue[c][j][i], q = qx + m qy; 2 (n^2 m + n m^2) multiply-adds each way per
 * element and component against 3 n^2 m^2 through the full tables. */

FUSED_INLINE void interp_quad(const ElemView *v, int c, const double *restrict ue, double *restrict qu,
                                double *restrict qd, double *restrict T) {
    const int n = v->nd1, m = v->nq1, nd = v->ndof, nq = v->nq, nc = v->ncomp;
    const double *B1 = v->B1, *G1 = v->G1;
    const double *u = ue + (int64_t)c * nd * L;
    double *AB = T, *AG = AB + n * m * L;
    x_interp(n, m, n, B1, G1, u, AB, AG); /* x: AB, AG [j][qx] */
    for (int qy = 0; qy < m; qy++) /* y: the value and the two derivatives at q */
        for (int qx = 0; qx < m; qx++) {
            Lanes val = {0}, d0 = {0}, d1 = {0};
            for (int j = 0; j < n; j++) {
                const double b = B1[qy * n + j];
                const Lanes ab = lanes_load(AB + (j * m + qx) * L);
                val += b * ab;
                d0 += b * lanes_load(AG + (j * m + qx) * L);
                d1 += G1[qy * n + j] * ab;
            }
            const int q = qx + m * qy;
            for (int l = 0; l < L; l++) {
                const int64_t k = ((int64_t)l * nq + q) * nc + c;
                qu[k] = val[l];
                qd[k * 2] = d0[l], qd[k * 2 + 1] = d1[l];
            }
        }
}

FUSED_INLINE void integ_quad(const ElemView *v, int c, const double *restrict sT, const double *restrict fT,
                               double *restrict re, double *restrict T) {
    const int n = v->nd1, m = v->nq1, nd = v->ndof, nq = v->nq;
    const double *B1 = v->B1, *G1 = v->G1;
    const double *sc = sT + (int64_t)c * nq * L, *fc = fT + (int64_t)c * nq * 2 * L;
    double *X = T, *Y = X + n * m * L;
    for (int j = 0; j < n; j++) /* y: X = B s + G f1, Y = B f0 [j][qx] */
        for (int qx = 0; qx < m; qx++) {
            Lanes x = {0}, y = {0};
            for (int qy = 0; qy < m; qy++) {
                const int q = qx + m * qy;
                const double b = B1[qy * n + j];
                x += b * lanes_load(sc + q * L) + G1[qy * n + j] * lanes_load(fc + (q * 2 + 1) * L);
                y += b * lanes_load(fc + q * 2 * L);
            }
            lanes_store(X + (j * m + qx) * L, x), lanes_store(Y + (j * m + qx) * L, y);
        }
    x_integ(n, m, n, B1, G1, X, Y, re + (int64_t)c * nd * L); /* x: re[j][i] = B X + G Y */
}

/* A tensor cell's interpolation and integration (D = 3: hexahedra, else quadrilaterals), every component,
 * with the full-table functions' arguments and T the stages' scratch. */
FUSED_INLINE void interp_tensor(const ElemView *v, const int D, const double *restrict ue, double *restrict qu,
                                double *restrict qd, double *restrict T) {
    for (int c = 0; c < v->ncomp; c++)
        if (D == 3)
            interp_hex(v, c, ue, qu, qd, T);
        else
            interp_quad(v, c, ue, qu, qd, T);
}

FUSED_INLINE void integ_tensor(const ElemView *v, const int D, const double *restrict sT,
                               const double *restrict fT, double *restrict re, double *restrict T) {
    for (int c = 0; c < v->ncomp; c++)
        if (D == 3)
            integ_hex(v, c, sT, fT, re, T);
        else
            integ_quad(v, c, sT, fT, re, T);
}

/* ---------------------------------------------------------------- a chunk */

/* D: the tables' dimension; G: interpolate gradients; F: integrate against test gradients (cells); TP:
 * quadrilateral or hexahedral cells, sum factorised (G = F = 1). */
FUSED_INLINE void chunk_full(const FusedJob *job, const int D, const int G, const int F, const int TP,
                             int64_t k0, int64_t k1, double *w) {
    const ElemView *v = job->v;
    const QfArgs *a = &job->a;
    Batch b = batch_scratch(job, w);
    for (int64_t k = k0; k < k1; k += L) {
        const int nb = k1 - k < L ? (int)(k1 - k) : L;
        const int64_t *eid = job->order + k;
        if (k + L < k1) prefetch(v, job->in, job->out, eid + L, k1 - k - L < L ? (int)(k1 - k - L) : L);
        gather(v, job->in, eid, nb, b.ue);
        if (TP)
            interp_tensor(v, D, b.ue, b.qu, b.qd, b.ts);
        else
            interp_full(v, D, G, b.ue, b.qu, b.qd);
        QfArgs la = batch_args(job, k, nb, &b);
        job->points(&la);
        if (a->residual && a->nstate > 0) records_out(eid, nb, (size_t)a->nq * a->nstate, b.state, a->state);
        transpose_out(v, D, F, nb, b.qs, b.qf, b.sT, b.fT);
        if (TP)
            integ_tensor(v, D, b.sT, b.fT, b.re, b.ts);
        else
            integ_full(v, D, F, b.sT, b.fT, b.re);
        scatter(v, b.re, eid, nb, job->out);
    }
}

FUSED_CLONES void fused_chunk(const FusedJob *job, int64_t k0, int64_t k1, double *w) {
    const int dim = job->v->dim;
    if (!job->facet && dim == 3 && job->v->tensor)
        chunk_full(job, 3, 1, 1, 1, k0, k1, w);
    else if (!job->facet && dim == 3)
        chunk_full(job, 3, 1, 1, 0, k0, k1, w);
    else if (!job->facet && job->v->tensor)
        chunk_full(job, 2, 1, 1, 1, k0, k1, w);
    else if (!job->facet)
        chunk_full(job, 2, 1, 1, 0, k0, k1, w);
    else if (!job->grads)
        chunk_full(job, 1, 0, 0, 0, k0, k1, w);
    else if (dim == 2)
        chunk_full(job, 2, 1, 0, 0, k0, k1, w);
    else
        chunk_full(job, 1, 1, 0, 0, k0, k1, w);
}
