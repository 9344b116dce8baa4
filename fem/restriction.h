/* Element restrictions on a device: for each element of a block, which nodes its local dofs are (P_e, from
 * global to element values) and the transpose map (for each node, the element slots that hold it), which
 * deterministic gather assembly (P_e^T) and the assembled diagonal use. What the space numbers on the host
 * (space.h), copied to the device that computes. */
#ifndef FEMTO_RESTRICTION_H
#define FEMTO_RESTRICTION_H

#include "device.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    int64_t nelem, nnodes;
    int ndof;                 /* nodes per element */
    const fem_idx *dofs;      /* device [nelem][ndof] */
    const int64_t *t_offsets; /* device [nnodes + 1] */
    const int32_t *t_slots;   /* device: e * ndof + i */
    Device *dev;
} Restriction;

/* From host arrays (toff/tslots: the transpose, as SpaceBlock holds it). */
int restriction_create(Restriction *r, Device *dev, int64_t nelem, int ndof, int64_t nnodes, const fem_idx *dofs,
                       const int64_t *toff, const int32_t *tslots);
/* The same for a subset of the elements (facets with a boundary condition): the transpose is built here. */
int restriction_create_subset(Restriction *r, Device *dev, int64_t nelem, int ndof, int64_t nnodes,
                              const fem_idx *dofs);
/* The map alone, without the transpose (t_offsets, t_slots NULL), for what only gathers nodal values and adds
 * into nodes with atomics (integration with evec NULL: fem/device.h), as the evaluations do: no pass over the
 * space's nodes, however few the elements. */
int restriction_create_map(Restriction *r, Device *dev, int64_t nelem, int ndof, int64_t nnodes, const fem_idx *dofs);
void restriction_destroy(Restriction *r);

FEM_EXTERN_C_END

#endif
