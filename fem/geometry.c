#include "geometry.h"

#include "error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int n, npts, dim;
    double *val, *grad;
} GeoTables;

static int geo_tables(const MeshBlock *b, const Quadrature *q, GeoTables *t) {
    t->n = b->nnodes;
    t->npts = q->npts;
    t->dim = shape_dim(b->shape);
    t->val = malloc(sizeof(double) * t->n * q->npts);
    t->grad = malloc(sizeof(double) * t->n * q->npts * t->dim);
    if (!t->val || !t->grad) {
        free(t->val);
        free(t->grad);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for geometry tables");
    }
    basis_tabulate(b->shape, b->order, q->npts, q->xi, t->val, t->grad);
    return FEM_OK;
}

/* x and dX/dxi (3 x dim, row-major by physical axis) of element c at q-point k. */
static void map_point(const Mesh *m, const MeshBlock *b, int64_t c, const GeoTables *t, int k, double x[3],
                      double J[9]) {
    memset(J, 0, sizeof(double) * 9);
    x[0] = x[1] = x[2] = 0.0;
    for (int i = 0; i < t->n; i++) {
        const double *X = &m->x[3 * (int64_t)b->nodes[c * b->nnodes + i]];
        double v = t->val[k * t->n + i];
        for (int a = 0; a < 3; a++) {
            x[a] += v * X[a];
            for (int r = 0; r < t->dim; r++) J[a * 3 + r] += X[a] * t->grad[(k * t->n + i) * t->dim + r];
        }
    }
}

/* Geometric factors of one cell at every point of q (GEO_STRIDE doubles each); returns the first non-positive
 * Jacobian determinant, or 1.0 when every one is positive. */
static double cell_geometry(const Mesh *m, const MeshBlock *b, int64_t c, const GeoTables *t, const Quadrature *q,
                            double *geo, double *xq) {
    int d = m->dim, stride = GEO_STRIDE(d);
    for (int k = 0; k < q->npts; k++) {
        double x[3], J3[9], J[9];
        map_point(m, b, c, t, k, x, J3);
        for (int a = 0; a < d; a++)
            for (int r = 0; r < d; r++) J[a * d + r] = J3[a * 3 + r];
        double *g = &geo[k * stride];
        double det = geometry_invert(d, J, g + 1);
        if (!(det > 0.0)) return det;
        g[0] = q->w[k] * det;
        if (xq) memcpy(&xq[k * 3], x, sizeof x);
    }
    return 1.0;
}

int geometry_cells(const Mesh *m, int block, const Quadrature *q, int64_t count, const fem_idx *list,
                   double *geo, double *xq) {
    const MeshBlock *b = &m->cells[block];
    GeoTables t;
    FEM_TRY(geo_tables(b, q, &t));
    int64_t stride = GEO_STRIDE(m->dim), bad = count; /* the first inverted element, if any */
    double bad_det = 1.0;
#pragma omp parallel for schedule(static) if (count > 4096)
    for (int64_t e = 0; e < count; e++) {
        int64_t c = list ? list[e] : e;
        double det = cell_geometry(m, b, c, &t, q, &geo[e * q->npts * stride], xq ? &xq[e * q->npts * 3] : NULL);
        if (!(det > 0.0)) {
#pragma omp critical(femto_geometry_bad)
            if (e < bad) bad = e, bad_det = det;
        }
    }
    free(t.val);
    free(t.grad);
    if (bad == count) return FEM_OK;
    int64_t c = list ? list[bad] : bad;
    return fem_fail(FEM_ERR_INPUT,
                    "%s: element %lld (%s) has a non-positive Jacobian determinant (%.3g) at a quadrature point: it "
                    "is inverted or too curved",
                    m->path, (long long)b->tag[c], b->type->name, bad_det);
}

static void cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

int geometry_facets(const Mesh *m, int fb, const Quadrature *q, int64_t count, const fem_idx *list,
                    double *fgeo, double *xq) {
    const MeshBlock *b = &m->facets[fb];
    GeoTables t;
    FEM_TRY(geo_tables(b, q, &t));
#pragma omp parallel for schedule(static) if (count > 4096)
    for (int64_t e = 0; e < count; e++) {
        int64_t c = list ? list[e] : e;
        /* the adjacent cell's centroid fixes which side is outside */
        const FacetCell *fc = &m->topo.facet_cell[fb][c];
        const MeshBlock *cb = &m->cells[fc->block];
        double centre[3] = {0, 0, 0}, fcentre[3] = {0, 0, 0};
        int nv = shape_nvertices(cb->shape), nfv = shape_nvertices(b->shape);
        for (int v = 0; v < nv; v++)
            for (int a = 0; a < 3; a++)
                centre[a] += m->x[3 * (int64_t)cb->nodes[(int64_t)fc->cell * cb->nnodes +
                                                         lattice_vertex(cb->shape, cb->order, v)] +
                                  a] /
                             nv;
        for (int v = 0; v < nfv; v++)
            for (int a = 0; a < 3; a++)
                fcentre[a] +=
                    m->x[3 * (int64_t)b->nodes[c * b->nnodes + lattice_vertex(b->shape, b->order, v)] + a] /
                    nfv;
        double sign = 0.0;
        for (int k = 0; k < q->npts; k++) {
            double x[3], J[9], T1[3], T2[3] = {0, 0, 0}, area[3];
            map_point(m, b, c, &t, k, x, J);
            for (int a = 0; a < 3; a++) T1[a] = J[a * 3], T2[a] = t.dim > 1 ? J[a * 3 + 1] : 0.0;
            if (t.dim == 1)
                area[0] = T1[1], area[1] = -T1[0], area[2] = 0.0;
            else
                cross(T1, T2, area);
            if (sign == 0.0) {
                double out = 0.0;
                for (int a = 0; a < 3; a++) out += area[a] * (fcentre[a] - centre[a]);
                sign = out >= 0.0 ? 1.0 : -1.0;
            }
            double dA = sqrt(area[0] * area[0] + area[1] * area[1] + area[2] * area[2]);
            double *g = &fgeo[(e * q->npts + k) * FGEO_STRIDE];
            g[FGEO_WDA] = q->w[k] * dA;
            for (int a = 0; a < 3; a++) {
                g[FGEO_N + a] = sign * area[a] / dA;
                g[FGEO_T1 + a] = T1[a];
                g[FGEO_T2 + a] = T2[a];
            }
            g[FGEO_WS] = q->w[k] * sign;
            if (xq) memcpy(&xq[(e * q->npts + k) * 3], x, sizeof x);
        }
    }
    free(t.val);
    free(t.grad);
    return FEM_OK;
}
