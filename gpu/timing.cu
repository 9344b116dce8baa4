/* CUDA-event timers and the device-to-device copy bandwidth that the benchmark compares its kernels with. */
#include "gpu/internal.cuh"

#include <stdlib.h>

struct GpuTimer {
    cudaEvent_t start, stop;
};

extern "C" int gpu_timer_create(GpuTimer **t) {
    *t = (GpuTimer *)calloc(1, sizeof **t);
    if (!*t) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a GPU timer");
    cudaError_t e = cudaEventCreate(&(*t)->start);
    if (e == cudaSuccess) {
        e = cudaEventCreate(&(*t)->stop);
        if (e != cudaSuccess) cudaEventDestroy((*t)->start);
    }
    if (e != cudaSuccess) {
        free(*t);
        *t = NULL;
        return gpu_fail(e, "cudaEventCreate", __FILE__, __LINE__);
    }
    return FEM_OK;
}

extern "C" int gpu_timer_start(GpuTimer *t) {
    GPU_CHECK(cudaEventRecord(t->start, 0));
    return FEM_OK;
}

extern "C" int gpu_timer_stop(GpuTimer *t, double *us) {
    float ms = 0.0f;
    GPU_CHECK(cudaEventRecord(t->stop, 0));
    GPU_CHECK(cudaEventSynchronize(t->stop));
    GPU_CHECK(cudaEventElapsedTime(&ms, t->start, t->stop));
    *us = 1000.0 * (double)ms;
    return FEM_OK;
}

extern "C" void gpu_timer_destroy(GpuTimer *t) {
    if (!t) return;
    cudaEventDestroy(t->start);
    cudaEventDestroy(t->stop);
    free(t);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" int gpu_copy_bandwidth(Device *d, size_t bytes, int reps, double *us, double *gbps) {
    if (!d || d->kind != DEV_CUDA) return fem_fail(FEM_ERR_USAGE, "gpu_copy_bandwidth needs a CUDA device");
    if (reps < 1) reps = 1;
    if (bytes < 8) bytes = 8;
    void *a = NULL, *b = NULL;
    GpuTimer *t = NULL;
    double *times = (double *)malloc(sizeof(double) * (size_t)reps);
    if (!times) return fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    int status = gpu_alloc(d, &a, bytes);
    if (!status) status = gpu_alloc(d, &b, bytes);
    if (!status) status = gpu_zero(d, a, bytes);
    if (!status) status = gpu_timer_create(&t);
    if (!status) status = gpu_copy(d, b, a, bytes); /* warm-up */
    for (int r = 0; r < reps && !status; r++) {
        status = gpu_timer_start(t);
        if (!status) status = gpu_copy(d, b, a, bytes);
        if (!status) status = gpu_timer_stop(t, &times[r]);
    }
    if (!status) {
        qsort(times, (size_t)reps, sizeof(double), cmp_double);
        double med = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
        *us = med;
        *gbps = 2.0 * (double)bytes / (med * 1e-6) / 1e9;
    }
    gpu_timer_destroy(t);
    gpu_free(d, a);
    gpu_free(d, b);
    free(times);
    return status;
}
