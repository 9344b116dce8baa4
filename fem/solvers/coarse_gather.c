/* The coarse level gathered to rank 0 (see coarse_gather.h). Rank 0 is the root of every transfer; the ranks'
 * owned dofs are consecutive in the rank-contiguous global numbering (rank r's are first_r .. first_r +
 * nowned_r - 1, in local order), so a vector's owned entries travel as one block per rank. */
#include "coarse_gather.h"

#include "fem/comm.h"
#include "fem/error.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROOT = 0 };

typedef struct {
    Device *dev;
    int64_t nlocal, nowned, nglobal;
    int64_t *off;        /* [ranks + 1]: byte offsets of the ranks' owned entries in a whole vector */
    double *gb, *gx;     /* root: the whole b and x on the host */
    double *db, *dx;     /* root: the same in dev's memory, the inner solver's vectors */
    CoarseSolver *inner; /* root */
    /* The gather and the scatter between the GPUs on their own queues (Device.ops.peer_*: NCCL), b and x in
     * device memory, where every rank has that path: no host copies, no host waiting for the device. */
    int on_device;
    int *peers;      /* root: ranks 1 .. n - 1; else {0} */
    int64_t *eoff;   /* [ranks + 1]: the ranks' owned entries' offsets in a whole vector, in doubles */
    int64_t *none;   /* [ranks + 1] zero offsets: the side of an exchange that moves nothing */
    int64_t mine[2]; /* {0, nowned}: a rank's own block */
} Gathered;

int coarse_gather_choice(const Device *dev, const CoarseOptions *o, int have_cudss, int have_cholmod,
                         CoarseType *inner, int64_t *nglobal) {
    double n = (double)o->nowned;
    FEM_TRY(comm_sum(&n, 1));
    *nglobal = (int64_t)n;
    *inner = o->type;
    if (o->type != COARSE_AUTO) return FEM_OK;
    int gpu = dev->kind == DEV_CUDA && have_cudss && n <= COARSE_GATHER_GPU_MAX_ROWS;
    int host = have_cholmod && n <= COARSE_DIRECT_MAX_ROWS;
    *inner = gpu || host ? COARSE_AUTO : COARSE_BOOMERAMG;
    return FEM_OK;
}

static void gathered_destroy(void *impl) {
    Gathered *g = impl;
    if (!g) return;
    coarse_destroy(&g->inner);
    if (g->dev) device_free(g->dev, g->db), device_free(g->dev, g->dx);
    free(g->off);
    free(g->gb);
    free(g->gx);
    free(g->peers);
    free(g->eoff);
    free(g->none);
    free(g);
}

/* The device path: b's owned entries to rank 0 through the GPUs' queues, rank 0's solve on its GPU, x's back
 * the same way; x's ghosts 0. Nothing waits on the host but the ranks' agreement on rank 0's status, before
 * the scatter (a rank 0 that failed scatters nothing, and no rank waits for it). */
static int device_apply(void *impl, const double *b, double *x) {
    Gathered *g = impl;
    Device *d = g->dev;
    int root = comm_rank() == ROOT, n = root ? comm_size() - 1 : 1, status = FEM_OK;
    int64_t t = 0, own = (int64_t)sizeof(double) * g->nowned;
    if (root) {
        status = d->ops.copy(d, g->db, b, (size_t)own);
        if (!status)
            status = d->ops.peer_exchange_begin(d, n, g->peers, g->none, NULL, g->eoff + 1, g->db, 0, &t);
        if (!status) status = coarse_apply(g->inner, g->db, g->dx);
    } else {
        status = d->ops.peer_exchange_begin(d, 1, g->peers, g->mine, b, g->none, NULL, 0, &t);
    }
    FEM_TRY(comm_agree(status));
    if (root) {
        status = d->ops.peer_exchange_begin(d, n, g->peers, g->eoff + 1, g->dx, g->none, NULL, 0, &t);
        if (!status) status = d->ops.copy(d, x, g->dx, (size_t)own);
    } else {
        status = d->ops.peer_exchange_begin(d, 1, g->peers, g->none, NULL, g->mine, x, 0, &t);
    }
    if (!status && g->nlocal > g->nowned)
        status = d->ops.zero(d, x + g->nowned, sizeof(double) * (size_t)(g->nlocal - g->nowned));
    return status;
}

/* Whether every rank has the device path (Device.ops.peer_ready), and if so its lists. Collective. */
static int device_path(Gathered *g) {
    Device *d = g->dev;
    double have = d->kind == DEV_CUDA && d->ops.peer_ready && d->ops.peer_exchange_begin && d->ops.copy &&
                  d->ops.peer_ready(d, NULL, 0);
    FEM_TRY(comm_sum(&have, 1));
    if ((int)have != comm_size() || comm_size() < 2) return FEM_OK;
    int n = comm_size();
    g->peers = malloc(sizeof(int) * (size_t)n);
    g->eoff = malloc(sizeof(int64_t) * (size_t)(n + 1));
    g->none = calloc((size_t)n + 1, sizeof(int64_t));
    int status = g->peers && g->eoff && g->none
                     ? FEM_OK
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse gather");
    status = comm_agree(status);
    if (status) return status;
    for (int r = 0; r <= n; r++) g->eoff[r] = g->off[r] / (int64_t)sizeof(double);
    for (int r = 1; r < n; r++) g->peers[r - 1] = r;
    if (comm_rank() != ROOT) g->peers[0] = ROOT;
    g->mine[0] = 0, g->mine[1] = g->nowned;
    g->on_device = 1;
    return FEM_OK;
}

/* b's owned entries to rank 0, the solve there, x's back; x's ghosts 0. Every rank returns rank 0's status.
 */
static int gathered_apply(void *impl, const double *b, double *x) {
    Gathered *g = impl;
    const int64_t own = (int64_t)sizeof(double) * g->nowned;
    int status = comm_gather_bytes(b, own, g->gb, g->off, ROOT);
    if (!status && comm_rank() == ROOT) {
        Device *d = g->dev;
        size_t all = sizeof(double) * (size_t)g->nglobal;
        status = d->ops.upload(d, g->db, g->gb, all);
        if (!status) status = coarse_apply(g->inner, g->db, g->dx);
        if (!status) status = d->ops.download(d, g->gx, g->dx, all);
        if (status) memset(g->gx, 0, all);
    }
    int moved = comm_scatter_bytes(g->gx, g->off, x, own, ROOT);
    for (int64_t i = g->nowned; i < g->nlocal; i++) x[i] = 0.0;
    return comm_agree(status ? status : moved);
}

/* The explicit inverse over the ranks: every rank factorises the whole matrix and keeps the columns of A^-1
 * for its own rows (A^-1 is symmetric); an application all-gathers b's owned entries and multiplies. */
typedef struct {
    Device *dev;
    int64_t nlocal, nowned, nglobal;
    int64_t *off;        /* as Gathered's */
    double *hown, *hall; /* pinned host: this rank's owned entries of b, the whole b */
    double *dall;        /* the whole b in dev's memory */
    CoarseSolver *inner; /* cuDSS, this rank's rows of the inverse */
} Spread;

static void spread_destroy(void *impl) {
    Spread *p = impl;
    if (!p) return;
    coarse_destroy(&p->inner);
    if (p->dev) {
        device_free(p->dev, p->dall);
        device_host_free(p->dev, p->hown);
        device_host_free(p->dev, p->hall);
    }
    free(p->off);
    free(p);
}

/* x's owned entries = this rank's rows of A^-1 times the whole b; x's ghosts 0. Every step is taken on every
 * rank whatever failed before it (the all-gather is collective); the ranks agree on the status. */
static int spread_apply(void *impl, const double *b, double *x) {
    Spread *p = impl;
    Device *d = p->dev;
    const int64_t own = (int64_t)sizeof(double) * p->nowned;
    int status = d->ops.download(d, p->hown, b, (size_t)own);
    int moved = comm_allgather_bytes(p->hown, own, p->hall, p->off);
    if (!status) status = moved;
    if (!status) status = d->ops.upload(d, p->dall, p->hall, sizeof(double) * (size_t)p->nglobal);
    if (!status) status = coarse_apply(p->inner, p->dall, x);
    if (!status && p->nlocal > p->nowned)
        status = d->ops.zero(d, x + p->nowned, sizeof(double) * (size_t)(p->nlocal - p->nowned));
    return comm_agree(status);
}

/* off[r] = bytes before rank r's part of a whole array of `per` bytes a row (counts: every rank's rows). */
static int offsets(const int64_t *counts, int64_t per, int64_t **off) {
    int n = comm_size();
    *off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!*off) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse gather's offsets");
    (*off)[0] = 0;
    for (int r = 0; r < n; r++) (*off)[r + 1] = (*off)[r] + counts[r] * per;
    return FEM_OK;
}

/* n values of `per` bytes from every rank to root (counts[r] of them from rank r), into *all (malloc'ed on
 * root). */
static int gather_rows(const void *mine, int64_t n, int64_t per, const int64_t *counts, void **all) {
    int64_t *off = NULL;
    int status = offsets(counts, per, &off);
    *all = NULL;
    if (!status && comm_rank() == ROOT) {
        *all = malloc((size_t)off[comm_size()] + 1);
        if (!*all)
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory on MPI rank 0 for the coarse matrix");
    }
    status = comm_agree(status);
    if (!status) status = comm_gather_bytes(mine, n * per, *all, off, ROOT);
    free(off);
    return status;
}

/* The rank's triplets in global numbers (int32: coarse_gather_create checks the size). */
static int local_triplets(const CsrMatrix *A, const int64_t *global, int32_t **rows, int32_t **cols) {
    int64_t nnz = A->rowptr[A->nrows];
    *rows = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
    *cols = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
    if (!*rows || !*cols)
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse matrix's rows");
    for (int64_t i = 0; i < A->nrows; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            (*rows)[k] = (int32_t)global[i];
            (*cols)[k] = (int32_t)global[A->cols[k]];
        }
    return FEM_OK;
}

/* Root: the whole matrix, the sum of every rank's rows. */
static int gather_matrix(const CsrMatrix *A, const CoarseOptions *o, int64_t nglobal, CsrMatrix *G) {
    int64_t nnz = A->rowptr[A->nrows], *counts = malloc(sizeof(int64_t) * (size_t)comm_size());
    int32_t *rows = NULL, *cols = NULL, *grows = NULL, *gcols = NULL;
    double *gvals = NULL;
    int status = counts ? local_triplets(A, o->global, &rows, &cols)
                        : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse gather");
    status = comm_agree(status);
    if (!status) status = comm_allgather_int64(nnz, counts);
    if (!status) status = gather_rows(rows, nnz, sizeof(int32_t), counts, (void **)&grows);
    if (!status) status = gather_rows(cols, nnz, sizeof(int32_t), counts, (void **)&gcols);
    if (!status) status = gather_rows(A->vals, nnz, sizeof(double), counts, (void **)&gvals);
    if (!status && comm_rank() == ROOT) {
        int64_t total = 0;
        for (int r = 0; r < comm_size(); r++) total += counts[r];
        status = csr_from_triplets(nglobal, nglobal, total, grows, gcols, gvals, G);
    }
    free(counts), free(rows), free(cols), free(grows), free(gcols), free(gvals);
    return status;
}

/* Root: the owned nodes' coordinates in global order (elasticity's rigid-body modes, should rank 0's solver
 * be BoomerAMG); NULL where A has none. */
static int gather_coords(const CoarseOptions *o, const int64_t *owned, double **coords) {
    *coords = NULL;
    if (!o->coords) return FEM_OK;
    int n = comm_size(), bs = o->block_size;
    int64_t *nodes = malloc(sizeof(int64_t) * (size_t)n);
    if (!nodes) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse gather");
    for (int r = 0; r < n; r++) nodes[r] = owned[r] / bs;
    int status = gather_rows(o->coords, o->nowned / bs, 3 * sizeof(double), nodes, (void **)coords);
    free(nodes);
    return status;
}

/* Root: the inner solver on the whole matrix and the whole vectors it needs. */
static int root_setup(Gathered *g, const CsrMatrix *G, const CoarseOptions *o, CoarseType inner,
                      const double *coords) {
    CoarseOptions io = *o;
    io.type = inner;
    io.global = NULL;
    io.nowned = io.first = 0;
    io.coords = coords;
    size_t all = sizeof(double) * (size_t)g->nglobal;
    FEM_ALLOC(g->gb, g->nglobal, "the coarse level's whole right-hand side");
    FEM_ALLOC(g->gx, g->nglobal, "the coarse level's whole solution");
    FEM_TRY(device_alloc(g->dev, (void **)&g->db, all));
    FEM_TRY(device_alloc(g->dev, (void **)&g->dx, all));
    return coarse_create(g->dev, G, &io, &g->inner);
}

int coarse_owned_layout(int64_t nowned, int64_t **owned, int64_t **off) {
    *off = NULL;
    *owned = malloc(sizeof(int64_t) * (size_t)comm_size());
    if (!*owned) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse level's layout");
    FEM_TRY(comm_allgather_int64(nowned, *owned));
    return offsets(*owned, sizeof(double), off);
}

/* Every rank: the solver type and description rank 0 ended with. */
static int share_result(Gathered *g, CoarseType *type, CoarseBackend *out) {
    int t = COARSE_AUTO;
    if (comm_rank() == ROOT) {
        CoarseStats st;
        coarse_stats(g->inner, &st);
        t = (int)st.type;
        snprintf(out->description, sizeof out->description, "%s, gathered to rank 0 from %d MPI ranks",
                 coarse_describe(g->inner), comm_size());
    }
    FEM_TRY(comm_bcast(&t, sizeof t, ROOT));
    FEM_TRY(comm_bcast(out->description, sizeof out->description, ROOT));
    *type = (CoarseType)t;
    return FEM_OK;
}

/* Root's whole matrix G to every rank. */
static int share_matrix(CsrMatrix *G, int64_t nglobal) {
    int64_t nnz = comm_rank() == ROOT ? G->nnz : 0;
    FEM_TRY(comm_bcast(&nnz, sizeof nnz, ROOT));
    int status = FEM_OK;
    if (comm_rank() != ROOT) {
        G->nrows = G->ncols = nglobal, G->nnz = nnz;
        G->rowptr = malloc(sizeof(int64_t) * (size_t)(nglobal + 1));
        G->cols = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
        G->vals = malloc(sizeof(double) * (size_t)(nnz + 1));
        if (!G->rowptr || !G->cols || !G->vals)
            status = fem_fail(FEM_ERR_INTERNAL,
                              "out of host memory for the whole coarse matrix on MPI rank %d", comm_rank());
    }
    FEM_TRY(comm_agree(status));
    FEM_TRY(comm_bcast(G->rowptr, (int64_t)sizeof(int64_t) * (nglobal + 1), ROOT));
    FEM_TRY(comm_bcast(G->cols, (int64_t)sizeof(int32_t) * nnz, ROOT));
    return comm_bcast(G->vals, (int64_t)sizeof(double) * nnz, ROOT);
}

/* Whether the ranks try the explicit inverse (CoarseOptions.inverse): AUTO while the largest rank's columns
 * take at most COARSE_INVERSE_MAX_BYTES. */
static int spread_wanted(const CoarseOptions *o, const int64_t *owned, int64_t nglobal) {
    if (o->inverse == COARSE_INVERSE_NO) return 0;
    if (o->inverse == COARSE_INVERSE_YES) return 1;
    int64_t most = 0;
    for (int r = 0; r < comm_size(); r++) most = owned[r] > most ? owned[r] : most;
    double size = o->precision == COARSE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
    return size * (double)nglobal * (double)most <= COARSE_INVERSE_MAX_BYTES;
}

/* Every rank: cuDSS on the whole matrix G, its rows of the inverse, the vectors of an application. */
static int spread_setup(Spread *p, const CsrMatrix *G, const CoarseOptions *o) {
    CoarseOptions io = *o;
    io.type = COARSE_CUDSS;
    io.global = NULL;
    io.coords = NULL;
    io.inverse_first = o->first, io.inverse_count = o->nowned;
    io.nowned = io.first = 0;
    FEM_TRY(device_host_alloc(p->dev, (void **)&p->hown, sizeof(double) * (size_t)(p->nowned + 1)));
    FEM_TRY(device_host_alloc(p->dev, (void **)&p->hall, sizeof(double) * (size_t)p->nglobal));
    FEM_TRY(device_alloc(p->dev, (void **)&p->dall, sizeof(double) * (size_t)p->nglobal));
    return coarse_create(p->dev, G, &io, &p->inner);
}

/* The explicit inverse over the ranks, or a status every rank shares (the caller then gathers to rank 0). */
static int spread_create(Device *dev, const CsrMatrix *A, const CoarseOptions *o, CsrMatrix *G,
                         const int64_t *owned, int64_t nglobal, CoarseBackend *out) {
    Spread *p = fem_calloc(1, sizeof *p, "the coarse level's explicit inverse over ranks");
    int status = p ? FEM_OK : FEM_ERR_INTERNAL;
    if (p) {
        p->dev = dev, p->nlocal = A->nrows, p->nowned = o->nowned, p->nglobal = nglobal;
        status = offsets(owned, sizeof(double), &p->off);
    }
    status = comm_agree(status);
    if (!status) status = share_matrix(G, nglobal);
    if (!status) status = comm_agree(spread_setup(p, G, o));
    if (!status) {
        snprintf(out->description, sizeof out->description, "%s, on each of %d MPI ranks",
                 coarse_describe(p->inner), comm_size());
        /* every rank's line names its own rows: rank 0's stands for all */
        status = comm_bcast(out->description, sizeof out->description, ROOT);
    }
    if (!p) return status;
    return coarse_backend_finish(out, status, p, 1, spread_apply, spread_destroy);
}

int coarse_gather_create(Device *dev, const CsrMatrix *A, const CoarseOptions *o, CoarseType inner,
                         int try_inverse, CoarseType *type, CoarseBackend *out) {
    Gathered *g = fem_calloc(1, sizeof *g, "the gathered coarse solver");
    int64_t *owned = NULL;
    CsrMatrix G = {0};
    double *coords = NULL;
    int status = g ? FEM_OK : FEM_ERR_INTERNAL;
    if (g) {
        g->dev = dev, g->nlocal = A->nrows, g->nowned = o->nowned;
        status = coarse_owned_layout(g->nowned, &owned, &g->off);
    }
    status = comm_agree(status);
    if (!status) {
        for (int r = 0; r < comm_size(); r++) g->nglobal += owned[r];
        if (g->nglobal > INT32_MAX)
            status = fem_fail(FEM_ERR_USAGE, "the coarse level has %lld rows, too many to gather to one rank",
                              (long long)g->nglobal);
    }
    if (!status) status = gather_matrix(A, o, g->nglobal, &G);
    char why[300] = "";
    if (!status && try_inverse && spread_wanted(o, owned, g->nglobal)) {
        status = spread_create(dev, A, o, &G, owned, g->nglobal, out);
        if (!status) {
            *type = COARSE_CUDSS;
            csr_destroy(&G);
            free(owned);
            gathered_destroy(g);
            return FEM_OK;
        }
        snprintf(why, sizeof why, " (not as the explicit inverse on every rank: %s)", fem_last_error());
        fem_clear_error();
        status = FEM_OK;
    }
    if (!status) status = gather_coords(o, owned, &coords);
    if (!status && comm_rank() == ROOT) {
        /* the other ranks wait in comm_agree, which leaves their cores free: rank 0 factorises on OpenMP (and
         * the BLAS's) threads on every core of its affinity mask meanwhile, where that is more than its share
         * (mpirun's default socket binding: every rank's mask is the socket) */
        int share = omp_get_max_threads(), cores = comm_mask_cores();
        if (cores > share) omp_set_num_threads(cores);
        status = root_setup(g, &G, o, inner, coords);
        if (cores > share) omp_set_num_threads(share);
    }
    status = comm_agree(status);
    if (!status) status = share_result(g, type, out);
    if (!status) status = device_path(g);
    if (!status && g->on_device)
        strncat(out->description, " through NCCL", sizeof out->description - strlen(out->description) - 1);
    if (!status) strncat(out->description, why, sizeof out->description - strlen(out->description) - 1);
    csr_destroy(&G);
    free(coords);
    free(owned);
    if (!g) return status;
    if (g->on_device) return coarse_backend_finish(out, status, g, 1, device_apply, gathered_destroy);
    return coarse_backend_finish(out, status, g, 0, gathered_apply, gathered_destroy);
}
