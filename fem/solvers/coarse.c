/* Coarse solvers (see coarse.h): the choice of backend, host staging for a host backend on a GPU, timing. */
#include "coarse.h"

#include "boomeramg.h"
#include "cholmod_coarse.h"
#include "coarse_gather.h"
#include "fem/comm.h"
#include "fem/error.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CoarseSolver {
    Device *dev;
    int64_t n;
    CoarseBackend be;
    double *hb, *hx; /* host copies of b and x: a host backend on a GPU device */
    CoarseStats st;
    int factorised; /* 0: made for a pattern (coarse_start), not yet given values by coarse_refactor */
    char why_not[400]; /* AUTO fell back: "instead of SOLVER: REASON" for each solver that failed */
    char description[700];
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
    if (o->pattern_only && o->global)
        return fem_fail(FEM_ERR_USAGE, "a coarse solver over MPI ranks is made from the matrix's values, "
                                       "not from its pattern alone");
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
        return cholmod_coarse_create(A, o->cache_dir, o->pattern_only, be);
#else
        return fem_fail(FEM_ERR_USAGE, "the CHOLMOD coarse solver is not built in (femto was built without "
                                       "SuiteSparse: on Debian, apt-get install libsuitesparse-dev)");
#endif
    }
    if (o->pattern_only)
        return fem_fail(FEM_ERR_USAGE, "BoomerAMG's setup needs the coarse matrix's values, not its pattern alone");
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

/* Over MPI ranks: gathered to rank 0 for the solver one process would use (a named CHOLMOD or cuDSS, or AUTO's
 * choice while the whole matrix is small enough: coarse_gather.h), else BoomerAMG over all ranks. */
static int create_over_ranks(Device *dev, const CsrMatrix *A, const CoarseOptions *o, CoarseSolver *cs) {
    int cholmod = 0;
#ifdef FEMTO_HAVE_CHOLMOD
    cholmod = 1;
#endif
    CoarseType inner;
    int64_t nglobal;
    FEM_TRY(coarse_gather_choice(dev, o, cudss_factory != NULL, cholmod, &inner, &nglobal));
    if (inner != COARSE_BOOMERAMG) return coarse_gather_create(dev, A, o, inner, &cs->st.type, &cs->be);
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
    cs->factorised = !o.pattern_only;
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
    if (!cs->factorised)
        return fem_fail(FEM_ERR_INTERNAL, "the coarse solver was applied before it was given the matrix's values");
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
    if (!*done) return FEM_OK;
    cs->st.setup_seconds += omp_get_wtime() - t0;
    cs->factorised = 1;
    if (cs->be.describe) {
        cs->be.describe(cs->be.impl, cs->be.description, sizeof cs->be.description);
        snprintf(cs->description, sizeof cs->description, "%s%s", cs->be.description, cs->why_not);
    }
    return FEM_OK;
}

struct CoarseStart {
    pthread_t thread;
    Device *dev;
    CsrMatrix pattern; /* the caller's rows and columns; no values */
    CoarseOptions opt;
    int threads; /* the caller's OpenMP threads: a new thread starts with OpenMP's default */
    CoarseSolver *cs;
    double seconds;
};

static void *start_thread(void *arg) {
    CoarseStart *s = arg;
    double t0 = omp_get_wtime();
    omp_set_num_threads(s->threads);
    /* a GPU is current per thread: sync makes the device's GPU this thread's */
    if ((s->dev->ops.sync && s->dev->ops.sync(s->dev) != FEM_OK) ||
        coarse_create(s->dev, &s->pattern, &s->opt, &s->cs) != FEM_OK) {
        s->cs = NULL;
        fem_clear_error(); /* coarse_create with the values says it again, where it counts */
    }
    s->seconds = omp_get_wtime() - t0;
    return NULL;
}

CoarseStart *coarse_start(Device *dev, const CsrMatrix *pattern, const CoarseOptions *opt) {
    if (opt && (opt->global || opt->type == COARSE_BOOMERAMG)) return NULL;
    CoarseStart *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->dev = dev;
    s->pattern = *pattern;
    s->pattern.vals = NULL;
    if (opt) s->opt = *opt;
    s->opt.pattern_only = 1;
    s->threads = omp_get_max_threads();
    if (pthread_create(&s->thread, NULL, start_thread, s) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

CoarseSolver *coarse_wait(CoarseStart *s, double *seconds) {
    *seconds = 0.0;
    if (!s) return NULL;
    pthread_join(s->thread, NULL);
    CoarseSolver *cs = s->cs;
    *seconds = s->seconds;
    free(s);
    return cs;
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
