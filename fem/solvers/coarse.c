/* Coarse solvers (see coarse.h): the choice of backend, host staging for a host backend on a GPU, timing. */
#include "coarse.h"

#include "boomeramg.h"
#include "cholmod_coarse.h"
#include "coarse_gather.h"
#include "mumps_coarse.h"
#include "fem/comm.h"
#include "fem/error.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CoarseSolver {
    Device *dev;
    int64_t n;
    CoarseBackend be;
    double *hb, *hx; /* host copies of b and x: a host backend on a GPU device */
    CoarseStats st;
    char why_not[400]; /* AUTO fell back: "instead of SOLVER: REASON" for each solver that failed */
    char description[800];
};

static CoarseFactory cudss_factory;

void coarse_register_cudss(CoarseFactory factory) {
    cudss_factory = factory;
}

int coarse_backend_finish(CoarseBackend *out, int status, void *impl, int device_vectors,
                          int (*apply)(void *impl, const double *b, double *x), void (*destroy)(void *impl)) {
    if (status != FEM_OK) {
        destroy(impl);
        return status;
    }
    out->impl = impl;
    out->device_vectors = device_vectors;
    out->apply = apply;
    out->destroy = destroy;
    return FEM_OK;
}

const char *coarse_type_name(CoarseType t) {
    return t == COARSE_BOOMERAMG ? "BoomerAMG"
           : t == COARSE_CUDSS   ? "cuDSS"
           : t == COARSE_CHOLMOD ? "CHOLMOD"
           : t == COARSE_MUMPS   ? "MUMPS"
                                 : "auto";
}

/* The options with every default filled in, or FEM_ERR_USAGE when they do not fit A. */
static int resolve_options(const CsrMatrix *A, const CoarseOptions *in, CoarseOptions *o) {
    memset(o, 0, sizeof *o);
    if (in) *o = *in;
    if (o->block_size <= 0) o->block_size = 1;
    if (o->cycles <= 0) o->cycles = 1;
    if (o->dim <= 0) o->dim = o->block_size == 2 || o->block_size == 3 ? o->block_size : 3;
    if (A->nrows <= 0 || A->nrows != A->ncols)
        return fem_fail(FEM_ERR_USAGE,
                        "a coarse solver needs a square, non-empty matrix (this one is %lld x %lld)",
                        (long long)A->nrows, (long long)A->ncols);
    if (A->nrows % o->block_size)
        return fem_fail(FEM_ERR_USAGE,
                        "the coarse matrix has %lld rows, not a multiple of %d unknowns per node",
                        (long long)A->nrows, o->block_size);
    if (o->dim != 2 && o->dim != 3)
        return fem_fail(FEM_ERR_USAGE, "the coarse solver's space dimension must be 2 or 3, not %d", o->dim);
    return FEM_OK;
}

static int create_backend(Device *dev, const CsrMatrix *A, const CoarseOptions *o, CoarseType type,
                          CoarseBackend *be) {
    if (type == COARSE_CUDSS) {
        if (!cudss_factory)
            return fem_fail(FEM_ERR_USAGE, "the cuDSS coarse solver is not built in (femto was built without "
                                           "cuDSS: tools/install-deps.sh installs it where nvcc is present)");
        if (dev->kind != DEV_CUDA)
            return fem_fail(FEM_ERR_USAGE,
                            "the cuDSS coarse solver needs a CUDA device, and this run uses the %s",
                            dev->name);
        return cudss_factory(dev, A, o, be);
    }
    if (type == COARSE_CHOLMOD) {
#ifdef FEMTO_HAVE_CHOLMOD
        return cholmod_coarse_create(A, o->cache_dir, be);
#else
        return fem_fail(FEM_ERR_USAGE, "the CHOLMOD coarse solver is not built in (femto was built without "
                                       "SuiteSparse: on Debian, apt-get install libsuitesparse-dev)");
#endif
    }
    if (type == COARSE_MUMPS) {
#ifdef FEMTO_HAVE_MUMPS
        return mumps_coarse_create(A, o, be);
#else
        return fem_fail(FEM_ERR_USAGE, "the MUMPS coarse solver is not built in (femto was built without "
                                       "MUMPS and MPI: on Debian, apt-get install libmumps-dev)");
#endif
    }
#ifdef FEMTO_HAVE_HYPRE
    return boomeramg_create(A, o, be);
#else
    return fem_fail(FEM_ERR_USAGE,
                    "the BoomerAMG coarse solver is not built in (femto was built without hypre "
                    "and MPI: on Debian, apt-get install libhypre-dev)");
#endif
}

/* The solvers AUTO tries, best first: cuDSS on a CUDA device when registered; then on the host CHOLMOD for a
 * matrix small enough to factorise (COARSE_DIRECT_MAX_ROWS), BoomerAMG otherwise; each built-in solver after
 * the first is the fallback of the one before (a factor too large for the GPU, not enough host memory). */
static int auto_candidates(const Device *dev, const CsrMatrix *A, CoarseType *list) {
    int n = 0, hypre = 0, cholmod = 0;
#ifdef FEMTO_HAVE_HYPRE
    hypre = 1;
#endif
#ifdef FEMTO_HAVE_CHOLMOD
    cholmod = 1;
#endif
    if (dev->kind == DEV_CUDA && cudss_factory) list[n++] = COARSE_CUDSS;
    if (cholmod && (A->nrows <= COARSE_DIRECT_MAX_ROWS || !hypre)) list[n++] = COARSE_CHOLMOD;
    if (hypre || n == 0) list[n++] = COARSE_BOOMERAMG; /* (n == 0: its "not built in" sentence) */
    return n;
}

/* AUTO: the first candidate that sets up; the reasons of those that failed are kept for the description. */
static int create_auto(Device *dev, const CsrMatrix *A, const CoarseOptions *o, CoarseSolver *cs) {
    CoarseType list[3];
    int n = auto_candidates(dev, A, list), status = FEM_OK;
    for (int i = 0; i < n; i++) {
        status = create_backend(dev, A, o, list[i], &cs->be);
        if (!status) {
            cs->st.type = list[i];
            return FEM_OK;
        }
        if (i == n - 1) break;
        size_t len = strlen(cs->why_not);
        snprintf(cs->why_not + len, sizeof cs->why_not - len, " instead of %s: %s", coarse_type_name(list[i]),
                 fem_last_error());
        fem_clear_error();
    }
    return status;
}

/* Over MPI ranks: MUMPS over all ranks where it is named, or where AUTO would otherwise gather the level to
 * rank 0 for CHOLMOD (the host's direct solver; a failure then still gathers); gathered to rank 0 for the
 * solver one process would use (a named CHOLMOD or cuDSS, or AUTO's choice while the whole matrix is small
 * enough: coarse_gather.h); else BoomerAMG over all ranks. */
static int create_over_ranks(Device *dev, const CsrMatrix *A, const CoarseOptions *o, CoarseSolver *cs) {
    int cholmod = 0, mumps = 0;
#ifdef FEMTO_HAVE_CHOLMOD
    cholmod = 1;
#endif
#ifdef FEMTO_HAVE_MUMPS
    mumps = 1;
#endif
    CoarseType inner;
    int64_t nglobal;
    FEM_TRY(coarse_gather_choice(dev, o, cudss_factory != NULL, cholmod, &inner, &nglobal));
    int gpu = dev->kind == DEV_CUDA && cudss_factory;
    if (inner == COARSE_MUMPS || (inner == COARSE_AUTO && !gpu && mumps)) {
        cs->st.type = COARSE_MUMPS;
        int status = create_backend(dev, A, o, COARSE_MUMPS, &cs->be);
        if (!status || inner == COARSE_MUMPS) return status;
        snprintf(cs->why_not, sizeof cs->why_not, " instead of MUMPS over the ranks: %s", fem_last_error());
        fem_clear_error();
    }
    int try_inverse = gpu && (inner == COARSE_CUDSS || inner == COARSE_AUTO);
    if (inner != COARSE_BOOMERAMG)
        return coarse_gather_create(dev, A, o, inner, try_inverse, &cs->st.type, &cs->be);
    cs->st.type = COARSE_BOOMERAMG;
    return create_backend(dev, A, o, COARSE_BOOMERAMG, &cs->be);
}

static int create(Device *dev, const CsrMatrix *A, const CoarseOptions *opt, CoarseSolver *cs) {
    CoarseOptions o;
    FEM_TRY(resolve_options(A, opt, &o));
    double t0 = omp_get_wtime();
    if (o.global) {
        FEM_TRY(create_over_ranks(dev, A, &o, cs));
    } else if (o.type == COARSE_AUTO) {
        FEM_TRY(create_auto(dev, A, &o, cs));
    } else {
        cs->st.type = o.type;
        FEM_TRY(create_backend(dev, A, &o, o.type, &cs->be));
    }
    cs->st.setup_seconds = omp_get_wtime() - t0;
    cs->st.device_bytes = cs->be.device_bytes;
    snprintf(cs->description, sizeof cs->description, "%s%s", cs->be.description, cs->why_not);
    if (!cs->be.device_vectors && dev->kind != DEV_CPU) {
        FEM_ALLOC(cs->hb, cs->n, "the coarse solver's host right-hand side");
        FEM_ALLOC(cs->hx, cs->n, "the coarse solver's host solution");
    }
    return FEM_OK;
}

int coarse_create(Device *dev, const CsrMatrix *A, const CoarseOptions *opt, CoarseSolver **out) {
    *out = NULL;
    CoarseSolver *cs = fem_calloc(1, sizeof *cs, "a coarse solver");
    if (!cs) return FEM_ERR_INTERNAL;
    cs->dev = dev;
    cs->n = A->nrows;
    int status = create(dev, A, opt, cs);
    if (status) {
        coarse_destroy(&cs);
        return status;
    }
    *out = cs;
    return FEM_OK;
}

int coarse_apply(CoarseSolver *cs, const double *b, double *x) {
    double t0 = omp_get_wtime();
    if (cs->hb) {
        Device *d = cs->dev;
        size_t bytes = sizeof(double) * (size_t)cs->n;
        FEM_TRY(d->ops.download(d, cs->hb, b, bytes));
        double t1 = omp_get_wtime();
        FEM_TRY(cs->be.apply(cs->be.impl, cs->hb, cs->hx));
        double t2 = omp_get_wtime();
        FEM_TRY(d->ops.upload(d, x, cs->hx, bytes));
        cs->st.transfer_seconds += (t1 - t0) + (omp_get_wtime() - t2);
    } else {
        FEM_TRY(cs->be.apply(cs->be.impl, b, x));
    }
    cs->st.applications++;
    cs->st.apply_seconds += omp_get_wtime() - t0;
    return FEM_OK;
}

int coarse_refactor(CoarseSolver *cs, const CsrMatrix *A, int *done) {
    *done = 0;
    if (!cs || !cs->be.refactor || A->nrows != cs->n) return FEM_OK;
    double t0 = omp_get_wtime();
    FEM_TRY(cs->be.refactor(cs->be.impl, A, done));
    if (*done) cs->st.setup_seconds += omp_get_wtime() - t0;
    return FEM_OK;
}

int coarse_can_refactor(const CoarseSolver *cs) {
    return cs && cs->be.refactor;
}

const char *coarse_describe(const CoarseSolver *cs) {
    return cs ? cs->description : "";
}

void coarse_stats(const CoarseSolver *cs, CoarseStats *st) {
    *st = cs->st;
}

void coarse_destroy(CoarseSolver **cs) {
    if (!cs || !*cs) return;
    CoarseSolver *c = *cs;
    if (c->be.destroy) c->be.destroy(c->be.impl);
    free(c->hb);
    free(c->hx);
    free(c);
    *cs = NULL;
}
