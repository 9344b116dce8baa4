/* FEM_HD marks element mathematics shared by the CPU loops and the CUDA kernels.
 *
 * Every header of small `static inline` functions that both the C compiler and nvcc compile marks them with
 * FEM_HD: empty for the C compiler, `__host__ __device__` for nvcc. This is what lets one definition of a
 * basis, a quadrature loop or a q-point physics function serve both devices. */
#ifndef FEMTO_HD_H
#define FEMTO_HD_H

#include <stdint.h>

#ifdef __CUDACC__
#define FEM_HD __host__ __device__
#else
#define FEM_HD
#endif

/* Index types: node and dof indices fit in 32 bits (2^31 dofs is far beyond one GPU's memory at double
 * precision); anything that multiplies elements by q-points, components or local dofs is 64-bit. */
/* C linkage for the declarations of fem/ headers when nvcc (C++) includes them. */
#ifdef __cplusplus
#define FEM_EXTERN_C_BEGIN extern "C" {
#define FEM_EXTERN_C_END }
#else
#define FEM_EXTERN_C_BEGIN
#define FEM_EXTERN_C_END
#endif

typedef int32_t fem_idx;
typedef int64_t fem_off;

#endif
