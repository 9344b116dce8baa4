/* Moving values between a rank's owned dofs and the ghost copies its neighbours hold (the halo of
 * fem/dist.h), on Vecs in a device's memory.
 *
 * forward: every ghost receives its owner's value (before an operator reads a vector).
 * reverse-add: every ghost's partial sum is added to its owner's entry, then the ghost is zeroed (after an
 * operator wrote element contributions into ghost rows).
 * share: every copy of a shared dof, owned or ghost, becomes the sum of all the ranks' partial sums, added in
 * rank order so that every copy holds the same bits: one round of messages where reverse-add and forward take
 * two, for a vector whose copies are to stay consistent (the multigrid cycle's: fem/operator.h,
 * op_jacobian_consistent). It moves along Dist.share (every pair of ranks with a node in common, which may be
 * more pairs than the halo's), each pair both ways.
 * Each is split into begin and end: between them the messages travel and the caller may compute what does not
 * touch the halo (an operator's interior elements). Three paths move the values:
 *   staged: the device's gather writes host buffers (pinned and mapped on a GPU: Device.ops.host_alloc), the
 *           device is synchronised, MPI, and the device's scatter or sums (Device.ops.sum_copies: each dof
 *           once, its terms in a fixed order) read the received host buffer in place (no copies: each
 *           exchange costs one synchronisation); serves every device and every MPI;
 *   direct: MPI reads and writes the device's own buffers (gather, MPI, scatter or sums): taken on a GPU
 *           when MPI is CUDA-aware (comm_cuda_support: detected, not assumed).
 *   device: the direct path's buffers and sums, the messages moved by the device itself on its own queue
 *           (Device.ops.peer_*: NCCL between GPUs, gpu/nccl.cu): gather, messages and scatter are queued in
 *           order and the host waits for none of them. Taken when FEMTO_NCCL=1 asks for it and every rank
 *           can use it (its set-up costs about 2 s, which a solve's few per cent repay only over many).
 * On one process (no neighbours) every call returns at once.
 *
 * A Halo belongs to its caller (no global state) and serves one layout (a Dist and a number of components) at
 * a time: one exchange in flight per Halo. */
#ifndef FEMTO_HALO_H
#define FEMTO_HALO_H

#include "comm.h"
#include "dist.h"
#include "vec.h"

FEM_EXTERN_C_BEGIN

/* Sums over the copies of shared dofs (Device.ops.sum_copies' arguments, on the device): n distinct dofs,
 * each the sum of its sources src[off[i] .. off[i+1]) (-1: the dof's own entry; else a received position). */
typedef struct {
    int64_t n;
    int32_t *dof, *off, *src;
} HaloSums;

typedef struct Halo {
    const Dist *dist; /* the layout it serves (the caller's) */
    Device *dev;
    int ncomp, nnbr;
    const int *nbr;                /* the Dist's */
    int64_t *send_off, *recv_off;  /* in dofs, per neighbour (host) */
    int32_t *send_idx, *recv_idx;  /* device: owned dofs sent, ghost dofs received (forward) */
    double *send_dev, *recv_dev;   /* device staging */
    double *send_host, *recv_host; /* host staging */
    int64_t nsend, nrecv;          /* dofs */
    /* reverse-add sums into each owned dof once however many neighbours ghost it: the owned dof, then the
     * received positions of the send list that name it, in order (Device.ops.sum_copies) */
    HaloSums rsum;
    /* share: with neighbour share_nbr[i] the local dofs share_idx[share_off[i] .. share_off[i+1]) (device),
     * both ways through share_send and share_recv (device or host, as send_dev / send_host); each shared dof
     * summed over its copies in rank order (ssum) */
    int nshare;
    const int *share_nbr;   /* the Dist's */
    int64_t *share_off;     /* in dofs (host) */
    int32_t *share_idx;     /* device */
    double *share_send, *share_recv;
    int64_t nshared;        /* share_off[nshare] */
    HaloSums ssum;
    CommExchange x;
    Vec *pending; /* the Vec whose exchange is in flight */
    int pending_kind; /* 0 forward, 1 reverse-add, 2 share */
    int direct; /* device buffers (no host staging): MPI on them, or the device's own exchange (queued) */
    int queued; /* the device's own exchange on its queue (Device.ops.peer_*: NCCL), ticket naming it */
    int64_t ticket;
} Halo;

typedef enum { HALO_AUTO = 0, HALO_STAGED = 1, HALO_DIRECT = 2, HALO_DEVICE = 3 } HaloPath;

/* The halo of d's space with ncomp components on device dev, by the path that suits them (halo_auto_path). */
int halo_create(Halo *h, const Dist *d, Device *dev, int ncomp);
/* The same by a given path (HALO_DIRECT on the CPU device is valid, its memory being the host's: tests).
 * HALO_AUTO and HALO_DEVICE first set up the device's own exchanges (Device.ops.peer_init, collective, once
 * per device); HALO_DEVICE where they are not there is FEM_ERR_USAGE. */
int halo_create_path(Halo *h, const Dist *d, Device *dev, int ncomp, HaloPath path);
/* HALO_DEVICE when the device's own exchanges are set up (NCCL on a GPU: Device.ops.peer_ready), else
 * HALO_DIRECT for a GPU device when MPI is CUDA-aware, else HALO_STAGED. */
HaloPath halo_auto_path(const Device *dev);
/* For the run's verbose setup line: "NCCL x.y.z on the GPU's own queue", "CUDA-aware MPI" or "staged through
 * host (...)", saying why. */
void halo_describe(const Halo *h, char *text, size_t size);
void halo_destroy(Halo *h);

/* Ghost entries of v = their owners' values. */
int halo_forward_begin(Halo *h, Vec *v);
int halo_forward_end(Halo *h, Vec *v);
int halo_forward(Halo *h, Vec *v);

/* Owned entries of v += the ghost partial sums that neighbours hold of them; v's ghosts = 0. */
int halo_reverse_begin(Halo *h, Vec *v);
int halo_reverse_end(Halo *h, Vec *v);
int halo_reverse_add(Halo *h, Vec *v);

/* Every copy of a shared entry of v (owned or ghost, on every rank that has it) = the sum of all of them, in
 * rank order; the entries no other rank has are left alone. */
int halo_share_begin(Halo *h, Vec *v);
int halo_share_end(Halo *h, Vec *v);
int halo_share(Halo *h, Vec *v);

/* The rank-contiguous global numbering of the halo's dofs (what a distributed library such as hypre wants):
 * this rank's owned dofs are *first, *first + 1, ... in local order, where *first counts the owned dofs of
 * the ranks before it, and each ghost gets its owner's number through a forward exchange. g[n]: host, for the
 * n = owned + ghost local dofs. Every rank calls it (a collective). */
int halo_contiguous_numbers(Halo *h, int64_t *first, int64_t *g);

FEM_EXTERN_C_END

#endif
