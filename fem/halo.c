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

static int upload_list(Device *dev, int32_t **dst, const int32_t *src, int64_t n) {
    return device_alloc_copy(dev, (void **)dst, src, sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
}

/* n doubles: on the device for the direct path, on the host for the staged one (pinned and mapped on a GPU,
 * so that the device's gather and scatter read and write them without a copy). */
static int alloc_one(Halo *h, double **p, int64_t n) {
    size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
    return h->direct ? device_alloc(h->dev, (void **)p, bytes) : device_host_alloc(h->dev, (void **)p, bytes);
}

static int alloc_both(Halo *h, double **d, double **host, int64_t n) {
    return alloc_one(h, h->direct ? d : host, n);
}

/* The sums over copies of the dofs idx[0 .. n) (local dofs, n_local of them; a dof may appear at several
 * positions, each a received value): for each distinct dof its own entry and the positions naming it, in
 * position order, the own entry first (me < 0) or, where rank_of[k] gives each position's rank in increasing
 * order for a dof, at rank me's place among them. */
static int sums_create(Halo *h, HaloSums *p, const int32_t *idx, int64_t n, int64_t nlocal,
                       const int *rank_of, int me) {
    int32_t *slot = malloc(sizeof(int32_t) * (size_t)(nlocal + 1));
    int32_t *dof = malloc(sizeof(int32_t) * (size_t)(n + 1)), *off = calloc((size_t)n + 2, sizeof(int32_t));
    int32_t *src = malloc(sizeof(int32_t) * (size_t)(2 * n + 1));
    char *own = calloc((size_t)n + 1, 1);
    int status =
        slot && dof && off && src && own ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    int64_t nd = 0;
    for (int64_t i = 0; !status && i < nlocal; i++) slot[i] = -1;
    for (int64_t k = 0; !status && k < n; k++) { /* distinct dofs, and (in off[d + 2]) their positions */
        if (slot[idx[k]] < 0) slot[idx[k]] = (int32_t)nd, dof[nd++] = idx[k];
        off[slot[idx[k]] + 2]++;
    }
    for (int64_t d = 0; !status && d < nd; d++) off[d + 2] += off[d + 1] + 1; /* + the own entry */
    /* off[d + 1] is now where dof d's sources start; filled in position order, the own entry placed by
     * rank */
    for (int64_t k = 0; !status && k < n; k++) {
        int32_t d = slot[idx[k]];
        if (!own[d] && (me < 0 || rank_of[k] > me)) src[off[d + 1]++] = -1, own[d] = 1;
        src[off[d + 1]++] = (int32_t)k;
    }
    for (int64_t d = 0; !status && d < nd; d++)
        if (!own[d]) src[off[d + 1]++] = -1;
    /* off[d + 1] is the end of dof d's sources: off[0 .. nd] are the offsets */
    p->n = nd;
    if (!status) status = upload_list(h->dev, &p->dof, dof, nd);
    if (!status) status = upload_list(h->dev, &p->off, off, nd + 1);
    if (!status) status = upload_list(h->dev, &p->src, src, n + nd);
    free(slot), free(dof), free(off), free(src), free(own);
    return status;
}

static void sums_destroy(Device *dev, HaloSums *p) {
    device_free(dev, p->dof), device_free(dev, p->off), device_free(dev, p->src);
    memset(p, 0, sizeof *p);
}

/* The device path's first message between two ranks sets their connection up (NCCL: about a second, measured
 * on two H200s): one double each way with every rank it shares a node with (a superset of the halo's
 * neighbours), at setup rather than in the first solve. Collective over those ranks, as every exchange is. */
static int halo_connect(Halo *h) {
    double *buf = NULL;
    int n = h->nshare;
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(n + 1)), ticket = 0;
    if (!off) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    for (int i = 0; i <= n; i++) off[i] = i;
    int status = device_alloc(h->dev, (void **)&buf, sizeof(double) * 2 * (size_t)n);
    if (!status) status = h->dev->ops.zero(h->dev, buf, sizeof(double) * 2 * (size_t)n);
    if (!status)
        status = h->dev->ops.peer_exchange_begin(h->dev, n, h->share_nbr, off, buf, off, buf + n, 0, &ticket);
    if (!status) status = h->dev->ops.peer_exchange_end(h->dev, ticket);
    if (!status) status = h->dev->ops.sync(h->dev);
    device_free(h->dev, buf);
    free(off);
    return status;
}

/* The share lists as dofs, and each position's rank for the sums in rank order. */
static int share_lists(Halo *h, const Dist *d) {
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)(h->nshared + 1));
    int *rank_of = malloc(sizeof(int) * (size_t)(h->nshared + 1));
    int status = idx && rank_of ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    if (!status) {
        expand(d->share, d->share_off, d->nshare, h->ncomp, idx, h->share_off);
        for (int i = 0; i < d->nshare; i++)
            for (int64_t k = h->share_off[i]; k < h->share_off[i + 1]; k++) rank_of[k] = d->share_nbr[i];
        status = sums_create(h, &h->ssum, idx, h->nshared, d->space.nnodes * h->ncomp, rank_of, d->rank);
    }
    if (!status) status = upload_list(h->dev, &h->share_idx, idx, h->nshared);
    if (!status) status = alloc_one(h, &h->share_send, h->nshared);
    if (!status) status = alloc_one(h, &h->share_recv, h->nshared);
    free(idx);
    free(rank_of);
    return status;
}

static int halo_lists(Halo *h, const Dist *d, int32_t *send, int32_t *recv) {
    expand(d->send, d->send_off, d->nnbr, h->ncomp, send, h->send_off);
    expand(d->recv, d->recv_off, d->nnbr, h->ncomp, recv, h->recv_off);
    /* the reverse-add receives the send list's layout: each owned dof, then its partial sums in order */
    FEM_TRY(sums_create(h, &h->rsum, send, h->nsend, d->space.ndofs_owned, NULL, -1));
    FEM_TRY(upload_list(h->dev, &h->send_idx, send, h->nsend));
    FEM_TRY(upload_list(h->dev, &h->recv_idx, recv, h->nrecv));
    FEM_TRY(alloc_both(h, &h->send_dev, &h->send_host, h->nsend));
    FEM_TRY(alloc_both(h, &h->recv_dev, &h->recv_host, h->nrecv));
    FEM_TRY(share_lists(h, d));
    return h->queued && h->nshare ? halo_connect(h) : FEM_OK;
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
    h->nshare = d->nshare;
    h->share_nbr = d->share_nbr;
    h->nshared = d->share_off[d->nshare] * ncomp;
    int32_t *send = malloc(sizeof(int32_t) * (size_t)(h->nsend + 1));
    int32_t *recv = malloc(sizeof(int32_t) * (size_t)(h->nrecv + 1));
    h->send_off = malloc(sizeof(int64_t) * (size_t)(d->nnbr + 1));
    h->recv_off = malloc(sizeof(int64_t) * (size_t)(d->nnbr + 1));
    h->share_off = malloc(sizeof(int64_t) * (size_t)(d->nshare + 1));
    int status = send && recv && h->send_off && h->recv_off && h->share_off
                     ? halo_lists(h, d, send, recv)
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for a halo");
    free(send);
    free(recv);
    if (status) halo_destroy(h);
    return status;
}

void halo_destroy(Halo *h) {
    if (h->dev) {
        int32_t *lists[] = {h->send_idx, h->recv_idx, h->share_idx};
        for (int i = 0; i < 3; i++) device_free(h->dev, lists[i]);
        double *bufs[] = {h->send_dev, h->recv_dev, h->send_host, h->recv_host, h->share_send, h->share_recv};
        for (int i = 0; i < 6; i++)
            if (bufs[i] && (i < 2 || (i >= 4 && h->direct))) device_free(h->dev, bufs[i]);
            else if (bufs[i]) device_host_free(h->dev, bufs[i]);
        sums_destroy(h->dev, &h->rsum);
        sums_destroy(h->dev, &h->ssum);
    }
    free(h->send_off);
    free(h->recv_off);
    free(h->share_off);
    memset(h, 0, sizeof *h);
}

static int check_idle(const Halo *h, const Vec *v) {
    if (h->pending) return fem_fail(FEM_ERR_INTERNAL, "a halo exchange began before the previous one ended");
    if (v->dev != h->dev) return fem_fail(FEM_ERR_INTERNAL, "a halo exchange on a vector of another device");
    return FEM_OK;
}

/* n entries of v at device indices idx into the buffer `out` that MPI sends from: the device's own (direct
 * path) or the host's, which the device's gather writes itself (staged path: mapped pinned memory on a GPU,
 * no copy and no second synchronisation); the device's work is finished before MPI reads it. On the device
 * path the exchange is queued behind the gather: nothing waits. With `take` the entries become 0 in v. */
static int gather_to_host(Halo *h, Vec *v, int64_t n, const int32_t *idx, double *out, int take) {
    Device *d = h->dev;
    if (n == 0) return FEM_OK;
    if (take && d->ops.take) FEM_TRY(d->ops.take(d, n, idx, v->data, out));
    else {
        FEM_TRY(d->ops.gather(d, n, idx, v->data, out));
        if (take) FEM_TRY(d->ops.scatter(d, n, idx, NULL, v->data));
    }
    if (h->queued) return FEM_OK;
    return d->ops.sync ? d->ops.sync(d) : FEM_OK;
}

/* Posts v's exchange of kind `kind` (0 forward, 1 reverse-add, 2 share), its send buffer filled: forward
 * sends the owned values (send lists) to the ghosts; reverse sends the ghosts' values the other way, so the
 * receive list's layout is sent and the send list's received; share sends and receives the share lists. The
 * direct path hands MPI the device buffers. */
static int post(Halo *h, Vec *v, int kind, int beside) {
    double *send = h->direct ? h->send_dev : h->send_host, *recv = h->direct ? h->recv_dev : h->recv_host;
    int n = kind == 2 ? h->nshare : h->nnbr;
    const int *ranks = kind == 2 ? h->share_nbr : h->nbr;
    const int64_t *so = kind == 2 ? h->share_off : kind ? h->recv_off : h->send_off;
    const int64_t *ro = kind == 2 ? h->share_off : kind ? h->send_off : h->recv_off;
    double *sb = kind == 2 ? h->share_send : kind ? recv : send;
    double *rb = kind == 2 ? h->share_recv : kind ? send : recv;
    if (h->queued)
        FEM_TRY(h->dev->ops.peer_exchange_begin(h->dev, n, ranks, so, sb, ro, rb, beside, &h->ticket));
    else
        FEM_TRY(comm_exchange_begin(&h->x, n, ranks, so, sb, ro, rb));
    h->pending = v;
    h->pending_kind = kind;
    return FEM_OK;
}

/* Waits for v's exchange of that kind. */
static int arrive(Halo *h, Vec *v, int kind) {
    if (h->pending != v || h->pending_kind != kind)
        return fem_fail(FEM_ERR_INTERNAL, "a halo exchange ended without its begin");
    h->pending = NULL;
    return h->queued ? h->dev->ops.peer_exchange_end(h->dev, h->ticket) : comm_exchange_end(&h->x);
}

/* The sums of plan p from the received buffer (the device's, or the host's that the device reads in place:
 * it may still be read when this returns, and is written again only after the next gather_to_host of this
 * halo, whose synchronisation waits for it). */
static int sum_received(Halo *h, Vec *v, const HaloSums *p, const double *vals) {
    return p->n ? h->dev->ops.sum_copies(h->dev, p->n, p->dof, p->off, p->src, vals, v->data) : FEM_OK;
}

/* Starts v's exchange of kind `kind` (0 forward, 1 reverse-add, 2 share: see post): its values gathered
 * into the send buffer (reverse-add takes the ghosts', leaving them 0). beside: work may run between begin
 * and end (see Device.ops.peer_exchange_begin). */
static int begin(Halo *h, Vec *v, int kind, int beside) {
    if ((kind == 2 ? h->nshare : h->nnbr) == 0) return FEM_OK;
    FEM_TRY(check_idle(h, v));
    int64_t n = kind == 2 ? h->nshared : kind ? h->nrecv : h->nsend;
    const int32_t *idx = kind == 2 ? h->share_idx : kind ? h->recv_idx : h->send_idx;
    double *out = kind == 2 ? h->share_send
                  : kind    ? (h->direct ? h->recv_dev : h->recv_host)
                            : (h->direct ? h->send_dev : h->send_host);
    FEM_TRY(gather_to_host(h, v, n, idx, out, kind == 1));
    return post(h, v, kind, beside);
}

int halo_forward_begin(Halo *h, Vec *v) {
    return begin(h, v, 0, 1);
}

/* The scatter may still run when this returns (see sum_received). */
int halo_forward_end(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(arrive(h, v, 0));
    if (h->nrecv == 0) return FEM_OK;
    const double *in = h->direct ? h->recv_dev : h->recv_host;
    return h->dev->ops.scatter(h->dev, h->nrecv, h->recv_idx, in, v->data);
}

int halo_forward(Halo *h, Vec *v) {
    FEM_TRY(begin(h, v, 0, 0));
    return halo_forward_end(h, v);
}

int halo_reverse_begin(Halo *h, Vec *v) {
    return begin(h, v, 1, 1);
}

/* Owned entries += the partial sums received into the send buffer, in the order of the send list, on the
 * device (one pass; the host waits for nothing). */
int halo_reverse_end(Halo *h, Vec *v) {
    if (h->nnbr == 0) return FEM_OK;
    FEM_TRY(arrive(h, v, 1));
    return sum_received(h, v, &h->rsum, h->direct ? h->send_dev : h->send_host);
}

int halo_reverse_add(Halo *h, Vec *v) {
    FEM_TRY(begin(h, v, 1, 0));
    return halo_reverse_end(h, v);
}

int halo_share_begin(Halo *h, Vec *v) {
    return begin(h, v, 2, 1);
}

int halo_share_end(Halo *h, Vec *v) {
    if (h->nshare == 0) return FEM_OK;
    FEM_TRY(arrive(h, v, 2));
    return sum_received(h, v, &h->ssum, h->share_recv);
}

int halo_share(Halo *h, Vec *v) {
    FEM_TRY(begin(h, v, 2, 0));
    return halo_share_end(h, v);
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
