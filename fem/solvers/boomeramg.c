/* hypre BoomerAMG as the coarse solver (see coarse.h, boomeramg.h; the settings are justified with measured
 * iteration counts in docs/solvers.md).
 *
 * The matrix goes to hypre through its IJ interface. In one process (CoarseOptions.global NULL) it is the
 * whole matrix on a communicator of this process alone, so a one-process solve inside a run of several ranks
 * stays one-process. Over MPI ranks it is this rank's part, in the rank-contiguous global numbering the
 * caller gives: every local row is added (AddToValues), and hypre sums the partial rows of ghost dofs into
 * the ranks that own them while it assembles. One application is `cycles` V-cycles from a zero guess with
 * l1-Gauss-Seidel, forward on the way down and backward on the way up, and Gaussian elimination on the
 * coarsest grid: with R = P^T that is a symmetric positive definite operator, which CG needs of a
 * preconditioner. */
#include "boomeramg.h"

#ifdef FEMTO_HAVE_HYPRE

#include "fem/comm_mpi.h"
#include "fem/error.h"

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <_hypre_parcsr_ls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODES 6

typedef struct {
    HYPRE_Solver amg;
    HYPRE_IJMatrix A;
    HYPRE_IJVector b, x, modes[MAX_MODES];
    HYPRE_ParCSRMatrix pA;
    HYPRE_ParVector pb, px, pmodes[MAX_MODES];
    int nmodes;
    int64_t n;     /* rows of this rank (all of them in one process) */
    int64_t nrows; /* local rows of the matrix handed in: n, and over ranks the ghosts' partial rows after */
    int cycles;
    MPI_Comm comm;
} Amg;

static void finalize_hypre(void) {
    if (comm_in_init_process()) HYPRE_Finalize(); /* not in a forked child (comm.h) */
}

/* MPI, then hypre, initialised once per process (hypre's own state is process-wide). */
static int hypre_ready(void) {
    static int ready;
    if (ready) return FEM_OK;
    FEM_TRY(comm_ensure_init());
    if (HYPRE_Init()) return fem_fail(FEM_ERR_INTERNAL, "hypre could not be initialised (HYPRE_Init failed)");
    atexit(finalize_hypre); /* runs before MPI's finalisation, which was registered first */
    ready = 1;
    return FEM_OK;
}

/* A hypre error as one sentence; clears hypre's (sticky, process-wide) error flag. */
static int check(HYPRE_Int ierr, const char *what) {
    if (!ierr) return FEM_OK;
    char descr[256] = "";
    HYPRE_DescribeError(ierr, descr);
    HYPRE_ClearAllErrors();
    size_t len = strlen(descr); /* "[Error in argument 1]\n" -> "error in argument 1" */
    while (len && strchr("\n ]", descr[len - 1])) descr[--len] = 0;
    char *d = descr[0] == '[' ? descr + 1 : descr;
    if (d[0] == 'E') d[0] = 'e';
    return fem_fail(FEM_ERR_SOLVER, "hypre BoomerAMG failed while %s (%s)", what, d[0] ? d : "unknown error");
}

static double *vector_data(HYPRE_ParVector v) {
    return hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)v));
}

static int create_vector(MPI_Comm comm, HYPRE_BigInt lo, HYPRE_BigInt hi, HYPRE_IJVector *v,
                         HYPRE_ParVector *pv) {
    FEM_TRY(check(HYPRE_IJVectorCreate(comm, lo, hi, v), "creating a vector"));
    FEM_TRY(check(HYPRE_IJVectorSetObjectType(*v, HYPRE_PARCSR), "creating a vector"));
    FEM_TRY(check(HYPRE_IJVectorInitialize(*v), "creating a vector"));
    FEM_TRY(check(HYPRE_IJVectorAssemble(*v), "creating a vector"));
    return check(HYPRE_IJVectorGetObject(*v, (void **)pv), "creating a vector");
}

/* Hands A's rows to hypre in chunks (hypre counts in HYPRE_Int and numbers in HYPRE_BigInt): set in one
 * process, added over ranks, numbered through global[] when given. */
static int set_rows(HYPRE_IJMatrix ij, const CsrMatrix *A, const int64_t *global) {
    enum { CHUNK = 1 << 16 };
    HYPRE_Int *ncols = malloc(sizeof *ncols * CHUNK);
    HYPRE_BigInt *rows = malloc(sizeof *rows * CHUNK), *cols = NULL;
    int64_t max_chunk_nnz = 0;
    for (int64_t r0 = 0; r0 < A->nrows; r0 += CHUNK) {
        int64_t r1 = r0 + CHUNK < A->nrows ? r0 + CHUNK : A->nrows;
        int64_t nnz = A->rowptr[r1] - A->rowptr[r0];
        max_chunk_nnz = nnz > max_chunk_nnz ? nnz : max_chunk_nnz;
    }
    cols = malloc(sizeof *cols * (size_t)(max_chunk_nnz + 1));
    int status =
        ncols && rows && cols ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of memory (coarse matrix to hypre)");
    for (int64_t r0 = 0; r0 < A->nrows && !status; r0 += CHUNK) {
        int64_t r1 = r0 + CHUNK < A->nrows ? r0 + CHUNK : A->nrows, k0 = A->rowptr[r0];
        for (int64_t r = r0; r < r1; r++) {
            rows[r - r0] = (HYPRE_BigInt)(global ? global[r] : r);
            ncols[r - r0] = (HYPRE_Int)(A->rowptr[r + 1] - A->rowptr[r]);
        }
        for (int64_t k = k0; k < A->rowptr[r1]; k++)
            cols[k - k0] = (HYPRE_BigInt)(global ? global[A->cols[k]] : A->cols[k]);
        status = check((global ? HYPRE_IJMatrixAddToValues : HYPRE_IJMatrixSetValues)(
                           ij, (HYPRE_Int)(r1 - r0), ncols, rows, cols, A->vals + k0),
                       "receiving the coarse matrix");
    }
    free(ncols), free(rows), free(cols);
    return status;
}

/* One process: every row's length is known (all columns are this process's). */
static int row_sizes(Amg *m, const CsrMatrix *A) {
    HYPRE_Int *diag = calloc((size_t)A->nrows, sizeof *diag), *offd = calloc((size_t)A->nrows, sizeof *offd);
    if (!diag || !offd) {
        free(diag), free(offd);
        return fem_fail(FEM_ERR_INTERNAL, "out of memory (row sizes of the coarse matrix)");
    }
    for (int64_t r = 0; r < A->nrows; r++) diag[r] = (HYPRE_Int)(A->rowptr[r + 1] - A->rowptr[r]);
    int status = check(HYPRE_IJMatrixSetDiagOffdSizes(m->A, diag, offd), "sizing the matrix");
    free(diag), free(offd);
    return status;
}

static int build_matrix(Amg *m, const CsrMatrix *A, const CoarseOptions *o, HYPRE_BigInt lo) {
    HYPRE_BigInt hi = lo + (HYPRE_BigInt)m->n - 1;
    FEM_TRY(check(HYPRE_IJMatrixCreate(m->comm, lo, hi, lo, hi, &m->A), "creating the matrix"));
    FEM_TRY(check(HYPRE_IJMatrixSetObjectType(m->A, HYPRE_PARCSR), "creating the matrix"));
    if (o->global) /* the ghosts' partial rows go to their owners: a hint of how many */
        FEM_TRY(check(HYPRE_IJMatrixSetMaxOffProcElmts(m->A, (HYPRE_Int)(A->nnz - A->rowptr[m->n])),
                      "sizing the matrix"));
    else
        FEM_TRY(row_sizes(m, A));
    FEM_TRY(check(HYPRE_IJMatrixInitialize(m->A), "creating the matrix"));
    FEM_TRY(set_rows(m->A, A, o->global));
    FEM_TRY(check(HYPRE_IJMatrixAssemble(m->A), "assembling the matrix"));
    return check(HYPRE_IJMatrixGetObject(m->A, (void **)&m->pA), "assembling the matrix");
}

/* The rigid-body rotations of the nodes (about their centroid), as interpolation vectors: the translations
 * are already reproduced by interpolating each displacement component separately. 3 rotations in 3D, 1 in 2D.
 */
static int rigid_body_modes(Amg *m, const CoarseOptions *o, HYPRE_BigInt lo) {
    int bs = o->block_size;
    int64_t nnodes = m->n / bs; /* this rank's (its own come first) */
    double c[3] = {0, 0, 0}, total = (double)nnodes;
    if (o->global) FEM_TRY(comm_sum(&total, 1)); /* the centroid of all ranks' nodes: one rotation centre */
    for (int64_t i = 0; i < nnodes; i++)
        for (int a = 0; a < 3; a++) c[a] += o->coords[3 * i + a] / total;
    if (o->global) FEM_TRY(comm_sum(c, 3));
    m->nmodes = o->dim == 3 ? 3 : 1;
    for (int k = 0; k < m->nmodes; k++) {
        FEM_TRY(create_vector(m->comm, lo, lo + (HYPRE_BigInt)m->n - 1, &m->modes[k], &m->pmodes[k]));
        double *v = vector_data(m->pmodes[k]);
        int a = k, b = (k + 1) % 3; /* the rotation in the (x_a, x_b) plane */
        for (int64_t i = 0; i < nnodes; i++) {
            const double *x = &o->coords[3 * i];
            for (int comp = 0; comp < bs; comp++) v[i * bs + comp] = 0.0;
            v[i * bs + a] = -(x[b] - c[b]);
            v[i * bs + b] = x[a] - c[a];
        }
    }
    return FEM_OK;
}

/* What a zero CoarseAmgSettings means, and what the options ask for. */
typedef struct {
    double theta;
    int agg_levels, coarsen, systems, nodal, modes;
} Choice;

static Choice choose(const CoarseOptions *o) {
    const CoarseAmgSettings *s = &o->amg;
    Choice c;
    c.theta = s->strong_threshold > 0 ? s->strong_threshold : o->dim == 3 ? 0.5 : 0.25;
    c.systems = o->block_size > 1;
    c.nodal = c.systems && !s->unknown_based;
    c.modes = c.nodal && o->coords && o->block_size == o->dim && !s->no_rigid_body_modes;
    c.agg_levels = s->agg_levels < 0 ? 0 : s->agg_levels > 0 ? s->agg_levels : 1;
    c.coarsen = s->coarsen_type > 0 ? s->coarsen_type : 10;
    return c;
}

static int configure(Amg *m, const CoarseOptions *o, const Choice *c) {
    HYPRE_Solver h = m->amg;
    HYPRE_BoomerAMGSetPrintLevel(h, o->amg.print_level);
    HYPRE_BoomerAMGSetMaxIter(h, o->cycles);
    HYPRE_BoomerAMGSetTol(h, 0.0);
    HYPRE_BoomerAMGSetCoarsenType(h, c->coarsen);
    HYPRE_BoomerAMGSetStrongThreshold(h, c->theta);
    HYPRE_BoomerAMGSetInterpType(h, 6); /* extended+i, at most 4 weights per row */
    HYPRE_BoomerAMGSetPMaxElmts(h, 4);
    /* aggressive coarsening on the first level(s), with two-stage extended+i interpolation, also truncated */
    HYPRE_BoomerAMGSetAggNumLevels(h, c->agg_levels);
    HYPRE_BoomerAMGSetAggInterpType(h, 6);
    HYPRE_BoomerAMGSetAggPMaxElmts(h, 4);
    /* symmetric smoothing: l1-Gauss-Seidel forward down, backward up, exact solve on the coarsest grid */
    HYPRE_BoomerAMGSetRelaxOrder(h, 0);
    HYPRE_BoomerAMGSetNumSweeps(h, 1);
    HYPRE_BoomerAMGSetCycleRelaxType(h, 13, 1);
    HYPRE_BoomerAMGSetCycleRelaxType(h, 14, 2);
    HYPRE_BoomerAMGSetCycleRelaxType(h, 9, 3);
    if (c->systems) HYPRE_BoomerAMGSetNumFunctions(h, o->block_size);
    if (c->nodal) {
        HYPRE_BoomerAMGSetNodal(h, 4);     /* node strength from the row-sum norm of the node blocks */
        HYPRE_BoomerAMGSetNodalDiag(h, 1); /* ... with the block diagonal set to minus the off-diagonal sum */
    }
    if (c->modes) {
        HYPRE_BoomerAMGSetInterpVecVariant(h, 2); /* GM-2 (Baker, Kolev, Yang 2010) */
        HYPRE_BoomerAMGSetInterpVecQMax(h, 4);
        HYPRE_BoomerAMGSetInterpRefine(h, 1);
        HYPRE_BoomerAMGSetInterpVectors(h, m->nmodes, m->pmodes);
    }
    return check(HYPRE_GetError(), "setting its options");
}

/* Levels and operator complexity (nonzeros of all levels over those of the finest). */
static int hierarchy(const Amg *m, const CoarseOptions *o, int *levels, double *complexity) {
    hypre_ParAMGData *d = (hypre_ParAMGData *)m->amg;
    *levels = hypre_ParAMGDataNumLevels(d);
    double nnz[2] = {0, 0}; /* finest, all */
    for (int l = 0; l < *levels; l++) {
        hypre_ParCSRMatrix *A = hypre_ParAMGDataAArray(d)[l];
        double z = (double)hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixDiag(A)) +
                   (double)hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixOffd(A));
        if (l == 0) nnz[0] = z;
        nnz[1] += z;
    }
    if (o->global) FEM_TRY(comm_sum(nnz, 2));
    *complexity = nnz[0] > 0 ? nnz[1] / nnz[0] : 1.0;
    return FEM_OK;
}

static int describe(const Amg *m, const CoarseOptions *o, const Choice *c, char *out, size_t len) {
    int levels;
    double complexity;
    FEM_TRY(hierarchy(m, o, &levels, &complexity));
    const char *coarsen = c->coarsen == 10 ? "HMIS" : c->coarsen == 8 ? "PMIS" : "coarsening";
    int k = snprintf(out, len, "BoomerAMG (%s, theta %.2g, %d levels, operator complexity %.2f", coarsen,
                     c->theta, levels, complexity);
    if (c->agg_levels) k += snprintf(out + k, len - (size_t)k, ", %d aggressive", c->agg_levels);
    if (c->systems)
        k += snprintf(out + k, len - (size_t)k, ", %d functions, %s", o->block_size,
                      c->nodal ? "nodal" : "unknown-based");
    if (c->modes) k += snprintf(out + k, len - (size_t)k, ", %d rigid-body rotations", m->nmodes);
    if (o->cycles > 1) k += snprintf(out + k, len - (size_t)k, ", %d V-cycles", o->cycles);
    snprintf(out + k, len - (size_t)k, ")");
    return FEM_OK;
}

static int amg_apply(void *impl, const double *b, double *x) {
    Amg *m = impl;
    size_t bytes = sizeof(double) * (size_t)m->n;
    memcpy(vector_data(m->pb), b, bytes);
    memset(vector_data(m->px), 0, bytes);
    FEM_TRY(check(HYPRE_BoomerAMGSolve(m->amg, m->pA, m->pb, m->px), "cycling"));
    memcpy(x, vector_data(m->px), bytes);
    /* the ghosts (over ranks): 0, not stale; whoever reads them forwards them from their owners first */
    if (m->nrows > m->n) memset(x + m->n, 0, sizeof(double) * (size_t)(m->nrows - m->n));
    return FEM_OK;
}

static void amg_destroy(void *impl) {
    Amg *m = impl;
    if (!m) return;
    if (m->amg) HYPRE_BoomerAMGDestroy(m->amg);
    for (int k = 0; k < m->nmodes; k++)
        if (m->modes[k]) HYPRE_IJVectorDestroy(m->modes[k]);
    if (m->b) HYPRE_IJVectorDestroy(m->b);
    if (m->x) HYPRE_IJVectorDestroy(m->x);
    if (m->A) HYPRE_IJMatrixDestroy(m->A);
    free(m);
}

/* (Re)creates the solver with choice c and computes its hierarchy. Over MPI ranks every rank gets the same
 * answer (hypre's error flag is each process's own): a rank that retried alone would wait for the others in
 * its setup while they wait for it in the solve. */
static int build_hierarchy(Amg *m, const CoarseOptions *o, const Choice *c) {
    if (m->amg) HYPRE_BoomerAMGDestroy(m->amg);
    m->amg = NULL;
    FEM_TRY(check(HYPRE_BoomerAMGCreate(&m->amg), "creating the solver"));
    FEM_TRY(configure(m, o, c));
    int status = check(HYPRE_BoomerAMGSetup(m->amg, m->pA, m->pb, m->px), "setting up the hierarchy");
    return o->global ? comm_agree(status) : status;
}

static int setup(Amg *m, const CsrMatrix *A, const CoarseOptions *o, CoarseBackend *out) {
    HYPRE_BigInt lo = o->global ? (HYPRE_BigInt)o->first : 0;
    FEM_TRY(build_matrix(m, A, o, lo));
    FEM_TRY(create_vector(m->comm, lo, lo + (HYPRE_BigInt)m->n - 1, &m->b, &m->pb));
    FEM_TRY(create_vector(m->comm, lo, lo + (HYPRE_BigInt)m->n - 1, &m->x, &m->px));
    Choice c = choose(o);
    if (c.modes) FEM_TRY(rigid_body_modes(m, o, lo));
    int status = build_hierarchy(m, o, &c);
    char dropped[200] = "";
    if (status == FEM_ERR_SOLVER && c.modes) {
        /* hypre's fit of the rotations can refuse a hierarchy (seen with strength thresholds >= 0.8); nodal
         * coarsening without them still converges, only slower, so it is the fallback, and the log says why
         */
        snprintf(dropped, sizeof dropped, "%s", fem_last_error());
        fem_clear_error();
        c.modes = 0;
        status = build_hierarchy(m, o, &c);
    }
    FEM_TRY(status);
    FEM_TRY(describe(m, o, &c, out->description, sizeof out->description));
    if (dropped[0]) {
        size_t k = strlen(out->description);
        snprintf(out->description + k, sizeof out->description - k, " without the rigid-body modes: %s",
                 dropped);
    }
    return FEM_OK;
}

int boomeramg_create(const CsrMatrix *A, const CoarseOptions *o, CoarseBackend *out) {
    memset(out, 0, sizeof *out);
    const int64_t limit = sizeof(HYPRE_Int) >= 8 ? INT64_MAX : INT32_MAX;
    if (A->nrows > limit || A->nnz > limit)
        return fem_fail(FEM_ERR_USAGE,
                        "the coarse matrix (%lld rows, %lld nonzeros) is too large for this hypre "
                        "build's 32-bit indices",
                        (long long)A->nrows, (long long)A->nnz);
    FEM_TRY(hypre_ready());
    Amg *m = fem_calloc(1, sizeof *m, "the BoomerAMG solver");
    if (!m) return FEM_ERR_INTERNAL;
    m->nrows = A->nrows;
    m->n = o->global ? o->nowned : A->nrows;
    m->comm = o->global ? comm_world() : comm_self();
    m->cycles = o->cycles;
    HYPRE_ClearAllErrors();
    return coarse_backend_finish(out, setup(m, A, o, out), m, 0, amg_apply, amg_destroy);
}

#endif /* FEMTO_HAVE_HYPRE */
