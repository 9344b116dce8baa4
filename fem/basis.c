/* Bases on a device (see basis.h). */
#include "basis.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

static int upload(Device *dev, const double **dst, const double *src, size_t count) {
    void *p = NULL;
    int status = device_alloc_copy(dev, &p, src, sizeof(double) * count);
    *dst = p;
    return status;
}

/* Copies b->tables to the device. */
static int basis_upload(Basis *b, Device *dev) {
    b->dev = dev;
    const ElementTables *t = &b->tables;
    int status = upload(dev, &b->B, t->B, (size_t)t->nq * t->ndof);
    if (!status) status = upload(dev, &b->G, t->G, (size_t)t->nq * t->ndof * t->dim);
    if (!status && t->tensor) status = upload(dev, &b->B1, t->B1, (size_t)t->nq1 * t->nd1);
    if (!status && t->tensor) status = upload(dev, &b->G1, t->G1, (size_t)t->nq1 * t->nd1);
    if (status) basis_destroy(b);
    return status;
}

int basis_create(Basis *b, Device *dev, Shape s, int p, int degree) {
    memset(b, 0, sizeof *b);
    FEM_TRY(tables_create(s, p, degree, &b->tables));
    return basis_upload(b, dev);
}

int basis_create_at(Basis *b, Device *dev, Shape s, int p, int npts, const double *pts) {
    memset(b, 0, sizeof *b);
    FEM_TRY(tables_create_at(s, p, npts, pts, &b->tables));
    return basis_upload(b, dev);
}

int basis_create_identity(Basis *b, Device *dev, Shape s, int p) {
    memset(b, 0, sizeof *b);
    int nd = lattice_count(s, p);
    double *pts = malloc(sizeof(double) * 3 * (size_t)nd);
    if (!pts) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a basis");
    lattice_points(s, p, 0, pts);
    int status = tables_create_at(s, p, nd, pts, &b->tables);
    free(pts);
    if (status) return status;
    ElementTables *t = &b->tables; /* exactly I and 0, not the basis' rounding of them */
    for (int q = 0; q < nd; q++)
        for (int i = 0; i < nd; i++) t->B[q * nd + i] = q == i;
    memset(t->G, 0, sizeof(double) * (size_t)nd * nd * t->dim);
    return basis_upload(b, dev);
}

void basis_destroy(Basis *b) {
    if (b->dev) {
        const double *arrays[] = {b->B, b->G, b->B1, b->G1};
        for (int i = 0; i < 4; i++) device_free(b->dev, (void *)arrays[i]);
    }
    tables_destroy(&b->tables);
    memset(b, 0, sizeof *b);
}

ElemView elem_view(const Restriction *r, const Basis *b, int ncomp) {
    const ElementTables *t = &b->tables;
    return (ElemView){.nelem = r->nelem,
                      .ndof = t->ndof,
                      .nq = t->nq,
                      .dim = t->dim,
                      .ncomp = ncomp,
                      .dofs = r->dofs,
                      .B = b->B,
                      .G = b->G,
                      .tensor = t->tensor,
                      .nd1 = t->nd1,
                      .nq1 = t->nq1,
                      .B1 = b->B1,
                      .G1 = b->G1,
                      .nnodes = r->nnodes,
                      .t_offsets = r->t_offsets,
                      .t_slots = r->t_slots};
}
