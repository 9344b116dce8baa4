/* Matrix-free operator application (see operator.h). */
#include "operator.h"

#include "error.h"
#include "geometry.h"

#include <stdlib.h>
#include <string.h>

#define DEV(op) ((op)->dev)

static int upload(Operator *op, OpBlock *b, int slot, void **dst, const void *src, size_t bytes) {
    FEM_TRY(device_alloc_copy(op->dev, dst, src, bytes));
    b->owned[slot] = *dst;
    return FEM_OK;
}

static int alloc_zero(Operator *op, double **p, int64_t count) {
    FEM_TRY(device_alloc(op->dev, (void **)p, sizeof(double) * (size_t)(count > 0 ? count : 1)));
    return op->dev->ops.zero(op->dev, *p, sizeof(double) * (size_t)(count > 0 ? count : 1));
}

/* Device copies of a block's tables, dofs and transpose; fills b->view and b->aux_view. */
static int block_views(Operator *op, OpBlock *b, const fem_idx *dofs_host, const int64_t *toff,
                       const int32_t *tslots, int64_t nslots) {
    const ElementTables *t = &b->tables;
    void *p;
    FEM_TRY(upload(op, b, 0, &p, dofs_host, sizeof(fem_idx) * (size_t)(b->nelem * t->ndof)));
    b->view.dofs = p;
    FEM_TRY(upload(op, b, 1, &p, t->B, sizeof(double) * t->nq * t->ndof));
    b->view.B = p;
    FEM_TRY(upload(op, b, 2, &p, t->G, sizeof(double) * t->nq * t->ndof * t->dim));
    b->view.G = p;
    if (t->tensor) {
        FEM_TRY(upload(op, b, 3, &p, t->B1, sizeof(double) * t->nq1 * t->nd1));
        b->view.B1 = p;
        FEM_TRY(upload(op, b, 4, &p, t->G1, sizeof(double) * t->nq1 * t->nd1));
        b->view.G1 = p;
    }
    FEM_TRY(upload(op, b, 5, &p, toff, sizeof(int64_t) * (size_t)(op->space->nnodes + 1)));
    b->view.t_offsets = p;
    FEM_TRY(upload(op, b, 6, &p, tslots, sizeof(int32_t) * (size_t)(nslots > 0 ? nslots : 1)));
    b->view.t_slots = p;
    b->view.nelem = b->nelem;
    b->view.ndof = t->ndof;
    b->view.nq = t->nq;
    b->view.dim = t->dim;
    b->view.ncomp = op->phys.ncomp;
    b->view.tensor = t->tensor;
    b->view.nd1 = t->nd1;
    b->view.nq1 = t->nq1;
    b->view.nnodes = op->space->nnodes;
    b->aux_view = b->view;
    b->aux_view.ncomp = 1;
    return FEM_OK;
}

static int block_work(Operator *op, OpBlock *b, int nstate, int grads) {
    int64_t n = b->nelem * b->tables.nq, nc = op->phys.ncomp, rd = b->tables.dim;
    FEM_TRY(alloc_zero(op, &b->uq, n * nc));
    FEM_TRY(alloc_zero(op, &b->s, n * nc));
    if (grads) {
        FEM_TRY(alloc_zero(op, &b->duq, n * nc * rd));
        FEM_TRY(alloc_zero(op, &b->f, n * nc * rd));
    }
    if (op->phys.uses_aux) FEM_TRY(alloc_zero(op, &b->auxq, n));
    FEM_TRY(alloc_zero(op, &b->state, n * (nstate > 0 ? nstate : 1)));
    FEM_TRY(alloc_zero(op, &b->evec, b->nelem * nc * b->tables.ndof));
    return FEM_OK;
}

/* Transpose of a facet subset's dof map (the space's transposes cover whole blocks). */
static int subset_transpose(const fem_idx *dofs, int64_t nelem, int ndof, int64_t nnodes, int64_t **off,
                            int32_t **slots) {
    FEM_ALLOC(*off, nnodes + 1, "a facet dof map");
    FEM_ALLOC(*slots, nelem * ndof, "a facet dof map");
    for (int64_t k = 0; k < nelem * ndof; k++) (*off)[dofs[k] + 1]++;
    for (int64_t n = 0; n < nnodes; n++) (*off)[n + 1] += (*off)[n];
    int64_t *fill = malloc(sizeof(int64_t) * (size_t)(nnodes + 1));
    if (!fill) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a facet dof map");
    memcpy(fill, *off, sizeof(int64_t) * (size_t)(nnodes + 1));
    for (int64_t k = 0; k < nelem * ndof; k++) (*slots)[fill[dofs[k]]++] = (int32_t)k;
    free(fill);
    return FEM_OK;
}

static int setup_cells(Operator *op, int bi, int qdegree, const int32_t *tags) {
    const Space *sp = op->space;
    const MeshBlock *mb = &sp->mesh->cells[bi];
    const SpaceBlock *sb = &sp->cells[bi];
    OpBlock *b = &op->cells[bi];
    int deg = qdegree > 0 ? qdegree : quadrature_default_degree(sp->order, mb->order);
    FEM_TRY(tables_create(sb->shape, sp->order, deg, &b->tables));
    b->nelem = sb->count;
    FEM_TRY(block_views(op, b, sb->dofs, sb->t_offsets, sb->t_slots, sb->count * sb->ndof));
    int d = sp->mesh->dim, nq = b->tables.nq;
    double *geo = malloc(sizeof(double) * (size_t)(b->nelem * nq * GEO_STRIDE(d)));
    double *x = op->phys.needs_x ? malloc(sizeof(double) * (size_t)(b->nelem * nq * 3)) : NULL;
    if (!geo || (op->phys.needs_x && !x)) {
        free(geo);
        free(x);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for q-point geometry");
    }
    int status = geometry_cells(sp->mesh, bi, &b->tables.quad, b->nelem, NULL, geo, x);
    if (!status)
        status = device_alloc_copy(op->dev, (void **)&b->geo, geo,
                                   sizeof(double) * (size_t)(b->nelem * nq * GEO_STRIDE(d)));
    if (!status && x)
        status = device_alloc_copy(op->dev, (void **)&b->x, x, sizeof(double) * (size_t)(b->nelem * nq * 3));
    free(geo);
    free(x);
    FEM_TRY(status);
    FEM_TRY(device_alloc_copy(op->dev, (void **)&b->tag, tags, sizeof(int32_t) * (size_t)b->nelem));
    return block_work(op, b, op->phys.nstate, 1);
}

static int setup_facets(Operator *op, int fi, int qdegree, const int32_t *tags) {
    const Space *sp = op->space;
    const MeshBlock *mb = &sp->mesh->facets[fi];
    const SpaceBlock *sb = &sp->facets[fi];
    OpBlock *b = &op->facets[fi];
    int64_t n = 0;
    for (int64_t c = 0; c < sb->count; c++) n += tags[c] >= 0;
    if (n == 0) return FEM_OK;
    b->nelem = n;
    FEM_ALLOC(b->list, n, "a facet list");
    int32_t *sub_tags = malloc(sizeof(int32_t) * (size_t)n);
    fem_idx *dofs = malloc(sizeof(fem_idx) * (size_t)(n * sb->ndof));
    if (!sub_tags || !dofs) {
        free(sub_tags);
        free(dofs);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for facets");
    }
    for (int64_t c = 0, k = 0; c < sb->count; c++)
        if (tags[c] >= 0) {
            b->list[k] = (fem_idx)c;
            sub_tags[k] = tags[c];
            memcpy(&dofs[k * sb->ndof], &sb->dofs[c * sb->ndof], sizeof(fem_idx) * sb->ndof);
            k++;
        }
    int deg = qdegree > 0 ? qdegree : quadrature_default_degree(sp->order, mb->order);
    int64_t *toff = NULL;
    int32_t *tslots = NULL;
    int status = tables_create(sb->shape, sp->order, deg, &b->tables);
    if (!status) status = subset_transpose(dofs, n, sb->ndof, sp->nnodes, &toff, &tslots);
    if (!status) status = block_views(op, b, dofs, toff, tslots, n * sb->ndof);
    free(dofs);
    free(toff);
    free(tslots);
    if (!status) status = device_alloc_copy(op->dev, (void **)&b->tag, sub_tags, sizeof(int32_t) * (size_t)n);
    free(sub_tags);
    FEM_TRY(status);
    int nq = b->tables.nq;
    double *fgeo = malloc(sizeof(double) * (size_t)(n * nq * FGEO_STRIDE));
    double *x = malloc(sizeof(double) * (size_t)(n * nq * 3));
    if (!fgeo || !x) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for facet geometry");
    if (!status) status = geometry_facets(sp->mesh, fi, &b->tables.quad, n, b->list, fgeo, x);
    if (!status)
        status = device_alloc_copy(op->dev, (void **)&b->geo, fgeo,
                                   sizeof(double) * (size_t)(n * nq * FGEO_STRIDE));
    if (!status)
        status = device_alloc_copy(op->dev, (void **)&b->x, x, sizeof(double) * (size_t)(n * nq * 3));
    free(fgeo);
    free(x);
    FEM_TRY(status);
    return block_work(op, b, op->phys.nfstate, op->phys.facet_grad);
}

int op_create(Operator *op, Device *dev, const Space *sp, const OpPhysics *phys, int qdegree,
              int32_t *const *cell_tags, int32_t *const *facet_tags) {
    memset(op, 0, sizeof *op);
    op->dev = dev;
    op->space = sp;
    op->phys = *phys;
    op->ncells = sp->ncell_blocks;
    op->nfacets = phys->facet_residual[dev->kind] ? sp->nfacet_blocks : 0;
    int status = device_alloc_copy(dev, &op->ctx, phys->ctx, phys->ctx_bytes);
    for (int b = 0; b < op->ncells && !status; b++) status = setup_cells(op, b, qdegree, cell_tags[b]);
    for (int b = 0; b < op->nfacets && !status; b++)
        if (facet_tags && facet_tags[b]) status = setup_facets(op, b, qdegree, facet_tags[b]);
    if (!status) status = alloc_zero(op, &op->work, sp->ndofs);
    if (!status && !phys->cell_residual[dev->kind])
        status =
            fem_fail(FEM_ERR_DEVICE, "this physics has no q-point functions for the %s device", dev->name);
    if (status) op_destroy(op);
    return status;
}

static void block_free(Operator *op, OpBlock *b) {
    Device *d = op->dev;
    for (int i = 0; i < 8; i++) device_free(d, b->owned[i]);
    double *arrays[] = {b->geo, b->x, b->state, b->src, b->uq, b->duq, b->s, b->f, b->auxq, b->evec};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) device_free(d, arrays[i]);
    device_free(d, b->tag);
    tables_destroy(&b->tables);
    free(b->list);
    memset(b, 0, sizeof *b);
}

void op_destroy(Operator *op) {
    if (!op->dev) return;
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) block_free(op, &op->cells[b]), block_free(op, &op->facets[b]);
    device_free(op->dev, op->ctx);
    device_free(op->dev, op->dir);
    device_free(op->dev, op->dir_tmp);
    device_free(op->dev, op->ones);
    device_free(op->dev, op->work);
    memset(op, 0, sizeof *op);
}

int op_update_ctx(Operator *op) {
    return op->dev->ops.upload(op->dev, op->ctx, op->phys.ctx, op->phys.ctx_bytes);
}

int op_set_dirichlet(Operator *op, int64_t n, const int32_t *dofs) {
    Device *d = op->dev;
    device_free(d, op->dir);
    device_free(d, op->dir_tmp);
    device_free(d, op->ones);
    op->dir = NULL;
    op->dir_tmp = op->ones = NULL;
    op->ndir = n;
    if (n == 0) return FEM_OK;
    FEM_TRY(device_alloc_copy(d, (void **)&op->dir, dofs, sizeof(int32_t) * (size_t)n));
    FEM_TRY(alloc_zero(op, &op->dir_tmp, n));
    FEM_TRY(alloc_zero(op, &op->ones, n));
    double one = 1.0;
    return d->ops.fill(d, n, 1, &one, op->ones);
}

int op_set_source(Operator *op, int b, const double *src) {
    OpBlock *blk = &op->cells[b];
    device_free(op->dev, blk->src);
    blk->src = NULL;
    if (!src) return FEM_OK;
    return device_alloc_copy(op->dev, (void **)&blk->src, src,
                             sizeof(double) * (size_t)(blk->nelem * blk->tables.nq * op->phys.ncomp));
}

int op_qpoint_coordinates(const Operator *op, int b, double **x) {
    const OpBlock *blk = &op->cells[b];
    int nq = blk->tables.nq, d = op->space->mesh->dim;
    double *geo = malloc(sizeof(double) * (size_t)(blk->nelem * nq * GEO_STRIDE(d)));
    *x = malloc(sizeof(double) * (size_t)(blk->nelem * nq * 3));
    if (!geo || !*x) {
        free(geo);
        free(*x);
        *x = NULL;
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for q-point coordinates");
    }
    int status = geometry_cells(op->space->mesh, b, &blk->tables.quad, blk->nelem, NULL, geo, *x);
    free(geo);
    return status;
}

static QfArgs block_args(const Operator *op, const OpBlock *b, int facet, int residual) {
    QfArgs a = {0};
    a.n = b->nelem * b->tables.nq;
    a.nq = b->tables.nq;
    a.dim = op->space->mesh->dim;
    a.rdim = b->tables.dim;
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

/* One block's contribution to out (+=): interpolate in, q-function, integrate. */
static int apply_block(Operator *op, OpBlock *b, int facet, int residual, const double *in, double *out) {
    Device *d = op->dev;
    if (b->nelem == 0) return FEM_OK;
    int grads = !facet || op->phys.facet_grad;
    FEM_TRY(d->ops.interpolate(d, &b->view, in, b->uq, grads ? b->duq : NULL));
    if (op->aux && b->auxq) FEM_TRY(d->ops.interpolate(d, &b->aux_view, op->aux, b->auxq, NULL));
    QfArgs a = block_args(op, b, facet, residual);
    QfFn fn = facet ? (residual ? op->phys.facet_residual : op->phys.facet_jacobian)[d->kind]
                    : (residual ? op->phys.cell_residual : op->phys.cell_jacobian)[d->kind];
    FEM_TRY(fn(&a));
    return d->ops.integrate(d, &b->view, b->s, facet ? NULL : b->f, out, b->evec);
}

static int apply_all(Operator *op, int residual, const double *in, double *out) {
    Device *d = op->dev;
    FEM_TRY(d->ops.zero(d, out, sizeof(double) * (size_t)op->space->ndofs));
    for (int b = 0; b < op->ncells; b++) FEM_TRY(apply_block(op, &op->cells[b], 0, residual, in, out));
    for (int b = 0; b < op->nfacets; b++) FEM_TRY(apply_block(op, &op->facets[b], 1, residual, in, out));
    return FEM_OK;
}

int op_residual(Operator *op, const double *u, double *r) {
    op->evaluations++;
    FEM_TRY(apply_all(op, 1, u, r));
    if (op->ndir) FEM_TRY(op->dev->ops.scatter(op->dev, op->ndir, op->dir, NULL, r));
    return FEM_OK;
}

int op_residual_unconstrained(Operator *op, const double *u, double *r) {
    op->evaluations++;
    return apply_all(op, 1, u, r);
}

int op_jacobian(Operator *op, const double *v, double *Jv) {
    Device *d = op->dev;
    op->applications++;
    const double *in = v;
    if (op->ndir) {
        FEM_TRY(d->ops.copy(d, op->work, v, sizeof(double) * (size_t)op->space->ndofs));
        FEM_TRY(d->ops.scatter(d, op->ndir, op->dir, NULL, op->work));
        in = op->work;
    }
    FEM_TRY(apply_all(op, 0, in, Jv));
    if (op->ndir) {
        FEM_TRY(d->ops.gather(d, op->ndir, op->dir, v, op->dir_tmp));
        FEM_TRY(d->ops.scatter(d, op->ndir, op->dir, op->dir_tmp, Jv));
    }
    return FEM_OK;
}

static int diagonal_block(Operator *op, OpBlock *b, int facet, double *diag) {
    Device *d = op->dev;
    if (b->nelem == 0) return FEM_OK;
    int nc = op->phys.ncomp, rd = b->tables.dim, grads = !facet || op->phys.facet_grad;
    int64_t n = b->nelem * b->tables.nq;
    FEM_TRY(d->ops.zero(d, b->evec, sizeof(double) * (size_t)(b->nelem * nc * b->tables.ndof)));
    if (op->aux && b->auxq) FEM_TRY(d->ops.interpolate(d, &b->aux_view, op->aux, b->auxq, NULL));
    QfArgs a = block_args(op, b, facet, 0);
    QfFn fn = (facet ? op->phys.facet_jacobian : op->phys.cell_jacobian)[d->kind];
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

int op_diagonal(Operator *op, double *diag) {
    Device *d = op->dev;
    FEM_TRY(d->ops.zero(d, diag, sizeof(double) * (size_t)op->space->ndofs));
    for (int b = 0; b < op->ncells; b++) FEM_TRY(diagonal_block(op, &op->cells[b], 0, diag));
    for (int b = 0; b < op->nfacets; b++) FEM_TRY(diagonal_block(op, &op->facets[b], 1, diag));
    if (op->ndir) FEM_TRY(d->ops.scatter(d, op->ndir, op->dir, op->ones, diag));
    return FEM_OK;
}
