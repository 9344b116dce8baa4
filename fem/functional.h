/* Host-side evaluations of a finished solution: integrals over cells or over the facets of a physical group
 * (error norms, boundary heat flows, applied loads, strain energy), and values derived from the solution at
 * every node of the space's lattice (flux or stress for output), averaged over the cells that share a node.
 * Not on the solver's hot path: these run once per output. */
#ifndef FEMTO_FUNCTIONAL_H
#define FEMTO_FUNCTIONAL_H

#include "space.h"

FEM_EXTERN_C_BEGIN

/* A point of a cell: where, which cell, and the field (u[ncomp], physical gradient g[ncomp][dim]); aux: the
 * value of the scalar auxiliary field at the point (the *_aux variants), else NULL. */
typedef struct {
    int block;
    int64_t cell;
    const double *x, *u, *g;
    const double *aux;
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
/* out[node][k] = average over the cells sharing a node of fn at the node, evaluated at the equispaced lattice
 * position of order p (equispaced = 1, the points femto writes for ParaView) or at the space's own nodes. */
int functional_nodal(const Space *sp, const double *u, int equispaced, CellFn fn, void *ctx, int nout,
                     double *out);

/* The same with a scalar auxiliary field aux (host, sp->nnodes values: a scalar field of the same mesh and
 * order, such as a temperature), interpolated to each point as CellPoint.aux, as the operator's aux field is
 * for q-point functions. aux NULL: as the functions above. */
int functional_cells_aux(const Space *sp, const double *u, const double *aux, const PhysicalGroup *g,
                         int degree, CellFn fn, void *ctx, int nout, double *result);
int functional_nodal_aux(const Space *sp, const double *u, const double *aux, int equispaced, CellFn fn,
                         void *ctx, int nout, double *out);

/* The field at physical point x: u[ncomp] and its physical gradient g[ncomp][dim] (may be NULL), from the cell
 * that contains x (found by a bounding-box search and Newton's method on the cell's geometric map, so curved
 * cells work). Returns 1 when found, 0 when x lies outside the mesh (to a relative tolerance of 1e-8).
 * u NULL: only whether x is inside. */
int functional_probe(const Space *sp, const double *u, const double x[3], double *uq, double *gq);


FEM_EXTERN_C_END

#endif
