/* Shape-function tables of one element type at one quadrature rule: what the kernels read.
 *
 * B[q][i] = phi_i(xi_q) and G[q][i][d] = d phi_i / d xi_d (reference gradients). Quads and hexes also carry
 * the 1D tables B1[q][i], G1[q][i] that their sum-factorised kernels use (the full tables of a tensor
 * element are products of these). */
#ifndef FEMTO_TABLES_H
#define FEMTO_TABLES_H

#include "quadrature.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    Shape shape;
    int order, dim, ndof, nq;
    Quadrature quad;
    double *B, *G;
    int tensor, nd1, nq1;
    double *B1, *G1;
} ElementTables;

/* Tables of the order-p basis on shape s at the quadrature rule of the given degree. */
int tables_create(Shape s, int p, int degree, ElementTables *t);
/* Tables at arbitrary points (no weights): the equispaced output lattice, a facet rule, ... */
int tables_create_at(Shape s, int p, int npts, const double *pts, ElementTables *t);
void tables_destroy(ElementTables *t);

FEM_EXTERN_C_END

#endif
