/* Halo exchanges on Vecs (see halo.h). */
#include "halo.h"

#include "error.h"

#include <stdio.h>
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

/* n doubles: on the device for the direct path, on the host for the staged one (pinned and mapped on a GPU,
 * so that the device's gather and scatter read and write them without a copy). */
static int alloc_both(Halo *h, double **d, double **host, int64_t n) {
    size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
    return h->direct ? device_alloc(h->dev, (void **)d, bytes)
                     : device_host_alloc(h->dev, (void **)host, bytes);
}

/* The direct path's layers (see Halo): slot[k] is the distinct-dof index of position k (sum_list). */
static int halo_layers(Halo *h, const int32_t *send, const int32_t *slot) {
    int32_t *seen = calloc((size_t)h->nsum + 1, sizeof(int32_t)),
            *layer = malloc(sizeof(int32_t) * (size_t)(h->nsend + 1));
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)(h->nsend + 1)),
            *dof = malloc(sizeof(int32_t) * (size_t)(h->nsend + 1));
    int status =
        seen && layer && pos && dof ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    for (int64_t k = 0; !status && k < h->nsend; k++) {
        layer[k] = seen[slot[k]]++;
        if (layer[k] + 1 > h->nlayers) h->nlayers = layer[k] + 1;
    }
    if (!status && !(h->layer_off = calloc((size_t)h->nlayers + 1, sizeof(int64_t))))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    for (int64_t k = 0; !status && k < h->nsend; k++) h->layer_off[layer[k] + 1]++;
    for (int j = 0; !status && j < h->nlayers; j++) h->layer_off[j + 1] += h->layer_off[j];
    for (int j = 0, n = 0; !status && j < h->nlayers; j++) /* in k order within a layer */
        for (int64_t k = 0; k < h->nsend; k++)
            if (layer[k] == j) pos[n] = (int32_t)k, dof[n++] = send[k];
    if (!status) status = upload_list(h->dev, &h->layer_pos, pos, h->nsend);
    if (!status) status = upload_list(h->dev, &h->layer_dof, dof, h->nsend);
    if (!status)
        status = device_alloc(h->dev, (void **)&h->layer_vals, sizeof(double) * (size_t)(h->nsend + 1));
    if (!status)
        status = device_alloc(h->dev, (void **)&h->layer_sums, sizeof(double) * (size_t)(h->nsend + 1));
    free(seen), free(layer), free(pos), free(dof);
    return status;
}

/* The device path's first message between two ranks sets their connection up (NCCL: about a second, measured
 * on two H200s): one double each way with every neighbour, at setup rather than in the first solve.
 * Collective over neighbours, as every halo exchange is. */
static int halo_connect(Halo *h) {
    double *buf = NULL;
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(h->nnbr + 1)), ticket = 0;
    if (!off) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    for (int i = 0; i <= h->nnbr; i++) off[i] = i;
    int status = device_alloc(h->dev, (void **)&buf, sizeof(double) * 2 * (size_t)h->nnbr);
    if (!status) status = h->dev->ops.zero(h->dev, buf, sizeof(double) * 2 * (size_t)h->nnbr);
    if (!status)
        status = h->dev->ops.peer_exchange_begin(h->dev, h->nnbr, h->nbr, off, buf, off, buf + h->nnbr, 0,
                                                 &ticket);
    if (!status) status = h->dev->ops.peer_exchange_end(h->dev, ticket);
    if (!status) status = h->dev->ops.sync(h->dev);
    device_free(h->dev, buf);
    free(off);
    return status;
}

static int halo_lists(Halo *h, const Dist *d, int32_t *send, int32_t *recv, int32_t *sum) {
    expand(d->send, d->send_off, d->nnbr, h->ncomp, send, h->send_off);
    expand(d->recv, d->recv_off, d->nnbr, h->ncomp, recv, h->recv_off);
    FEM_TRY(sum_list(send, h->nsend, d->space.ndofs_owned, sum, h->sum_slot, &h->nsum));
    if (h->direct) FEM_TRY(halo_layers(h, send, h->sum_slot));
    FEM_TRY(upload_list(h->dev, &h->send_idx, send, h->nsend));
    FEM_TRY(upload_list(h->dev, &h->recv_idx, recv, h->nrecv));
    FEM_TRY(upload_list(h->dev, &h->sum_idx, sum, h->nsum));
    FEM_TRY(alloc_both(h, &h->send_dev, &h->send_host, h->nsend));
    FEM_TRY(alloc_both(h, &h->recv_dev, &h->recv_host, h->nrecv));
    FEM_TRY(alloc_both(h, &h->sum_dev, &h->sum_host, h->nsum));
    return h->queued && h->nnbr ? halo_connect(h) : FEM_OK;
}

HaloPath halo_auto_path(const Device *dev) {
    if (dev->ops.peer_ready && dev->ops.peer_ready(dev, NULL, 0)) return HALO_DEVICE;
    return dev->kind == DEV_CUDA && comm_cuda_support().aware ? HALO_DIRECT : HALO_STAGED;
}

void halo_describe(const Halo *h, char *text, size_t size) {
    CommCudaSupport s = comm_cuda_support();
    char why[200] = "";
    if (h->dev && h->dev->ops.peer_ready) h->dev->ops.peer_ready(h->dev, why, sizeof why);
    if (h->queued)
        snprintf(text, size, "%s on the GPU's own queue (device buffers, no host synchronisation)", why);
    else if (h->direct)
        snprintf(text, size, "CUDA-aware MPI (device buffers handed to MPI; %s)", s.why);
    else if (h->dev && h->dev->kind == DEV_CUDA)
        snprintf(text, size, "staged through host (pinned buffers; %s; %s)", why[0] ? why : "no NCCL", s.why);
    else
        snprintf(text, size, "staged through host (%s device)", h->dev ? h->dev->name : "no");
}

int halo_create(Halo *h, const Dist *d, Device *dev, int ncomp) {
    return halo_create_path(h, d, dev, ncomp, HALO_AUTO);
}

int halo_create_path(Halo *h, const Dist *d, Device *dev, int ncomp, HaloPath path) {
    memset(h, 0, sizeof *h);
    /* the device's own exchanges are set up on the first halo of a run (collective: every rank makes it) */
    if ((path == HALO_AUTO || path == HALO_DEVICE) && dev->ops.peer_init) FEM_TRY(dev->ops.peer_init(dev));
    if (path == HALO_AUTO) path = halo_auto_path(dev);
    if (path == HALO_DEVICE && !(dev->ops.peer_ready && dev->ops.peer_ready(dev, NULL, 0)))
        return fem_fail(FEM_ERR_USAGE, "the %s device has no exchanges of its own between ranks", dev->name);
    h->dist = d;
    h->dev = dev;
    h->queued = path == HALO_DEVICE;
    h->direct = path == HALO_DIRECT || h->queued;
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
        int32_t *lists[] = {h->send_idx, h->recv_idx, h->sum_idx, h->layer_pos, h->layer_dof};
        double *bufs[] = {h->send_dev, h->recv_dev, h->sum_dev, h->layer_vals, h->layer_sums};
        for (int i = 0; i < 5; i++) device_free(h->dev, lists[i]), device_free(h->dev, bufs[i]);
        double *hosts[] = {h->send_host, h->recv_host, h->sum_host};
        for (int i = 0; i < 3; i++) device_host_free(h->dev, hosts[i]);
    }
    free(h->send_off);
    free(h->recv_off);
    free(h->sum_slot);
    free(h->layer_off);
    memset(h, 0, sizeof *h);
}

static int check_idle(const Halo *h, const Vec *v) {
    if (h->pending) return fem_fail(FEM_ERR_INTERNAL, "a halo exchange began before the previous one ended");
    if (v->dev != h->dev) return fem_fail(FEM_ERR_INTERNAL, "a halo exchange on a vector of another device");
    return FEM_OK;
}

/* n entries of v at device indices idx into the buffer MPI sends from: the device's own (direct path) or the
 * host's, which the device's gather writes itself (staged path: mapped pinned memory on a GPU, no copy and no
 * second synchronisation); the device's work is finished before MPI reads it. On the device path the
 * exchange is queued behind the gather: nothing waits. */
static int gather_to_host(Halo *h, const Vec *v, int64_t n, const int32_t *idx, double *dev, double *host) {
    if (n == 0) return FEM_OK;
    FEM_TRY(h->dev->ops.gather(h->dev, n, idx, v->data, h->direct ? dev : host));
    if (h->queued) return FEM_OK;
    return h->dev->ops.sync ? h->dev->ops.sync(h->dev) : FEM_OK;
}

/* The received buffer (the device's, or the host's read by the device's scatter in place) into v at device
 * indices idx. The scatter may still run when this returns: the buffer is written again only after the next
 * gather_to_host of this halo, whose synchronisation waits for it. */
static int scatter_from_host(Halo *h, Vec *v, int64_t n, const int32_t *idx, double *dev,
                             const double *host) {
    if (n == 0) return FEM_OK;
    return h->dev->ops.scatter(h->dev, n, idx, h->direct ? dev : host, v->data);
}

/* Posts v's exchange, its send buffer filled: forward sends the owned values (send lists) to the ghosts;
 * reverse sends the ghosts' values the other way, so the receive list's layout is sent and the send list's
 * received. The direct path hands MPI the device buffers. */
static int post(Halo *h, Vec *v, int reverse, int beside) {
    const int64_t *so = reverse ? h->recv_off : h->send_off, *ro = reverse ? h->send_off : h->recv_off;
    double *send = h->direct ? h->send_dev : h->send_host, *recv = h->direct ? h->recv_dev : h->recv_host;
    double *sb = reverse ? recv : send, *rb = reverse ? send : recv;
    if (h->queued)
        FEM_TRY(h->dev->ops.peer_exchange_begin(h->dev, h->nnbr, h->nbr, so, sb, ro, rb, beside, &h->ticket));
    else
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
    return h->queued ? h->dev->ops.peer_exchange_end(h->dev, h->ticket) : comm_exchange_end(&h->x);
}

/* beside: work may run between begin and end (see Device.ops.peer_exchange_begin) */
static int forward_begin(Halo *h, Vec *v, int beside) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(check_idle(h, v));
    FEM_TRY(gather_to_host(h, v, h->nsend, h->send_idx, h->send_dev, h->send_host));
    return post(h, v, 0, beside);
}

int halo_forward_begin(Halo *h, Vec *v) {
    return forward_begin(h, v, 1);
}

int halo_forward_end(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(arrive(h, v, 0));
    return scatter_from_host(h, v, h->nrecv, h->recv_idx, h->recv_dev, h->recv_host);
}

int halo_forward(Halo *h, Vec *v) {
    FEM_TRY(forward_begin(h, v, 0));
    return halo_forward_end(h, v);
}

static int reverse_begin(Halo *h, Vec *v, int beside) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(check_idle(h, v));
    FEM_TRY(gather_to_host(h, v, h->nrecv, h->recv_idx, h->recv_dev, h->recv_host));
    if (h->nrecv) FEM_TRY(h->dev->ops.scatter(h->dev, h->nrecv, h->recv_idx, NULL, v->data));
    return post(h, v, 1, beside);
}

int halo_reverse_begin(Halo *h, Vec *v) {
    return reverse_begin(h, v, 1);
}

/* Direct path: owned entries += the partial sums received into send_dev, layer by layer (distinct dofs in a
 * layer; layers in the order the staged path adds them). */
static int reverse_sum_device(Halo *h, Vec *v) {
    Device *dev = h->dev;
    for (int j = 0; j < h->nlayers; j++) {
        int64_t o = h->layer_off[j], n = h->layer_off[j + 1] - o;
        FEM_TRY(dev->ops.gather(dev, n, h->layer_pos + o, h->send_dev, h->layer_vals));
        FEM_TRY(dev->ops.gather(dev, n, h->layer_dof + o, v->data, h->layer_sums));
        FEM_TRY(dev->ops.axpby(dev, n, 1.0, h->layer_vals, 1.0, h->layer_sums));
        FEM_TRY(dev->ops.scatter(dev, n, h->layer_dof + o, h->layer_sums, v->data));
    }
    return FEM_OK;
}

int halo_reverse_end(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(arrive(h, v, 1));
    if (h->direct) return reverse_sum_device(h, v);
    FEM_TRY(gather_to_host(h, v, h->nsum, h->sum_idx, h->sum_dev, h->sum_host));
    for (int64_t k = 0; k < h->nsend; k++) h->sum_host[h->sum_slot[k]] += h->send_host[k];
    return scatter_from_host(h, v, h->nsum, h->sum_idx, h->sum_dev, h->sum_host);
}

int halo_reverse_add(Halo *h, Vec *v) {
    FEM_TRY(reverse_begin(h, v, 0));
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
