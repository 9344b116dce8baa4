/* Operators: setup, the shared layer (constraints, counts) and the backend hook (see operator.h). The default
 * element-level entries are in operator_ref.c. */
#include "operator.h"

#include "error.h"
#include "evaluate.h"
#include "geometry.h"
#include "halo.h"

#include <stdlib.h>
#include <string.h>

int op_alloc_zero(Operator *op, double **p, int64_t count) {
    size_t bytes = sizeof(double) * (size_t)(count > 0 ? count : 1);
    FEM_TRY(device_alloc(op->dev, (void **)p, bytes));
    return op->dev->ops.zero(op->dev, *p, bytes);
}

/* The kernels' views of a block whose restriction and basis are set up. */
static void block_views(Operator *op, OpBlock *b) {
    b->view = elem_view(&b->restriction, &b->basis, op->phys.ncomp);
    b->aux_view = b->view;
    b->aux_view.ncomp = 1;
}

/* What every implementation of a block reads or writes at its q-points: the auxiliary field and the
 * physics' state. The default implementation's own arrays and the element vectors come on first use
 * (op_block_qpoints, op_block_evec). */
static int block_work(Operator *op, OpBlock *b, int nstate) {
    int64_t n = b->nelem * b->basis.tables.nq;
    if (op->aux_used) FEM_TRY(op_alloc_zero(op, &b->auxq, n));
    FEM_TRY(op_alloc_zero(op, &b->state, n * (nstate > 0 ? nstate : 1)));
    return FEM_OK;
}

int op_block_evec(Operator *op, OpBlock *b) {
    if (b->evec) return FEM_OK;
    return op_alloc_zero(op, &b->evec, b->nelem * op->phys.ncomp * b->basis.tables.ndof);
}

int op_block_qpoints(Operator *op, OpBlock *b, int facet) {
    const int grads = facet ? op->facet_grads : op->grads;
    int64_t n = b->nelem * b->basis.tables.nq, nc = op->phys.ncomp, rd = b->basis.tables.dim;
    if (!b->uq) FEM_TRY(op_alloc_zero(op, &b->uq, n * nc));
    if (!b->s) FEM_TRY(op_alloc_zero(op, &b->s, n * nc));
    if (grads && !b->duq) FEM_TRY(op_alloc_zero(op, &b->duq, n * nc * rd));
    if (grads && !b->f) FEM_TRY(op_alloc_zero(op, &b->f, n * nc * rd));
    return FEM_OK;
}

/* The Jacobian's compact q-point data form of the physics, when the operator uses it now (else NULL). */
static const QfQdata *qdata_form(const Operator *op) {
    const QfQdata *qd = op->phys.cell_jacobian.qdata;
    const char *env = getenv("FEMTO_QDATA");
    return qd && op->grads && !(env && strcmp(env, "0") == 0) && qd->valid(op->phys.ctx) ? qd : NULL;
}

/* Whether a cell block keeps its compact q-point data once per element: affine simplices (order-1 triangles
 * and tetrahedra: J constant), where D_q = (w_q / w_0) D_0. */
static int qdata_per_elem(const OpBlock *b) {
    return b->gorder == 1 && !shape_is_tensor(b->basis.tables.shape);
}

/* The Jacobian's compact q-point data of cell block b (material tags), where the physics has a
 * form that holds for its constants (qdata_form), on the device, from the host geometry geo at gnq points a
 * cell: the rule's nq, or 1 (q-point 0 alone) where the data is kept per element. */
static int block_qdata(Operator *op, OpBlock *b, const int32_t *tags, const double *geo, int gnq) {
    const QfQdata *qd = qdata_form(op);
    if (!qd) return FEM_OK;
    const int dim = op->space->mesh->dim, nq = gnq, n = qf_geo_doubles(qd->layout, dim);
    const int64_t npts = b->nelem * nq;
    b->qdata_per_elem = qdata_per_elem(b);
    if (nq == 1 && !b->qdata_per_elem)
        return fem_fail(FEM_ERR_INTERNAL, "q-point data of curved cells from one point");
    double *D = malloc(sizeof(double) * (size_t)(npts * n + 1));
    if (!D) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for q-point data");
    QfArgs a = {.n = npts,
                .nq = nq,
                .dim = dim,
                .rdim = dim,
                .ncomp = op->phys.ncomp,
                .geo = geo,
                .tag = tags,
                .ctx = op->phys.ctx,
                .s = D};
#pragma omp parallel for schedule(static) if (npts > 20000)
    for (int64_t i = 0; i < npts; i++) qd->setup(&a, i);
    if (b->qdata_per_elem && nq > 1)
        for (int64_t e = 1; e < b->nelem; e++) memcpy(D + e * n, D + e * nq * n, sizeof(double) * (size_t)n);
    int64_t count = (b->qdata_per_elem ? b->nelem : npts) * n;
    int status = device_alloc_copy(op->dev, (void **)&b->qdata, D, sizeof(double) * (size_t)count);
    free(D);
    return status;
}

/* Points whose geometry the device computes at a time: the scratch of eval_geometry_cells (10 doubles a
 * point) and the coordinates stay near 100 MB. */
enum { GEO_CHUNK_POINTS = 1 << 20 };

/* Cell block b's geometry (and coordinates, want_x) at its q-points, computed on the device into b->geo and
 * b->x; *bad: the points whose det J is not positive. */
static int cells_geometry_device(Operator *op, OpBlock *b, int bi, int want_x, double *bad) {
    const Mesh *m = op->space->mesh;
    Device *d = op->dev;
    const Quadrature *q = &b->basis.tables.quad;
    const int64_t np = b->nelem * q->npts, stride = GEO_STRIDE(m->dim);
    int64_t per = GEO_CHUNK_POINTS / q->npts > 0 ? GEO_CHUNK_POINTS / q->npts : 1;
    if (per > b->nelem) per = b->nelem;
    double *xnodes = NULL, *x = NULL;
    int status = FEM_OK;
    *bad = 0.0;
    FEM_CHECK(device_alloc_copy(d, (void **)&xnodes, m->x, sizeof(double) * 3 * (size_t)m->nnodes));
    FEM_CHECK(device_alloc(d, (void **)&b->geo, sizeof(double) * (size_t)(np * stride + 1)));
    if (want_x)
        FEM_CHECK(device_alloc(d, (void **)&b->x, sizeof(double) * (size_t)(np * 3 + 1)));
    else
        FEM_CHECK(device_alloc(d, (void **)&x, sizeof(double) * (size_t)(per * q->npts * 3 + 1)));
    for (int64_t first = 0; first < b->nelem; first += per) {
        int64_t n = b->nelem - first < per ? b->nelem - first : per, at = first * q->npts;
        double chunk_bad = 0.0;
        FEM_CHECK(eval_geometry_cells(d, m, bi, q, first, n, NULL, xnodes, b->geo + at * stride,
                                      want_x ? b->x + at * 3 : x, &chunk_bad));
        *bad += chunk_bad;
    }
cleanup:
    device_free(d, xnodes);
    device_free(d, x);
    return status;
}

/* Geometry (and coordinates, when the q-functions read them) at a block's q-points, on the device; on cells
 * (tags given) the Jacobian's compact q-point data too. Cells' geometry is computed on the device, unless
 * their compact data needs it at every q-point on the host (curved cells); facets' on the host (their
 * normals' orientation needs the adjacent cell), and cells' there too when a det J is not positive, which the
 * host's pass reports naming the element. */
static int block_geometry(Operator *op, OpBlock *b, int facet, int mesh_block, int want_x,
                          const int32_t *tags) {
    const Mesh *m = op->space->mesh;
    const Quadrature *q = &b->basis.tables.quad;
    const int qdata = !facet && qdata_form(op) != NULL;
    if (!facet && b->nelem > 0 && (!qdata || qdata_per_elem(b))) {
        double bad = 0.0;
        FEM_TRY(cells_geometry_device(op, b, mesh_block, want_x, &bad));
        if (bad == 0.0 && !qdata) return FEM_OK;
        if (bad == 0.0) { /* the data kept per element: the host's geometry at q-point 0 alone */
            Quadrature q0 = {.shape = q->shape, .degree = 0, .npts = 1, .xi = q->xi, .w = q->w};
            double *geo0 = malloc(sizeof(double) * (size_t)(b->nelem * GEO_STRIDE(m->dim) + 1));
            int status = geo0 ? geometry_cells(m, mesh_block, &q0, b->nelem, NULL, geo0, NULL)
                              : fem_fail(FEM_ERR_INTERNAL, "out of host memory for geometry");
            if (!status) status = block_qdata(op, b, tags, geo0, 1);
            free(geo0);
            return status;
        }
        device_free(op->dev, b->geo), device_free(op->dev, b->x);
        b->geo = b->x = NULL;
    }
    int64_t n = b->nelem * b->basis.tables.nq;
    size_t stride = facet ? FGEO_STRIDE : GEO_STRIDE(m->dim);
    double *geo = malloc(sizeof(double) * (size_t)n * stride);
    double *x = want_x ? malloc(sizeof(double) * (size_t)n * 3) : NULL;
    int status =
        geo && (x || !want_x) ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for geometry");
    if (!status)
        status = facet ? geometry_facets(m, mesh_block, q, b->nelem, b->list, geo, x)
                       : geometry_cells(m, mesh_block, q, b->nelem, NULL, geo, x);
    if (!status)
        status = device_alloc_copy(op->dev, (void **)&b->geo, geo, sizeof(double) * (size_t)n * stride);
    if (!status && x) status = device_alloc_copy(op->dev, (void **)&b->x, x, sizeof(double) * (size_t)n * 3);
    if (!status && !facet) status = block_qdata(op, b, tags, geo, b->basis.tables.nq);
    free(geo);
    free(x);
    return status;
}

int op_quadrature_degree(const OpPhysics *phys, int qdegree, int p, int g, Shape s, int facet) {
    if (qdegree > 0) return qdegree;
    int affine = g == 1 && (!shape_is_tensor(s) || s == SHAPE_LINE);
    int exact = affine && phys && phys->exact_degree ? phys->exact_degree(phys->ctx, p, facet) : 0;
    return exact > 0 ? exact : quadrature_default_degree(p, g);
}

/* Block b's quadrature degree, once its geometric order is known (b->gorder, from mesh block mb). */
static int block_degree(const Operator *op, OpBlock *b, const MeshBlock *mb, Shape s, int facet) {
    b->gorder = mesh_block_geometry_order(op->space->mesh, mb);
    return op_quadrature_degree(&op->phys, op->qdegree, op->space->order, b->gorder, s, facet);
}

static int setup_cells(Operator *op, int bi, const int32_t *tags) {
    const Space *sp = op->space;
    const SpaceBlock *sb = &sp->cells[bi];
    OpBlock *b = &op->cells[bi];
    int deg = block_degree(op, b, &sp->mesh->cells[bi], sb->shape, 0);
    b->nelem = sb->count;
    FEM_TRY(basis_create(&b->basis, op->dev, sb->shape, sp->order, deg));
    FEM_TRY(restriction_create(&b->restriction, op->dev, sb->count, sb->ndof, sp->nnodes, sb->dofs,
                               sb->t_offsets, sb->t_slots));
    block_views(op, b);
    FEM_TRY(block_geometry(op, b, 0, bi, op->needs_x, tags));
    FEM_TRY(device_alloc_copy(op->dev, (void **)&b->tag, tags, sizeof(int32_t) * (size_t)b->nelem));
    return block_work(op, b, op->phys.nstate);
}

/* The facets of block fi that carry a condition (tag >= 0): their list, tags and dofs (host). */
static int facet_subset(const SpaceBlock *sb, const int32_t *tags, OpBlock *b, int32_t **sub_tags,
                        fem_idx **dofs) {
    int64_t n = 0;
    for (int64_t c = 0; c < sb->count; c++) n += tags[c] >= 0;
    b->nelem = n;
    FEM_ALLOC(b->list, n + 1, "a facet list");
    FEM_ALLOC(*sub_tags, n + 1, "facet tags");
    FEM_ALLOC(*dofs, n * sb->ndof + 1, "facet dofs");
    for (int64_t c = 0, k = 0; c < sb->count; c++)
        if (tags[c] >= 0) {
            b->list[k] = (fem_idx)c;
            (*sub_tags)[k] = tags[c];
            memcpy(&(*dofs)[k * sb->ndof], &sb->dofs[c * sb->ndof], sizeof(fem_idx) * sb->ndof);
            k++;
        }
    return FEM_OK;
}

static int setup_facets(Operator *op, int fi, const int32_t *tags) {
    const Space *sp = op->space;
    const SpaceBlock *sb = &sp->facets[fi];
    OpBlock *b = &op->facets[fi];
    int32_t *sub_tags = NULL;
    fem_idx *dofs = NULL;
    int deg = block_degree(op, b, &sp->mesh->facets[fi], sb->shape, 1);
    int status = facet_subset(sb, tags, b, &sub_tags, &dofs);
    if (!status && b->nelem > 0) {
        status = basis_create(&b->basis, op->dev, sb->shape, sp->order, deg);
        if (!status)
            status =
                restriction_create_subset(&b->restriction, op->dev, b->nelem, sb->ndof, sp->nnodes, dofs);
        if (!status) block_views(op, b);
        if (!status)
            status =
                device_alloc_copy(op->dev, (void **)&b->tag, sub_tags, sizeof(int32_t) * (size_t)b->nelem);
        if (!status) status = block_geometry(op, b, 1, fi, 1, NULL);
        if (!status) status = block_work(op, b, op->phys.nfstate);
    }
    free(sub_tags);
    free(dofs);
    return status;
}

/* The device's instances of the physics' q-functions, and what they read. */
static int bind_qfunctions(Operator *op) {
    const OpPhysics *ph = &op->phys;
    op->cell_residual = device_qfunction(op->dev, ph->cell_residual.id);
    op->cell_jacobian = device_qfunction(op->dev, ph->cell_jacobian.id);
    if (!op->cell_residual || !op->cell_jacobian)
        return fem_fail(FEM_ERR_DEVICE, "the %s device has no instance of the q-function %s", op->dev->name,
                        ph->cell_residual.name ? ph->cell_residual.name : "(none)");
    if (ph->facet_residual.name) {
        op->facet_residual = device_qfunction(op->dev, ph->facet_residual.id);
        op->facet_jacobian = device_qfunction(op->dev, ph->facet_jacobian.id);
        if (!op->facet_residual || !op->facet_jacobian)
            return fem_fail(FEM_ERR_DEVICE, "the %s device has no instance of the q-function %s",
                            op->dev->name, ph->facet_residual.name);
    }
    op->grads = (qf_reads(&ph->cell_residual, QF_UNKNOWN) & QF_GRAD) != 0;
    op->facet_grads = (qf_reads(&ph->facet_residual, QF_UNKNOWN) & QF_GRAD) != 0;
    op->needs_x = qf_reads(&ph->cell_residual, QF_COORDS) != 0;
    op->aux_used = qf_reads(&ph->cell_residual, QF_AUX) != 0;
    return FEM_OK;
}

int op_create(Operator *op, Device *dev, const Space *sp, const OpPhysics *phys, int qdegree,
              int32_t *const *cell_tags, int32_t *const *facet_tags) {
    *op = (Operator){
        .dev = dev,
        .space = sp,
        .phys = *phys,
        .qdegree = qdegree,
        .cell_tags_host = cell_tags,
        .facet_tags_host = facet_tags,
        .ops = {op_ref_residual, op_ref_apply_add, op_ref_diagonal, op_ref_element_matrices, NULL},
        .implementation = "ref",
    };
    int status = bind_qfunctions(op);
    op->ncells = sp->ncell_blocks;
    op->nfacets = op->facet_residual ? sp->nfacet_blocks : 0;
    if (!status) status = device_alloc_copy(dev, &op->ctx, phys->ctx, phys->ctx_bytes);
    for (int b = 0; b < op->ncells && !status; b++) status = setup_cells(op, b, cell_tags[b]);
    for (int b = 0; b < op->nfacets && !status; b++)
        if (facet_tags && facet_tags[b]) status = setup_facets(op, b, facet_tags[b]);
    if (!status && dev->ops.operator_setup) status = dev->ops.operator_setup(op);
    if (status) op_destroy(op);
    return status;
}

int op_create_like(Operator *op, const Operator *like, const Space *sp) {
    return op_create(op, like->dev, sp, &like->phys, like->qdegree, like->cell_tags_host,
                     like->facet_tags_host);
}

static void block_free(Operator *op, OpBlock *b) {
    Device *d = op->dev;
    double *arrays[] = {b->geo, b->x, b->state, b->src,  b->uq,   b->duq,
                        b->s,   b->f, b->auxq,  b->evec, b->qdata};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) device_free(d, arrays[i]);
    device_free(d, b->tag);
    restriction_destroy(&b->restriction);
    basis_destroy(&b->basis);
    free(b->list);
    memset(b, 0, sizeof *b);
}

void op_destroy(Operator *op) {
    if (!op->dev) return;
    if (op->ops.destroy) op->ops.destroy(op);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) block_free(op, &op->cells[b]), block_free(op, &op->facets[b]);
    device_free(op->dev, op->ctx);
    device_free(op->dev, op->dir);
    device_free(op->dev, op->dir_tmp);
    device_free(op->dev, op->ones);
    free(op->dir_host);
    memset(op, 0, sizeof *op);
}

void op_set_halo(Operator *op, Halo *halo) {
    op->halo = halo;
    op->overlap = 0;
    memset(op->interior, 0, sizeof op->interior);
    const Dist *d = halo ? halo->dist : NULL;
    if (!d || op->space != &d->space) return;
    for (int b = 0; b < op->ncells; b++) {
        op->interior[b] = !d->cell_boundary[b];
        op->overlap |= op->interior[b] && op->cells[b].nelem > 0;
    }
}

int op_update_ctx(Operator *op) {
    return op->dev->ops.upload(op->dev, op->ctx, op->phys.ctx, op->phys.ctx_bytes);
}

int op_set_dirichlet(Operator *op, int64_t n, const int32_t *dofs) {
    Device *d = op->dev;
    device_free(d, op->dir);
    device_free(d, op->dir_tmp);
    device_free(d, op->ones);
    free(op->dir_host);
    op->dir = NULL;
    op->dir_host = NULL;
    op->dir_tmp = op->ones = NULL;
    op->ndir = n;
    if (n == 0) return FEM_OK;
    FEM_ALLOC(op->dir_host, n, "constrained dofs");
    /* the owned dofs first, each part in the given order (the overlapped Jacobian sets the ghosts aside after
     * the exchange: op_jacobian) */
    int64_t k = 0, nowned = op->space->ndofs_owned;
    for (int64_t i = 0; i < n; i++)
        if (dofs[i] < nowned) op->dir_host[k++] = dofs[i];
    op->ndir_owned = k;
    for (int64_t i = 0; i < n; i++)
        if (dofs[i] >= nowned) op->dir_host[k++] = dofs[i];
    dofs = op->dir_host;
    FEM_TRY(device_alloc_copy(d, (void **)&op->dir, dofs, sizeof(int32_t) * (size_t)n));
    FEM_TRY(op_alloc_zero(op, &op->dir_tmp, n));
    FEM_TRY(op_alloc_zero(op, &op->ones, n));
    double one = 1.0;
    return d->ops.fill(d, n, 1, &one, op->ones);
}

int op_set_source(Operator *op, int b, const double *src) {
    OpBlock *blk = &op->cells[b];
    device_free(op->dev, blk->src);
    blk->src = NULL;
    if (!src) return FEM_OK;
    return device_alloc_copy(op->dev, (void **)&blk->src, src,
                             sizeof(double) * (size_t)(blk->nelem * blk->basis.tables.nq * op->phys.ncomp));
}

int op_qpoint_coordinates(const Operator *op, int b, double **x) {
    const OpBlock *blk = &op->cells[b];
    int nq = blk->basis.tables.nq, d = op->space->mesh->dim;
    double *geo = malloc(sizeof(double) * (size_t)(blk->nelem * nq * GEO_STRIDE(d)));
    *x = malloc(sizeof(double) * (size_t)(blk->nelem * nq * 3));
    if (!geo || !*x) {
        free(geo);
        free(*x);
        *x = NULL;
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for q-point coordinates");
    }
    int status = geometry_cells(op->space->mesh, b, &blk->basis.tables.quad, blk->nelem, NULL, geo, *x);
    free(geo);
    return status;
}

/* ---------------------------------------------------------------- the shared layer */

int op_residual(Operator *op, const Vec *u, Vec *r) {
    FEM_TRY(op_residual_unconstrained(op, u, r));
    if (op->ndir) FEM_TRY(op->dev->ops.scatter(op->dev, op->ndir, op->dir, NULL, r->data));
    return FEM_OK;
}

/* dir_tmp[first .. first + n) = v's entries at dir[first ..], which become 0 (the constrained columns drop
 * out of the element loop). */
static int set_aside(Operator *op, int64_t first, int64_t n, Vec *v) {
    Device *d = op->dev;
    if (n == 0) return FEM_OK;
    if (d->ops.take) return d->ops.take(d, n, op->dir + first, v->data, op->dir_tmp + first);
    FEM_TRY(d->ops.gather(d, n, op->dir + first, v->data, op->dir_tmp + first));
    return d->ops.scatter(d, n, op->dir + first, NULL, v->data);
}

/* The element entry `run` (the residual or the Jacobian's action) on `in` with the halo's forward exchange of
 * `in` travelling meanwhile: the interior blocks, the end of the exchange, the boundary blocks. With `aside`
 * (the Jacobian: its constrained columns drop out), in's constrained entries are set aside into dir_tmp and
 * zeroed in place: the owned ones once the exchange has read them (in the device's order), the ghosts once
 * they have arrived; the caller puts them back. */
static int overlapped(Operator *op, int (*run)(Operator *, const Vec *, Vec *), Vec *in, Vec *out,
                      int aside) {
    FEM_TRY(halo_forward_begin(op->halo, in));
    int status = aside ? set_aside(op, 0, op->ndir_owned, in) : FEM_OK;
    op->phase = OP_PHASE_INTERIOR;
    if (!status) status = run(op, in, out);
    op->phase = OP_PHASE_ALL;
    int ended = halo_forward_end(op->halo, in); /* always: the exchange must not stay in flight */
    FEM_TRY(status);
    FEM_TRY(ended);
    if (aside) FEM_TRY(set_aside(op, op->ndir_owned, op->ndir - op->ndir_owned, in));
    op->phase = OP_PHASE_BOUNDARY;
    status = run(op, in, out);
    op->phase = OP_PHASE_ALL;
    return status;
}

int op_residual_unconstrained(Operator *op, const Vec *u, Vec *r) {
    op->evaluations++;
    /* u's ghosts are copies of their owners' entries: refreshing them leaves u the same vector */
    if (op->halo && op->overlap)
        FEM_TRY(overlapped(op, op->ops.residual, (Vec *)u, r, 0));
    else {
        if (op->halo) FEM_TRY(halo_forward(op->halo, (Vec *)u));
        FEM_TRY(op->ops.residual(op, u, r));
    }
    return op->halo ? halo_reverse_add(op->halo, r) : FEM_OK;
}

/* v's constrained entries back from dir_tmp, and Jv's identity rows (the same values) over what the element
 * loop and any sums left there: one pass where the device has put2. */
static int put_back(Operator *op, Vec *v, Vec *Jv) {
    Device *d = op->dev;
    if (!op->ndir) return FEM_OK;
    if (d->ops.put2) return d->ops.put2(d, op->ndir, op->dir, op->dir_tmp, v->data, Jv->data);
    FEM_TRY(d->ops.scatter(d, op->ndir, op->dir, op->dir_tmp, v->data));
    return d->ops.scatter(d, op->ndir, op->dir, op->dir_tmp, Jv->data);
}

int op_jacobian(Operator *op, const Vec *v, Vec *Jv) {
    Device *d = op->dev;
    op->applications++;
    FEM_TRY(vec_zero(Jv));
    /* the constrained columns drop out: v's constrained entries are set aside, zeroed for the element loop
     * and put back (two small scatters where a copy of v moved the whole vector twice); over ranks with the
     * overlap, the owned ones once the exchange has read them and the ghosts once they have arrived */
    int status;
    if (op->halo && op->overlap)
        status = overlapped(op, op->ops.apply_add, (Vec *)v, Jv, op->ndir > 0);
    else {
        if (op->halo) FEM_TRY(halo_forward(op->halo, (Vec *)v));
        FEM_TRY(set_aside(op, 0, op->ndir, (Vec *)v));
        status = op->ops.apply_add(op, v, Jv);
    }
    if (!op->halo) {
        int back = put_back(op, (Vec *)v, Jv);
        FEM_TRY(status);
        return back;
    }
    int back = op->ndir ? d->ops.scatter(d, op->ndir, op->dir, op->dir_tmp, v->data) : FEM_OK;
    FEM_TRY(status);
    FEM_TRY(back);
    if (op->halo) FEM_TRY(halo_reverse_add(op->halo, Jv));
    /* identity rows, after the sums: a ghost's partial sum in such a row is dropped */
    if (op->ndir) FEM_TRY(d->ops.scatter(d, op->ndir, op->dir, op->dir_tmp, Jv->data));
    return FEM_OK;
}

/* The element loop of Jv (its constrained columns set aside) with the halo's share exchange of Jv: over
 * ranks with the overlap, the boundary blocks, the exchange's start, the interior blocks (which touch no
 * shared dof) while it travels, its end. */
static int shared_apply(Operator *op, const Vec *v, Vec *Jv) {
    if (!op->overlap) {
        FEM_TRY(op->ops.apply_add(op, v, Jv));
        return halo_share(op->halo, Jv);
    }
    op->phase = OP_PHASE_BOUNDARY;
    int status = op->ops.apply_add(op, v, Jv);
    op->phase = OP_PHASE_ALL;
    FEM_TRY(status);
    FEM_TRY(halo_share_begin(op->halo, Jv));
    op->phase = OP_PHASE_INTERIOR;
    status = op->ops.apply_add(op, v, Jv);
    op->phase = OP_PHASE_ALL;
    int ended = halo_share_end(op->halo, Jv); /* always: the exchange must not stay in flight */
    FEM_TRY(status);
    return ended;
}

int op_jacobian_consistent(Operator *op, const Vec *v, Vec *Jv) {
    if (!op->halo) return op_jacobian(op, v, Jv);
    op->applications++;
    FEM_TRY(vec_zero(Jv));
    FEM_TRY(set_aside(op, 0, op->ndir, (Vec *)v));
    int status = shared_apply(op, v, Jv);
    /* the identity rows over the sums: a partial sum in such a row is dropped */
    int back = put_back(op, (Vec *)v, Jv);
    FEM_TRY(status);
    return back;
}

int op_diagonal(Operator *op, Vec *diag) {
    FEM_TRY(op->ops.diagonal(op, diag));
    if (op->halo) FEM_TRY(halo_reverse_add(op->halo, diag));
    if (op->ndir) FEM_TRY(op->dev->ops.scatter(op->dev, op->ndir, op->dir, op->ones, diag->data));
    /* the ghosts too hold the whole diagonal, so that a preconditioner built from it is defined everywhere */
    return op->halo ? halo_forward(op->halo, diag) : FEM_OK;
}
