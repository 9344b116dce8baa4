/* Turns a FEM_HD q-point function into a CUDA kernel and a checked launcher with the QfFn signature:
 * FEM_QF_CUDA(heat_cell_residual_cuda, heat_cell_residual) defines `static int heat_cell_residual_cuda(const
 * QfArgs *)` (gpu/qfunctions.cu instantiates every q-function of physics/qfunctions.h this way). One thread
 * per q-point; the QfArgs struct of device pointers is passed by value. qf_point_args builds the arguments
 * of one q-point for the fused kernels (gpu/fused_simplex.cu, gpu/fused_tensor.cu). */
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

/* A FEM_HD point function, the template argument of the fused kernels (fused.cu, fused_simplex.cu,
 * fused_tensor.cu). */
typedef void (*PointFn)(const QfArgs *, int64_t);

/* The arguments of one q-point (point q of element e) for a point function that a fused kernel calls on the
 * thread's own arrays u, du, geo, s and f: n = nq = 1, the dimension and components the template's constants
 * (so that after inlining the arrays are registers), and the global arrays the point function may read or
 * write (x, aux, src, tag, state) offset to the point. */
template <int D, int NC>
static __device__ __forceinline__ QfArgs qf_point_args(const QfArgs &a, int64_t e, int q, const double *u,
                                                       const double *du, const double *geo, double *s,
                                                       double *f) {
    QfArgs la = a;
    const int64_t qi = e * a.nq + q;
    la.n = 1;
    la.nq = 1;
    la.dim = D;
    la.rdim = D;
    la.ncomp = NC;
    la.u = u;
    la.du = du;
    la.geo = geo;
    la.s = s;
    la.f = f;
    la.x = a.x ? a.x + qi * 3 : NULL;
    la.aux = a.aux ? a.aux + qi : NULL;
    la.src = a.src ? a.src + qi * NC : NULL;
    la.tag = a.tag ? a.tag + e : NULL;
    la.state = a.state ? a.state + qi * a.nstate : NULL;
    return la;
}

#endif
