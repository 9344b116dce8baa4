/* The fused CPU operator: the CPU backend's override of the operator entries `residual` and `apply_add`
 * (fem/operator.h), one pass over each block with the q-point data in a thread's cache.
 *
 * Each block's elements are put in the order of a space-filling curve through their centroids (Gmsh's
 * Delaunay mesher numbers cells at random, and femto numbers nodes in the cells' order, so that consecutive
 * cells share nothing: in curve order a node's cells come one after another and its values stay in cache),
 * and that order is cut into chunks (fused_chunk_size). A thread takes a chunk and runs it in batches of
 * FUSED_LANES elements: gather the batch's element values, interpolate values and reference gradients at the
 * q-points, run the physics' own point function (the FEM_HD functions of physics/, listed in
 * physics/qfunctions.h) on the batch's q-points, integrate against the test functions and add into the output
 * vector. Interpolation and integration run as SIMD loops across the elements of a batch
 * (cpu/fused_kernels.c): through the full tables, or sum factorised on quadrilaterals and hexahedra.
 *
 * Assembly is deterministic without atomics: chunks are coloured so that no two chunks of a colour share a
 * node, threads run the chunks of one colour side by side, and the colours one after the other. Every output
 * entry therefore sums its contributions in one fixed order (colour, then chunk, then element), whatever the
 * number of threads: results are bitwise the same on 1, 2 or 64 threads and from run to run (not bitwise the
 * same as the default implementation's, which adds in another order; the tests compare the two to 1e-12).
 * Boundary facets go the same way, so that this holds for the whole operator.
 *
 * Blocks of other cells whose full tables are too large (FUSED_MAX_PAIRS), and cells of other dimensions,
 * take the default path.
 * FEMTO_CPU_FUSED=0 in the environment turns the override off. */
#include "cpu/fused.h"
#include "cpu/cpu.h"

#include "fem/element_order.h"
#include "fem/error.h"
#include "fem/operator.h"
#include "physics/qfunctions.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the point functions */

/* One loop over a batch's q-points per operator q-function of physics/qfunctions.h, with the point function
 * inlined (flatten). For cells of dimension D = 2, 3 with 1 or D components the dimension and the component
 * count are constants of the loop, whose small loops over them then unroll. Every q-function is instantiated
 * for both counts and only the instance of its own count runs: the other is dead code, in which GCC would see
 * the point function's arrays (sized for its own count) indexed past their ends, hence the pragmas. Facets
 * run a generic loop (they are few). */
#define FUSED_POINTS_DN_(fn, D, NC)                                                                          \
    __attribute__((flatten)) FUSED_CLONES static void fn##_fused_##D##_##NC(const QfArgs *a) {               \
        QfArgs la = *a;                                                                                      \
        la.dim = la.rdim = D;                                                                                \
        la.ncomp = NC;                                                                                       \
        for (int64_t i = 0; i < la.n; i++) fn(&la, i);                                                       \
    }
#define FUSED_POINTS_(fn)                                                                                    \
    FUSED_POINTS_DN_(fn, 2, 1)                                                                               \
    FUSED_POINTS_DN_(fn, 2, 2)                                                                               \
    FUSED_POINTS_DN_(fn, 3, 1)                                                                               \
    FUSED_POINTS_DN_(fn, 3, 3) __attribute__((flatten)) static void fn##_fused_facet(const QfArgs *a) {      \
        for (int64_t i = 0; i < a->n; i++) fn(a, i);                                                         \
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
FEMTO_OPERATOR_QFUNCTIONS(FUSED_POINTS_)
#pragma GCC diagnostic pop
#undef FUSED_POINTS_
#undef FUSED_POINTS_DN_

/* [q-function][0: facets, 1 + (dim - 2) * 2 + (ncomp > 1): cells]; NULL for the outputs' q-functions */
#define FUSED_ENTRY_(fn)                                                                                     \
    [QF_##fn] = {fn##_fused_facet, fn##_fused_2_1, fn##_fused_2_2, fn##_fused_3_1, fn##_fused_3_3},
static const FusedPoints fused_points[QF_COUNT][5] = {FEMTO_OPERATOR_QFUNCTIONS(FUSED_ENTRY_)};
#undef FUSED_ENTRY_

/* ---------------------------------------------------------------- element order and colouring */

typedef struct {
    int fused;
    int64_t *order;         /* [nelem]: element ids in processing order */
    int64_t chunk, nchunks; /* elements per chunk; chunk k: order[k * chunk ...] */
    int ncolours;
    int64_t *colour_off; /* [ncolours + 1]: colour c is chunks[colour_off[c] .. colour_off[c + 1]) */
    int64_t *chunks;     /* [nchunks] */
    double *geo;         /* device: the block's geometry in processing order */
    double *qdata;       /* device: the block's compact q-point data in that order, per q-point (or NULL) */
    int geo_own, qdata_own; /* 0: the block's own arrays (processing order is the block's order) */
} FusedBlock;

typedef struct {
    FusedBlock cells[MESH_MAX_BLOCKS], facets[MESH_MAX_BLOCKS];
} CpuFused;

/* Greedy colouring of the chunks: chunk k takes the smallest colour that no earlier chunk sharing a node with
 * it has (nodes -> elements through the restriction's transpose, elements -> chunks through pos). */
static int colour_chunks(const ElemView *v, FusedBlock *fb, const int64_t *pos, int32_t *colour,
                         int64_t *mark) {
    const int nd = v->ndof;
    int ncol = 0;
    /* per node, the colours of the earlier chunks that touch it: one pass over the chunks' nodes; the walk
     * through every element sharing a node (below) only if more than 64 colours are needed */
    uint64_t *used = calloc((size_t)v->nnodes + 1, sizeof *used);
    int64_t k = 0;
    for (; used && k < fb->nchunks; k++) {
        int64_t j1 = (k + 1) * fb->chunk < v->nelem ? (k + 1) * fb->chunk : v->nelem;
        uint64_t taken = 0;
        for (int64_t j = k * fb->chunk; j < j1; j++)
            for (int i = 0; i < nd; i++) taken |= used[v->dofs[fb->order[j] * nd + i]];
        if (taken == ~(uint64_t)0) break;
        int c = 0;
        while (taken >> c & 1) c++;
        colour[k] = c;
        ncol = c + 1 > ncol ? c + 1 : ncol;
        for (int64_t j = k * fb->chunk; j < j1; j++)
            for (int i = 0; i < nd; i++) used[v->dofs[fb->order[j] * nd + i]] |= (uint64_t)1 << c;
    }
    free(used);
    for (int64_t kk = 0; kk < fb->nchunks; kk++) mark[kk] = -1;
    for (; k < fb->nchunks; k++) {
        int64_t j1 = (k + 1) * fb->chunk < v->nelem ? (k + 1) * fb->chunk : v->nelem;
        for (int64_t j = k * fb->chunk; j < j1; j++)
            for (int i = 0; i < nd; i++) {
                fem_idx n = v->dofs[fb->order[j] * nd + i];
                for (int64_t s = v->t_offsets[n]; s < v->t_offsets[n + 1]; s++) {
                    int64_t k2 = pos[v->t_slots[s] / nd] / fb->chunk;
                    if (k2 < k) mark[colour[k2]] = k;
                }
            }
        int c = 0;
        while (mark[c] == k) c++;
        colour[k] = c;
        ncol = c + 1 > ncol ? c + 1 : ncol;
    }
    fb->ncolours = ncol;
    FEM_ALLOC(fb->colour_off, ncol + 1, "a colouring");
    FEM_ALLOC(fb->chunks, fb->nchunks, "a colouring");
    /* counting sort of the chunks by colour, each colour in chunk order */
    memset(fb->colour_off, 0, sizeof(int64_t) * ((size_t)ncol + 1));
    for (int64_t k = 0; k < fb->nchunks; k++) fb->colour_off[colour[k] + 1]++;
    for (int c = 0; c < ncol; c++) fb->colour_off[c + 1] += fb->colour_off[c];
    for (int64_t k = 0; k < fb->nchunks; k++) fb->chunks[fb->colour_off[colour[k]]++] = k;
    for (int c = ncol; c > 0; c--) fb->colour_off[c] = fb->colour_off[c - 1];
    fb->colour_off[0] = 0;
    return FEM_OK;
}

/* Whether the processing order is the block's own (the usual case: mesh_read sorts the cells along the same
 * curve), so that its arrays serve as they are. */
static int order_is_identity(const FusedBlock *fb, int64_t nelem) {
    for (int64_t j = 0; j < nelem; j++)
        if (fb->order[j] != j) return 0;
    return 1;
}

/* The block's geometry (stride doubles per q-point) in processing order: a batch's is then one slice. */
static int plan_geometry(Device *d, const OpBlock *b, int stride, FusedBlock *fb) {
    size_t rec = (size_t)b->view.nq * (size_t)stride;
    if (order_is_identity(fb, b->nelem)) return fb->geo = b->geo, FEM_OK;
    fb->geo_own = 1;
    FEM_TRY(device_alloc(d, (void **)&fb->geo, sizeof(double) * rec * (size_t)b->nelem));
#pragma omp parallel for schedule(static) if (b->nelem > 20000)
    for (int64_t j = 0; j < b->nelem; j++)
        memcpy(fb->geo + j * rec, b->geo + fb->order[j] * rec, sizeof(double) * rec);
    return FEM_OK;
}

/* The block's compact q-point data (op_block_qdata) in processing order, n doubles per q-point, expanded to
 * every q-point where the block keeps one record per element (affine simplices: D_q = (w_q / w_0) D_0). */
static int plan_qdata(const Operator *op, const OpBlock *b, FusedBlock *fb) {
    const QfQdata *qd = op->phys.cell_jacobian.qdata;
    if (!b->qdata || !qd) return FEM_OK;
    const int nq = b->view.nq, n = qf_geo_doubles(qd->layout, op->space->mesh->dim);
    const double *w = b->basis.tables.quad.w;
    if (!b->qdata_per_elem && order_is_identity(fb, b->nelem)) return fb->qdata = b->qdata, FEM_OK;
    fb->qdata_own = 1;
    FEM_TRY(device_alloc(op->dev, (void **)&fb->qdata, sizeof(double) * (size_t)(b->nelem * nq * n)));
#pragma omp parallel for schedule(static) if (b->nelem > 20000)
    for (int64_t j = 0; j < b->nelem; j++)
        for (int q = 0; q < nq; q++) {
            const int64_t e = fb->order[j];
            const double *src = b->qdata + (b->qdata_per_elem ? e * n : (e * nq + q) * n);
            const double scale = b->qdata_per_elem ? w[q] / w[0] : 1.0;
            for (int k = 0; k < n; k++) fb->qdata[(j * nq + q) * n + k] = scale * src[k];
        }
    return FEM_OK;
}

/* The order, colouring and ordered geometry of block b (mesh block mb; facets: the block's list). */
static int block_plan(const Operator *op, const OpBlock *b, const MeshBlock *mb, int facet, FusedBlock *fb) {
    const ElemView *v = &b->view;
    fb->chunk = fused_chunk_size(v->nelem);
    fb->nchunks = (v->nelem + fb->chunk - 1) / fb->chunk;
    FEM_ALLOC(fb->order, v->nelem, "an element order");
    const char *env = getenv("FEMTO_CPU_CURVE_ORDER"); /* 0: the mesh's order (to measure what the curve does) */
    if (env && strcmp(env, "0") == 0)
        for (int64_t e = 0; e < v->nelem; e++) fb->order[e] = e;
    else
        FEM_TRY(element_curve_order(op->space->mesh, mb, b->list, v->nelem, fb->order));
    FEM_TRY(plan_geometry(op->dev, b, facet ? FGEO_STRIDE : GEO_STRIDE(op->space->mesh->dim), fb));
    if (!facet) FEM_TRY(plan_qdata(op, b, fb));
    int64_t *pos = malloc(sizeof(int64_t) * (size_t)(v->nelem + 1)),
            *mark = malloc(sizeof(int64_t) * (size_t)(fb->nchunks + 1));
    int32_t *colour = malloc(sizeof(int32_t) * (size_t)(fb->nchunks + 1));
    int status =
        pos && mark && colour ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a colouring");
    for (int64_t j = 0; j < v->nelem && !status; j++) pos[fb->order[j]] = j;
    if (!status) status = colour_chunks(v, fb, pos, colour, mark);
    free(pos), free(mark), free(colour);
    return status;
}

static void plan_free(Device *d, FusedBlock *fb) {
    free(fb->order), free(fb->colour_off), free(fb->chunks);
    if (fb->geo_own) device_free(d, fb->geo);
    if (fb->qdata_own) device_free(d, fb->qdata);
    memset(fb, 0, sizeof *fb);
}

/* ---------------------------------------------------------------- applying a block */

/* A block of cells of dimension 2 or 3 (or facets of them) with 1 or dim components, whose full tables are
 * small enough for a batch's scratch. */
static int block_fusable(const Operator *op, const OpBlock *b, int facet) {
    const ElemView *v = &b->view;
    int dim = op->space->mesh->dim;
    if (b->nelem == 0 || dim < 2 || dim > 3 || (v->ncomp != 1 && v->ncomp != dim)) return 0;
    if (!facet && !op->grads) return 0;
    if (!facet && v->tensor) return 1; /* sum factorised (cpu/fused_kernels.c): no full tables */
    return (int64_t)v->nq * v->ndof <= FUSED_MAX_PAIRS;
}

/* The chunks of each colour on the device's threads (the colours in order, a barrier between them). */
static int run_block(Operator *op, const FusedBlock *fb, const FusedJob *job) {
    const ElemView *v = job->v;
    int failed = 0;
    size_t nw = (fused_scratch_doubles(job) + 7) / 8 * 8;
#pragma omp parallel num_threads(op->dev->threads) if (v->nelem * v->ndof * v->nq > FUSED_PARALLEL_WORK)
    {
        double *w = aligned_alloc(64, sizeof(double) * nw);
        if (!w) {
#pragma omp atomic write
            failed = 1;
        }
        for (int c = 0; c < fb->ncolours; c++) {
#pragma omp for schedule(dynamic, 1)
            for (int64_t k = fb->colour_off[c]; k < fb->colour_off[c + 1]; k++) {
                int64_t k0 = fb->chunks[k] * fb->chunk, k1 = k0 + fb->chunk;
                if (w) fused_chunk(job, k0, k1 < v->nelem ? k1 : v->nelem, w);
            }
        }
        free(w);
    }
    return failed ? fem_fail(FEM_ERR_INTERNAL, "out of host memory in the fused operator") : FEM_OK;
}

static int fused_block(Operator *op, int facet, int bi, int residual, const double *in, double *out) {
    CpuFused *f = op->impl;
    OpBlock *b = facet ? &op->facets[bi] : &op->cells[bi];
    const FusedBlock *fb = facet ? &f->facets[bi] : &f->cells[bi];
    const OpPhysics *ph = &op->phys;
    const QFunction *q = facet ? (residual ? &ph->facet_residual : &ph->facet_jacobian)
                               : (residual ? &ph->cell_residual : &ph->cell_jacobian);
    int dim = op->space->mesh->dim, variant = facet ? 0 : 1 + (dim - 2) * 2 + (b->view.ncomp > 1);
    if (!fb->fused || q->id < 0 || q->id >= QF_COUNT || !fused_points[q->id][variant])
        return op_ref_apply_block(op, b, facet, residual, in, out);
    FEM_TRY(op_block_aux(op, b)); /* as the default does on every call: op->aux may change between them */
    const QfQdata *qd = facet ? NULL : op_block_qdata(op, b, residual);
    FusedJob job = {.v = &b->view,
                    .a = op_block_args(op, b, facet, residual),
                    .points = fused_points[q->id][variant],
                    .order = fb->order,
                    .geo = fb->geo,
                    .facet = facet,
                    .grads = facet ? op->facet_grads : 1,
                    .geo_stride = facet ? FGEO_STRIDE : GEO_STRIDE(dim),
                    .in = in,
                    .out = out};
    if (qd && fb->qdata && fused_points[qd->apply][variant]) { /* the compact form reads nothing else */
        job.points = fused_points[qd->apply][variant];
        job.geo = fb->qdata;
        job.geo_stride = qf_geo_doubles(qd->layout, dim);
        job.a = op_block_qdata_args(op, b);
    }
    return run_block(op, fb, &job);
}

/* The residual (out = R(in)) or the Jacobian's action (out += J in), block by block. */
static int fused_all(Operator *op, int residual, const Vec *in, Vec *out) {
    if (residual && op_zeroes_output(op)) FEM_TRY(vec_zero(out));
    for (int b = 0; b < op->ncells; b++)
        if (op_block_runs(op, 0, b)) FEM_TRY(fused_block(op, 0, b, residual, in->data, out->data));
    for (int b = 0; b < op->nfacets; b++)
        if (op->facets[b].nelem > 0 && !op_block_skipped(op, 1, residual) && op_block_runs(op, 1, b))
            FEM_TRY(fused_block(op, 1, b, residual, in->data, out->data));
    return FEM_OK;
}

static int fused_residual(Operator *op, const Vec *u, Vec *r) {
    return fused_all(op, 1, u, r);
}
static int fused_apply_add(Operator *op, const Vec *x, Vec *y) {
    return fused_all(op, 0, x, y);
}

static void fused_destroy(Operator *op) {
    CpuFused *f = op->impl;
    if (!f) return;
    for (int b = 0; b < MESH_MAX_BLOCKS; b++)
        plan_free(op->dev, &f->cells[b]), plan_free(op->dev, &f->facets[b]);
    free(f);
    op->impl = NULL;
}

int cpu_operator_setup(Operator *op) {
    const char *env = getenv("FEMTO_CPU_FUSED");
    if (env && strcmp(env, "0") == 0) return FEM_OK;
    int any = 0;
    for (int b = 0; b < op->ncells; b++) any |= block_fusable(op, &op->cells[b], 0);
    if (!any) return FEM_OK;
    CpuFused *f = calloc(1, sizeof *f);
    if (!f) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the fused operator");
    op->impl = f;
    op->ops.destroy = fused_destroy;
    const Mesh *m = op->space->mesh;
    for (int b = 0; b < op->ncells; b++)
        if ((f->cells[b].fused = block_fusable(op, &op->cells[b], 0)))
            FEM_TRY(block_plan(op, &op->cells[b], &m->cells[b], 0, &f->cells[b]));
    for (int b = 0; b < op->nfacets; b++)
        if ((f->facets[b].fused = block_fusable(op, &op->facets[b], 1)))
            FEM_TRY(block_plan(op, &op->facets[b], &m->facets[b], 1, &f->facets[b]));
    op->ops.residual = fused_residual;
    op->ops.apply_add = fused_apply_add;
    op->implementation = "cpu-fused";
    return FEM_OK;
}
