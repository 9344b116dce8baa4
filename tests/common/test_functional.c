/* Host-side integrals of a solution for tests (see test_functional.h). */
#include "test_functional.h"

#include "fem/error.h"
#include "fem/geometry.h"
#include "fem/tables.h"

#include <stdlib.h>

/* Field values and physical gradients of one element at the points of `t`; geometry from geo (GEO_STRIDE). */
static void field_at(const Space *sp, const SpaceBlock *b, const ElementTables *t, int64_t c, const double *u,
                     const double *geo, int q, double *uq, double *gq) {
    int nc = sp->ncomp, d = t->dim, nd = t->ndof;
    double gr[3 * 3] = {0};
    for (int k = 0; k < nc; k++) uq[k] = 0.0;
    for (int i = 0; i < nd; i++) {
        fem_idx node = b->dofs[c * nd + i];
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
                double uq[3], gq[9];
                field_at(sp, b, &t, c, u, &geo[q * GEO_STRIDE(d)], q, uq, gq);
                CellPoint p = {bi, c, &x[3 * q], uq, gq};
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
