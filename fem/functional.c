/* Host-side functionals of a solution (see functional.h). */
#include "functional.h"

#include "error.h"
#include "geometry.h"
#include "tables.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Field values and physical gradients of one element at the points of `t`; geometry from geo (GEO_STRIDE). */
static void field_at(const Space *sp, const SpaceBlock *b, const ElementTables *t, int64_t c, const double *u,
                     const double *aux, const double *geo, int q, double *uq, double *gq, double *auxq) {
    int nc = sp->ncomp, d = t->dim, nd = t->ndof;
    double gr[3 * 3] = {0};
    for (int k = 0; k < nc; k++) uq[k] = 0.0;
    *auxq = 0.0;
    for (int i = 0; i < nd; i++) {
        fem_idx node = b->dofs[c * nd + i];
        if (aux) *auxq += t->B[q * nd + i] * aux[node];
        for (int k = 0; k < nc; k++) {
            double v = u[(int64_t)node * nc + k];
            uq[k] += t->B[q * nd + i] * v;
            for (int r = 0; r < d; r++) gr[k * d + r] += t->G[(q * nd + i) * d + r] * v;
        }
    }
    const double *Jinv = geo + 1;
    for (int k = 0; k < nc; k++)
        for (int bb = 0; bb < d; bb++) {
            double v = 0.0;
            for (int r = 0; r < d; r++) v += gr[k * d + r] * Jinv[r * d + bb];
            gq[k * d + bb] = v;
        }
}

int functional_cells(const Space *sp, const double *u, const PhysicalGroup *g, int degree, CellFn fn,
                     void *ctx, int nout, double *result) {
    return functional_cells_aux(sp, u, NULL, g, degree, fn, ctx, nout, result);
}

int functional_cells_aux(const Space *sp, const double *u, const double *aux, const PhysicalGroup *g,
                         int degree, CellFn fn, void *ctx, int nout, double *result) {
    const Mesh *m = sp->mesh;
    int d = m->dim, status = FEM_OK;
    for (int k = 0; k < nout; k++) result[k] = 0.0;
    for (int bi = 0; bi < sp->ncell_blocks && !status; bi++) {
        const SpaceBlock *b = &sp->cells[bi];
        ElementTables t;
        int deg = degree > 0 ? degree : quadrature_default_degree(sp->order, m->cells[bi].order);
        FEM_TRY(tables_create(b->shape, sp->order, deg, &t));
        int nq = t.nq;
        double *geo = malloc(sizeof(double) * nq * GEO_STRIDE(d)), *x = malloc(sizeof(double) * nq * 3);
        double *out = malloc(sizeof(double) * (nout + 1));
        if (!geo || !x || !out) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory in a functional");
        for (int64_t c = 0; c < b->count && !status; c++) {
            if (g && !mesh_group_has_entity(g, m->cells[bi].entity[c])) continue;
            fem_idx cell = (fem_idx)c;
            status = geometry_cells(m, bi, &t.quad, 1, &cell, geo, x);
            for (int q = 0; q < nq && !status; q++) {
                double uq[3], gq[9], auxq;
                field_at(sp, b, &t, c, u, aux, &geo[q * GEO_STRIDE(d)], q, uq, gq, &auxq);
                CellPoint p = {bi, c, &x[3 * q], uq, gq, aux ? &auxq : NULL};
                fn(ctx, &p, out);
                for (int k = 0; k < nout; k++) result[k] += geo[q * GEO_STRIDE(d)] * out[k];
            }
        }
        free(geo);
        free(x);
        free(out);
        tables_destroy(&t);
    }
    return status;
}

int functional_facets(const Space *sp, const double *u, const PhysicalGroup *g, int degree, FacetFn fn,
                      void *ctx, int nout, double *result) {
    const Mesh *m = sp->mesh;
    int status = FEM_OK, nc = sp->ncomp;
    for (int k = 0; k < nout; k++) result[k] = 0.0;
    for (int fi = 0; fi < sp->nfacet_blocks && !status; fi++) {
        const SpaceBlock *b = &sp->facets[fi];
        ElementTables t;
        int deg = degree > 0 ? degree : quadrature_default_degree(sp->order, m->facets[fi].order);
        FEM_TRY(tables_create(b->shape, sp->order, deg, &t));
        int nq = t.nq;
        double *fgeo = malloc(sizeof(double) * nq * FGEO_STRIDE), *x = malloc(sizeof(double) * nq * 3);
        double *out = malloc(sizeof(double) * (nout + 1));
        if (!fgeo || !x || !out) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory in a functional");
        for (int64_t c = 0; c < b->count && !status; c++) {
            if (g && !mesh_group_has_entity(g, m->facets[fi].entity[c])) continue;
            fem_idx facet = (fem_idx)c;
            status = geometry_facets(m, fi, &t.quad, 1, &facet, fgeo, x);
            for (int q = 0; q < nq && !status; q++) {
                double uq[3] = {0, 0, 0}, duq[3 * 2] = {0};
                for (int i = 0; i < t.ndof; i++)
                    for (int k = 0; k < nc; k++) {
                        double v = u[(int64_t)b->dofs[c * t.ndof + i] * nc + k];
                        uq[k] += t.B[q * t.ndof + i] * v;
                        for (int r = 0; r < t.dim; r++)
                            duq[k * t.dim + r] += t.G[(q * t.ndof + i) * t.dim + r] * v;
                    }
                FacetPoint p = {fi, c, &x[3 * q], &fgeo[q * FGEO_STRIDE + FGEO_N], uq, &fgeo[q * FGEO_STRIDE],
                                duq};
                fn(ctx, &p, out);
                for (int k = 0; k < nout; k++) result[k] += fgeo[q * FGEO_STRIDE + FGEO_WDA] * out[k];
            }
        }
        free(fgeo);
        free(x);
        free(out);
        tables_destroy(&t);
    }
    return status;
}

int functional_nodal(const Space *sp, const double *u, int equispaced, CellFn fn, void *ctx, int nout,
                     double *result) {
    return functional_nodal_aux(sp, u, NULL, equispaced, fn, ctx, nout, result);
}

int functional_nodal_aux(const Space *sp, const double *u, const double *aux, int equispaced, CellFn fn,
                         void *ctx, int nout, double *result) {
    const Mesh *m = sp->mesh;
    int d = m->dim, status = FEM_OK;
    int *count = calloc((size_t)sp->nnodes + 1, sizeof(int));
    if (!count) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for nodal values");
    memset(result, 0, sizeof(double) * (size_t)(sp->nnodes * nout));
    for (int bi = 0; bi < sp->ncell_blocks && !status; bi++) {
        const SpaceBlock *b = &sp->cells[bi];
        int nd = b->ndof;
        double *pts = malloc(sizeof(double) * 3 * nd);
        ElementTables t;
        memset(&t, 0, sizeof t);
        if (!pts) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for nodal values");
        if (!status) lattice_points(b->shape, b->order, equispaced, pts);
        if (!status) status = tables_create_at(b->shape, b->order, nd, pts, &t);
        Quadrature at = {.shape = b->shape, .npts = nd, .xi = pts, .w = NULL};
        double *w1 = malloc(sizeof(double) * nd), *geo = malloc(sizeof(double) * nd * GEO_STRIDE(d)),
               *x = malloc(sizeof(double) * nd * 3), *out = malloc(sizeof(double) * (nout + 1));
        if (!w1 || !geo || !x || !out)
            status = status ? status : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
        for (int n = 0; n < nd && w1; n++) w1[n] = 1.0;
        at.w = w1;
        for (int64_t c = 0; c < b->count && !status; c++) {
            fem_idx cell = (fem_idx)c;
            status = geometry_cells(m, bi, &at, 1, &cell, geo, x);
            for (int n = 0; n < nd && !status; n++) {
                double uq[3], gq[9], auxq;
                field_at(sp, b, &t, c, u, aux, &geo[n * GEO_STRIDE(d)], n, uq, gq, &auxq);
                CellPoint p = {bi, c, &x[3 * n], uq, gq, aux ? &auxq : NULL};
                fn(ctx, &p, out);
                fem_idx node = b->dofs[c * nd + n];
                for (int k = 0; k < nout; k++) result[(int64_t)node * nout + k] += out[k];
                count[node]++;
            }
        }
        tables_destroy(&t);
        free(pts);
        free(w1);
        free(geo);
        free(x);
        free(out);
    }
    for (int64_t n = 0; n < sp->nnodes && !status; n++)
        for (int k = 0; k < nout; k++) result[n * nout + k] /= count[n] ? count[n] : 1;
    free(count);
    return status;
}

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

int functional_probe(const Space *sp, const double *u, const double x[3], double *uq, double *gq) {
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
