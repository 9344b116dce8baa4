/* The coarse level over MPI ranks solved by a one-process solver on rank 0 (coarse.h): internal to
 * fem/solvers.
 *
 * Every rank sends its rows of the order-1 matrix (global numbers) to rank 0, which sums them into the whole
 * matrix and sets up the solver one process would use (cuDSS on its GPU, CHOLMOD on its host). Each
 * application gathers the ranks' owned entries of b to rank 0, solves there and scatters x back: the
 * preconditioner is then the one-process preconditioner, so the CG iterations do not depend on the number of
 * ranks. Rank 0 does the whole coarse solve while the others wait: right for a few GPUs or nodes, whose
 * order-1 level (about 1/8 of the dofs at p = 2 in 3D) fits one GPU; past coarse_gather_limit rows AUTO takes
 * BoomerAMG over all ranks instead. */
#ifndef FEMTO_SOLVERS_COARSE_GATHER_H
#define FEMTO_SOLVERS_COARSE_GATHER_H

#include "fem/solvers/coarse.h"

/* Up to this many global rows AUTO gathers the coarse level to rank 0 for cuDSS on a GPU device: a 4M-row
 * order-1 elasticity matrix (a p = 2 problem of about 30M dofs) factorises in some 20-40 GB with cuDSS's
 * nested-dissection ordering, which fits an 80 GB GPU beside the solve's own vectors. On the host AUTO
 * gathers for CHOLMOD up to COARSE_DIRECT_MAX_ROWS, as one process would choose it. */
#define COARSE_GATHER_GPU_MAX_ROWS 4000000

/* The solver type the ranks use for A over MPI ranks (o->global set): `inner` (CHOLMOD, cuDSS, or AUTO for
 * one process's own choice and fallbacks) to run on rank 0, or COARSE_BOOMERAMG for BoomerAMG over all ranks.
 * have_cudss: a cuDSS backend is registered. Collective (it sums the ranks' owned rows). */
int coarse_gather_choice(const Device *dev, const CoarseOptions *o, int have_cudss, int have_cholmod,
                         CoarseType *inner, int64_t *nglobal);

/* Every rank's owned count of A's rows (all-gathered) in *owned, and in *off the byte offsets of the ranks'
 * blocks in a whole vector of doubles ([ranks + 1]: rank r's owned entries, one block in the rank-contiguous
 * numbering). Both malloc'ed (also on failure, where they may be NULL). Collective. */
int coarse_owned_layout(int64_t nowned, int64_t **owned, int64_t **off);

/* The gathered backend (host vectors of A's nrows local entries): rank 0 creates `inner` for the whole matrix
 * on dev. *type becomes the solver rank 0 ended with (AUTO's choice) on every rank. Collective; a failure on
 * rank 0 is every rank's status and sentence.
 *
 * try_inverse (a CUDA device with cuDSS, inner cuDSS or AUTO): first, where o->inverse asks for it (AUTO:
 * while a rank's share takes at most COARSE_INVERSE_MAX_BYTES), the explicit inverse on every rank: the whole
 * matrix to every rank, each factorising it with cuDSS and keeping the columns of A^-1 of its own rows, so that
 * an application is one all-gather of b's owned entries and one matrix-vector product on every GPU at once,
 * instead of rank 0's solve between a gather and a scatter (device vectors). Should that fail on any rank
 * (its memory), the ranks gather to rank 0, and the description says why. */
int coarse_gather_create(Device *dev, const CsrMatrix *A, const CoarseOptions *o, CoarseType inner,
                         int try_inverse, CoarseType *type, CoarseBackend *out);

#endif
