/* CUDA backend (the kernels and vector operations are filled in by the GPU work). */
#include "fem/error.h"
#include "gpu/gpu.h"

#include <cuda_runtime.h>

extern "C" int gpu_device_create(Device *d, AssembleKind assembly)
{
    (void)d;
    (void)assembly;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
        return fem_fail(FEM_ERR_DEVICE, "no CUDA device is available");
    return fem_fail(FEM_ERR_DEVICE, "the CUDA backend is not implemented yet");
}
