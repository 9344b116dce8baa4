/* Coarse solvers: an approximate inverse of an assembled symmetric positive definite matrix, the coarsest
 * level of multigrid.
 *
 * p-multigrid works matrix-free down to order 1; that level is assembled (fem/solvers/sparse.h) and handed to
 * a library behind this interface:
 *   - hypre BoomerAMG (algebraic multigrid, on the host; MPI-ready): one symmetric V-cycle per application,
 *     with nodal coarsening and the rigid-body modes for elasticity;
 *   - SuiteSparse CHOLMOD (sparse direct, on the host): Cholesky factorisation once, two triangular solves
 *     per application; an exact coarse solve for matrices small enough to factorise;
 *   - NVIDIA cuDSS (sparse direct, on the GPU): the same, every vector staying in GPU memory;
 *   - MUMPS (sparse direct, on the host, MPI-native): the factorisation and the triangular solves spread over
 *     the MPI ranks of a run.
 * Each is built in when its library is found (FEMTO_HAVE_HYPRE, FEMTO_HAVE_CHOLMOD, FEMTO_HAVE_CUDSS,
 * FEMTO_HAVE_MUMPS). fem/
 * never links CUDA: gpu/ registers the cuDSS backend with coarse_register_cudss(), as it registers its
 * Device.
 *
 * Dirichlet dofs may be eliminated by identity rows (and zero columns): every solver handles them. */
#ifndef FEMTO_SOLVERS_COARSE_H
#define FEMTO_SOLVERS_COARSE_H

#include "fem/device.h"
#include "fem/solvers/sparse.h"

FEM_EXTERN_C_BEGIN

typedef enum {
    COARSE_AUTO = 0,
    COARSE_BOOMERAMG = 1,
    COARSE_CUDSS = 2,
    COARSE_CHOLMOD = 3,
    COARSE_MUMPS = 4
} CoarseType;

/* COARSE_AUTO on the host (a CPU device, or a GPU without cuDSS): CHOLMOD up to this many rows, BoomerAMG
 * above (docs/solvers.md has the measurements behind it). */
#define COARSE_DIRECT_MAX_ROWS 200000

/* BoomerAMG settings beyond the defaults (all zero: the defaults, which docs/solvers.md justifies). */
typedef struct {
    double strong_threshold; /* 0: 0.5 (3D), 0.25 (2D) */
    int agg_levels;          /* levels of aggressive coarsening; 0: the default (see docs), < 0: none */
    int coarsen_type;        /* hypre's numbering; 0: HMIS (10) */
    int unknown_based; /* 1: systems AMG by unknowns (scalar coarsening per component), no rigid-body modes */
    int no_rigid_body_modes; /* 1: nodal coarsening without the rigid-body modes */
    int print_level;         /* hypre's setup statistics on stdout (debugging only) */
} CoarseAmgSettings;

/* The precision of cuDSS's factor. AUTO: double, or single where the double-precision factor would not fit in
 * the GPU's memory (half its bytes; inside CG the single-precision coarse solve costs at most an iteration or
 * two: docs/solvers.md). DOUBLE: double only (a factor too large hands over to the next solver). SINGLE:
 * single always. The host solvers work in double precision whatever this says. */
typedef enum {
    COARSE_PRECISION_AUTO = 0,
    COARSE_PRECISION_DOUBLE = 1,
    COARSE_PRECISION_SINGLE = 2
} CoarsePrecision;

/* The coarse matrix applied as its explicit inverse on the GPU: the inverse computed once at setup
 * (cuSOLVER's dense Cholesky and inverse; where cuSOLVER cannot be loaded, cuDSS's factor solving for many
 * right-hand sides at once), each application then one matrix-vector product, which reads the inverse at the
 * GPU's memory bandwidth where cuDSS's triangular solves cost at least about 0.7 ms whatever the matrix's
 * size. Computing it costs more than one linear solve's V-cycles save (docs/solvers.md), so it pays where one
 * coarse solver serves many solves: femto-app asks for it on time-dependent linear problems. AUTO: where the
 * inverse takes at most COARSE_INVERSE_MAX_BYTES of a GPU; YES: wherever it fits in the free memory; NO:
 * never. The inverse is in the factor's precision (CoarsePrecision). CHOLMOD and BoomerAMG ignore it. */
typedef enum { COARSE_INVERSE_AUTO = 0, COARSE_INVERSE_YES = 1, COARSE_INVERSE_NO = 2 } CoarseInverse;
/* about 0.5 ms of reading at an H100's or H200's bandwidth, below cuDSS's solve: 15,800 rows in double
 * precision on one GPU, 22,300 over two */
#define COARSE_INVERSE_MAX_BYTES 2.0e9

typedef struct {
    CoarseType
        type;       /* AUTO: cuDSS on a CUDA device when built in, else CHOLMOD for a matrix of at most
                       COARSE_DIRECT_MAX_ROWS rows, else BoomerAMG; a solver that fails hands over to the next */
    int block_size; /* unknowns per node, interleaved (dof = node * block_size + c); 0 or 1: scalar */
    const double
        *coords; /* [nrows / block_size][3] node coordinates (host), for elasticity's rigid-body modes */
    int dim;     /* space dimension, 2 or 3 (0: block_size when it is 2 or 3, else 3) */
    int cycles;  /* AMG V-cycles per application; 0: 1 */
    CoarseAmgSettings amg;
    /* Over MPI ranks (global not NULL; every rank calls coarse_create and coarse_apply together): A's rows
     * are this rank's local dofs, the first nowned of them its own and the others partial sums of rows that
     * other ranks own (a constrained ghost's row zero: its owner holds the identity row); A's columns are
     * local dofs too; global[i] is local dof i's number in the rank-contiguous global numbering, where this
     * rank's own dofs are first .. first + nowned - 1. coords then has A's nrows / block_size nodes.
     * BoomerAMG solves it over all ranks; CHOLMOD and cuDSS (named, or AUTO's choice while the whole matrix
     * is small enough) solve it gathered to rank 0 (coarse_gather.h); MUMPS (named, or AUTO's choice on the
     * host while the whole matrix is small enough, in place of the gathered CHOLMOD) over all ranks. Vectors
     * keep A's nrows entries: b's ghosts are not read, x's are set to 0. NULL: one process, A is the whole
     * matrix. */
    const int64_t *global;
    int64_t nowned, first;
    /* A folder where a solver may keep what depends only on the matrix's pattern, for the next run on the
     * same mesh (cuDSS's reordering: fem/solvers/order_cache.h); NULL: nothing is kept. */
    const char *cache_dir;
    CoarsePrecision precision; /* cuDSS's factor */
    double gpu_memory;         /* bytes of GPU memory cuDSS's factorisation may take; 0: what is free */
    CoarseInverse inverse;     /* cuDSS's factor as its explicit inverse */
    /* Internal to the coarse level over MPI ranks (coarse_gather.c), 0 elsewhere: inverse_count > 0 asks
     * cuDSS for rows inverse_first .. inverse_first + inverse_count - 1 of A^-1 only, explicitly (a failure
     * is the create's status); an application then reads b's nrows entries and writes x's inverse_count. */
    int64_t inverse_first, inverse_count;
} CoarseOptions;

typedef struct CoarseSolver CoarseSolver;

/* Sets up a solver for A (host CSR, square, symmetric positive definite) whose vectors live on dev. opt may
 * be NULL (defaults). A may be destroyed afterwards. A solver that is not built in, or no CUDA device for
 * cuDSS, is FEM_ERR_USAGE with one sentence saying what is missing; a library failure is FEM_ERR_DEVICE
 * (cuDSS) or FEM_ERR_SOLVER (BoomerAMG; CHOLMOD, e.g. a matrix that is not positive definite), out of memory
 * FEM_ERR_INTERNAL or FEM_ERR_DEVICE (GPU memory). */
int coarse_create(Device *dev, const CsrMatrix *A, const CoarseOptions *opt, CoarseSolver **out);

/* x = M^-1 b (b, x: dev's memory, nrows entries; they must not overlap). M^-1 is symmetric positive definite,
 * so CG may use it as a preconditioner; it is A^-1 to rounding for cuDSS and CHOLMOD. A host solver
 * (BoomerAMG, CHOLMOD) on a CUDA device downloads b, solves on the host and uploads x. */
int coarse_apply(CoarseSolver *cs, const double *b, double *x);

/* The solver made for A again with A's new values, where A has the pattern of the matrix it was made for and
 * the solver keeps what depends on the pattern alone (cuDSS's analysis, CHOLMOD's symbolic factor): *done =
 * 1, and only the numeric factorisation runs. Otherwise (another pattern, BoomerAMG, a solver gathered to rank
 * 0) *done = 0, cs is unchanged, and the caller makes a new solver. Newton's steps change the values, never
 * the pattern. Over MPI ranks (MUMPS) collective: *done is every rank's. */
int coarse_refactor(CoarseSolver *cs, const CsrMatrix *A, int *done);
/* 1 when cs may keep its analysis for a matrix of the same pattern (coarse_refactor can succeed), else 0. Over
 * MPI ranks every rank's solver says the same. */
int coarse_can_refactor(const CoarseSolver *cs);

/* One line for the run log, e.g. "BoomerAMG (HMIS, 7 levels, operator complexity 1.62, 3 functions, nodal,
 * 3 rotations as interpolation vectors)", "CHOLMOD (supernodal Cholesky, METIS ordering, nnz(L) = 4.1e+06,
 * 41 MB)" or "cuDSS (Cholesky, nnz(L) = 1.2e8, 1.9 GB on the GPU)"; a fallback says why ("... instead of
 * cuDSS: REASON"). */
const char *coarse_describe(const CoarseSolver *cs);

typedef struct {
    CoarseType type;         /* the solver chosen (never AUTO) */
    double setup_seconds;    /* coarse_create and coarse_refactor: the library's setup or factorisations */
    int applications;        /* coarse_apply calls */
    double apply_seconds;    /* their total time, transfers included */
    double transfer_seconds; /* of which host <-> device copies (a host solver on a CUDA device) */
    double device_bytes; /* GPU memory at the factorisation's peak, where the solver says (cuDSS); else 0 */
} CoarseStats;
void coarse_stats(const CoarseSolver *cs, CoarseStats *st);

void coarse_destroy(CoarseSolver **cs);

const char *coarse_type_name(CoarseType t);

/* ---- Backends. A backend fills this table for one matrix; coarse.c owns it afterwards. */
typedef struct {
    void *impl;
    int device_vectors; /* 1: apply takes dev's vectors; 0: host arrays (coarse.c copies when dev is a GPU) */
    int (*apply)(void *impl, const double *b, double *x);
    void (*destroy)(void *impl);
    /* Optional (coarse_refactor): A's values factorised with the analysis of the matrix impl was made for,
     * *done = 1; *done = 0 and nothing changed when A's pattern is another one. */
    int (*refactor)(void *impl, const CsrMatrix *A, int *done);
    double device_bytes; /* optional: the GPU memory the solver's factorisation takes at its peak (cuDSS) */
    char description[400];
} CoarseBackend;

/* The end of every backend's create: on failure (status != FEM_OK) destroys impl and returns status; else
 * fills out's table (the description stays as the backend wrote it) and returns FEM_OK. */
int coarse_backend_finish(CoarseBackend *out, int status, void *impl, int device_vectors,
                          int (*apply)(void *impl, const double *b, double *x), void (*destroy)(void *impl));

typedef int (*CoarseFactory)(Device *dev, const CsrMatrix *A, const CoarseOptions *opt, CoarseBackend *out);

/* gpu/ registers its cuDSS factory (app/backends.h does, for femto-app and the tests, when built with cuDSS).
 */
void coarse_register_cudss(CoarseFactory factory);

FEM_EXTERN_C_END

#endif
