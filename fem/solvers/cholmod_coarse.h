/* The CHOLMOD backend of the coarse solver (coarse.h): SuiteSparse's sparse Cholesky factorisation on the
 * host. Internal to fem/solvers; built in with FEMTO_HAVE_CHOLMOD. */
#ifndef FEMTO_SOLVERS_CHOLMOD_COARSE_H
#define FEMTO_SOLVERS_CHOLMOD_COARSE_H

#include "fem/solvers/coarse.h"

/* Factorises A (symmetric positive definite; only its upper triangle is read) as P A P^T = L L^T with a
 * fill-reducing ordering (from cache_dir when it holds this pattern's, else stored there; NULL: no cache,
 * order_cache.h); the backend applies x = A^-1 b (two triangular solves) to host arrays. */
int cholmod_coarse_create(const CsrMatrix *A, const char *cache_dir, CoarseBackend *out);

#endif
