/* GPU memory: plain cudaMalloc (never managed memory), copies and zeroing on the default stream. */
#include "gpu/internal.cuh"

#include <stdio.h>

static void human_bytes(size_t bytes, char *buf, size_t len) {
    double b = (double)bytes;
    if (b >= 1e9)
        snprintf(buf, len, "%.2f GB", b / 1e9);
    else if (b >= 1e6)
        snprintf(buf, len, "%.2f MB", b / 1e6);
    else
        snprintf(buf, len, "%.2f kB", b / 1e3);
}

int gpu_alloc(Device *d, void **p, size_t bytes) {
    (void)d;
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 8);
    if (e == cudaSuccess) return FEM_OK;
    *p = NULL;
    cudaGetLastError(); /* an allocation failure does not poison the context: clear it */
    char size[32];
    human_bytes(bytes, size, sizeof size);
    if (e == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        char fb[32] = "?", tb[32] = "?";
        if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
            human_bytes(free_b, fb, sizeof fb);
            human_bytes(total_b, tb, sizeof tb);
        }
        cudaGetLastError();
        return fem_fail(FEM_ERR_DEVICE,
                        "the GPU ran out of memory allocating %s (cudaMalloc: %s; %s free of %s)", size,
                        cudaGetErrorString(e), fb, tb);
    }
    return fem_fail(FEM_ERR_DEVICE, "allocating %s on the GPU failed (cudaMalloc: %s)", size,
                    cudaGetErrorString(e));
}

void gpu_free(Device *d, void *p) {
    (void)d;
    /* cudaFree cannot report to a void function; a failure here is an earlier kernel's, which the next
     * checked call reports. */
    if (p) cudaFree(p);
}

/* Pinned (page-locked) host memory, mapped: copies between it and the GPU run at the bus's full speed, and
 * kernels read and write it in place through the same pointer (unified addressing): the halo's host buffers
 * over MPI ranks, which the halo's gather and scatter kernels fill and read without a copy (fem/halo.c). */
int gpu_host_alloc(Device *d, void **p, size_t bytes) {
    (void)d;
    *p = NULL;
    cudaError_t e = cudaHostAlloc(p, bytes ? bytes : 8, cudaHostAllocMapped);
    if (e == cudaSuccess) return FEM_OK;
    *p = NULL;
    cudaGetLastError();
    return fem_fail(FEM_ERR_DEVICE, "allocating %zu bytes of pinned host memory failed (cudaHostAlloc: %s)",
                    bytes, cudaGetErrorString(e));
}

void gpu_host_free(Device *d, void *p) {
    (void)d;
    if (p) cudaFreeHost(p);
}

int gpu_upload(Device *d, void *dst, const void *src, size_t bytes) {
    (void)d;
    if (bytes) GPU_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return FEM_OK;
}

int gpu_download(Device *d, void *dst, const void *src, size_t bytes) {
    (void)d;
    if (bytes) GPU_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return FEM_OK;
}

int gpu_copy(Device *d, void *dst, const void *src, size_t bytes) {
    (void)d;
    if (bytes) GPU_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    return FEM_OK;
}

int gpu_zero(Device *d, void *p, size_t bytes) {
    (void)d;
    if (bytes) GPU_CHECK(cudaMemset(p, 0, bytes));
    return FEM_OK;
}
