/* The CPU backend's element kernels: interpolation to q-points, integration against test functions (atomic or
 * deterministic gather assembly), the exact diagonal's element part, and gather assembly, serial or on OpenMP
 * threads. The element mathematics is fem/elem_ops.h, shared with the CUDA kernels. */
#include "cpu/cpu.h"

#include "fem/elem_ops.h"
#include "fem/error.h"

#include <omp.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- kernels */

/* Below this much work per call (elements x dofs x q-points) a parallel region costs more than it saves. */
#define PARALLEL_WORK 200000

/* Scratch for one element: element values and the sum-factorisation stages. */
static size_t scratch_doubles(const ElemView *v) {
    size_t n = (size_t)v->ncomp * v->ndof;
    if (v->tensor) {
        size_t a = (size_t)v->nd1 * v->nd1 * v->nq1, b = (size_t)v->nd1 * v->nq1 * v->nq1;
        n += 3 * (a > b ? a : b) + 3 * b;
    }
    return n;
}

/* One component of one element: ue -> uq (stride us), duq (stride gs). */
static void interp_one(const ElemView *v, const double *ue, double *uq, int us, double *duq, int gs,
                       double *w) {
    int nd = v->nd1, nq = v->nq1;
    if (v->tensor && v->dim == 3) {
        size_t a = (size_t)nd * nd * nq, b = (size_t)nd * nq * nq;
        double *AB = w, *AG = w + a, *CBB = w + 2 * a, *CBG = CBB + b, *CGB = CBG + b;
        eo_h3_interp1(0, 1, nd, nq, v->B1, v->G1, ue, AB, AG);
        eo_h3_interp2(0, 1, nd, nq, v->B1, v->G1, AB, AG, CBB, CBG, CGB);
        eo_h3_interp3(0, 1, nd, nq, v->B1, v->G1, CBB, CBG, CGB, uq, us, duq, gs);
    } else if (v->tensor && v->dim == 2) {
        double *AB = w, *AG = w + nd * nq;
        eo_q2_interp1(0, 1, nd, nq, v->B1, v->G1, ue, AB, AG);
        eo_q2_interp2(0, 1, nd, nq, v->B1, v->G1, AB, AG, uq, us, duq, gs);
    } else {
        eo_interp(0, 1, v->nq, v->ndof, v->dim, v->B, v->G, ue, uq, us, duq, gs);
    }
}

static void integ_one(const ElemView *v, const double *sq, int ss, const double *fq, int fs, double *re,
                      double *w) {
    int nd = v->nd1, nq = v->nq1;
    if (v->tensor && v->dim == 3) {
        size_t a = (size_t)nd * nq * nq, b = (size_t)nd * nd * nq;
        double *Xs = w, *X0 = w + a, *X1 = w + 2 * a, *Ya = w + 3 * a, *Yb = Ya + b;
        eo_h3_integ1(0, 1, nd, nq, v->B1, v->G1, sq, ss, fq, fs, Xs, X0, X1);
        eo_h3_integ2(0, 1, nd, nq, v->B1, v->G1, Xs, X0, X1, Ya, Yb);
        eo_h3_integ3(0, 1, nd, nq, v->B1, v->G1, Ya, Yb, re);
    } else if (v->tensor && v->dim == 2) {
        double *X = w, *Y = w + nd * nq;
        eo_q2_integ1(0, 1, nd, nq, v->B1, v->G1, sq, ss, fq, fs, X, Y);
        eo_q2_integ2(0, 1, nd, nq, v->B1, v->G1, X, Y, re);
    } else {
        eo_integ(0, 1, v->nq, v->ndof, v->dim, v->B, v->G, sq, ss, fq, fs, re);
    }
}

/* Node sums of the element slots into r: each node sums its slots in a fixed order, so the result is bitwise
 * reproducible. An orphaned worksharing loop: inside a parallel region the team shares the nodes. */
static void gather_nodes(const ElemView *v, const double *evec, double *r) {
    int nc = v->ncomp, nd = v->ndof;
#pragma omp for schedule(static)
    for (int64_t n = 0; n < v->nnodes; n++)
        for (int c = 0; c < nc; c++) {
            double s = 0.0;
            for (int64_t k = v->t_offsets[n]; k < v->t_offsets[n + 1]; k++) {
                int64_t slot = v->t_slots[k], e = slot / nd, i = slot % nd;
                s += evec[(e * nc + c) * nd + i];
            }
            r[n * nc + c] += s;
        }
}

/* The arrays of one element kernel call (those an operation does not use are NULL). */
typedef struct {
    const double *u, *sq, *fq;
    double *uq, *duq, *r, *evec;
    int gather; /* integration into evec, then node sums (deterministic gather assembly) */
} KernelArgs;

/* This thread's share of the elements: gather ue, interpolate each component. */
static void interpolate_elements(const ElemView *v, const KernelArgs *a, double *ue) {
    int nc = v->ncomp, nd = v->ndof, nq = v->nq, dim = v->dim;
    double *w = ue + (size_t)nc * nd;
#pragma omp for schedule(static)
    for (int64_t e = 0; e < v->nelem; e++) {
        const fem_idx *dofs = &v->dofs[e * nd];
        for (int c = 0; c < nc; c++)
            for (int i = 0; i < nd; i++) ue[c * nd + i] = a->u[(int64_t)dofs[i] * nc + c];
        for (int c = 0; c < nc; c++)
            interp_one(v, &ue[c * nd], a->uq ? &a->uq[e * nq * nc + c] : NULL, nc,
                       a->duq ? &a->duq[(e * nq * nc + c) * dim] : NULL, nc * dim, w);
    }
}

/* re (one element's residual, [c][i]) added into r at the element's dofs; atomically on several threads. */
static void scatter_add(const Device *d, const ElemView *v, int64_t e, const double *re, double *r) {
    int nc = v->ncomp, nd = v->ndof;
    const fem_idx *dofs = &v->dofs[e * nd];
    for (int c = 0; c < nc; c++)
        for (int i = 0; i < nd; i++) {
            if (d->threads > 1) {
#pragma omp atomic
                r[(int64_t)dofs[i] * nc + c] += re[c * nd + i];
            } else {
                r[(int64_t)dofs[i] * nc + c] += re[c * nd + i];
            }
        }
}

/* This thread's share of the elements: integrate each component, then scatter (atomic) or gather. */
static void integrate_elements(const Device *d, const ElemView *v, const KernelArgs *a, double *re) {
    int nc = v->ncomp, nd = v->ndof, nq = v->nq, dim = v->dim;
    double *w = re + (size_t)nc * nd;
#pragma omp for schedule(static)
    for (int64_t e = 0; e < v->nelem; e++) {
        double *out = a->gather ? &a->evec[e * nc * nd] : re;
        for (int c = 0; c < nc; c++)
            integ_one(v, a->sq ? &a->sq[e * nq * nc + c] : NULL, nc,
                      a->fq ? &a->fq[(e * nq * nc + c) * dim] : NULL, nc * dim, &out[c * nd], w);
        if (!a->gather) scatter_add(d, v, e, out, a->r);
    }
    if (a->gather) gather_nodes(v, a->evec, a->r);
}

/* Runs an element kernel on the device's threads, each with its own scratch. The scratch is allocated before
 * the parallel region: a failure is then one status for the call, where a thread that failed on its own could
 * not skip the worksharing loop that every thread of the team must reach. */
static int run_elements(Device *d, const ElemView *v, const KernelArgs *a, int integrate) {
    size_t nw = scratch_doubles(v);
    double *scratch = fem_malloc(sizeof(double) * nw * (size_t)(d->threads > 1 ? d->threads : 1),
                                 integrate ? "integration scratch" : "interpolation scratch");
    if (!scratch) return FEM_ERR_INTERNAL;
#pragma omp parallel num_threads(d->threads) if (v->nelem * v->ndof * v->nq > PARALLEL_WORK)
    {
        double *mine = scratch + nw * (size_t)omp_get_thread_num();
        if (integrate)
            integrate_elements(d, v, a, mine);
        else
            interpolate_elements(v, a, mine);
    }
    free(scratch);
    return FEM_OK;
}

int cpu_interpolate(Device *d, const ElemView *v, const double *u, double *uq, double *duq) {
    KernelArgs a = {.u = u, .uq = uq, .duq = duq};
    return run_elements(d, v, &a, 0);
}

int cpu_integrate(Device *d, const ElemView *v, const double *sq, const double *fq, double *r, double *evec) {
    KernelArgs a = {.sq = sq, .fq = fq, .r = r, .evec = evec};
    a.gather = d->assembly == ASSEMBLE_GATHER && d->threads > 1 && evec;
    return run_elements(d, v, &a, 1);
}

int cpu_diag_add(Device *d, const ElemView *v, int c, int b, const double *sq, const double *fq,
                        double *evec) {
    int nc = v->ncomp, nd = v->ndof, nq = v->nq, dim = v->dim;
#pragma omp parallel for num_threads(d->threads) schedule(static) if (v->nelem * nd * nq > PARALLEL_WORK)
    for (int64_t e = 0; e < v->nelem; e++)
        for (int i = 0; i < nd; i++) {
            double acc = 0.0;
            for (int q = 0; q < nq; q++) {
                int64_t k = e * nq + q;
                const double *Gq = &v->G[((int64_t)q * nd + i) * dim];
                double phi_b = b == 0 ? v->B[q * nd + i] : Gq[b - 1];
                double t = sq ? v->B[q * nd + i] * sq[k * nc + c] : 0.0;
                if (fq)
                    for (int a = 0; a < dim; a++) t += Gq[a] * fq[(k * nc + c) * dim + a];
                acc += phi_b * t;
            }
            evec[(e * nc + c) * nd + i] += acc;
        }
    return FEM_OK;
}

int cpu_assemble(Device *d, const ElemView *v, const double *evec, double *r) {
#pragma omp parallel num_threads(d->threads) if (v->nnodes > 20000)
    gather_nodes(v, evec, r);
    return FEM_OK;
}

