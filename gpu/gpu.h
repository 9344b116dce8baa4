/* The CUDA backend's one entry point: fills a Device (fem/device.h) whose memory is GPU memory and whose
 * kernels run on the GPU. app/ and the tests register it with device_register_cuda(gpu_device_create). */
#ifndef FEMTO_GPU_H
#define FEMTO_GPU_H

#include "fem/device.h"

FEM_EXTERN_C_BEGIN

/* The first CUDA device; FEM_ERR_DEVICE with one readable sentence when there is none or it cannot be used. */
int gpu_device_create(Device *d, AssembleKind assembly);

FEM_EXTERN_C_END

#endif
