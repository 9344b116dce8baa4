#include "tables.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

static int fill(ElementTables *t, Shape s, int p, int npts, const double *pts) {
    t->shape = s;
    t->order = p;
    t->dim = shape_dim(s);
    t->ndof = lattice_count(s, p);
    t->nq = npts;
    FEM_ALLOC(t->B, (int64_t)npts * t->ndof, "shape-function tables");
    FEM_ALLOC(t->G, (int64_t)npts * t->ndof * t->dim, "shape-function tables");
    if (!basis_tabulate(s, p, npts, pts, t->B, t->G))
        return fem_fail(FEM_ERR_INPUT, "no basis of order %d on %s cells", p, shape_name(s));
    return FEM_OK;
}

int tables_create(Shape s, int p, int degree, ElementTables *t) {
    memset(t, 0, sizeof *t);
    FEM_TRY(quadrature_create(s, degree, &t->quad));
    int status = fill(t, s, p, t->quad.npts, t->quad.xi);
    if (!status && shape_is_tensor(s)) {
        t->tensor = 1;
        t->nd1 = p + 1;
        t->nq1 = t->quad.n1d;
        t->B1 = malloc(sizeof(double) * t->nd1 * t->nq1);
        t->G1 = malloc(sizeof(double) * t->nd1 * t->nq1);
        if (!t->B1 || !t->G1)
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for shape-function tables");
        else
            basis_tabulate_1d(p, t->nq1, t->quad.xi1d, t->B1, t->G1);
    }
    if (status) tables_destroy(t);
    return status;
}

int tables_create_at(Shape s, int p, int npts, const double *pts, ElementTables *t) {
    memset(t, 0, sizeof *t);
    int status = fill(t, s, p, npts, pts);
    if (status) tables_destroy(t);
    return status;
}

void tables_destroy(ElementTables *t) {
    quadrature_destroy(&t->quad);
    free(t->B);
    free(t->G);
    free(t->B1);
    free(t->G1);
    memset(t, 0, sizeof *t);
}
