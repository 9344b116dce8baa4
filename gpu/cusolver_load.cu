/* cuSOLVER's dense Cholesky, loaded when the coarse level first asks for its explicit inverse (gpu/cudss.cu)
 * rather than linked: libcusolver (and the cuBLAS it loads) would add to every start of femto-app, CPU runs
 * included, for a step that only some GPU runs take. This file defines the few cuSOLVER functions femto
 * calls, each calling through a pointer found when the library is loaded (the build's library file, else its
 * soname through the loader's search path); cusolverDn.h's prototypes check every definition. */
#include "fem/dynlib.h"
#include "gpu/internal.cuh"

#include <cusolverDn.h>

#include <pthread.h>

#ifndef FEMTO_CUSOLVER_PATH /* set by CMake: the library file the build found */
#define FEMTO_CUSOLVER_PATH ""
#endif
#ifndef FEMTO_CUSOLVER_SONAME
#define FEMTO_CUSOLVER_SONAME "libcusolver.so"
#endif

/* X(name, parameters, arguments): every cuSOLVER function femto calls (all return a cusolverStatus_t). */
#define CUSOLVER_FUNCTIONS(X)                                                                                \
    X(cusolverDnCreate, (cusolverDnHandle_t * handle), (handle))                                             \
    X(cusolverDnDestroy, (cusolverDnHandle_t handle), (handle))                                              \
    X(cusolverDnDpotrf_bufferSize,                                                                           \
      (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, int *Lwork),             \
      (handle, uplo, n, A, lda, Lwork))                                                                      \
    X(cusolverDnDpotrf,                                                                                      \
      (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, double *Workspace,       \
       int Lwork, int *devInfo),                                                                             \
      (handle, uplo, n, A, lda, Workspace, Lwork, devInfo))                                                  \
    X(cusolverDnDpotri_bufferSize,                                                                           \
      (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, int *lwork),             \
      (handle, uplo, n, A, lda, lwork))                                                                      \
    X(cusolverDnDpotri,                                                                                      \
      (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, double *work, int lwork, \
       int *devInfo),                                                                                        \
      (handle, uplo, n, A, lda, work, lwork, devInfo))

#define MEMBER_(name, params, args) cusolverStatus_t(CUSOLVERAPI *name) params;
static struct { CUSOLVER_FUNCTIONS(MEMBER_) } api;
#undef MEMBER_

static DynLib lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
#define SYM_(name, params, args) {#name, &api.name, sizeof api.name},
    const DynSym syms[] = {CUSOLVER_FUNCTIONS(SYM_)};
#undef SYM_
    dynlib_open_all(&lib, FEMTO_CUSOLVER_PATH, FEMTO_CUSOLVER_SONAME, syms,
                    (int)(sizeof syms / sizeof syms[0]));
}

int gpu_cusolver_load(void) {
    pthread_once(&once, load);
    if (lib.handle) return FEM_OK;
    const char *file = dynlib_existing(FEMTO_CUSOLVER_PATH);
    return fem_fail(FEM_ERR_DEVICE, "cannot load cuSOLVER (%s): %s", file ? file : FEMTO_CUSOLVER_SONAME,
                    lib.failure);
}

/* Each function: CUSOLVER_STATUS_NOT_INITIALIZED when the library is not there, else the library's own. */
#define DEFINE_(name, params, args)                                                                          \
    cusolverStatus_t CUSOLVERAPI name params {                                                               \
        pthread_once(&once, load);                                                                           \
        return lib.handle ? api.name args : CUSOLVER_STATUS_NOT_INITIALIZED;                                 \
    }
CUSOLVER_FUNCTIONS(DEFINE_)
#undef DEFINE_
