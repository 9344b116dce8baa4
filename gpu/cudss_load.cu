/* cuDSS, loaded when the CUDA device starts rather than when the program starts (see gpu.h,
 * gpu_cudss_load).
 *
 * cuDSS and cuBLAS, which it links, took 0.08 s of every start of femto-app, CPU runs included. femto is not
 * linked against cuDSS: this file defines the cuDSS functions femto calls, which call through pointers found
 * when the library is loaded (dlopen: the build's library file, else its soname through the loader's search
 * path). Starting the CUDA device starts loading it on a thread of its own, beside the device's start and
 * the mesh read, so a GPU run does not wait for it either. cudss.h's prototypes check every definition. */
#include "fem/dynlib.h"
#include "gpu/gpu.h"
#include "gpu/internal.cuh"

#ifdef FEMTO_HAVE_CUDSS

#include <cudss.h>

#include <pthread.h>

#ifndef FEMTO_CUDSS_PATH /* set by CMake: the library file the build found */
#define FEMTO_CUDSS_PATH ""
#endif
#define CUDSS_SONAME "libcudss.so.0"

/* X(name, parameters, arguments): every cuDSS function femto calls (all return a cudssStatus_t). */
#define CUDSS_FUNCTIONS(X)                                                                                   \
    X(cudssCreate, (cudssHandle_t * handle), (handle))                                                      \
    X(cudssDestroy, (cudssHandle_t handle), (handle))                                                       \
    X(cudssSetThreadingLayer, (cudssHandle_t handle, const char *thrLibFileName), (handle, thrLibFileName)) \
    X(cudssConfigCreate, (cudssConfig_t * solverConfig), (solverConfig))                                    \
    X(cudssConfigDestroy, (cudssConfig_t solverConfig), (solverConfig))                                     \
    X(cudssConfigSet, (cudssConfig_t config, cudssConfigParam_t param, void *value, size_t sizeInBytes),    \
      (config, param, value, sizeInBytes))                                                                   \
    X(cudssDataCreate, (cudssHandle_t handle, cudssData_t * solverData), (handle, solverData))              \
    X(cudssDataDestroy, (cudssHandle_t handle, cudssData_t solverData), (handle, solverData))               \
    X(cudssDataGet,                                                                                          \
      (cudssHandle_t handle, cudssData_t data, cudssDataParam_t param, void *value, size_t sizeInBytes,      \
       size_t *sizeWritten),                                                                                 \
      (handle, data, param, value, sizeInBytes, sizeWritten))                                                \
    X(cudssDataSet,                                                                                          \
      (cudssHandle_t handle, cudssData_t data, cudssDataParam_t param, void *value, size_t sizeInBytes),     \
      (handle, data, param, value, sizeInBytes))                                                             \
    X(cudssExecute,                                                                                          \
      (cudssHandle_t handle, int phase, cudssConfig_t solverConfig, cudssData_t solverData,                 \
       cudssMatrix_t inputMatrix, cudssMatrix_t solution, cudssMatrix_t rhs),                                \
      (handle, phase, solverConfig, solverData, inputMatrix, solution, rhs))                                 \
    X(cudssMatrixCreateCsr,                                                                                  \
      (cudssMatrix_t * matrix, int64_t nrows, int64_t ncols, int64_t nnz, void *rowStart, void *rowEnd,      \
       void *colIndices, void *values, cudaDataType_t indexType, cudaDataType_t valueType,                   \
       cudssMatrixType_t mtype, cudssMatrixViewType_t mview, cudssIndexBase_t indexBase),                    \
      (matrix, nrows, ncols, nnz, rowStart, rowEnd, colIndices, values, indexType, valueType, mtype, mview,  \
       indexBase))                                                                                           \
    X(cudssMatrixCreateDn,                                                                                   \
      (cudssMatrix_t * matrix, int64_t nrows, int64_t ncols, int64_t ld, void *values,                       \
       cudaDataType_t valueType, cudssLayout_t layout),                                                      \
      (matrix, nrows, ncols, ld, values, valueType, layout))                                                 \
    X(cudssMatrixDestroy, (cudssMatrix_t matrix), (matrix))                                                 \
    X(cudssMatrixSetValues, (cudssMatrix_t matrix, void *values), (matrix, values))

#define MEMBER_(name, params, args) cudssStatus_t(CUDSSAPI *name) params;
static struct {
    CUDSS_FUNCTIONS(MEMBER_)
} api;
#undef MEMBER_

static DynLib lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
#define SYM_(name, params, args) {#name, &api.name, sizeof api.name},
    const DynSym syms[] = {CUDSS_FUNCTIONS(SYM_)};
#undef SYM_
    dynlib_open_all(&lib, FEMTO_CUDSS_PATH, CUDSS_SONAME, syms, (int)(sizeof syms / sizeof syms[0]));
}

static void *load_thread(void *arg) {
    (void)arg;
    pthread_once(&once, load);
    return NULL;
}

void gpu_cudss_preload(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, load_thread, NULL) == 0) pthread_detach(t);
}

int gpu_cudss_load(void) {
    pthread_once(&once, load);
    if (lib.handle) return FEM_OK;
    const char *file = dynlib_existing(FEMTO_CUDSS_PATH);
    return fem_fail(FEM_ERR_DEVICE, "cannot load cuDSS (%s): %s", file ? file : CUDSS_SONAME, lib.failure);
}

/* Each function: CUDSS_STATUS_NOT_INITIALIZED when the library is not there, else the library's own. */
#define DEFINE_(name, params, args)                                                                          \
    cudssStatus_t CUDSSAPI name params {                                                                     \
        pthread_once(&once, load);                                                                           \
        return lib.handle ? api.name args : CUDSS_STATUS_NOT_INITIALIZED;                                   \
    }
CUDSS_FUNCTIONS(DEFINE_)
#undef DEFINE_

#else

void gpu_cudss_preload(void) {}

int gpu_cudss_load(void) {
    return fem_fail(FEM_ERR_DEVICE, "femto was built without cuDSS");
}

#endif /* FEMTO_HAVE_CUDSS */
