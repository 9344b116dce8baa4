/* The processes of a run and the one place where their partial results meet; the one place where femto meets
 * MPI.
 *
 * Every global reduction in femto (dot products and norms in Krylov and Newton, balances and extremes in
 * summaries) sums its rank-local part and then calls comm_sum: today a run is one process and comm_sum
 * returns at once; with MPI over several ranks it is one MPI_Allreduce, and nothing above it changes. hypre
 * (the BoomerAMG coarse solver) needs MPI initialised even on one process: comm_ensure_init. Built without
 * MPI (FEMTO_HAVE_MPI undefined), every function here is the one-process answer, so callers never need an
 * #ifdef. */
#ifndef FEMTO_COMM_H
#define FEMTO_COMM_H

#include "hd.h"

FEM_EXTERN_C_BEGIN

/* Initialises MPI (MPI_Init_thread, funneled) unless it already is, and finalises it at exit when it was
 * initialised here. Open MPI's informational warnings are switched off unless the user set them. Safe to call
 * any number of times; FEM_ERR_INTERNAL with one sentence when MPI refuses to start. */
int comm_ensure_init(void);

/* v[0..n) = the sum over all processes of v[0..n) (in place). A no-op on one process or without MPI. */
int comm_sum(double *v, int n);
/* v[0..n) = the largest over all processes of each v[k] (in place). A no-op on one process or without MPI. */
int comm_max(double *v, int n);

/* This process's rank and the number of ranks (0 and 1 without MPI or before comm_ensure_init). */
int comm_rank(void);
int comm_size(void);

/* This process's rank and the number of ranks as the launcher (mpirun, mpiexec) announced them in the
 * environment, readable before MPI is initialised (a process that forks, as the mesh reader does, must do so
 * before MPI_Init); 0 and 1 when not launched by one, or without MPI. */
int comm_launch_rank(void);
int comm_launch_size(void);
/* This process's rank among the ranks of its machine (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, MPICH's
 * MPI_LOCALRANKID, Slurm's SLURM_LOCALID; 0 when not launched by one): one GPU per rank is GPU (local rank
 * mod the GPUs the machine has). */
int comm_local_rank(void);

/* The OpenMP threads this rank may run without oversubscribing its machine: every core of its affinity mask
 * counts 1/n, where n ranks of the machine have that core in their masks (so 16 ranks bound to one core each,
 * or all bound to the same 16 cores, get 1; 4 ranks on 16 cores, unbound or 4 cores each, get 4), at least 1.
 * Collective over all ranks (each machine's ranks compare their masks). 0 on one rank, without MPI or where
 * the mask cannot be read: nothing to share, OpenMP's default stands. */
int comm_thread_share(void);
/* The cores of this process's affinity mask (0 without MPI or where it cannot be read). */
int comm_mask_cores(void);

/* 0 in a process forked from the one that initialised MPI (its inherited exit handlers must not finalise MPI
 * or hypre there), else 1. */
int comm_in_init_process(void);

/* The exclusive prefix sum of `mine` over the ranks: the sum of the values of the ranks before this one (0 on
 * rank 0 and on one process), e.g. the first global number of this rank's rows in a rank-contiguous
 * numbering. */
int comm_prefix_sum(int64_t mine, int64_t *before);

/* bytes of buf from rank root to every rank. A no-op on one process. */
int comm_bcast(void *buf, int64_t bytes, int root);

/* Every rank calls it with its own status and gets the same answer: FEM_OK when every rank succeeded, else
 * the largest code any rank returned, with the sentence of the lowest rank that returned it recorded on every
 * rank (fem_fail), so that all ranks report one message and exit with one code, and none waits for a failed
 * one. A rank that waits here leaves its core to others (a short spin, then 100 us sleeps between tests). */
int comm_agree(int status);

/* A point-to-point exchange of doubles with a few neighbour ranks, split in two so that work can run while
 * the messages travel: to ranks[i] go send[send_off[i] .. send_off[i+1]), from it come recv[recv_off[i] ..
 * recv_off[i+1]). The buffers stay untouched (send) and unread (recv) until comm_exchange_end. Without MPI,
 * or on one process, there are no neighbours (n = 0). */
typedef struct {
    int n;
    void *requests; /* MPI's, 2 n of them */
} CommExchange;
int comm_exchange_begin(CommExchange *x, int n, const int *ranks, const int64_t *send_off, const double *send,
                        const int64_t *recv_off, double *recv);
int comm_exchange_end(CommExchange *x);

/* Every rank's value of `mine`, in all[0 .. comm_size()) on every rank (all[0] = mine on one process). */
int comm_allgather_int64(int64_t mine, int64_t *all);

/* Personalised counts: send[r] goes to rank r, which finds it at recv[this rank] (both comm_size() long); a
 * copy on one process. What a rank sends each other rank, without the size x size table an all-gather of
 * every rank's row would make. */
int comm_alltoall_int64(const int64_t *send, int64_t *recv);

/* Gathers to root: rank r's `bytes` bytes of send land at recv + off[r] on root, where off has comm_size() +
 * 1 entries (byte offsets; rank r's count is off[r + 1] - off[r], which must equal its bytes). recv and off
 * are read on root only. Any size (sent in pieces of at most 1 GiB). A copy on one process. */
int comm_gather_bytes(const void *send, int64_t bytes, void *recv, const int64_t *off, int root);

/* Every rank's `bytes` bytes of send land at recv + off[r] on every rank (off as for comm_gather_bytes, on
 * every rank). At most 2 GiB in all. A copy on one process. */
int comm_allgather_bytes(const void *send, int64_t bytes, void *recv, const int64_t *off);

/* One rank's bytes to another, blocking (in pieces of at most 1 GiB): `bytes` bytes of buf from this rank to
 * rank `to` (comm_send_bytes), received into buf from rank `from` (comm_recv_bytes; both sides know the
 * count). Messages between two ranks arrive in the order they were sent. Over one process: FEM_ERR_INTERNAL.
 */
int comm_send_bytes(const void *buf, int64_t bytes, int to);
int comm_recv_bytes(void *buf, int64_t bytes, int from);

/* The reverse: root's send + off[r] .. off[r + 1] goes to rank r's recv (bytes bytes). */
int comm_scatter_bytes(const void *send, const int64_t *off, void *recv, int64_t bytes, int root);

/* Whether MPI may be handed GPU (CUDA) memory, detected rather than assumed: the library must say so both
 * when femto was compiled (Open MPI's MPIX_CUDA_AWARE_SUPPORT in mpi-ext.h) and when it runs
 * (MPIX_Query_cuda_support(), which answers for the library actually loaded). `why` says what was found, in a
 * few words for the run's verbose output. Without MPI, or with an MPI that has no such query, aware is 0. */
typedef struct {
    int compiled; /* MPIX_CUDA_AWARE_SUPPORT (-1: the library has no such macro) */
    int runtime;  /* MPIX_Query_cuda_support() (-1: not asked) */
    int aware;    /* both say yes */
    char why[160];
} CommCudaSupport;
CommCudaSupport comm_cuda_support(void);

FEM_EXTERN_C_END

#endif
