/* The communicator (see comm.h). MPI's own state is process-wide, so the only state kept here is which
 * process started MPI and must therefore finalise it. */
#define _GNU_SOURCE /* sched_getaffinity and the CPU_* macros */
#include "comm.h"

#include "comm_mpi.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

#ifdef FEMTO_HAVE_MPI
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* Open MPI's extensions: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif
#include <sched.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

/* The process that initialised MPI here (0: none). A child forked from it (a plot, the mesh reader) inherits
 * the exit handlers; should a library call exit() in the child, finalising MPI there would wait for the other
 * ranks forever, and the parent for the child. */
static pid_t init_pid;

int comm_in_init_process(void) {
    return init_pid == 0 || getpid() == init_pid;
}

static void finalize_at_exit(void) {
    if (!comm_in_init_process()) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

int comm_ensure_init(void) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return FEM_OK;
    /* Open MPI, started without mpirun: no notes about unused network components, and no helper daemon
     * (orted) behind the process, which starts faster and needs only the libraries. A user's own setting
     * wins. */
    setenv("OMPI_MCA_btl_base_warn_component_unused", "0", 0);
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK"))
        setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "MPI could not be initialised (MPI_Init_thread failed)");
    /* Errors are values here too: MPI reports them instead of aborting the process. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    init_pid = getpid();
    atexit(finalize_at_exit);
    return FEM_OK;
}

/* v[0..n) reduced in place over all ranks by op (what: its name, for the message). */
static int all_reduce(double *v, int n, MPI_Op op, const char *what) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized || n <= 0 || comm_size() == 1) return FEM_OK;
    if (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "a global %s over %d MPI ranks failed", what, comm_size());
    return FEM_OK;
}

int comm_sum(double *v, int n) {
    return all_reduce(v, n, MPI_SUM, "sum");
}

int comm_max(double *v, int n) {
    return all_reduce(v, n, MPI_MAX, "maximum");
}

int comm_rank(void) {
    int initialized = 0, rank = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int comm_size(void) {
    int initialized = 0, size = 1;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

/* Open MPI's variables, then PMIx's and MPICH's (Hydra) */
static int launch_env(const char *const *names, int fallback) {
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return atoi(v);
    }
    return fallback;
}

int comm_launch_rank(void) {
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL};
    return launch_env(names, 0);
}

int comm_launch_size(void) {
    static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    return launch_env(names, 1);
}

int comm_local_rank(void) {
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                                        NULL};
    return launch_env(names, 0);
}

/* This process's affinity mask in *mask; its core count (0 where it cannot be read). */
static int read_mask(cpu_set_t *mask) {
    CPU_ZERO(mask);
    return sched_getaffinity(0, sizeof *mask, mask) == 0 ? CPU_COUNT(mask) : 0;
}

int comm_mask_cores(void) {
    cpu_set_t mask;
    return read_mask(&mask);
}

int comm_thread_share(void) {
    if (comm_size() <= 1) return 0;
    cpu_set_t mask;
    int all_have = read_mask(&mask) > 0;
    /* every rank takes part in both collectives, whether or not it read its mask */
    MPI_Allreduce(MPI_IN_PLACE, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 0;
    int users[CPU_SETSIZE]; /* ranks of the machine using each core */
    for (int c = 0; c < CPU_SETSIZE; c++) users[c] = all_have && CPU_ISSET(c, &mask);
    int rc = MPI_Allreduce(MPI_IN_PLACE, users, CPU_SETSIZE, MPI_INT, MPI_SUM, node);
    MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS || !all_have) return 0;
    double share = 0.0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask) && users[c] > 0) share += 1.0 / users[c];
    int threads = (int)(share + 1e-9);
    return threads < 1 ? 1 : threads;
}

MPI_Comm comm_world(void) {
    return MPI_COMM_WORLD;
}

MPI_Comm comm_self(void) {
    return MPI_COMM_SELF;
}

int comm_prefix_sum(int64_t mine, int64_t *before) {
    long long in = mine, out = 0;
    *before = 0;
    if (comm_size() == 1) return FEM_OK;
    if (MPI_Exscan(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "a prefix sum over %d MPI ranks failed", comm_size());
    *before = comm_rank() == 0 ? 0 : (int64_t)out; /* MPI leaves rank 0's result undefined */
    return FEM_OK;
}

int comm_bcast(void *buf, int64_t bytes, int root) {
    if (comm_size() == 1) return FEM_OK;
    /* MPI counts in int: large buffers go in pieces of at most 1 GiB */
    for (int64_t done = 0; done < bytes;) {
        int piece = (int)(bytes - done < (1 << 30) ? bytes - done : (1 << 30));
        if (MPI_Bcast((char *)buf + done, piece, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
            return fem_fail(FEM_ERR_INTERNAL, "a broadcast from MPI rank %d failed", root);
        done += piece;
    }
    return FEM_OK;
}

/* MPI_Wait that leaves the core to others: a short spin, then 100 us sleeps between tests (comm_agree meets
 * ranks that wait for one that still works, such as rank 0 in the coarse solve's setup). */
static int wait_idle(MPI_Request *req) {
    int done = 0;
    for (int spins = 0; !done; spins++) {
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return MPI_ERR_OTHER;
        if (!done && spins >= 100) nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    return MPI_SUCCESS;
}

int comm_agree(int status) {
    if (comm_size() == 1) return status;
    int worst = status, first;
    MPI_Request req;
    if (MPI_Iallreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_idle(&req) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "MPI ranks could not agree on a status (MPI_Iallreduce failed)");
    if (worst == FEM_OK) return FEM_OK;
    int mine = status == worst ? comm_rank() : comm_size();
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "MPI ranks could not agree on a status (MPI_Allreduce failed)");
    char msg[1024] = "";
    if (comm_rank() == first) snprintf(msg, sizeof msg, "%s", fem_last_error());
    if (MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "MPI ranks could not agree on a status (MPI_Bcast failed)");
    msg[sizeof msg - 1] = 0;
    return fem_fail(worst, "%s", msg);
}

int comm_exchange_begin(CommExchange *x, int n, const int *ranks, const int64_t *send_off, const double *send,
                        const int64_t *recv_off, double *recv) {
    x->n = 0;
    x->requests = NULL;
    if (n == 0) return FEM_OK;
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    if (!req) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for %d MPI requests", 2 * n);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Irecv(recv + recv_off[i], (int)(recv_off[i + 1] - recv_off[i]), MPI_DOUBLE, ranks[i], 0,
                       MPI_COMM_WORLD, &req[i]);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Isend(send + send_off[i], (int)(send_off[i + 1] - send_off[i]), MPI_DOUBLE, ranks[i], 0,
                       MPI_COMM_WORLD, &req[n + i]);
    x->n = n;
    x->requests = req;
    if (rc != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "posting a halo exchange with %d MPI ranks failed", n);
    return FEM_OK;
}

CommCudaSupport comm_cuda_support(void) {
    CommCudaSupport s = {-1, -1, 0, ""};
#ifdef MPIX_CUDA_AWARE_SUPPORT
    s.compiled = MPIX_CUDA_AWARE_SUPPORT ? 1 : 0;
    s.runtime = MPIX_Query_cuda_support() ? 1 : 0;
    s.aware = s.compiled && s.runtime;
    snprintf(s.why, sizeof s.why,
             "Open MPI %s CUDA: MPIX_CUDA_AWARE_SUPPORT %d, MPIX_Query_cuda_support() %d",
             s.aware ? "supports" : "does not support", s.compiled, s.runtime);
#else
    snprintf(s.why, sizeof s.why,
             "the MPI library does not say that it supports CUDA (no MPIX_CUDA_AWARE_SUPPORT)");
#endif
    return s;
}

int comm_exchange_end(CommExchange *x) {
    if (x->n == 0) return FEM_OK;
    int rc = MPI_Waitall(2 * x->n, x->requests, MPI_STATUSES_IGNORE);
    free(x->requests);
    x->requests = NULL;
    x->n = 0;
    if (rc != MPI_SUCCESS) return fem_fail(FEM_ERR_INTERNAL, "a halo exchange between MPI ranks failed");
    return FEM_OK;
}

int comm_allgather_int64(int64_t mine, int64_t *all) {
    all[0] = mine;
    if (comm_size() == 1) return FEM_OK;
    long long in = mine;
    if (MPI_Allgather(&in, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "gathering a count from %d MPI ranks failed", comm_size());
    return FEM_OK;
}

int comm_alltoall_int64(const int64_t *send, int64_t *recv) {
    if (comm_size() == 1) {
        recv[0] = send[0];
        return FEM_OK;
    }
    _Static_assert(sizeof(long long) == sizeof(int64_t), "MPI_LONG_LONG is int64_t");
    if (MPI_Alltoall(send, 1, MPI_LONG_LONG, recv, 1, MPI_LONG_LONG, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "exchanging counts between %d MPI ranks failed", comm_size());
    return FEM_OK;
}

/* A tag of its own, so that these messages can never be taken for a halo exchange's (tag 0). */
enum { COMM_TAG_ROOT = 7, COMM_TAG_PAIR = 8, COMM_PIECE = 1 << 30 };

int comm_send_bytes(const void *buf, int64_t bytes, int to) {
    int rc = MPI_SUCCESS;
    for (int64_t done = 0; done < bytes && rc == MPI_SUCCESS; done += COMM_PIECE) {
        int piece = (int)(bytes - done < COMM_PIECE ? bytes - done : COMM_PIECE);
        rc = MPI_Send((const char *)buf + done, piece, MPI_BYTE, to, COMM_TAG_PAIR, MPI_COMM_WORLD);
    }
    if (rc != MPI_SUCCESS) return fem_fail(FEM_ERR_INTERNAL, "sending to MPI rank %d failed", to);
    return FEM_OK;
}

int comm_recv_bytes(void *buf, int64_t bytes, int from) {
    int rc = MPI_SUCCESS;
    for (int64_t done = 0; done < bytes && rc == MPI_SUCCESS; done += COMM_PIECE) {
        int piece = (int)(bytes - done < COMM_PIECE ? bytes - done : COMM_PIECE);
        rc = MPI_Recv((char *)buf + done, piece, MPI_BYTE, from, COMM_TAG_PAIR, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) return fem_fail(FEM_ERR_INTERNAL, "receiving from MPI rank %d failed", from);
    return FEM_OK;
}

/* Root's side of a gather (to_root) or scatter: every other rank's part of all (off) received or sent in
 * pieces of at most COMM_PIECE bytes, and its own part copied from or to mine; another rank sends or receives
 * mine. */
static int root_transfer(int to_root, char *mine, int64_t bytes, char *all, const int64_t *off, int root) {
    int size = comm_size(), rank = comm_rank(), nreq = 0, rc = MPI_SUCCESS;
    int64_t pieces = 1;
    for (int r = 0; r < size; r++) {
        int64_t n = rank == root ? off[r + 1] - off[r] : r == rank ? bytes : 0;
        if (r != root || rank != root) pieces += (n + COMM_PIECE - 1) / COMM_PIECE;
    }
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)pieces);
    if (!req)
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for %lld MPI requests", (long long)pieces);
    for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
        if (r == root || (rank != root && r != rank)) continue;
        char *buf = rank == root ? all + off[r] : mine;
        int64_t n = rank == root ? off[r + 1] - off[r] : bytes;
        int peer = rank == root ? r : root, receive = (rank == root) == to_root;
        for (int64_t done = 0; done < n && rc == MPI_SUCCESS; done += COMM_PIECE) {
            int piece = (int)(n - done < COMM_PIECE ? n - done : COMM_PIECE);
            rc = receive ? MPI_Irecv(buf + done, piece, MPI_BYTE, peer, COMM_TAG_ROOT, MPI_COMM_WORLD,
                                     &req[nreq++])
                         : MPI_Isend(buf + done, piece, MPI_BYTE, peer, COMM_TAG_ROOT, MPI_COMM_WORLD,
                                     &req[nreq++]);
        }
    }
    if (rank == root && to_root) memcpy(all + off[root], mine, (size_t)bytes);
    if (rank == root && !to_root) memcpy(mine, all + off[root], (size_t)bytes);
    if (rc == MPI_SUCCESS) rc = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    free(req);
    if (rc != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "%s MPI rank %d failed",
                        to_root ? "gathering to" : "scattering from", root);
    return FEM_OK;
}

/* The checks both directions share: root's own part is as long as the offsets say. */
static int root_part_matches(int64_t bytes, const int64_t *off, int root) {
    if (comm_rank() == root && off[root + 1] - off[root] != bytes)
        return fem_fail(FEM_ERR_INTERNAL,
                        "the offsets of a transfer to or from MPI rank %d do not match its part", root);
    return FEM_OK;
}

int comm_gather_bytes(const void *send, int64_t bytes, void *recv, const int64_t *off, int root) {
    if (comm_size() == 1) return memcpy(recv, send, (size_t)bytes), FEM_OK;
    FEM_TRY(root_part_matches(bytes, off, root));
    return root_transfer(1, (char *)send, bytes, recv, off, root);
}

int comm_allgather_bytes(const void *send, int64_t bytes, void *recv, const int64_t *off) {
    int n = comm_size(), rank = comm_rank();
    if (n == 1) return memcpy(recv, send, (size_t)bytes), FEM_OK;
    if (off[n] > INT32_MAX || off[rank + 1] - off[rank] != bytes)
        return fem_fail(FEM_ERR_INTERNAL,
                        "an all-gather of %lld bytes over %d MPI ranks does not fit its offsets",
                        (long long)off[n], n);
    int *counts = malloc(sizeof(int) * 2 * (size_t)n);
    if (!counts) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for an all-gather's counts");
    for (int r = 0; r < n; r++) counts[r] = (int)(off[r + 1] - off[r]), counts[n + r] = (int)off[r];
    int rc = MPI_Allgatherv(send, (int)bytes, MPI_BYTE, recv, counts, counts + n, MPI_BYTE, MPI_COMM_WORLD);
    free(counts);
    if (rc != MPI_SUCCESS) return fem_fail(FEM_ERR_INTERNAL, "an all-gather over %d MPI ranks failed", n);
    return FEM_OK;
}

int comm_scatter_bytes(const void *send, const int64_t *off, void *recv, int64_t bytes, int root) {
    if (comm_size() == 1) return memcpy(recv, send, (size_t)bytes), FEM_OK;
    FEM_TRY(root_part_matches(bytes, off, root));
    return root_transfer(0, recv, bytes, (char *)send, off, root);
}

#else /* built without MPI: one process */

int comm_send_bytes(const void *buf, int64_t bytes, int to) {
    (void)buf, (void)bytes;
    return fem_fail(FEM_ERR_INTERNAL, "no MPI rank %d to send to in one process", to);
}
int comm_recv_bytes(void *buf, int64_t bytes, int from) {
    (void)buf, (void)bytes;
    return fem_fail(FEM_ERR_INTERNAL, "no MPI rank %d to receive from in one process", from);
}

int comm_ensure_init(void) {
    return FEM_OK;
}
int comm_sum(double *v, int n) {
    (void)v, (void)n;
    return FEM_OK;
}
int comm_max(double *v, int n) {
    (void)v, (void)n;
    return FEM_OK;
}
int comm_rank(void) {
    return 0;
}
int comm_size(void) {
    return 1;
}

int comm_launch_rank(void) {
    return 0;
}
int comm_launch_size(void) {
    return 1;
}
int comm_local_rank(void) {
    return 0;
}
int comm_thread_share(void) {
    return 0;
}
int comm_mask_cores(void) {
    return 0;
}
int comm_in_init_process(void) {
    return 1;
}
int comm_prefix_sum(int64_t mine, int64_t *before) {
    (void)mine;
    *before = 0;
    return FEM_OK;
}
int comm_bcast(void *buf, int64_t bytes, int root) {
    (void)buf, (void)bytes, (void)root;
    return FEM_OK;
}
int comm_agree(int status) {
    return status;
}
int comm_exchange_begin(CommExchange *x, int n, const int *ranks, const int64_t *send_off, const double *send,
                        const int64_t *recv_off, double *recv) {
    (void)ranks, (void)send_off, (void)send, (void)recv_off, (void)recv;
    x->n = 0;
    x->requests = NULL;
    return n == 0 ? FEM_OK
                  : fem_fail(FEM_ERR_INTERNAL, "a halo exchange needs MPI, and femto was built without it");
}
int comm_exchange_end(CommExchange *x) {
    (void)x;
    return FEM_OK;
}
int comm_allgather_int64(int64_t mine, int64_t *all) {
    all[0] = mine;
    return FEM_OK;
}
int comm_alltoall_int64(const int64_t *send, int64_t *recv) {
    recv[0] = send[0];
    return FEM_OK;
}
int comm_gather_bytes(const void *send, int64_t bytes, void *recv, const int64_t *off, int root) {
    (void)off, (void)root;
    memcpy(recv, send, (size_t)bytes);
    return FEM_OK;
}
int comm_allgather_bytes(const void *send, int64_t bytes, void *recv, const int64_t *off) {
    (void)off;
    memcpy(recv, send, (size_t)bytes);
    return FEM_OK;
}
int comm_scatter_bytes(const void *send, const int64_t *off, void *recv, int64_t bytes, int root) {
    (void)off, (void)root;
    memcpy(recv, send, (size_t)bytes);
    return FEM_OK;
}
CommCudaSupport comm_cuda_support(void) {
    CommCudaSupport s = {-1, -1, 0, "femto was built without MPI"};
    return s;
}

#endif
