/* The field at a physical point (see probe.h). */
#include "probe.h"

#include "comm.h"
#include "error.h"
#include "geometry.h"
#include "tables.h"

#include <math.h>
#include <string.h>

/* Reference coordinates of physical point x in cell c of block bi, by Newton's method; 1 if inside. */
static int locate(const Mesh *m, int bi, int64_t c, const double *x, double *xi) {
    const MeshBlock *mb = &m->cells[bi];
    int d = m->dim, n = mb->nnodes;
    double val[27], grad[27 * 3];
    xi[0] = xi[1] = xi[2] = shape_is_tensor(mb->shape) ? 0.5 : 1.0 / (d + 1);
    double scale = 0.0;
    for (int it = 0; it < 30; it++) {
        basis_tabulate(mb->shape, mb->order, 1, xi, val, grad);
        double r[3] = {0, 0, 0}, J[9] = {0}, Jinv[9];
        for (int i = 0; i < n; i++) {
            const double *X = &m->x[3 * (int64_t)mb->nodes[c * n + i]];
            for (int a = 0; a < d; a++) {
                r[a] += val[i] * X[a];
                for (int b = 0; b < d; b++) J[a * d + b] += X[a] * grad[i * d + b];
            }
        }
        if (it == 0)
            for (int a = 0; a < d * d; a++) scale = fmax(scale, fabs(J[a]));
        if (geometry_invert(d, J, Jinv) == 0.0) return 0;
        double step = 0.0;
        for (int a = 0; a < d; a++) {
            double dxi = 0.0;
            for (int b = 0; b < d; b++) dxi += Jinv[a * d + b] * (x[b] - r[b]);
            xi[a] += dxi;
            step = fmax(step, fabs(dxi));
        }
        if (step < 1e-13) break;
        if (step > 10.0) return 0; /* far outside: the map is not worth inverting */
    }
    /* Newton may end without converging (it can wander into the reference cell for a point outside a
     * bilinear cell): xi counts only where it maps back onto x */
    basis_tabulate(mb->shape, mb->order, 1, xi, val, grad);
    double miss = 0.0, extent = 0.0;
    for (int a = 0; a < d; a++) {
        double xa = 0.0, lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++) {
            const double X = m->x[3 * (int64_t)mb->nodes[c * n + i] + a];
            xa += val[i] * X, lo = fmin(lo, X), hi = fmax(hi, X);
        }
        miss = fmax(miss, fabs(xa - x[a])), extent = fmax(extent, hi - lo);
    }
    if (miss > 1e-10 * extent) return 0;
    const double tol = 1e-8;
    if (shape_is_tensor(mb->shape)) {
        for (int a = 0; a < d; a++)
            if (xi[a] < -tol || xi[a] > 1 + tol) return 0;
        return 1;
    }
    double sum = 0.0;
    for (int a = 0; a < d; a++) {
        if (xi[a] < -tol) return 0;
        sum += xi[a];
    }
    return sum <= 1 + tol;
}

int probe_field(const Space *sp, const double *u, const double x[3], double *uq, double *gq) {
    const Mesh *m = sp->mesh;
    int d = m->dim, nc = sp->ncomp;
    for (int bi = 0; bi < sp->ncell_blocks; bi++) {
        const MeshBlock *mb = &m->cells[bi];
        const SpaceBlock *b = &sp->cells[bi];
        for (int64_t c = 0; c < mb->count; c++) {
            double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
            for (int i = 0; i < mb->nnodes; i++)
                for (int a = 0; a < d; a++) {
                    double v = m->x[3 * (int64_t)mb->nodes[c * mb->nnodes + i] + a];
                    lo[a] = fmin(lo[a], v), hi[a] = fmax(hi[a], v);
                }
            double size = 0.0, slack;
            for (int a = 0; a < d; a++) size = fmax(size, hi[a] - lo[a]);
            slack = 0.25 * size; /* curved cells bulge beyond their nodes' box */
            int out = 0;
            for (int a = 0; a < d; a++) out |= x[a] < lo[a] - slack || x[a] > hi[a] + slack;
            double xi[3];
            if (out || !locate(m, bi, c, x, xi)) continue;
            if (!u) return 1;
            double val[1024], grad[1024 * 3], gr[9] = {0}, geo[1 + 9], J[9] = {0};
            double gval[27], ggrad[27 * 3];
            basis_tabulate(b->shape, b->order, 1, xi, val, grad);
            basis_tabulate(mb->shape, mb->order, 1, xi, gval, ggrad);
            for (int i = 0; i < mb->nnodes; i++)
                for (int a = 0; a < d; a++)
                    for (int r = 0; r < d; r++)
                        J[a * d + r] +=
                            m->x[3 * (int64_t)mb->nodes[c * mb->nnodes + i] + a] * ggrad[i * d + r];
            geometry_invert(d, J, geo + 1);
            for (int k = 0; k < nc; k++) uq[k] = 0.0;
            for (int i = 0; i < b->ndof; i++)
                for (int k = 0; k < nc; k++) {
                    double v = u[(int64_t)b->dofs[c * b->ndof + i] * nc + k];
                    uq[k] += val[i] * v;
                    for (int r = 0; r < d; r++) gr[k * d + r] += grad[i * d + r] * v;
                }
            if (gq)
                for (int k = 0; k < nc; k++)
                    for (int bb = 0; bb < d; bb++) {
                        double v = 0.0;
                        for (int r = 0; r < d; r++) v += gr[k * d + r] * geo[1 + r * d + bb];
                        gq[k * d + bb] = v;
                    }
            return 1;
        }
    }
    return 0;
}

int probe_field_parts(const Space *sp, const double *u, const double x[3], double *uq, double *gq,
                      int *found) {
    int nc = sp->ncomp, d = sp->mesh->dim, n = nc + nc * d;
    if (comm_size() == 1) return *found = probe_field(sp, u, x, uq, gq), FEM_OK;
    if (nc > 64) return fem_fail(FEM_ERR_INTERNAL, "a probe reads at most 64 components");
    double local[64 * 4] = {0}, all[64 * 4] = {0};
    int here = probe_field(sp, u, x, local, u ? local + nc : NULL);
    /* the lowest rank that found it: the largest -rank over those that did */
    double who = here ? -(double)comm_rank() : -(double)comm_size();
    FEM_TRY(comm_max(&who, 1));
    *found = who > -(double)comm_size();
    if (!*found || !u) return FEM_OK;
    if (-who == (double)comm_rank()) memcpy(all, local, sizeof(double) * (size_t)n);
    FEM_TRY(comm_sum(all, n));
    memcpy(uq, all, sizeof(double) * (size_t)nc);
    if (gq) memcpy(gq, all + nc, sizeof(double) * (size_t)(nc * d));
    return FEM_OK;
}
