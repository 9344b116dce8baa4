/* Quadrature rules on the reference cells of fem/element.h.
 *
 * Quads, hexes and lines get tensor Gauss-Legendre rules (points lexicographic, x fastest, so the
 * sum-factorised kernels can use the 1D rule); triangles and tetrahedra get collapsed (Duffy) Gauss-Jacobi
 * rules, which exist for every degree. A rule of degree d integrates every polynomial of total degree <= d
 * exactly (per-axis degree <= d on tensor cells). */
#ifndef FEMTO_QUADRATURE_H
#define FEMTO_QUADRATURE_H

#include "element.h"

FEM_EXTERN_C_BEGIN

enum { QUADRATURE_MAX_DEGREE = 31 };

typedef struct {
    Shape shape;
    int degree; /* exact to this degree */
    int npts;
    double *xi; /* [npts][3] reference coordinates */
    double *w;  /* [npts] weights, summing to the reference volume */
    int n1d;    /* tensor rules: points per axis (npts = n1d^dim); 0 otherwise */
    double *xi1d, *w1d;
} Quadrature;

/* The rule of the given degree (clamped below at 1); FEM_ERR_INPUT when above QUADRATURE_MAX_DEGREE. */
int quadrature_create(Shape s, int degree, Quadrature *q);
void quadrature_destroy(Quadrature *q);

/* femto's default degree for a field of order p on geometry of order g: 2p + g - 1 (exact mass matrices on
 * affine cells, and one more order per order of curvature). */
int quadrature_default_degree(int p, int g);

/* n-point Gauss-Jacobi rule on [0,1] for the weight (1-x)^alpha (alpha = 0: Gauss-Legendre). */
void gauss_jacobi(int n, int alpha, double *x, double *w);

FEM_EXTERN_C_END

#endif
