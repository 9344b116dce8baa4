/* Element mathematics shared by the CPU loops and the CUDA kernels: interpolation (nodal values -> values
 * and reference gradients at q-points) and integration (q-point values -> element residual against test
 * values and test gradients), for one element and one field component.
 *
 * Each function is a loop over its outputs strided by (tid, nt): the CPU calls it with (0, 1); a CUDA block
 * calls it with its thread index and size, after staging inputs in shared memory. Tensor-product (sum
 * factorised) versions split into stages that need a barrier between them; the caller places the barriers.
 *
 * Layouts (one component): element values ue[ndof] in lattice order; q-point values at uq[q * us] and
 * reference gradients at duq[q * gs + d] (us, gs: strides of the caller's q-point arrays). */
#ifndef FEMTO_ELEM_OPS_H
#define FEMTO_ELEM_OPS_H

#include "hd.h"

FEM_EXTERN_C_BEGIN

/* ---------------------------------------------------------------- any element (full tables) */

/* uq = B ue (if uq), duq = G ue (if duq). B[q][i], G[q][i][dim]. Each pass of a thread computes two
 * q-points, q and q + nt, so that every ue[i] it reads serves both (on a GPU the tables are broadcast and ue
 * is what costs); every output is still summed over i in ascending order. */
FEM_HD static inline void eo_interp(int tid, int nt, int nq, int ndof, int dim, const double *B,
                                    const double *G, const double *ue, double *uq, int us, double *duq,
                                    int gs) {
    for (int q = tid; q < nq; q += 2 * nt) {
        const int q2 = q + nt, two = q2 < nq;
        if (uq) {
            const double *Bq = B + (int64_t)q * ndof, *Bq2 = B + (int64_t)(two ? q2 : q) * ndof;
            double v = 0.0, v2 = 0.0;
            for (int i = 0; i < ndof; i++) {
                const double u = ue[i];
                v += Bq[i] * u;
                if (two) v2 += Bq2[i] * u;
            }
            uq[q * us] = v;
            if (two) uq[q2 * us] = v2;
        }
        if (duq) {
            /* named accumulators rather than an array indexed by a run-time d: registers on a GPU */
            double g0 = 0.0, g1 = 0.0, g2 = 0.0, h0 = 0.0, h1 = 0.0, h2 = 0.0;
            const double *Gq = G + (int64_t)q * ndof * dim, *Gq2 = G + (int64_t)(two ? q2 : q) * ndof * dim;
            for (int i = 0; i < ndof; i++) {
                const double u = ue[i], *a = Gq + i * dim, *b = Gq2 + i * dim;
                g0 += a[0] * u;
                if (dim > 1) g1 += a[1] * u;
                if (dim > 2) g2 += a[2] * u;
                if (two) {
                    h0 += b[0] * u;
                    if (dim > 1) h1 += b[1] * u;
                    if (dim > 2) h2 += b[2] * u;
                }
            }
            duq[q * gs] = g0;
            if (dim > 1) duq[q * gs + 1] = g1;
            if (dim > 2) duq[q * gs + 2] = g2;
            if (two) {
                duq[q2 * gs] = h0;
                if (dim > 1) duq[q2 * gs + 1] = h1;
                if (dim > 2) duq[q2 * gs + 2] = h2;
            }
        }
    }
}

/* re[i] = sum_q B[q][i] s_q + sum_q,d G[q][i][d] f_q,d (either input may be NULL). Each pass of a thread
 * computes two dofs, i and i + nt, sharing every s and f it reads; each sum runs over q, then d, in order. */
FEM_HD static inline void eo_integ(int tid, int nt, int nq, int ndof, int dim, const double *B,
                                   const double *G, const double *sq, int ss, const double *fq, int fs,
                                   double *re) {
    for (int i = tid; i < ndof; i += 2 * nt) {
        const int i2 = i + nt, two = i2 < ndof, j = two ? i2 : i;
        double r = 0.0, r2 = 0.0;
        for (int q = 0; q < nq; q++) {
            if (sq) {
                const double s = sq[q * ss];
                r += B[q * ndof + i] * s;
                if (two) r2 += B[q * ndof + j] * s;
            }
            if (fq) {
                const double *a = G + ((int64_t)q * ndof + i) * dim, *b = G + ((int64_t)q * ndof + j) * dim;
                for (int d = 0; d < dim; d++) {
                    const double f = fq[q * fs + d];
                    r += a[d] * f;
                    if (two) r2 += b[d] * f;
                }
            }
        }
        re[i] = r;
        if (two) re[i2] = r2;
    }
}

/* ---------------------------------------------------------------- quadrilaterals (sum factorised)
 * ue[j][i] (nd x nd), q = qx + nq qy. B1[q][i], G1[q][i] are nq x nd. Scratch: A (2 nd nq). */

/* The first stage of interpolation on tensor elements, the same in 2D and 3D: the x index of each of `rows`
 * rows of nd values (ue[row][i]) contracted with B1 and G1, AB, AG [row][qx]. */
FEM_HD static inline void eo_x_interp(int tid, int nt, int nd, int nq, int rows, const double *B1,
                                      const double *G1, const double *ue, double *AB, double *AG) {
    for (int k = tid; k < rows * nq; k += nt) {
        int qx = k % nq, row = k / nq;
        double b = 0.0, g = 0.0;
        for (int i = 0; i < nd; i++) {
            double u = ue[row * nd + i];
            b += B1[qx * nd + i] * u;
            g += G1[qx * nd + i] * u;
        }
        AB[k] = b;
        AG[k] = g;
    }
}

FEM_HD static inline void eo_q2_interp1(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                        const double *ue, double *AB, double *AG) {
    eo_x_interp(tid, nt, nd, nq, nd, B1, G1, ue, AB, AG);
}

FEM_HD static inline void eo_q2_interp2(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                        const double *AB, const double *AG, double *uq, int us, double *duq,
                                        int gs) {
    for (int k = tid; k < nq * nq; k += nt) {
        int qx = k % nq, qy = k / nq;
        double v = 0.0, d0 = 0.0, d1 = 0.0;
        for (int j = 0; j < nd; j++) {
            double b = B1[qy * nd + j], ab = AB[j * nq + qx];
            v += b * ab;
            d0 += b * AG[j * nq + qx];
            d1 += G1[qy * nd + j] * ab;
        }
        if (uq) uq[k * us] = v;
        if (duq) duq[k * gs] = d0, duq[k * gs + 1] = d1;
    }
}

/* Stage 1: X[j][qx] = sum_qy B(qy,j) s + G(qy,j) f1 ; Y[j][qx] = sum_qy B(qy,j) f0 */
FEM_HD static inline void eo_q2_integ1(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                       const double *sq, int ss, const double *fq, int fs, double *X,
                                       double *Y) {
    for (int k = tid; k < nd * nq; k += nt) {
        int qx = k % nq, j = k / nq;
        double x = 0.0, y = 0.0;
        for (int qy = 0; qy < nq; qy++) {
            int q = qx + nq * qy;
            double b = B1[qy * nd + j];
            if (sq) x += b * sq[q * ss];
            if (fq) x += G1[qy * nd + j] * fq[q * fs + 1], y += b * fq[q * fs];
        }
        X[k] = x;
        Y[k] = y;
    }
}

FEM_HD static inline void eo_q2_integ2(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                       const double *X, const double *Y, double *re) {
    for (int k = tid; k < nd * nd; k += nt) {
        int i = k % nd, j = k / nd;
        double r = 0.0;
        for (int qx = 0; qx < nq; qx++)
            r += B1[qx * nd + i] * X[j * nq + qx] + G1[qx * nd + i] * Y[j * nq + qx];
        re[k] = r;
    }
}

/* ---------------------------------------------------------------- hexahedra (sum factorised)
 * ue[k][j][i], q = qx + nq (qy + nq qz). Scratch: stage-1 arrays nd*nd*nq, stage-2 arrays nd*nq*nq. */

/* AB, AG [k][j][qx] */
FEM_HD static inline void eo_h3_interp1(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                        const double *ue, double *AB, double *AG) {
    eo_x_interp(tid, nt, nd, nq, nd * nd, B1, G1, ue, AB, AG);
}

/* CBB, CBG (G in x), CGB (G in y) [k][qy][qx] */
FEM_HD static inline void eo_h3_interp2(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                        const double *AB, const double *AG, double *CBB, double *CBG,
                                        double *CGB) {
    for (int k = tid; k < nd * nq * nq; k += nt) {
        int qx = k % nq, qy = (k / nq) % nq, kk = k / (nq * nq);
        double bb = 0.0, bg = 0.0, gb = 0.0;
        for (int j = 0; j < nd; j++) {
            int a = (kk * nd + j) * nq + qx;
            double b = B1[qy * nd + j];
            bb += b * AB[a];
            bg += b * AG[a];
            gb += G1[qy * nd + j] * AB[a];
        }
        CBB[k] = bb;
        CBG[k] = bg;
        CGB[k] = gb;
    }
}

FEM_HD static inline void eo_h3_interp3(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                        const double *CBB, const double *CBG, const double *CGB, double *uq,
                                        int us, double *duq, int gs) {
    for (int k = tid; k < nq * nq * nq; k += nt) {
        int qxy = k % (nq * nq), qz = k / (nq * nq);
        double v = 0.0, d0 = 0.0, d1 = 0.0, d2 = 0.0;
        for (int kk = 0; kk < nd; kk++) {
            int a = kk * nq * nq + qxy;
            double b = B1[qz * nd + kk];
            if (uq) v += b * CBB[a];
            d0 += b * CBG[a];
            d1 += b * CGB[a];
            d2 += G1[qz * nd + kk] * CBB[a];
        }
        if (uq) uq[k * us] = v;
        if (duq) duq[k * gs] = d0, duq[k * gs + 1] = d1, duq[k * gs + 2] = d2;
    }
}

/* Stage 1 (qz -> k): Xs = B s + G f2, X0 = B f0, X1 = B f1, each [k][qy][qx] */
FEM_HD static inline void eo_h3_integ1(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                       const double *sq, int ss, const double *fq, int fs, double *Xs,
                                       double *X0, double *X1) {
    for (int k = tid; k < nd * nq * nq; k += nt) {
        int qxy = k % (nq * nq), kk = k / (nq * nq);
        double xs = 0.0, x0 = 0.0, x1 = 0.0;
        for (int qz = 0; qz < nq; qz++) {
            int q = qxy + nq * nq * qz;
            double b = B1[qz * nd + kk];
            if (sq) xs += b * sq[q * ss];
            if (fq) {
                xs += G1[qz * nd + kk] * fq[q * fs + 2];
                x0 += b * fq[q * fs];
                x1 += b * fq[q * fs + 1];
            }
        }
        Xs[k] = xs;
        X0[k] = x0;
        X1[k] = x1;
    }
}

/* Stage 2 (qy -> j): Ya = B Xs + G X1, Yb = B X0, each [k][j][qx] */
FEM_HD static inline void eo_h3_integ2(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                       const double *Xs, const double *X0, const double *X1, double *Ya,
                                       double *Yb) {
    for (int k = tid; k < nd * nd * nq; k += nt) {
        int qx = k % nq, j = (k / nq) % nd, kk = k / (nq * nd);
        double ya = 0.0, yb = 0.0;
        for (int qy = 0; qy < nq; qy++) {
            int a = (kk * nq + qy) * nq + qx;
            double b = B1[qy * nd + j];
            ya += b * Xs[a] + G1[qy * nd + j] * X1[a];
            yb += b * X0[a];
        }
        Ya[k] = ya;
        Yb[k] = yb;
    }
}

/* Stage 3 (qx -> i): re[k][j][i] = B Ya + G Yb */
FEM_HD static inline void eo_h3_integ3(int tid, int nt, int nd, int nq, const double *B1, const double *G1,
                                       const double *Ya, const double *Yb, double *re) {
    for (int k = tid; k < nd * nd * nd; k += nt) {
        int i = k % nd, kj = k / nd;
        double r = 0.0;
        for (int qx = 0; qx < nq; qx++)
            r += B1[qx * nd + i] * Ya[kj * nq + qx] + G1[qx * nd + i] * Yb[kj * nq + qx];
        re[k] = r;
    }
}

FEM_EXTERN_C_END

#endif
