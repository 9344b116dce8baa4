/* Transfers between orders (see transfer.h). */
#include "transfer.h"

#include "error.h"
#include "halo.h"
#include "tables.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 / (the number of cells that share each node), for every component of every node; with a halo, the cells
 * of every rank (the counts summed into the owners, then forwarded to the ghosts). */
static int inverse_multiplicity(const Space *sp, int ncomp, Halo *halo, Vec *v) {
    double *h = calloc((size_t)sp->nnodes * ncomp + 1, sizeof *h);
    if (!h) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    for (int b = 0; b < sp->ncell_blocks; b++)
        for (int64_t k = 0; k < sp->cells[b].count * sp->cells[b].ndof; k++) h[(int64_t)sp->cells[b].dofs[k] * ncomp]++;
    for (int64_t n = 0; n < sp->nnodes; n++)
        for (int c = 1; c < ncomp; c++) h[n * ncomp + c] = h[n * ncomp];
    int status = vec_upload(v, h);
    if (!status && halo) status = halo_reverse_add(halo, v);
    if (!status && halo) status = halo_forward(halo, v);
    if (!status) status = vec_download(v, h);
    for (int64_t i = 0; i < sp->nnodes * ncomp && !status; i++) h[i] = h[i] > 0 ? 1.0 / h[i] : 0.0;
    if (!status) status = vec_upload(v, h);
    free(h);
    return status;
}

/* ---- the transfers as node matrices (Transfer.nodal) */

typedef struct {
    int64_t nrows, nnz;
    int32_t *ptr, *col;
    double *val;
} HostRows;

static void host_rows_free(HostRows *h) {
    free(h->ptr), free(h->col), free(h->val);
    memset(h, 0, sizeof *h);
}

/* tab[b] = the basis of C's order at the lattice points of R's order on block b's shape: [ndof_R][ndof_C] */
static int block_table(const SpaceBlock *rb, const SpaceBlock *cb, double **tab) {
    double *pts = malloc(sizeof(double) * 3 * (size_t)rb->ndof);
    ElementTables et;
    memset(&et, 0, sizeof et);
    *tab = malloc(sizeof(double) * (size_t)(rb->ndof * cb->ndof));
    int status = pts && *tab ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    if (!status) {
        lattice_points(rb->shape, rb->order, 0, pts);
        status = tables_create_at(cb->shape, cb->order, rb->ndof, pts, &et);
    }
    if (!status) memcpy(*tab, et.B, sizeof(double) * (size_t)(rb->ndof * cb->ndof));
    tables_destroy(&et);
    free(pts);
    return status;
}

/* Row r of space R's node r from the first cell that has it: that cell's table row (C's basis at the node),
 * its columns C's nodes; entries below 1e-14 of the row's largest (the tables' round-off of exact zeros) are
 * left out. pass 0 counts the entries per row into h->ptr[r + 1], pass 1 fills them. */
static void block_rows(const SpaceBlock *rb, const SpaceBlock *cb, const double *tab, char *seen, HostRows *h,
                       int pass) {
    for (int64_t e = 0; e < rb->count; e++)
        for (int i = 0; i < rb->ndof; i++) {
            fem_idx r = rb->dofs[e * rb->ndof + i];
            if (seen[r] > pass) continue;
            seen[r] = (char)(pass + 1);
            const double *w = &tab[i * cb->ndof];
            double big = 0.0;
            for (int j = 0; j < cb->ndof; j++) big = fmax(big, fabs(w[j]));
            for (int j = 0; j < cb->ndof; j++) {
                if (fabs(w[j]) <= 1e-14 * big) continue;
                if (pass == 0) h->ptr[r + 1]++;
                else h->col[h->ptr[r]] = (int32_t)cb->dofs[e * cb->ndof + j], h->val[h->ptr[r]++] = w[j];
            }
        }
}

/* The rows of every node of R (P: R fine, C coarse; I: R coarse, C fine). */
static int node_rows(const Space *R, const Space *C, HostRows *h) {
    int nb = R->ncell_blocks;
    double *tab[MESH_MAX_BLOCKS] = {0};
    char *seen = calloc((size_t)R->nnodes + 1, 1);
    h->nrows = R->nnodes;
    h->ptr = calloc((size_t)R->nnodes + 2, sizeof(int32_t));
    int status = seen && h->ptr ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    for (int b = 0; b < nb && !status; b++) status = block_table(&R->cells[b], &C->cells[b], &tab[b]);
    for (int b = 0; b < nb && !status; b++) block_rows(&R->cells[b], &C->cells[b], tab[b], seen, h, 0);
    for (int64_t r = 0; r < R->nnodes && !status; r++) h->ptr[r + 1] += h->ptr[r];
    h->nnz = status ? 0 : h->ptr[R->nnodes];
    h->col = malloc(sizeof(int32_t) * (size_t)(h->nnz + 1));
    h->val = malloc(sizeof(double) * (size_t)(h->nnz + 1));
    if (!status && !(h->col && h->val))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    /* filled through ptr[r] as a cursor, which ends at the next row's start: shifted back after */
    for (int b = 0; b < nb && !status; b++) block_rows(&R->cells[b], &C->cells[b], tab[b], seen, h, 1);
    for (int64_t r = R->nnodes; r > 0 && !status; r--) h->ptr[r] = h->ptr[r - 1];
    if (!status) h->ptr[0] = 0;
    for (int b = 0; b < nb; b++) free(tab[b]);
    free(seen);
    if (status) host_rows_free(h);
    return status;
}

/* The transpose of a's first nuse rows (a: nrows x ncols), rows in increasing order within each column. */
static int transpose_rows(const HostRows *a, int64_t nuse, int64_t ncols, HostRows *t) {
    t->nrows = ncols;
    t->nnz = a->ptr[nuse];
    t->ptr = calloc((size_t)ncols + 2, sizeof(int32_t));
    t->col = malloc(sizeof(int32_t) * (size_t)(t->nnz + 1));
    t->val = malloc(sizeof(double) * (size_t)(t->nnz + 1));
    if (!t->ptr || !t->col || !t->val) {
        host_rows_free(t);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    }
    for (int32_t k = 0; k < a->ptr[nuse]; k++) t->ptr[a->col[k] + 2]++;
    for (int64_t c = 0; c < ncols; c++) t->ptr[c + 2] += t->ptr[c + 1];
    for (int64_t r = 0; r < nuse; r++)
        for (int32_t k = a->ptr[r]; k < a->ptr[r + 1]; k++) {
            int32_t at = t->ptr[a->col[k] + 1]++;
            t->col[at] = (int32_t)r, t->val[at] = a->val[k];
        }
    return FEM_OK;
}

static int upload_rows(Device *dev, const HostRows *h, NodeMatrix *m) {
    m->nrows = h->nrows;
    FEM_TRY(device_alloc_copy(dev, (void **)&m->ptr, h->ptr, sizeof(int32_t) * (size_t)(h->nrows + 1)));
    FEM_TRY(device_alloc_copy(dev, (void **)&m->col, h->col, sizeof(int32_t) * (size_t)(h->nnz + 1)));
    return device_alloc_copy(dev, (void **)&m->val, h->val, sizeof(double) * (size_t)(h->nnz + 1));
}

static void node_matrix_destroy(Device *dev, NodeMatrix *m) {
    device_free(dev, m->ptr), device_free(dev, m->col), device_free(dev, m->val);
    memset(m, 0, sizeof *m);
}

/* PT from P's rows (read back from t->P, not built again) of the fine nodes counted once: the owned ones over
 * MPI ranks (their values are the owners'), all of them in one process. */
static int restriction_rows(Transfer *t, int64_t nuse) {
    Device *d = t->dev;
    HostRows p = {.nrows = t->P.nrows}, pt = {0};
    node_matrix_destroy(d, &t->PT);
    p.ptr = malloc(sizeof(int32_t) * (size_t)(p.nrows + 1));
    int status = p.ptr ? d->ops.download(d, p.ptr, t->P.ptr, sizeof(int32_t) * (size_t)(p.nrows + 1))
                       : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    if (!status) {
        p.nnz = p.ptr[p.nrows];
        p.col = malloc(sizeof(int32_t) * (size_t)(p.nnz + 1));
        p.val = malloc(sizeof(double) * (size_t)(p.nnz + 1));
        status = p.col && p.val ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    }
    if (!status) status = d->ops.download(d, p.col, t->P.col, sizeof(int32_t) * (size_t)(p.nnz + 1));
    if (!status) status = d->ops.download(d, p.val, t->P.val, sizeof(double) * (size_t)(p.nnz + 1));
    if (!status) status = transpose_rows(&p, nuse, t->coarse->nnodes, &pt);
    if (!status) status = upload_rows(d, &pt, &t->PT);
    host_rows_free(&p);
    host_rows_free(&pt);
    return status;
}

static int nodal_create(Transfer *t) {
    HostRows p = {0}, in = {0};
    int status = node_rows(t->fine, t->coarse, &p);
    if (!status) status = upload_rows(t->dev, &p, &t->P);
    if (!status) status = node_rows(t->coarse, t->fine, &in);
    if (!status) status = upload_rows(t->dev, &in, &t->I);
    host_rows_free(&p);
    host_rows_free(&in);
    return status ? status : restriction_rows(t, t->fine->nnodes);
}

static int node_apply(Transfer *t, const NodeMatrix *m, const Vec *x, Vec *y) {
    Device *d = t->dev;
    return d->ops.node_spmv(d, m->nrows, t->ncomp, m->ptr, m->col, m->val, x->data, y->data);
}

/* The tables of one cell block: identities, and each order's basis at the other's nodes. */
static int block_tables(TransferBlock *tb, Device *dev, Shape s, int pf, int pc) {
    int nf = lattice_count(s, pf), nc = lattice_count(s, pc);
    double *xf = malloc(sizeof(double) * 3 * (size_t)nf), *xc = malloc(sizeof(double) * 3 * (size_t)nc);
    int status = xf && xc ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a transfer");
    if (!status) {
        lattice_points(s, pf, 0, xf);
        lattice_points(s, pc, 0, xc);
        status = basis_create_identity(&tb->ident_f, dev, s, pf);
    }
    if (!status) status = basis_create_identity(&tb->ident_c, dev, s, pc);
    if (!status) status = basis_create_at(&tb->c_at_f, dev, s, pc, nf, xf);
    if (!status) status = basis_create_at(&tb->f_at_c, dev, s, pf, nc, xc);
    free(xf);
    free(xc);
    return status;
}

static int block_create(Transfer *t, int bi) {
    const SpaceBlock *sf = &t->fine->cells[bi], *sc = &t->coarse->cells[bi];
    TransferBlock *tb = &t->b[bi];
    int64_t ne = sf->count, nc = t->ncomp;
    FEM_TRY(restriction_create(&tb->rf, t->dev, ne, sf->ndof, t->fine->nnodes, sf->dofs, sf->t_offsets,
                               sf->t_slots));
    FEM_TRY(restriction_create(&tb->rc, t->dev, ne, sc->ndof, t->coarse->nnodes, sc->dofs, sc->t_offsets,
                               sc->t_slots));
    FEM_TRY(block_tables(tb, t->dev, sf->shape, sf->order, sc->order));
    double **arrays[] = {&tb->ef, &tb->evf, &tb->ec, &tb->evc};
    int64_t counts[] = {ne * sf->ndof * nc, ne * sf->ndof * nc, ne * sc->ndof * nc, ne * sc->ndof * nc};
    for (int i = 0; i < 4; i++) FEM_TRY(device_alloc(t->dev, (void **)arrays[i], sizeof(double) * (size_t)(counts[i] + 1)));
    return FEM_OK;
}

int transfer_create(Transfer *t, Device *dev, const Space *fine, const Space *coarse, int ncomp) {
    memset(t, 0, sizeof *t);
    t->dev = dev;
    t->fine = fine;
    t->coarse = coarse;
    t->ncomp = ncomp;
    t->nblocks = fine->ncell_blocks;
    const char *env = getenv("FEMTO_TRANSFER_ELEMENTS");
    t->nodal = dev->ops.node_spmv && !(env && strcmp(env, "1") == 0);
    if (t->nodal) {
        int status = nodal_create(t);
        if (status) transfer_destroy(t);
        return status;
    }
    int status = vec_create(&t->inv_mult_f, dev, fine->nnodes * ncomp);
    if (!status) status = vec_create(&t->inv_mult_c, dev, coarse->nnodes * ncomp);
    if (!status) status = vec_create(&t->tmp_f, dev, fine->nnodes * ncomp);
    if (!status) status = inverse_multiplicity(fine, ncomp, NULL, &t->inv_mult_f);
    if (!status) status = inverse_multiplicity(coarse, ncomp, NULL, &t->inv_mult_c);
    for (int b = 0; b < t->nblocks && !status; b++) status = block_create(t, b);
    if (status) transfer_destroy(t);
    return status;
}

void transfer_destroy(Transfer *t) {
    if (!t->dev) return;
    NodeMatrix *ms[] = {&t->P, &t->PT, &t->I};
    for (int i = 0; i < 3; i++) node_matrix_destroy(t->dev, ms[i]);
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) {
        TransferBlock *tb = &t->b[b];
        restriction_destroy(&tb->rf);
        restriction_destroy(&tb->rc);
        Basis *bases[] = {&tb->ident_f, &tb->ident_c, &tb->c_at_f, &tb->f_at_c};
        for (int i = 0; i < 4; i++) basis_destroy(bases[i]);
        double *arrays[] = {tb->ef, tb->evf, tb->ec, tb->evc};
        for (int i = 0; i < 4; i++) device_free(t->dev, arrays[i]);
    }
    vec_destroy(&t->inv_mult_f);
    vec_destroy(&t->inv_mult_c);
    vec_destroy(&t->inv_mult_all_f);
    vec_destroy(&t->tmp_f);
    memset(t, 0, sizeof *t);
}

int transfer_set_halo(Transfer *t, Halo *fine, Halo *coarse) {
    t->halo_f = fine;
    t->halo_c = coarse;
    vec_destroy(&t->inv_mult_all_f);
    if (t->nodal) return restriction_rows(t, fine ? t->fine->nnodes_owned : t->fine->nnodes);
    if (!fine) return FEM_OK;
    /* t->ncomp components, not the space's: the auxiliary field's transfer is scalar on a vector space */
    FEM_TRY(vec_create_split(&t->inv_mult_all_f, t->dev, t->fine->nnodes * t->ncomp,
                             t->fine->nnodes_owned * t->ncomp));
    return inverse_multiplicity(t->fine, t->ncomp, fine, &t->inv_mult_all_f);
}

/* out = sum over cells of P_out^T (B_to element values of `in`): the element values of `in` through the
 * table `from` (interpolation at `to`'s nodes), summed into `out`'s nodes through the identity `to`. */
static int element_map(Transfer *t, const Restriction *rin, const Basis *from, const Restriction *rout,
                       const Basis *to, double *e, double *ev, const Vec *in, Vec *out) {
    Device *d = t->dev;
    ElemView vin = elem_view(rin, from, t->ncomp), vout = elem_view(rout, to, t->ncomp);
    FEM_TRY(d->ops.interpolate(d, &vin, in->data, e, NULL));
    return d->ops.integrate(d, &vout, e, NULL, out->data, ev);
}

/* The input's ghosts from their owners (a ghost's value is a copy: the vector stays the same). */
static int refresh(Halo *h, const Vec *in) {
    return h ? halo_forward(h, (Vec *)in) : FEM_OK;
}

int transfer_prolong(Transfer *t, const Vec *uc, Vec *uf) {
    if (t->nodal) return node_apply(t, &t->P, uc, uf);
    FEM_TRY(vec_zero(uf));
    for (int b = 0; b < t->nblocks; b++) {
        TransferBlock *tb = &t->b[b];
        FEM_TRY(element_map(t, &tb->rc, &tb->c_at_f, &tb->rf, &tb->ident_f, tb->ef, tb->evf, uc, uf));
    }
    return vec_pointwise_mult(&t->inv_mult_f, uf, uf);
}

int transfer_restrict(Transfer *t, const Vec *rf, Vec *rc) {
    if (t->nodal) {
        FEM_TRY(node_apply(t, &t->PT, rf, rc));
        return t->halo_c ? halo_share(t->halo_c, rc) : FEM_OK;
    }
    FEM_TRY(vec_pointwise_mult(t->halo_f ? &t->inv_mult_all_f : &t->inv_mult_f, rf, &t->tmp_f));
    FEM_TRY(vec_zero(rc));
    Device *d = t->dev;
    for (int b = 0; b < t->nblocks; b++) { /* gather the fine element values, integrate against the coarse basis */
        TransferBlock *tb = &t->b[b];
        ElemView vf = elem_view(&tb->rf, &tb->ident_f, t->ncomp);
        ElemView vc = elem_view(&tb->rc, &tb->c_at_f, t->ncomp);
        FEM_TRY(d->ops.interpolate(d, &vf, t->tmp_f.data, tb->ef, NULL));
        FEM_TRY(d->ops.integrate(d, &vc, tb->ef, NULL, rc->data, tb->evc));
    }
    return t->halo_c ? halo_share(t->halo_c, rc) : FEM_OK;
}

int transfer_inject(Transfer *t, const Vec *uf, Vec *uc) {
    if (!t->fine_consistent) FEM_TRY(refresh(t->halo_f, uf));
    if (t->nodal) return node_apply(t, &t->I, uf, uc);
    FEM_TRY(vec_zero(uc));
    for (int b = 0; b < t->nblocks; b++) {
        TransferBlock *tb = &t->b[b];
        FEM_TRY(element_map(t, &tb->rf, &tb->f_at_c, &tb->rc, &tb->ident_c, tb->ec, tb->evc, uf, uc));
    }
    return vec_pointwise_mult(&t->inv_mult_c, uc, uc);
}
