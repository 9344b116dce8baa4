/* The default implementation of an operator's element-level entries, made of the device's element kernels:
 * per block, interpolate to the q-points, run the q-function, integrate against the test functions, with the
 * q-point arrays in device memory between the launches (see operator.h). */
#include "operator.h"

#include "error.h"

static QfArgs block_args(const Operator *op, const OpBlock *b, int facet, int residual) {
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

static QfFn block_qfunction(const Operator *op, int facet, int residual) {
    return facet ? (residual ? op->facet_residual : op->facet_jacobian)
                 : (residual ? op->cell_residual : op->cell_jacobian);
}

/* The auxiliary field at a block's q-points, when the physics reads one and it is set. */
static int block_aux(Operator *op, OpBlock *b) {
    if (!op->aux || !b->auxq) return FEM_OK;
    return op->dev->ops.interpolate(op->dev, &b->aux_view, op->aux, b->auxq, NULL);
}

/* One block's contribution to out (+=): interpolate in, q-function, integrate. */
static int apply_block(Operator *op, OpBlock *b, int facet, int residual, const double *in, double *out) {
    Device *d = op->dev;
    if (b->nelem == 0) return FEM_OK;
    int grads = facet ? op->facet_grads : op->grads;
    FEM_TRY(d->ops.interpolate(d, &b->view, in, b->uq, grads ? b->duq : NULL));
    FEM_TRY(block_aux(op, b));
    QfArgs a = block_args(op, b, facet, residual);
    FEM_TRY(block_qfunction(op, facet, residual)(&a));
    return d->ops.integrate(d, &b->view, b->s, facet ? NULL : b->f, out, b->evec);
}

static int apply_all(Operator *op, int residual, const Vec *in, Vec *out) {
    for (int b = 0; b < op->ncells; b++) FEM_TRY(apply_block(op, &op->cells[b], 0, residual, in->data, out->data));
    for (int b = 0; b < op->nfacets; b++)
        FEM_TRY(apply_block(op, &op->facets[b], 1, residual, in->data, out->data));
    return FEM_OK;
}

int op_ref_residual(Operator *op, const Vec *u, Vec *r) {
    FEM_TRY(vec_zero(r));
    return apply_all(op, 1, u, r);
}

int op_ref_apply_add(Operator *op, const Vec *x, Vec *y) {
    return apply_all(op, 0, x, y);
}

/* Exact diagonal of the element matrices: for each input slot (component c, value or one reference
 * derivative), the linearised q-function's response to a unit input there, tested against the same slot. */
static int diagonal_block(Operator *op, OpBlock *b, int facet, double *diag) {
    Device *d = op->dev;
    if (b->nelem == 0) return FEM_OK;
    int nc = op->phys.ncomp, rd = b->basis.tables.dim, grads = facet ? op->facet_grads : op->grads;
    int64_t n = b->nelem * b->basis.tables.nq;
    FEM_TRY(d->ops.zero(d, b->evec, sizeof(double) * (size_t)(b->nelem * nc * b->basis.tables.ndof)));
    FEM_TRY(block_aux(op, b));
    QfArgs a = block_args(op, b, facet, 0);
    QfFn fn = block_qfunction(op, facet, 0);
    for (int c = 0; c < nc; c++)
        for (int slot = 0; slot <= (grads ? rd : 0); slot++) {
            double pu[QF_MAX_COMP] = {0}, pg[QF_MAX_COMP * 3] = {0};
            if (slot == 0)
                pu[c] = 1.0;
            else
                pg[c * rd + slot - 1] = 1.0;
            FEM_TRY(d->ops.fill(d, n, nc, pu, b->uq));
            if (grads) FEM_TRY(d->ops.fill(d, n, nc * rd, pg, b->duq));
            FEM_TRY(fn(&a));
            FEM_TRY(d->ops.diag_add(d, &b->view, c, slot, b->s, facet ? NULL : b->f, b->evec));
        }
    return d->ops.assemble(d, &b->view, b->evec, diag);
}

int op_ref_diagonal(Operator *op, Vec *diag) {
    FEM_TRY(vec_zero(diag));
    for (int b = 0; b < op->ncells; b++) FEM_TRY(diagonal_block(op, &op->cells[b], 0, diag->data));
    for (int b = 0; b < op->nfacets; b++) FEM_TRY(diagonal_block(op, &op->facets[b], 1, diag->data));
    return FEM_OK;
}
