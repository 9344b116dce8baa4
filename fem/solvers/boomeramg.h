/* The BoomerAMG backend of the coarse solver (coarse.h): hypre's algebraic multigrid on the host. Internal to
 * fem/solvers; built in with FEMTO_HAVE_HYPRE. */
#ifndef FEMTO_SOLVERS_BOOMERAMG_H
#define FEMTO_SOLVERS_BOOMERAMG_H

#include "fem/solvers/coarse.h"

/* Sets up BoomerAMG for A with opt's settings (opt->block_size, dim, cycles already resolved); the backend
 * applies cycles V-cycles from a zero guess to host arrays. */
int boomeramg_create(const CsrMatrix *A, const CoarseOptions *opt, CoarseBackend *out);

#endif
