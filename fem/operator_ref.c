/* The default implementation of an operator's element-level entries, made of the device's element kernels:
 * per block, interpolate to the q-points, run the q-function, integrate against the test functions, with the
 * q-point arrays in device memory between the launches (see operator.h). */
#include "operator.h"

#include "error.h"
#include "geometry.h"

#include <stdlib.h>
#include <string.h>

QfArgs op_block_args(const Operator *op, const OpBlock *b, int facet, int residual) {
    QfArgs a = {0};
    a.n = b->nelem * b->basis.tables.nq;
    a.nq = b->basis.tables.nq;
    a.dim = op->space->mesh->dim;
    a.rdim = b->basis.tables.dim;
    a.ncomp = op->phys.ncomp;
    a.nstate = facet ? op->phys.nfstate : op->phys.nstate;
    a.threads = op->dev->threads;
    a.residual = residual;
    a.u = b->uq;
    a.du = b->duq;
    a.geo = b->geo;
    a.x = b->x;
    a.aux = b->auxq;
    a.src = b->src;
    a.tag = b->tag;
    a.ctx = op->ctx;
    a.s = b->s;
    a.f = b->f;
    a.state = b->state;
    return a;
}

QfArgs op_block_qdata_args(const Operator *op, const OpBlock *b) {
    QfArgs a = op_block_args(op, b, 0, 0);
    a.geo = b->qdata;
    a.state = NULL, a.nstate = 0, a.tag = NULL, a.x = NULL, a.aux = NULL, a.src = NULL;
    return a;
}

static QfFn block_qfunction(const Operator *op, int facet, int residual) {
    return facet ? (residual ? op->facet_residual : op->facet_jacobian)
                 : (residual ? op->cell_residual : op->cell_jacobian);
}

/* The auxiliary field at a block's q-points, when the physics reads one and it is set. */
int op_block_aux(Operator *op, OpBlock *b) {
    if (!op->aux || !b->auxq) return FEM_OK;
    return op->dev->ops.interpolate(op->dev, &b->aux_view, op->aux, b->auxq, NULL);
}

/* One block's contribution to out (+=): interpolate in, q-function, integrate. */
int op_ref_apply_block(Operator *op, OpBlock *b, int facet, int residual, const double *in, double *out) {
    Device *d = op->dev;
    if (b->nelem == 0 || op_block_skipped(op, facet, residual)) return FEM_OK;
    int grads = facet ? op->facet_grads : op->grads;
    FEM_TRY(op_block_qpoints(op, b, facet));
    if (d->assembly == ASSEMBLE_GATHER) FEM_TRY(op_block_evec(op, b));
    FEM_TRY(d->ops.interpolate(d, &b->view, in, b->uq, grads ? b->duq : NULL));
    FEM_TRY(op_block_aux(op, b));
    QfArgs a = op_block_args(op, b, facet, residual);
    FEM_TRY(block_qfunction(op, facet, residual)(&a));
    return d->ops.integrate(d, &b->view, b->s, facet ? NULL : b->f, out, b->evec);
}

static int apply_all(Operator *op, int residual, const Vec *in, Vec *out) {
    for (int b = 0; b < op->ncells; b++)
        if (op_block_runs(op, 0, b)) FEM_TRY(op_ref_apply_block(op, &op->cells[b], 0, residual, in->data, out->data));
    for (int b = 0; b < op->nfacets; b++)
        if (op_block_runs(op, 1, b))
            FEM_TRY(op_ref_apply_block(op, &op->facets[b], 1, residual, in->data, out->data));
    return FEM_OK;
}

int op_ref_residual(Operator *op, const Vec *u, Vec *r) {
    if (op_zeroes_output(op)) FEM_TRY(vec_zero(r));
    return apply_all(op, 1, u, r);
}

int op_ref_apply_add(Operator *op, const Vec *x, Vec *y) {
    return apply_all(op, 0, x, y);
}

/* ---------------------------------------------------------------- chunks of elements */

/* The q-point arrays the diagonal and the element matrices run through: the block's own where the default
 * implementation made them (one chunk: the whole block), else arrays of their own for QP_CHUNK_POINTS
 * q-points at a time (Operator.qp_chunk_points where set). A fused operator never makes the block's arrays,
 * so its diagonal (multigrid's smoother) and coarse element matrices take tens of MB for a moment instead of
 * holding four q-point arrays of the whole mesh. */
enum { QP_CHUNK_POINTS = 1 << 17 };

typedef struct {
    double *uq, *duq, *s, *f;
    int64_t chunk; /* elements a chunk */
    int owned;
} QpWork;

static void qp_work_free(Device *d, QpWork *w) {
    if (w->owned) device_free(d, w->uq), device_free(d, w->duq), device_free(d, w->s), device_free(d, w->f);
    *w = (QpWork){0};
}

static int qp_work(Operator *op, const OpBlock *b, int facet, QpWork *w) {
    Device *d = op->dev;
    const int64_t nq = b->basis.tables.nq, nc = op->phys.ncomp, rd = b->basis.tables.dim;
    const int grads = facet ? op->facet_grads : op->grads;
    *w = (QpWork){.uq = b->uq, .duq = b->duq, .s = b->s, .f = b->f, .chunk = b->nelem};
    if (b->uq && b->s && (!grads || (b->duq && b->f))) return FEM_OK;
    const int64_t points = op->qp_chunk_points > 0 ? op->qp_chunk_points : QP_CHUNK_POINTS;
    *w = (QpWork){.chunk = points / nq > 0 ? points / nq : 1, .owned = 1};
    if (w->chunk > b->nelem) w->chunk = b->nelem;
    const int64_t n = w->chunk * nq;
    int status = op_alloc_zero(op, &w->uq, n * nc);
    if (!status) status = op_alloc_zero(op, &w->s, n * nc);
    if (!status && grads) status = op_alloc_zero(op, &w->duq, n * nc * rd);
    if (!status && grads) status = op_alloc_zero(op, &w->f, n * nc * rd);
    if (status) qp_work_free(d, w);
    return status;
}

/* Elements e0 .. e0 + ne - 1 of a view (no transpose: chunks add atomically or into element vectors). */
static ElemView chunk_view(const ElemView *v, int64_t e0, int64_t ne) {
    ElemView c = *v;
    c.nelem = ne;
    c.dofs += e0 * v->ndof;
    c.t_offsets = NULL, c.t_slots = NULL;
    return c;
}

/* The Jacobian q-function's arguments for elements e0 .. e0 + ne - 1 of block b, their q-point arrays in w.
 */
static QfArgs chunk_args(const Operator *op, const OpBlock *b, int facet, const QpWork *w, int64_t e0,
                         int64_t ne) {
    QfArgs a = op_block_args(op, b, facet, 0);
    const int64_t p0 = e0 * a.nq;
    a.n = ne * a.nq;
    a.u = w->uq, a.du = w->duq, a.s = w->s, a.f = w->f;
    if (a.geo) a.geo += p0 * (facet ? FGEO_STRIDE : GEO_STRIDE(a.dim));
    if (a.x) a.x += p0 * 3;
    if (a.aux) a.aux += p0;
    if (a.src) a.src += p0 * a.ncomp;
    if (a.tag) a.tag += e0;
    if (a.state) a.state += p0 * a.nstate;
    return a;
}

/* ---------------------------------------------------------------- diagonal */

/* Exact diagonal of the element matrices: for each input slot (component c, value or one reference
 * derivative), the linearised q-function's response to a unit input there, tested against the same slot;
 * chunk by chunk into the element vectors, assembled once. */
static int diagonal_block(Operator *op, OpBlock *b, int facet, double *diag) {
    Device *d = op->dev;
    if (b->nelem == 0) return FEM_OK;
    const int nc = op->phys.ncomp, nd = b->basis.tables.ndof, rd = b->basis.tables.dim;
    const int grads = facet ? op->facet_grads : op->grads;
    /* the block's element vectors, or (where its applications never made them) a full set for the moment */
    const size_t ebytes = sizeof(double) * (size_t)(b->nelem * nc * nd);
    double *own = NULL, *ev = b->evec;
    if (!ev) {
        FEM_TRY(device_alloc(d, (void **)&own, ebytes));
        ev = own;
    }
    QpWork w = {0};
    int status = d->ops.zero(d, ev, ebytes);
    if (!status) status = op_block_aux(op, b);
    if (!status) status = qp_work(op, b, facet, &w);
    QfFn fn = block_qfunction(op, facet, 0);
    for (int64_t e0 = 0; e0 < b->nelem && !status; e0 += w.chunk) {
        const int64_t ne = b->nelem - e0 < w.chunk ? b->nelem - e0 : w.chunk, n = ne * b->basis.tables.nq;
        const ElemView v = chunk_view(&b->view, e0, ne);
        const QfArgs a = chunk_args(op, b, facet, &w, e0, ne);
        double *evec = ev + e0 * nc * nd;
        for (int c = 0; c < nc && !status; c++)
            for (int slot = 0; slot <= (grads ? rd : 0) && !status; slot++) {
                double pu[QF_MAX_COMP] = {0}, pg[QF_MAX_COMP * 3] = {0};
                if (slot == 0)
                    pu[c] = 1.0;
                else
                    pg[c * rd + slot - 1] = 1.0;
                status = d->ops.fill(d, n, nc, pu, w.uq);
                if (!status && grads) status = d->ops.fill(d, n, nc * rd, pg, w.duq);
                if (!status) status = fn(&a);
                if (!status) status = d->ops.diag_add(d, &v, c, slot, w.s, facet ? NULL : w.f, evec);
            }
    }
    qp_work_free(d, &w);
    if (!status) status = d->ops.assemble(d, &b->view, ev, diag);
    device_free(d, own);
    return status;
}

int op_ref_diagonal(Operator *op, Vec *diag) {
    FEM_TRY(vec_zero(diag));
    for (int b = 0; b < op->ncells; b++) FEM_TRY(diagonal_block(op, &op->cells[b], 0, diag->data));
    for (int b = 0; b < op->nfacets; b++) FEM_TRY(diagonal_block(op, &op->facets[b], 1, diag->data));
    return FEM_OK;
}

/* ---------------------------------------------------------------- element matrices */

/* A restriction in which every element owns its dofs (e * ndof + i): applying the block's kernels to it
 * gives each element's own response, not the assembled one. */
static int discontinuous(Device *dev, int64_t nelem, int nd, Restriction *r) {
    int64_t n = nelem * nd;
    fem_idx *dofs = malloc(sizeof(fem_idx) * (size_t)(n + 1));
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int32_t *slots = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int status =
        dofs && off && slots ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for element matrices");
    for (int64_t k = 0; k < n && !status; k++) dofs[k] = (fem_idx)k, off[k] = k, slots[k] = (int32_t)k;
    if (!status) off[n] = n;
    if (!status) status = restriction_create(r, dev, nelem, nd, n, dofs, off, slots);
    free(dofs);
    free(off);
    free(slots);
    return status;
}

/* Column (j, cj) of every element matrix of block b into y (zeroed): the linearised q-function's response
 * to element values that are 1 at local dof j, component cj, and 0 elsewhere, integrated against the test
 * functions, chunk by chunk. v is the block's discontinuous view, so every entry of y has one addend and the
 * atomic adds are exact. */
static int element_column(Operator *op, OpBlock *b, int facet, const ElemView *v, const QpWork *w, int j,
                          int cj, double *x, double *y) {
    Device *d = op->dev;
    int nc = op->phys.ncomp, m = v->ndof * nc, grads = facet ? op->facet_grads : op->grads;
    double pattern[QF_MAX_COMP * 729];
    for (int k = 0; k < m; k++) pattern[k] = k == j * nc + cj;
    FEM_TRY(d->ops.fill(d, b->nelem, m, pattern, x));
    FEM_TRY(d->ops.zero(d, y, sizeof(double) * (size_t)(b->nelem * m)));
    QfFn fn = block_qfunction(op, facet, 0);
    for (int64_t e0 = 0; e0 < b->nelem; e0 += w->chunk) {
        const int64_t ne = b->nelem - e0 < w->chunk ? b->nelem - e0 : w->chunk;
        const ElemView vc = chunk_view(v, e0, ne);
        const QfArgs a = chunk_args(op, b, facet, w, e0, ne);
        FEM_TRY(d->ops.interpolate(d, &vc, x, w->uq, grads ? w->duq : NULL));
        FEM_TRY(fn(&a));
        FEM_TRY(d->ops.integrate(d, &vc, w->s, facet ? NULL : w->f, y, NULL));
    }
    return FEM_OK;
}

int op_ref_element_matrices(Operator *op, int facet, int bi, double *K) {
    OpBlock *b = facet ? &op->facets[bi] : &op->cells[bi];
    Device *d = op->dev;
    int nc = op->phys.ncomp, nd = b->basis.tables.ndof, m = nd * nc;
    if (b->nelem == 0) return FEM_OK;
    if (nd > 729) return fem_fail(FEM_ERR_INTERNAL, "element matrices of %d dofs are not assembled", nd);
    Restriction r;
    FEM_TRY(discontinuous(d, b->nelem, nd, &r));
    ElemView v = elem_view(&r, &b->basis, nc);
    size_t bytes = sizeof(double) * (size_t)(b->nelem * m);
    double *x = NULL, *y = NULL, *col = malloc(bytes);
    QpWork w = {0};
    int status = col ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for element matrices");
    if (!status) status = device_alloc(d, (void **)&x, bytes);
    if (!status) status = device_alloc(d, (void **)&y, bytes);
    if (!status) status = op_block_aux(op, b);
    if (!status) status = qp_work(op, b, facet, &w);
    /* Column c of every element goes to row c of the element's block (contiguous copies), and each block is
     * transposed in place at the end: writing the columns straight into the row-major matrices touched a
     * cache line per entry, 12 passes over all of them for an order-1 tetrahedron's 12 columns. */
    const int64_t ne = b->nelem;
    for (int c = 0; c < m && !status; c++) {
        status = element_column(op, b, facet, &v, &w, c / nc, c % nc, x, y);
        if (!status) status = d->ops.download(d, col, y, bytes);
        if (status) break;
#pragma omp parallel for schedule(static)
        for (int64_t e = 0; e < ne; e++) memcpy(K + (e * m + c) * m, col + e * m, sizeof(double) * (size_t)m);
    }
    if (!status) {
#pragma omp parallel for schedule(static)
        for (int64_t e = 0; e < ne; e++) {
            double *Ke = K + e * m * m;
            for (int i = 0; i < m; i++)
                for (int k = i + 1; k < m; k++) {
                    double t = Ke[i * m + k];
                    Ke[i * m + k] = Ke[k * m + i], Ke[k * m + i] = t;
                }
        }
    }
    free(col);
    device_free(d, x);
    device_free(d, y);
    qp_work_free(d, &w);
    restriction_destroy(&r);
    return status;
}
