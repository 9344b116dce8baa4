/* Halo exchanges between the ranks' GPUs through NVIDIA NCCL, on the GPU's own queue (the Device table's
 * peer_* entries, fem/device.h; fem/halo.h's device path).
 *
 * The staged path synchronises the GPU before every exchange and waits on the host for the messages: about
 * 70-100 us each, and a multigrid CG iteration makes about fifty (docs/PERFORMANCE.md). Here an exchange is
 * queued work: the GPU's gather, NCCL's sends and receives, and the scatter, in that order; the host returns
 * at once and queues what follows. Where the operator's interior elements run between begin and end, the
 * messages go on a stream of their own, after an event that orders them behind the gather, and the scatter
 * waits for an event recorded after them; an exchange ended at once stays on the default stream.
 *
 * NCCL is loaded at run time, as cuDSS is (gpu/cudss_load.cu): femto is not linked against it. The build's
 * library file is tried first, then the soname through the loader's search path (a Python wheel's
 * nvidia/nccl/lib, for example). Only point-to-point sends and receives are used, never NVLink multicast.
 * The path is taken when FEMTO_NCCL=1 asks for it (else the staged or CUDA-aware MPI path serves): measured
 * on two H200s, it makes a multigrid solve a few per cent faster and its set-up about 2 s longer. */
#include "fem/comm.h"
#include "fem/dynlib.h"
#include "gpu/internal.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct GpuPeer {
    int state; /* 1: ready; -1: not available (why) */
    char why[200];
#ifdef FEMTO_HAVE_NCCL
    void *comm;          /* ncclComm_t */
    cudaStream_t stream; /* NCCL's sends and receives */
    cudaEvent_t ready;   /* the default stream's work before an exchange */
    /* recorded after each exchange, in turn: an end that finds its event recorded again by a later exchange
     * waits for that one too, later than needed but never too early */
    cudaEvent_t done[8];
    int64_t count; /* exchanges begun */
#endif
};

#ifdef FEMTO_HAVE_NCCL

#include <nccl.h>

#include <pthread.h>
#include <unistd.h>

#ifndef FEMTO_NCCL_PATH /* set by CMake: the library file the build found */
#define FEMTO_NCCL_PATH ""
#endif
#define NCCL_SONAME "libnccl.so.2"

/* X(name, parameters): every NCCL function femto calls (all return an ncclResult_t) */
#define NCCL_FUNCTIONS(X)                                                                                    \
    X(ncclGetVersion, (int *version))                                                                        \
    X(ncclGetUniqueId, (ncclUniqueId * id))                                                                  \
    X(ncclCommInitRank, (ncclComm_t * comm, int nranks, ncclUniqueId id, int rank))                          \
    X(ncclCommDestroy, (ncclComm_t comm))                                                                    \
    X(ncclGroupStart, (void))                                                                                \
    X(ncclGroupEnd, (void))                                                                                  \
    X(ncclSend,                                                                                              \
      (const void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream))  \
    X(ncclRecv,                                                                                              \
      (void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream))

#define MEMBER_(name, params) ncclResult_t(*name) params;
static struct {
    NCCL_FUNCTIONS(MEMBER_)
    const char *(*ncclGetErrorString)(ncclResult_t result);
} api;
#undef MEMBER_

static DynLib lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
#define SYM_(name, params) {#name, &api.name, sizeof api.name},
    const DynSym syms[] = {NCCL_FUNCTIONS(SYM_) SYM_(ncclGetErrorString, ())};
#undef SYM_
    dynlib_open_all(&lib, FEMTO_NCCL_PATH, NCCL_SONAME, syms, (int)(sizeof syms / sizeof syms[0]));
}

static int nccl_fail(ncclResult_t r, const char *call) {
    return fem_fail(FEM_ERR_DEVICE, "NCCL's %s failed: %s", call, api.ncclGetErrorString(r));
}

#define NCCL_CHECK(call)                                                                                     \
    do {                                                                                                     \
        ncclResult_t nccl_check_r_ = (call);                                                                 \
        if (nccl_check_r_ != ncclSuccess) return nccl_fail(nccl_check_r_, #call);                            \
    } while (0)

/* Whether this rank can take the path, and if not why (in p->why). */
static int locally_able(struct GpuPeer *p) {
    /* asked for: its set-up costs about 2 s (the communicator, then each pair's connection), which the few
     * per cent it saves a solve repay only over many solves (docs/PERFORMANCE.md) */
    const char *env = getenv("FEMTO_NCCL");
    if (!env || strcmp(env, "1") != 0) {
        snprintf(p->why, sizeof p->why, "NCCL not asked for (FEMTO_NCCL=1)");
        return 0;
    }
    pthread_once(&once, load);
    if (!lib.handle) {
        const char *file = dynlib_existing(FEMTO_NCCL_PATH);
        snprintf(p->why, sizeof p->why, "cannot load NCCL (%.60s): %.100s", file ? file : NCCL_SONAME,
                 lib.failure);
        return 0;
    }
    return 1;
}

/* What peer_connect made (on any rank's failure, or at the end). */
static void release(struct GpuPeer *p) {
    if (p->stream) cudaStreamSynchronize(p->stream);
    if (p->comm) api.ncclCommDestroy((ncclComm_t)p->comm);
    if (p->stream) cudaStreamDestroy(p->stream);
    if (p->ready) cudaEventDestroy(p->ready);
    for (int i = 0; i < 8; i++)
        if (p->done[i]) cudaEventDestroy(p->done[i]);
    p->comm = NULL;
    p->stream = NULL;
    p->ready = NULL;
    memset(p->done, 0, sizeof p->done);
}

/* The communicator over all ranks, its stream and events; every rank calls it once every rank is able. */
static int peer_connect(GpuState *g, struct GpuPeer *p) {
    struct {
        ncclResult_t r;
        ncclUniqueId id;
    } root;
    memset(&root, 0, sizeof root);
    if (comm_rank() == 0) root.r = api.ncclGetUniqueId(&root.id);
    FEM_TRY(comm_bcast(&root, (int64_t)sizeof root, 0));
    if (root.r != ncclSuccess) return nccl_fail(root.r, "ncclGetUniqueId");
    GPU_CHECK(cudaSetDevice(g->device));
    ncclComm_t comm = NULL;
    NCCL_CHECK(api.ncclCommInitRank(&comm, comm_size(), root.id, comm_rank()));
    p->comm = comm;
    GPU_CHECK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
    GPU_CHECK(cudaEventCreateWithFlags(&p->ready, cudaEventDisableTiming));
    for (int i = 0; i < 8; i++) GPU_CHECK(cudaEventCreateWithFlags(&p->done[i], cudaEventDisableTiming));
    int v = 0;
    NCCL_CHECK(api.ncclGetVersion(&v));
    snprintf(p->why, sizeof p->why, "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    return FEM_OK;
}

/* *shared = 1 when two ranks use the same GPU: each rank's GPU as its machine's name and the GPU's PCI
 * address, hashed (FNV-1a), compared over all ranks (every rank gets the same answer). */
static int ranks_share_a_gpu(const GpuState *g, int *shared) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, g->device));
    uint64_t h = 1469598103934665603ull;
    for (const char *c = host; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    int pci[3] = {prop.pciDomainID, prop.pciBusID, prop.pciDeviceID};
    for (int i = 0; i < 3; i++) h = (h ^ (uint64_t)(unsigned)pci[i]) * 1099511628211ull;
    int n = comm_size();
    int64_t *all = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    if (!all) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for NCCL's set-up");
    int status = comm_allgather_int64((int64_t)(h >> 1), all);
    *shared = 0;
    for (int i = 0; !status && i < n; i++)
        for (int j = 0; j < i; j++) *shared |= all[i] == all[j];
    free(all);
    return status;
}

int gpu_peer_init(Device *d) {
    GpuState *g = gpu_state(d);
    if (g->peer) return FEM_OK;
    struct GpuPeer *p = (struct GpuPeer *)calloc(1, sizeof *p);
    if (!p) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for NCCL's state");
    g->peer = p;
    p->state = -1;
    if (comm_size() == 1) {
        snprintf(p->why, sizeof p->why, "one process");
        return FEM_OK;
    }
    /* every rank must be able before any starts NCCL's collective set-up, or the able ones would wait */
    double unable = locally_able(p) ? 0.0 : 1.0;
    FEM_TRY(comm_sum(&unable, 1));
    if (unable > 0) {
        if (!p->why[0]) snprintf(p->why, sizeof p->why, "NCCL cannot be used on %.0f of the ranks", unable);
        return FEM_OK;
    }
    /* NCCL refuses two ranks on one GPU (with a warning of its own): such a run stages, saying why */
    int shared = 0;
    FEM_TRY(ranks_share_a_gpu(g, &shared));
    if (shared) {
        snprintf(p->why, sizeof p->why, "NCCL not used: ranks share a GPU");
        return FEM_OK;
    }
    int status = peer_connect(g, p);
    double failed = status ? 1.0 : 0.0;
    FEM_TRY(comm_sum(&failed, 1));
    if (failed > 0) {
        release(p);
        /* the staged path serves: the failure is told in the run's verbose setup, not as an error */
        if (status)
            snprintf(p->why, sizeof p->why, "NCCL did not start: %.160s", fem_last_error());
        else
            snprintf(p->why, sizeof p->why, "NCCL did not start on another rank");
        fem_clear_error();
        return FEM_OK;
    }
    p->state = 1;
    return FEM_OK;
}

int gpu_peer_exchange_begin(Device *d, int n, const int *ranks, const int64_t *send_off, const double *send,
                            const int64_t *recv_off, double *recv, int beside, int64_t *ticket) {
    struct GpuPeer *p = gpu_state(d)->peer;
    if (!p || p->state != 1) return fem_fail(FEM_ERR_INTERNAL, "an NCCL exchange without NCCL");
    ncclComm_t comm = (ncclComm_t)p->comm;
    /* beside: NCCL's stream, after the default stream's work; else the default (legacy) stream itself */
    cudaStream_t stream = beside ? p->stream : cudaStreamLegacy;
    if (beside) {
        GPU_CHECK(cudaEventRecord(p->ready, 0));
        GPU_CHECK(cudaStreamWaitEvent(p->stream, p->ready, 0));
    }
    NCCL_CHECK(api.ncclGroupStart());
    ncclResult_t r = ncclSuccess;
    /* a pair's counts agree on both sides (one side's send list is the other's receive list), so both skip
     * an empty one */
    for (int i = 0; i < n && r == ncclSuccess; i++) {
        size_t nr = (size_t)(recv_off[i + 1] - recv_off[i]), ns = (size_t)(send_off[i + 1] - send_off[i]);
        if (nr) r = api.ncclRecv(recv + recv_off[i], nr, ncclFloat64, ranks[i], comm, stream);
        if (ns && r == ncclSuccess)
            r = api.ncclSend(send + send_off[i], ns, ncclFloat64, ranks[i], comm, stream);
    }
    ncclResult_t e = api.ncclGroupEnd();
    if (r != ncclSuccess) return nccl_fail(r, "ncclSend/ncclRecv");
    if (e != ncclSuccess) return nccl_fail(e, "ncclGroupEnd");
    *ticket = -1; /* in the default stream's order already */
    if (!beside) return FEM_OK;
    *ticket = p->count++;
    GPU_CHECK(cudaEventRecord(p->done[*ticket % 8], p->stream));
    return FEM_OK;
}

int gpu_peer_exchange_end(Device *d, int64_t ticket) {
    struct GpuPeer *p = gpu_state(d)->peer;
    if (!p || p->state != 1) return fem_fail(FEM_ERR_INTERNAL, "an NCCL exchange without NCCL");
    if (ticket >= 0) GPU_CHECK(cudaStreamWaitEvent(0, p->done[ticket % 8], 0));
    return FEM_OK;
}

void gpu_peer_destroy(GpuState *g) {
    struct GpuPeer *p = g->peer;
    if (!p) return;
    release(p);
    free(p);
    g->peer = NULL;
}

#else /* built without NCCL's header: the path is never there */

int gpu_peer_init(Device *d) {
    GpuState *g = gpu_state(d);
    if (g->peer) return FEM_OK;
    struct GpuPeer *p = (struct GpuPeer *)calloc(1, sizeof *p);
    if (!p) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for NCCL's state");
    p->state = -1;
    snprintf(p->why, sizeof p->why, "%s", comm_size() == 1 ? "one process" : "femto was built without NCCL");
    g->peer = p;
    return FEM_OK;
}

int gpu_peer_exchange_begin(Device *, int, const int *, const int64_t *, const double *, const int64_t *,
                            double *, int, int64_t *) {
    return fem_fail(FEM_ERR_INTERNAL, "an NCCL exchange in a build without NCCL");
}

int gpu_peer_exchange_end(Device *, int64_t) {
    return fem_fail(FEM_ERR_INTERNAL, "an NCCL exchange in a build without NCCL");
}

void gpu_peer_destroy(GpuState *g) {
    free(g->peer);
    g->peer = NULL;
}

#endif /* FEMTO_HAVE_NCCL */

int gpu_peer_ready(const Device *d, char *why, size_t size) {
    const struct GpuPeer *p = d && d->impl ? gpu_state(d)->peer : NULL;
    if (why && size) snprintf(why, size, "%s", p ? p->why : "not set up");
    return p && p->state == 1;
}
