/* Host-side integrals of a solution for tests: error norms against an analytic solution, loads and values over
 * a boundary, written independently of femto's operators (plain loops over cells and quadrature points) so
 * that they check the operators and the device-side output functionals (fem/evaluate.h) rather than repeat
 * them. */
#ifndef FEMTO_TEST_FUNCTIONAL_H
#define FEMTO_TEST_FUNCTIONAL_H

#include "fem/space.h"

FEM_EXTERN_C_BEGIN

/* A point of a cell: where, which cell, and the field (u[ncomp], physical gradient g[ncomp][dim]). */
typedef struct {
    int block;
    int64_t cell;
    const double *x, *u, *g;
} CellPoint;
typedef void (*CellFn)(void *ctx, const CellPoint *p, double *out);

/* A point of a boundary facet: where, the unit outward normal, the field values; geo: the q-point's facet
 * geometry record (FGEO_STRIDE doubles, fem/geometry.h: tangents and w * sign for current-configuration
 * quantities such as follower loads), du: reference gradients of the field along the facet [ncomp][dim-1]. */
typedef struct {
    int block;
    int64_t facet;
    const double *x, *n, *u;
    const double *geo, *du;
} FacetPoint;
typedef void (*FacetFn)(void *ctx, const FacetPoint *p, double *out);

/* result[k] = integral over the cells of group g (NULL: all cells) of out[k], k < nout. degree 0: the
 * operators' default rule, so that integrals of residual terms agree with the operator's own. */
int functional_cells(const Space *sp, const double *u, const PhysicalGroup *g, int degree, CellFn fn,
                     void *ctx, int nout, double *result);
/* result[k] = integral over the facets of group g of out[k]. */
int functional_facets(const Space *sp, const double *u, const PhysicalGroup *g, int degree, FacetFn fn,
                      void *ctx, int nout, double *result);
FEM_EXTERN_C_END

#endif
