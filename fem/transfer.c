/* Transfers between orders (see transfer.h). */
#include "transfer.h"

#include "error.h"
#include "halo.h"

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
    FEM_TRY(vec_zero(uf));
    for (int b = 0; b < t->nblocks; b++) {
        TransferBlock *tb = &t->b[b];
        FEM_TRY(element_map(t, &tb->rc, &tb->c_at_f, &tb->rf, &tb->ident_f, tb->ef, tb->evf, uc, uf));
    }
    return vec_pointwise_mult(&t->inv_mult_f, uf, uf);
}

int transfer_restrict(Transfer *t, const Vec *rf, Vec *rc) {
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
    FEM_TRY(vec_zero(uc));
    for (int b = 0; b < t->nblocks; b++) {
        TransferBlock *tb = &t->b[b];
        FEM_TRY(element_map(t, &tb->rf, &tb->f_at_c, &tb->rc, &tb->ident_c, tb->ec, tb->evc, uf, uc));
    }
    return vec_pointwise_mult(&t->inv_mult_c, uc, uc);
}
