/* The CUDA instances of every q-function in physics/qfunctions.h: one thread per q-point (FEM_QF_CUDA in
 * gpu/qfunction.cuh). */
#include "gpu/internal.cuh"
#include "gpu/qfunction.cuh"
#include "physics/qfunctions.h"

#define GPU_QF_DEFINE_(fn) FEM_QF_CUDA(fn##_cuda, fn)
FEMTO_QFUNCTIONS(GPU_QF_DEFINE_)

/* positional: the list fixes both the ids and this order */
#define GPU_QF_ENTRY_(fn) fn##_cuda,
extern "C" const QfFn gpu_qfunctions[QF_COUNT] = {FEMTO_QFUNCTIONS(GPU_QF_ENTRY_)};
extern "C" const int gpu_nqfunctions = QF_COUNT;
