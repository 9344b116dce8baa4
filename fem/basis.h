/* A basis on a device: the shape-function tables of one element type, order and quadrature rule (tables.h)
 * copied to the device that computes: B (values) and G (reference gradients) at the q-points, and for
 * quadrilaterals and hexahedra the 1D tables of sum factorisation. The host tables stay for setup work
 * (geometry at the q-points, element counts). */
#ifndef FEMTO_BASIS_H
#define FEMTO_BASIS_H

#include "device.h"
#include "restriction.h"
#include "tables.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    ElementTables tables;             /* host */
    const double *B, *G, *B1, *G1;    /* device */
    Device *dev;
} Basis;

/* The order-p basis of shape s at the quadrature rule of the given degree. */
int basis_create(Basis *b, Device *dev, Shape s, int p, int degree);
/* The order-p basis at npts reference points (no weights, no sum factorisation): B[pt][i] = phi_i(pts). */
int basis_create_at(Basis *b, Device *dev, Shape s, int p, int npts, const double *pts);
/* The identity on an element's order-p nodes (B = I, G = 0): interpolation that gathers element values, and
 * integration that sums element values into nodes. */
int basis_create_identity(Basis *b, Device *dev, Shape s, int p);
void basis_destroy(Basis *b);

/* What an element kernel reads: a restriction and a basis for ncomp interleaved components. */
ElemView elem_view(const Restriction *r, const Basis *b, int ncomp);

FEM_EXTERN_C_END

#endif
