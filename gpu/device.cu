/* The CUDA device: picks GPU 0, describes it and fills the Device table with the functions of memory.cu,
 * vector.cu and kernels.cu. Every kernel runs on the default stream, so the operations of one Device run in
 * the order they are called; only dot and download wait for the GPU. */
#include "fem/comm.h"
#include "gpu/internal.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors after which the CUDA context cannot be used any more (a kernel faulted). */
static int sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
        return 1;
    default:
        return 0;
    }
}

int gpu_fail(cudaError_t e, const char *call, const char *file, int line) {
    /* name the file as "gpu/memory.cu", not by its full path */
    const char *last = strrchr(file, '/'), *base = file;
    if (last)
        for (const char *s = file; s < last; s++)
            if (*s == '/') base = s + 1;
    if (sticky(e))
        return fem_fail(
            FEM_ERR_DEVICE,
            "a GPU kernel failed: %s (%s), reported by %s at %s:%d; the GPU cannot be used by this "
            "process any more",
            cudaGetErrorString(e), cudaGetErrorName(e), call, base, line);
    return fem_fail(FEM_ERR_DEVICE, "the CUDA call %s failed at %s:%d: %s (%s)", call, base, line,
                    cudaGetErrorString(e), cudaGetErrorName(e));
}

unsigned gpu_vec_blocks(const GpuState *g, int64_t n) {
    int64_t blocks = (n + GPU_VEC_THREADS - 1) / GPU_VEC_THREADS, cap = (int64_t)g->sm_count * 32;
    if (blocks > cap) blocks = cap;
    return (unsigned)(blocks > 0 ? blocks : 1);
}

int64_t gpu_resident_blocks(const GpuState *g, int regs, int threads, size_t smem) {
    int64_t warps = (threads + 31) / 32;
    int64_t per_block =
        ((int64_t)regs * 32 + 255) / 256 * 256 * warps; /* allocated per warp, 256 at a time */
    int64_t n = per_block > 0 ? g->regs_per_sm / per_block : 32;
    int64_t by_threads = g->threads_per_sm / (warps * 32);
    if (by_threads < n) n = by_threads;
    int64_t by_smem = (int64_t)(g->shared_per_sm / (smem + 1024)); /* 1 KB reserved per block */
    if (by_smem < n) n = by_smem;
    return n < 32 ? n : 32;
}

/* Waits for the device's work; also makes it the calling thread's current GPU (CUDA keeps that per thread,
 * and a device created on another thread, as femto-app creates it while the mesh is read, is not current
 * here). */
static int gpu_sync(Device *d) {
    GPU_CHECK(cudaSetDevice(gpu_state(d)->device));
    GPU_CHECK(cudaDeviceSynchronize());
    return FEM_OK;
}

static void gpu_destroy(Device *d) {
    GpuState *g = gpu_state(d);
    if (!g) return;
    gpu_peer_destroy(g);
    cudaFree(g->dot_partial);
    if (g->dot_host) cudaFreeHost(g->dot_host);
    cudaFree(g->fill_pattern);
    free(g);
    d->impl = NULL;
}

extern "C" int gpu_device_create(Device *d, int threads, AssembleKind assembly) {
    (void)threads;
    memset(d, 0, sizeof *d);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && n == 0)) {
        cudaGetLastError();
        return fem_fail(FEM_ERR_DEVICE,
                        "no CUDA device is available: this machine has no NVIDIA GPU with a working "
                        "driver (use --device cpu)");
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fem_fail(FEM_ERR_DEVICE, "no CUDA device is available (cudaGetDeviceCount: %s)",
                        cudaGetErrorString(e));
    }
    gpu_cudss_preload(); /* beside the context's start: multigrid's coarse level would load it later anyway */
    /* one GPU per rank: the rank's place among its machine's ranks picks it (0 in a run of one process) */
    const int gpu = comm_local_rank() % n;
    GPU_CHECK(cudaSetDevice(gpu));
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, gpu));
    GpuState *g = (GpuState *)calloc(1, sizeof *g);
    if (!g) return fem_fail(FEM_ERR_INTERNAL, "out of host memory creating the CUDA device");
    g->device = gpu;
    g->sm_count = prop.multiProcessorCount;
    g->shared_optin = prop.sharedMemPerBlockOptin > prop.sharedMemPerBlock ? prop.sharedMemPerBlockOptin
                                                                           : prop.sharedMemPerBlock;
    g->regs_per_sm = prop.regsPerMultiprocessor;
    g->threads_per_sm = prop.maxThreadsPerMultiProcessor;
    g->shared_per_sm = prop.sharedMemPerMultiprocessor;
    d->impl = g;
    int status = gpu_kernels_init(g);
    if (!status) {
        /* the partial sums, then the dot kernel's count of finished blocks (zero between calls) */
        cudaError_t a = cudaMalloc((void **)&g->dot_partial, sizeof(double) * (GPU_DOT_BLOCKS + 1));
        if (a == cudaSuccess) a = cudaMemset(g->dot_partial, 0, sizeof(double) * (GPU_DOT_BLOCKS + 1));
        /* where the dot kernel writes its result for the host: pinned and mapped, so no copy follows it */
        if (a == cudaSuccess) a = cudaHostAlloc((void **)&g->dot_host, sizeof(double), cudaHostAllocMapped);
        if (a == cudaSuccess) a = cudaHostGetDevicePointer((void **)&g->dot_host_dev, g->dot_host, 0);
        if (a != cudaSuccess)
            status = gpu_fail(a, "allocating the dot product's buffers", __FILE__, __LINE__);
    }
    if (status) {
        cudaGetLastError();
        gpu_destroy(d);
        return status;
    }
    d->kind = DEV_CUDA;
    snprintf(d->name, sizeof d->name, "cuda");
    d->threads = 1;
    d->assembly = assembly;
    snprintf(d->description, sizeof d->description, "%.120s (%d SMs, %.1f GiB, compute %d.%d), %s assembly",
             prop.name, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
             prop.major, prop.minor, assembly == ASSEMBLE_GATHER ? "gather" : "atomic");
    d->qf = gpu_qfunctions;
    d->nqf = gpu_nqfunctions;
    d->ops.alloc = gpu_alloc;
    d->ops.free = gpu_free;
    d->ops.host_alloc = gpu_host_alloc;
    d->ops.host_free = gpu_host_free;
    d->ops.upload = gpu_upload;
    d->ops.download = gpu_download;
    d->ops.copy = gpu_copy;
    d->ops.zero = gpu_zero;
    d->ops.axpby = gpu_axpby;
    d->ops.dot = gpu_dot;
    d->ops.recip = gpu_recip;
    d->ops.mult = gpu_mult;
    d->ops.cheb_step = gpu_cheb_step;
    d->ops.scatter = gpu_scatter;
    d->ops.gather = gpu_gather;
    d->ops.take = gpu_take;
    d->ops.put2 = gpu_put2;
    d->ops.sum_copies = gpu_sum_copies;
    d->ops.node_spmv = gpu_node_spmv;
    d->ops.interpolate = gpu_interpolate;
    d->ops.integrate = gpu_integrate;
    d->ops.fill = gpu_fill;
    d->ops.diag_add = gpu_diag_add;
    d->ops.assemble = gpu_assemble;
    d->ops.sync = gpu_sync;
    d->ops.destroy = gpu_destroy;
    d->ops.operator_setup = gpu_operator_setup;
    d->ops.peer_init = gpu_peer_init;
    d->ops.peer_ready = gpu_peer_ready;
    d->ops.peer_exchange_begin = gpu_peer_exchange_begin;
    d->ops.peer_exchange_end = gpu_peer_exchange_end;
    return FEM_OK;
}

extern "C" int gpu_device_tune(Device *d, const GpuTuning *t) {
    if (!d || d->kind != DEV_CUDA || !d->impl)
        return fem_fail(FEM_ERR_USAGE, "gpu_device_tune needs a CUDA device");
    GpuState *g = gpu_state(d);
    if (t)
        g->tuning = *t;
    else
        memset(&g->tuning, 0, sizeof g->tuning);
    return FEM_OK;
}

extern "C" const char *gpu_last_launch(const Device *d) {
    if (!d || d->kind != DEV_CUDA || !d->impl) return "";
    return gpu_state(d)->last_launch;
}
