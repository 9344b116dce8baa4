/* Evaluations by output q-functions on the device (see evaluate.h). Each block of cells (or facets of a
 * group) is set up like an operator's block at the evaluation points: a restriction, the basis tabulated
 * there, the geometry, the field's values and gradients by the device's interpolation kernel; then the output
 * q-function's device instance fills [points][nout]. Nodal values are summed into nodes by the integration
 * kernel with the identity basis; integrals are dot products with a mask that selects one output. */
#include "evaluate.h"

#include "basis.h"
#include "comm.h"
#include "error.h"
#include "geometry.h"
#include "qfunction.h"
#include "restriction.h"

#include <stdlib.h>
#include <string.h>

enum { POINTS_QUADRATURE = 0, POINTS_EQUISPACED = 1, POINTS_NODES = 2 };

typedef struct {
    int facet, bi;
    int gorder;    /* the order of the block's geometric map (mesh_block_geometry_order), for the rule */
    int64_t n;     /* elements */
    fem_idx *list; /* host: the block's elements evaluated, or NULL for all */
    Restriction r;
    Basis basis;
    int32_t *tag; /* device */
    double *geo, *x, *uq, *duq, *auxq, *s;
    const double *xnodes; /* device: the mesh's node coordinates [nnodes][3] (cells), not owned */
} EvalBlock;

static void block_free(Device *d, EvalBlock *b) {
    double *arrays[] = {b->geo, b->x, b->uq, b->duq, b->auxq, b->s};
    for (int i = 0; i < 6; i++) device_free(d, arrays[i]);
    device_free(d, b->tag);
    restriction_destroy(&b->r);
    basis_destroy(&b->basis);
    free(b->list);
    memset(b, 0, sizeof *b);
}

/* The elements of the block in group g (every one when g is NULL): b->n and, for a subset, b->list. */
static int select_elements(const Mesh *m, const PhysicalGroup *g, EvalBlock *b) {
    const MeshBlock *mb = b->facet ? &m->facets[b->bi] : &m->cells[b->bi];
    if (!g) return b->n = mb->count, FEM_OK;
    FEM_ALLOC(b->list, mb->count + 1, "an evaluation");
    b->n = 0;
    for (int64_t c = 0; c < mb->count; c++)
        if (mesh_group_has_entity(g, mb->entity[c])) b->list[b->n++] = (fem_idx)c;
    return FEM_OK;
}

/* The basis at the evaluation points: a quadrature rule, or the element's lattice (equispaced or its own). */
static int block_basis(const EvalField *f, EvalBlock *b, int points) {
    const Space *sp = f->sp;
    const SpaceBlock *sb = b->facet ? &sp->facets[b->bi] : &sp->cells[b->bi];
    Device *d = f->u->dev;
    if (points == POINTS_QUADRATURE) {
        int deg = op_quadrature_degree(f->phys, f->qdegree, sp->order, b->gorder, sb->shape, b->facet);
        return basis_create(&b->basis, d, sb->shape, sp->order, deg);
    }
    double *pts = malloc(sizeof(double) * 3 * (size_t)sb->ndof), *w = malloc(sizeof(double) * (size_t)sb->ndof);
    int status = pts && w ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for an evaluation");
    if (!status) {
        lattice_points(sb->shape, sp->order, points == POINTS_EQUISPACED, pts);
        status = basis_create_at(&b->basis, d, sb->shape, sp->order, sb->ndof, pts);
    }
    if (!status) { /* unit weights: the points' geometry without a quadrature weight */
        for (int i = 0; i < sb->ndof; i++) w[i] = 1.0;
        b->basis.tables.quad = (Quadrature){.shape = sb->shape, .npts = sb->ndof, .xi = pts, .w = w};
        pts = w = NULL; /* owned by the tables now */
    }
    free(pts);
    free(w);
    return status;
}

/* The map of the evaluated elements, without a transpose: the evaluations gather nodal values, and sum into
 * nodes in order on the CPU and with atomics on a GPU (nodes_chunk). */
static int block_restriction(const EvalField *f, EvalBlock *b) {
    const Space *sp = f->sp;
    const SpaceBlock *sb = b->facet ? &sp->facets[b->bi] : &sp->cells[b->bi];
    Device *d = f->u->dev;
    if (!b->list) return restriction_create_map(&b->r, d, b->n, sb->ndof, sp->nnodes, sb->dofs);
    fem_idx *dofs = malloc(sizeof(fem_idx) * (size_t)(b->n * sb->ndof + 1));
    if (!dofs) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for an evaluation");
    for (int64_t k = 0; k < b->n; k++)
        memcpy(&dofs[k * sb->ndof], &sb->dofs[b->list[k] * sb->ndof], sizeof(fem_idx) * sb->ndof);
    int status = restriction_create_map(&b->r, d, b->n, sb->ndof, sp->nnodes, dofs);
    free(dofs);
    return status;
}

int eval_geometry_cells(Device *d, const Mesh *m, int bi, const Quadrature *q, int64_t first, int64_t n,
                        const fem_idx *list, const double *xnodes, double *geo, double *x, double *bad) {
    const MeshBlock *mb = &m->cells[bi];
    int64_t np = n * q->npts;
    QfFn qf = device_qfunction(d, QF_ID_GEOMETRY);
    if (!qf) return fem_fail(FEM_ERR_DEVICE, "the %s device has no instance of geometry_out", d->name);
    Restriction r = {0};
    Basis gb = {0};
    double *w = NULL, *dx = NULL, *flags = NULL;
    fem_idx *nodes = NULL;
    int status = FEM_OK;
    FEM_CHECK_ALLOC(nodes, n * mb->nnodes + 1, "evaluation geometry");
    for (int64_t k = 0; k < n; k++)
        memcpy(&nodes[k * mb->nnodes], &mb->nodes[(list ? list[k] : first + k) * mb->nnodes],
               sizeof(fem_idx) * (size_t)mb->nnodes);
    FEM_CHECK(restriction_create_subset(&r, d, n, mb->nnodes, m->nnodes, nodes));
    FEM_CHECK(basis_create_at(&gb, d, mb->shape, mb->order, q->npts, q->xi));
    FEM_CHECK(device_alloc_copy(d, (void **)&w, q->w, sizeof(double) * (size_t)q->npts));
    FEM_CHECK(device_alloc(d, (void **)&dx, sizeof(double) * (size_t)(np * 3 * gb.tables.dim + 1)));
    FEM_CHECK(device_alloc(d, (void **)&flags, sizeof(double) * (size_t)(np + 1)));
    ElemView v = elem_view(&r, &gb, 3);
    FEM_CHECK(d->ops.interpolate(d, &v, xnodes, x, dx));
    QfArgs a = {.n = np, .nq = q->npts, .dim = m->dim, .rdim = gb.tables.dim, .ncomp = 3, .threads = d->threads,
                .u = x, .du = dx, .ctx = w, .s = geo, .state = flags, .nout = GEO_STRIDE(m->dim)};
    FEM_CHECK(qf(&a));
    FEM_CHECK(d->ops.dot(d, np, flags, flags, bad));
cleanup:
    device_free(d, w);
    device_free(d, dx);
    device_free(d, flags);
    basis_destroy(&gb);
    restriction_destroy(&r);
    free(nodes);
    return status;
}

/* Geometry and coordinates at the points, and the elements' material tags, on the device: cells computed on
 * the device itself (eval_geometry_cells); facets on the host (their normals' orientation needs the adjacent
 * cell), and cells there too when a point's det J is not positive, so that the message names the element. */
static int block_geometry(const EvalField *f, EvalBlock *b) {
    const Mesh *m = f->sp->mesh;
    Device *d = f->u->dev;
    int64_t np = b->n * b->basis.tables.nq;
    size_t stride = b->facet ? FGEO_STRIDE : GEO_STRIDE(m->dim);
    int status = FEM_OK;
    double *geo = NULL, *x = NULL, bad = 1.0;
    int32_t *tag = NULL;
    FEM_CHECK_ALLOC(tag, b->n + 1, "evaluation tags");
    for (int64_t k = 0; k < b->n && !b->facet && f->cell_tags; k++)
        tag[k] = f->cell_tags[b->bi][b->list ? b->list[k] : k];
    FEM_CHECK(device_alloc_copy(d, (void **)&b->tag, tag, sizeof(int32_t) * (size_t)(b->n + 1)));
    if (b->xnodes) {
        FEM_CHECK(device_alloc(d, (void **)&b->geo, sizeof(double) * (size_t)(np * stride + 1)));
        FEM_CHECK(device_alloc(d, (void **)&b->x, sizeof(double) * (size_t)(np * 3 + 1)));
        FEM_CHECK(eval_geometry_cells(d, m, b->bi, &b->basis.tables.quad, 0, b->n, b->list, b->xnodes, b->geo,
                                      b->x, &bad));
    }
    if (bad == 0.0) goto cleanup;
    device_free(d, b->geo), device_free(d, b->x), b->geo = b->x = NULL;
    FEM_CHECK_ALLOC(geo, np * (int64_t)stride + 1, "evaluation geometry");
    FEM_CHECK_ALLOC(x, np * 3 + 1, "evaluation geometry");
    const Quadrature *q = &b->basis.tables.quad;
    FEM_CHECK(b->facet ? geometry_facets(m, b->bi, q, b->n, b->list, geo, x)
                       : geometry_cells(m, b->bi, q, b->n, b->list, geo, x));
    FEM_CHECK(device_alloc_copy(d, (void **)&b->geo, geo, sizeof(double) * (size_t)np * stride));
    FEM_CHECK(device_alloc_copy(d, (void **)&b->x, x, sizeof(double) * (size_t)np * 3));
cleanup:
    free(geo);
    free(x);
    free(tag);
    return status;
}

/* The output q-function at every point of the block: b->s [points][nout]. */
static int block_run(const EvalField *f, const OutputFn *fn, const void *ctx, EvalBlock *b, int weighted) {
    Device *d = f->u->dev;
    const Space *sp = f->sp;
    const ElementTables *t = &b->basis.tables;
    int nc = sp->ncomp, grads = (qf_reads(&fn->qf, QF_UNKNOWN) & QF_GRAD) != 0;
    int64_t np = b->n * t->nq;
    QfFn qf = device_qfunction(d, fn->qf.id);
    if (!qf) return fem_fail(FEM_ERR_DEVICE, "the %s device has no instance of %s", d->name, fn->qf.name);
    FEM_TRY(device_alloc(d, (void **)&b->uq, sizeof(double) * (size_t)(np * nc + 1)));
    FEM_TRY(device_alloc(d, (void **)&b->duq, sizeof(double) * (size_t)(np * nc * t->dim + 1)));
    FEM_TRY(device_alloc(d, (void **)&b->s, sizeof(double) * (size_t)(np * fn->nout + 1)));
    ElemView v = elem_view(&b->r, &b->basis, nc);
    FEM_TRY(d->ops.interpolate(d, &v, f->u->data, b->uq, grads ? b->duq : NULL));
    if (f->aux && qf_reads(&fn->qf, QF_AUX)) {
        ElemView va = v;
        va.ncomp = 1;
        FEM_TRY(device_alloc(d, (void **)&b->auxq, sizeof(double) * (size_t)(np + 1)));
        FEM_TRY(d->ops.interpolate(d, &va, f->aux, b->auxq, NULL));
    }
    QfArgs a = {.n = np, .nq = t->nq, .dim = sp->mesh->dim, .rdim = t->dim, .ncomp = nc, .threads = d->threads,
                .u = b->uq, .du = b->duq, .geo = b->geo, .x = b->x, .aux = b->auxq, .tag = b->tag, .ctx = ctx,
                .s = b->s, .nout = fn->nout, .weighted = weighted};
    return qf(&a);
}

/* A block set up at its points: basis, restriction, geometry (what every function evaluated there shares). */
static int block_prepare(const EvalField *f, int points, EvalBlock *b) {
    FEM_TRY(block_basis(f, b, points));
    FEM_TRY(block_restriction(f, b));
    return block_geometry(f, b);
}

/* The arrays of one function's evaluation (block_run's), freed before the next function runs. */
static void block_run_free(Device *d, EvalBlock *b) {
    double **arrays[] = {&b->uq, &b->duq, &b->auxq, &b->s};
    for (int i = 0; i < 4; i++) device_free(d, *arrays[i]), *arrays[i] = NULL;
}

/* Elements per evaluation chunk: the point data of a chunk (geometry, values, gradients, outputs) stays a
 * few hundred MB at most, whatever the mesh, so that the summary never raises the run's peak device memory.
 * On the CPU a chunk holds about EVAL_CPU_POINTS points instead, so that its point data stays in the caches
 * between the steps that pass over it (measured on 2 cores: a 2.0M-dof hexahedral beam's summary 1.74 ->
 * 1.0-1.2 s, a 1.65M-dof tetrahedral one's 1.42 -> 1.05-1.16 s); much smaller chunks are slower again, each
 * chunk's restriction costing a pass over the space's nodes. */
enum { EVAL_CHUNK = 1 << 16, EVAL_CPU_POINTS = 1 << 18 };

static int64_t chunk_elements(const Device *d, int ndof) {
    if (d->kind != DEV_CPU) return EVAL_CHUNK;
    int64_t n = EVAL_CPU_POINTS / (ndof > 0 ? ndof : 1);
    return n < 1024 ? 1024 : n > EVAL_CHUNK ? EVAL_CHUNK : n;
}

typedef int (*ChunkFn)(const EvalField *f, EvalBlock *b, void *arg);

/* One function evaluated chunk by chunk: fn with its device constants ctx; after(chunk) uses each chunk's point
 * values before the next function runs. */
typedef struct {
    const OutputFn *fn;
    const void *ctx;
    ChunkFn after;
    void *arg;
} EvalJob;

/* Over the ranks that hold parts of the space (EvalField.dist), a collective evaluation: each rank's part
 * done, the ranks agree on the status (so that none waits for a failed one) and then sum n values into every
 * rank's v. On one process: status. */
static int ranks_sum(const EvalField *f, int status, double *v, int64_t n) {
    if (!f->dist) return status;
    FEM_TRY(comm_agree(status));
    return comm_sum(v, (int)n);
}

/* out[i][node] += the nout[i] values at from (then count[node] += the value after them). */
static void add_sums(int n, const int *nout, const double *from, double *const *out, double *count,
                     int32_t node) {
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nout[i]; k++) out[i][node * nout[i] + k] += *from++;
    count[node] += *from;
}

/* On a rank's part (f->dist): the sums of n functions' values (out[i], nout[i] a node) and the counts of
 * cells at every node this rank shares with others become the sums over all the ranks that hold the node,
 * one exchange with each rank that shares nodes (both list them in the same order). The ranks' sums are added
 * in rank order, starting from zero, so that every copy of a node holds the same bits (as halo_share does).
 * Collective: every rank calls it with its status, and the ranks agree on it first. */
static int share_sums(const EvalField *f, int status, int n, const int *nout, double *const *out,
                      double *count) {
    const Dist *d = f->dist;
    FEM_TRY(comm_agree(status));
    int per = 1;
    for (int i = 0; i < n; i++) per += nout[i];
    int64_t nshared = d->share_off[d->nshare];
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(d->nshare + 1));
    double *send = malloc(sizeof(double) * (size_t)(nshared * per + 1));
    double *recv = malloc(sizeof(double) * (size_t)(nshared * per + 1));
    status = off && send && recv ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for nodal values");
    status = comm_agree(status);
    for (int k = 0; !status && k <= d->nshare; k++) off[k] = d->share_off[k] * per;
    for (int64_t j = 0; !status && j < nshared; j++) {
        int32_t node = d->share[j];
        double *to = &send[j * per];
        for (int i = 0; i < n; i++, to += nout[i - 1])
            memcpy(to, &out[i][node * nout[i]], sizeof(double) * nout[i]);
        *to = count[node];
    }
    CommExchange x;
    if (!status) status = comm_exchange_begin(&x, d->nshare, d->share_nbr, off, send, off, recv);
    if (!status) status = comm_exchange_end(&x);
    /* this rank's own sums are in send (the first copy of each node); a node's entries restart from zero,
     * then take the neighbours' sums in increasing rank (share_nbr is), this rank's own slotted in at its
     * place */
    int64_t *own = malloc(sizeof(int64_t) * (size_t)(d->space.nnodes + 1));
    if (!status && !own) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for nodal values");
    for (int64_t j = 0; !status && j < nshared; j++) own[d->share[j]] = -1;
    for (int64_t j = 0; !status && j < nshared; j++) {
        int32_t node = d->share[j];
        if (own[node] >= 0) continue;
        own[node] = j; /* where its own sums are, until they have been added */
        for (int i = 0; i < n; i++) memset(&out[i][node * nout[i]], 0, sizeof(double) * nout[i]);
        count[node] = 0.0;
    }
    for (int k = 0; !status && k < d->nshare; k++)
        for (int64_t j = d->share_off[k]; j < d->share_off[k + 1]; j++) {
            int32_t node = d->share[j];
            if (d->share_nbr[k] > d->rank && own[node] >= 0) /* this rank's own before a higher rank's */
                add_sums(n, nout, &send[own[node] * per], out, count, node), own[node] = -2;
            add_sums(n, nout, &recv[j * per], out, count, node);
        }
    for (int64_t j = 0; !status && j < nshared; j++) /* the nodes it shares with lower ranks only: own last */
        if (own[d->share[j]] >= 0)
            add_sums(n, nout, &send[own[d->share[j]] * per], out, count, d->share[j]), own[d->share[j]] = -2;
    free(own), free(off), free(send), free(recv);
    return comm_agree(status);
}

/* Block bi's elements in group g (every one when g is NULL), chunk by chunk; in each chunk the points are set
 * up once and every job runs there. */
static int eval_chunks(const EvalField *f, int njobs, const EvalJob *jobs, const PhysicalGroup *g, int facet,
                       int bi, int points) {
    EvalBlock all = {.facet = facet, .bi = bi};
    FEM_TRY(select_elements(f->sp->mesh, g, &all));
    const Mesh *m = f->sp->mesh;
    Device *d = f->u->dev;
    double *xnodes = NULL; /* the cells' geometry is computed on the device from the mesh's nodes */
    size_t xbytes = sizeof(double) * 3 * (size_t)m->nnodes;
    int status = facet || all.n == 0 ? FEM_OK : device_alloc_copy(d, (void **)&xnodes, m->x, xbytes);
    const SpaceBlock *sb = facet ? &f->sp->facets[bi] : &f->sp->cells[bi];
    const int64_t chunk = chunk_elements(d, sb->ndof); /* the points are about as many as the nodes */
    /* a pass over the block's cells where they are of order 2: once here, not in every chunk */
    const MeshBlock *mb = facet ? &m->facets[bi] : &m->cells[bi];
    const int gorder = points == POINTS_QUADRATURE ? mesh_block_geometry_order(m, mb) : 0;
    for (int64_t first = 0; first < all.n && !status; first += chunk) {
        EvalBlock b = {.facet = facet,
                       .bi = bi,
                       .gorder = gorder,
                       .n = all.n - first < chunk ? all.n - first : chunk,
                       .xnodes = xnodes};
        if (b.n < all.n || all.list) { /* a slice of the elements: a subset restriction */
            b.list = malloc(sizeof(fem_idx) * (size_t)b.n);
            if (!b.list) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for an evaluation");
            for (int64_t k = 0; k < b.n && !status; k++) b.list[k] = all.list ? all.list[first + k] : (fem_idx)(first + k);
        }
        if (!status && b.n) status = block_prepare(f, points, &b);
        for (int j = 0; j < njobs && !status && b.n; j++) {
            status = block_run(f, jobs[j].fn, jobs[j].ctx, &b, points == POINTS_QUADRATURE);
            if (!status) status = jobs[j].after(f, &b, jobs[j].arg);
            block_run_free(f->u->dev, &b);
        }
        block_free(d, &b);
    }
    device_free(d, xnodes);
    free(all.list);
    return status;
}

/* result[k] += the sum over the block's points of output k: a dot product with a mask selecting k. */
static int block_sum(Device *d, const EvalBlock *b, int nout, double *result) {
    int64_t np = b->n * b->basis.tables.nq;
    double *mask = NULL, pattern[64] = {0};
    FEM_TRY(device_alloc(d, (void **)&mask, sizeof(double) * (size_t)(np * nout + 1)));
    int status = FEM_OK;
    for (int k = 0; k < nout && !status; k++) {
        double sum = 0.0;
        pattern[k] = 1.0;
        status = d->ops.fill(d, np, nout, pattern, mask);
        if (!status) status = d->ops.dot(d, np * nout, b->s, mask, &sum);
        result[k] += sum;
        pattern[k] = 0.0;
    }
    device_free(d, mask);
    return status;
}

typedef struct {
    int nout;
    double *result;
} SumArg;

static int sum_chunk(const EvalField *f, EvalBlock *b, void *arg) {
    SumArg *a = arg;
    return block_sum(f->u->dev, b, a->nout, a->result);
}

static int integral(const EvalField *f, const OutputFn *fn, const PhysicalGroup *g, int facet, double *result) {
    Device *d = f->u->dev;
    const Space *sp = f->sp;
    if (fn->nout > 64) return fem_fail(FEM_ERR_INTERNAL, "an output q-function gives at most 64 values");
    for (int k = 0; k < fn->nout; k++) result[k] = 0.0;
    void *ctx = NULL;
    SumArg sum = {fn->nout, result};
    int status = device_alloc_copy(d, &ctx, fn->ctx, fn->ctx_bytes);
    EvalJob job = {fn, ctx, sum_chunk, &sum};
    for (int bi = 0; bi < (facet ? sp->nfacet_blocks : sp->ncell_blocks) && !status; bi++)
        status = eval_chunks(f, 1, &job, g, facet, bi, POINTS_QUADRATURE);
    device_free(d, ctx);
    return ranks_sum(f, status, result, fn->nout);
}

int eval_cells(const EvalField *f, const OutputFn *fn, const PhysicalGroup *g, double *result) {
    return integral(f, fn, g, 0, result);
}

int eval_facets(const EvalField *f, const OutputFn *fn, const PhysicalGroup *g, double *result) {
    return integral(f, fn, g, 1, result);
}

/* Sums a chunk's point values into the nodes (the integration kernel with the identity basis). */
typedef struct {
    int nout;
    double *sums;
} NodesArg;

static int nodes_chunk(const EvalField *f, EvalBlock *b, void *arg) {
    NodesArg *a = arg;
    Device *d = f->u->dev;
    if (d->kind == DEV_CPU) { /* point q of an element is its node q: one pass, in order (the same bits every run) */
        const int nd = b->r.ndof, nout = a->nout;
        for (int64_t e = 0; e < b->n; e++)
            for (int q = 0; q < nd; q++) {
                double *to = &a->sums[(int64_t)b->r.dofs[e * nd + q] * nout];
                const double *from = &b->s[(e * nd + q) * nout];
                for (int k = 0; k < nout; k++) to[k] += from[k];
            }
        return FEM_OK;
    }
    Basis ident;
    FEM_TRY(basis_create_identity(&ident, d, f->sp->cells[b->bi].shape, f->sp->order));
    ElemView v = elem_view(&b->r, &ident, a->nout);
    int status = d->ops.integrate(d, &v, b->s, NULL, a->sums, NULL); /* atomics: the map has no transpose */
    basis_destroy(&ident);
    return status;
}

int eval_nodal_many(const EvalField *f, int n, const OutputFn *fns, int equispaced, double *const *out) {
    enum { MANY_MAX = 4 };
    if (n < 1 || n > MANY_MAX) return fem_fail(FEM_ERR_INTERNAL, "eval_nodal_many takes 1 to %d functions", MANY_MAX);
    Device *d = f->u->dev;
    const Space *sp = f->sp;
    int status = FEM_OK;
    double *sums[MANY_MAX] = {NULL}, *count = NULL;
    void *ctx[MANY_MAX] = {NULL};
    NodesArg arg[MANY_MAX];
    EvalJob jobs[MANY_MAX];
    for (int i = 0; i < n; i++) {
        int64_t len = sp->nnodes * fns[i].nout;
        FEM_CHECK(device_alloc_copy(d, &ctx[i], fns[i].ctx, fns[i].ctx_bytes));
        FEM_CHECK(device_alloc(d, (void **)&sums[i], sizeof(double) * (size_t)(len + 1)));
        FEM_CHECK(d->ops.zero(d, sums[i], sizeof(double) * (size_t)(len + 1)));
        arg[i] = (NodesArg){fns[i].nout, sums[i]};
        jobs[i] = (EvalJob){&fns[i], ctx[i], nodes_chunk, &arg[i]};
    }
    FEM_CHECK_ALLOC(count, sp->nnodes + 1, "nodal values");
    for (int bi = 0; bi < sp->ncell_blocks; bi++) {
        const SpaceBlock *sb = &sp->cells[bi];
        for (int64_t k = 0; k < sb->count * sb->ndof; k++) count[sb->dofs[k]] += 1.0;
        FEM_CHECK(eval_chunks(f, n, jobs, NULL, 0, bi, equispaced ? POINTS_EQUISPACED : POINTS_NODES));
    }
    for (int i = 0; i < n; i++)
        FEM_CHECK(d->ops.download(d, out[i], sums[i], sizeof(double) * (size_t)(sp->nnodes * fns[i].nout)));
cleanup:           /* over ranks every rank comes here, whatever its status */
    if (f->dist) { /* a rank's part: its shared nodes completed by the other ranks' cells */
        int nout[MANY_MAX];
        for (int i = 0; i < n; i++) nout[i] = fns[i].nout;
        status = count ? share_sums(f, status, n, nout, out, count) : comm_agree(status);
    }
    for (int i = 0; i < n; i++) {
        int nout = fns[i].nout;
        for (int64_t node = 0; node < sp->nnodes && !status; node++)
            for (int k = 0; k < nout; k++) out[i][node * nout + k] /= count[node] > 0 ? count[node] : 1.0;
    }
    for (int i = 0; i < n; i++) device_free(d, ctx[i]), device_free(d, sums[i]);
    free(count);
    return status;
}

int eval_nodal(const EvalField *f, const OutputFn *fn, int equispaced, double *out) {
    return eval_nodal_many(f, 1, fn, equispaced, &out);
}
