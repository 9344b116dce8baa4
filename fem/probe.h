/* Probes: the value of a finished solution at a physical point, for the probes of a problem file. The point is
 * found by a bounding-box search over the cells and Newton's method on each candidate cell's geometric map, so
 * curved cells work. Runs on the host, once per output time, over a host copy of the solution. */
#ifndef FEMTO_PROBE_H
#define FEMTO_PROBE_H

#include "space.h"

FEM_EXTERN_C_BEGIN

/* The field at physical point x: uq[ncomp] and its physical gradient gq[ncomp][dim] (gq may be NULL). Returns 1
 * when found, 0 when x lies outside the mesh (to a relative tolerance of 1e-8). u NULL: only whether x is
 * inside. */
int probe_field(const Space *sp, const double *u, const double x[3], double *uq, double *gq);

/* probe_field over MPI ranks that each hold a part of the space (fem/dist.h; u: the rank's owned and ghost
 * dofs, the ghosts current): every rank searches its own cells, and the lowest rank that finds x gives uq
 * (and gq) to every rank; *found as probe_field's answer. Collective: every rank calls it with the same x.
 * On one process, probe_field. */
int probe_field_parts(const Space *sp, const double *u, const double x[3], double *uq, double *gq,
                      int *found);

FEM_EXTERN_C_END

#endif
