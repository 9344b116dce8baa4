/* Turns a FEM_HD q-point function into a CUDA kernel and a checked launcher with the QfFn signature:
 * FEM_QF_CUDA(heat_cell_residual_cuda, heat_cell_residual) defines `static int heat_cell_residual_cuda(const
 * QfArgs *)` (gpu/qfunctions.cu instantiates every q-function of physics/qfunctions.h this way). One thread
 * per q-point; the QfArgs struct of device pointers is passed by value. */
#ifndef FEMTO_GPU_QFUNCTION_CUH
#define FEMTO_GPU_QFUNCTION_CUH

#include "fem/error.h"
#include "fem/qfunction.h"

#include <cuda_runtime.h>

#define FEM_QF_CUDA(name, point)                                                                             \
    static __global__ void name##_kernel(QfArgs a)                                                           \
    {                                                                                                        \
        int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;                                          \
        if (i < a.n) point(&a, i);                                                                           \
    }                                                                                                        \
    static int name(const QfArgs *a)                                                                         \
    {                                                                                                        \
        if (a->n == 0) return FEM_OK;                                                                        \
        int threads = 256;                                                                                   \
        int64_t blocks = (a->n + threads - 1) / threads;                                                     \
        name##_kernel<<<(unsigned)blocks, threads>>>(*a);                                                    \
        cudaError_t e = cudaGetLastError();                                                                  \
        if (e != cudaSuccess)                                                                                \
            return fem_fail(FEM_ERR_DEVICE, "the q-point function " #point " failed on the GPU: %s",         \
                            cudaGetErrorString(e));                                                          \
        return FEM_OK;                                                                                       \
    }

#endif
