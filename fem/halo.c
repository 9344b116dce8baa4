/* Halo exchanges on Vecs (see halo.h). */
#include "halo.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

/* Node lists of a Dist as dof lists (components interleaved) with per-neighbour dof offsets. */
static void expand(const int32_t *nodes, const int64_t *off, int nnbr, int ncomp, int32_t *dofs,
                   int64_t *dof_off) {
    for (int i = 0; i <= nnbr; i++) dof_off[i] = off[i] * ncomp;
    for (int64_t k = 0; k < off[nnbr]; k++)
        for (int c = 0; c < ncomp; c++) dofs[k * ncomp + c] = nodes[k] * ncomp + c;
}

/* The distinct dofs of send[] (idx) and the slot of each position (slot); returns their count. */
static int sum_list(const int32_t *send, int64_t nsend, int64_t nowned, int32_t *idx, int32_t *slot,
                    int64_t *n) {
    int32_t *first = malloc(sizeof(int32_t) * (size_t)(nowned + 1));
    if (!first) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    for (int64_t i = 0; i < nowned; i++) first[i] = -1;
    *n = 0;
    for (int64_t k = 0; k < nsend; k++) {
        if (first[send[k]] < 0) first[send[k]] = (int32_t)*n, idx[(*n)++] = send[k];
        slot[k] = first[send[k]];
    }
    free(first);
    return FEM_OK;
}

static int upload_list(Device *dev, int32_t **dst, const int32_t *src, int64_t n) {
    return device_alloc_copy(dev, (void **)dst, src, sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
}

/* n doubles on the device and n on the host. */
static int alloc_both(Device *dev, double **d, double **h, int64_t n) {
    size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
    FEM_TRY(device_alloc(dev, (void **)d, bytes));
    *h = malloc(bytes);
    return *h ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
}

static int halo_lists(Halo *h, const Dist *d, int32_t *send, int32_t *recv, int32_t *sum) {
    expand(d->send, d->send_off, d->nnbr, h->ncomp, send, h->send_off);
    expand(d->recv, d->recv_off, d->nnbr, h->ncomp, recv, h->recv_off);
    FEM_TRY(sum_list(send, h->nsend, d->space.ndofs_owned, sum, h->sum_slot, &h->nsum));
    FEM_TRY(upload_list(h->dev, &h->send_idx, send, h->nsend));
    FEM_TRY(upload_list(h->dev, &h->recv_idx, recv, h->nrecv));
    FEM_TRY(upload_list(h->dev, &h->sum_idx, sum, h->nsum));
    FEM_TRY(alloc_both(h->dev, &h->send_dev, &h->send_host, h->nsend));
    FEM_TRY(alloc_both(h->dev, &h->recv_dev, &h->recv_host, h->nrecv));
    return alloc_both(h->dev, &h->sum_dev, &h->sum_host, h->nsum);
}

int halo_create(Halo *h, const Dist *d, Device *dev, int ncomp) {
    memset(h, 0, sizeof *h);
    h->dist = d;
    h->dev = dev;
    h->ncomp = ncomp;
    h->nnbr = d->nnbr;
    h->nbr = d->nbr;
    h->nsend = d->send_off[d->nnbr] * ncomp;
    h->nrecv = d->recv_off[d->nnbr] * ncomp;
    int32_t *send = malloc(sizeof(int32_t) * (size_t)(h->nsend + 1));
    int32_t *recv = malloc(sizeof(int32_t) * (size_t)(h->nrecv + 1));
    int32_t *sum = malloc(sizeof(int32_t) * (size_t)(h->nsend + 1));
    h->sum_slot = malloc(sizeof(int32_t) * (size_t)(h->nsend + 1));
    h->send_off = malloc(sizeof(int64_t) * (size_t)(d->nnbr + 1));
    h->recv_off = malloc(sizeof(int64_t) * (size_t)(d->nnbr + 1));
    int status = send && recv && sum && h->sum_slot && h->send_off && h->recv_off
                     ? halo_lists(h, d, send, recv, sum)
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    free(send);
    free(recv);
    free(sum);
    if (status) halo_destroy(h);
    return status;
}

void halo_destroy(Halo *h) {
    if (h->dev) {
        int32_t *lists[] = {h->send_idx, h->recv_idx, h->sum_idx};
        double *bufs[] = {h->send_dev, h->recv_dev, h->sum_dev};
        for (int i = 0; i < 3; i++) device_free(h->dev, lists[i]), device_free(h->dev, bufs[i]);
    }
    free(h->send_off);
    free(h->recv_off);
    free(h->sum_slot);
    free(h->send_host);
    free(h->recv_host);
    free(h->sum_host);
    memset(h, 0, sizeof *h);
}

static int check_idle(const Halo *h, const Vec *v) {
    if (h->pending) return fem_fail(FEM_ERR_INTERNAL, "a halo exchange began before the previous one ended");
    if (v->dev != h->dev) return fem_fail(FEM_ERR_INTERNAL, "a halo exchange on a vector of another device");
    return FEM_OK;
}

/* n entries of v at device indices idx into the host buffer (through the device buffer). */
static int gather_to_host(Halo *h, const Vec *v, int64_t n, const int32_t *idx, double *dev, double *host) {
    if (n == 0) return FEM_OK;
    FEM_TRY(h->dev->ops.gather(h->dev, n, idx, v->data, dev));
    return h->dev->ops.download(h->dev, host, dev, sizeof(double) * (size_t)n);
}

/* The host buffer into v at device indices idx. */
static int scatter_from_host(Halo *h, Vec *v, int64_t n, const int32_t *idx, double *dev,
                             const double *host) {
    if (n == 0) return FEM_OK;
    FEM_TRY(h->dev->ops.upload(h->dev, dev, host, sizeof(double) * (size_t)n));
    return h->dev->ops.scatter(h->dev, n, idx, dev, v->data);
}

/* Posts v's exchange, its send buffer staged: forward sends the owned values (send lists) to the ghosts;
 * reverse sends the ghosts' values the other way, so the receive list's layout is sent and the send list's
 * received. */
static int post(Halo *h, Vec *v, int reverse) {
    const int64_t *so = reverse ? h->recv_off : h->send_off, *ro = reverse ? h->send_off : h->recv_off;
    double *sb = reverse ? h->recv_host : h->send_host, *rb = reverse ? h->send_host : h->recv_host;
    FEM_TRY(comm_exchange_begin(&h->x, h->nnbr, h->nbr, so, sb, ro, rb));
    h->pending = v;
    h->pending_reverse = reverse;
    return FEM_OK;
}

/* Waits for v's exchange in that direction. */
static int arrive(Halo *h, Vec *v, int reverse) {
    if (h->pending != v || h->pending_reverse != reverse)
        return fem_fail(FEM_ERR_INTERNAL, "a halo exchange ended without its begin");
    h->pending = NULL;
    return comm_exchange_end(&h->x);
}

int halo_forward_begin(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(check_idle(h, v));
    FEM_TRY(gather_to_host(h, v, h->nsend, h->send_idx, h->send_dev, h->send_host));
    return post(h, v, 0);
}

int halo_forward_end(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(arrive(h, v, 0));
    return scatter_from_host(h, v, h->nrecv, h->recv_idx, h->recv_dev, h->recv_host);
}

int halo_forward(Halo *h, Vec *v) {
    FEM_TRY(halo_forward_begin(h, v));
    return halo_forward_end(h, v);
}

int halo_reverse_begin(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(check_idle(h, v));
    FEM_TRY(gather_to_host(h, v, h->nrecv, h->recv_idx, h->recv_dev, h->recv_host));
    if (h->nrecv) FEM_TRY(h->dev->ops.scatter(h->dev, h->nrecv, h->recv_idx, NULL, v->data));
    return post(h, v, 1);
}

int halo_reverse_end(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(arrive(h, v, 1));
    FEM_TRY(gather_to_host(h, v, h->nsum, h->sum_idx, h->sum_dev, h->sum_host));
    for (int64_t k = 0; k < h->nsend; k++) h->sum_host[h->sum_slot[k]] += h->send_host[k];
    return scatter_from_host(h, v, h->nsum, h->sum_idx, h->sum_dev, h->sum_host);
}

int halo_reverse_add(Halo *h, Vec *v) {
    FEM_TRY(halo_reverse_begin(h, v));
    return halo_reverse_end(h, v);
}

int halo_contiguous_numbers(Halo *h, int64_t *first, int64_t *g) {
    const Space *sp = &h->dist->space;
    int64_t n = sp->nnodes * h->ncomp, nowned = sp->nnodes_owned * h->ncomp;
    FEM_TRY(comm_prefix_sum(nowned, first));
    /* as doubles, exact below 2^53 dofs */
    double *x = malloc(sizeof(double) * (size_t)(n + 1));
    if (!x) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a global numbering");
    for (int64_t i = 0; i < n; i++) x[i] = i < nowned ? (double)(*first + i) : -1.0;
    Vec v = {0};
    int status = vec_create_split(&v, h->dev, n, nowned);
    if (!status) status = vec_upload(&v, x);
    if (!status) status = halo_forward(h, &v);
    if (!status) status = vec_download(&v, x);
    for (int64_t i = 0; i < n && !status; i++) g[i] = (int64_t)x[i];
    vec_destroy(&v);
    free(x);
    return status;
}
