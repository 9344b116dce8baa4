/* Every backend this build has, registered with fem/ in one call: the CPU device always, the CUDA device and
 * the cuDSS coarse solver where they were built. fem/ never names a backend (it only keeps the factories it
 * is given), so each program registers them before creating a Device: femto-app and the tests call this once.
 * Header-only, so that no library below the programs links against both backends. */
#ifndef FEMTO_APP_BACKENDS_H
#define FEMTO_APP_BACKENDS_H

#include "cpu/cpu.h"
#include "fem/device.h"
#include "fem/solvers/coarse.h"
#ifdef FEMTO_HAVE_CUDA
#include "gpu/gpu.h"
#endif

static inline void backends_register(void) {
    device_register(DEV_CPU, cpu_device_create);
#ifdef FEMTO_HAVE_CUDA
    device_register(DEV_CUDA, gpu_device_create);
#endif
#ifdef FEMTO_HAVE_CUDSS
    coarse_register_cudss(gpu_cudss_create);
#endif
}

#endif
