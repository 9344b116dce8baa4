/* Plausibility of a solution: results that are valid numbers but absurd for the geometry, which almost always
 * come from a units slip in the input (young="70" where 70e9 Pa was meant gives a steel beam a displacement
 * of kilometres). Each finding is a warning (fem_warn), never a failure: the results are still written, and
 * the app prints the warnings and counts them in the summary. The input-side checks are problem_warnings
 * (io/problem.h). */
#ifndef FEMTO_SANITY_H
#define FEMTO_SANITY_H

#include "fem/dist.h"
#include "fem/error.h"
#include "fem/space.h"
#include "fem/vec.h"

FEM_EXTERN_C_BEGIN

/* A temperature field below absolute zero somewhere: T, its extremes (dist_node_extremes). */
void sanity_heat(const DistExtremes *T, FemWarnings *w);

/* A displacement field that moves a node farther than the body is wide (max_displacement, where: its
 * largest, elasticity_extremes), or whose displacement gradient exceeds 1 somewhere: strains a small-strain
 * model cannot describe. gradient: the largest |du_i/dx_j| at every node of sp (elasticity_stress_nodes gives
 * it), for a linear model; NULL skips that check (a finite-strain model). Collective over the ranks' parts
 * when d is set (sp = &d->space; fem/dist.h); fails only when out of host memory. */
int sanity_elasticity(const Dist *d, const Space *sp, double max_displacement, const double at[3],
                      const double *gradient, FemWarnings *w);

FEM_EXTERN_C_END

#endif
