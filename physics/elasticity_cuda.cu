/* The elasticity q-point functions as CUDA kernels (the physics itself is in elasticity_qf.h). */
#include "gpu/qfunction.cuh"
#include "physics/elasticity_qf.h"

FEM_QF_CUDA(elas_linear_residual_cuda, elas_linear_residual)
FEM_QF_CUDA(elas_linear_jacobian_cuda, elas_linear_jacobian)
FEM_QF_CUDA(elas_nh_residual_cuda, elas_nh_residual)
FEM_QF_CUDA(elas_nh_jacobian_cuda, elas_nh_jacobian)
FEM_QF_CUDA(elas_linear_facet_residual_cuda, elas_linear_facet_residual)
FEM_QF_CUDA(elas_zero_facet_jacobian_cuda, elas_zero_facet_jacobian)
FEM_QF_CUDA(elas_nh_facet_residual_cuda, elas_nh_facet_residual)
FEM_QF_CUDA(elas_nh_facet_jacobian_cuda, elas_nh_facet_jacobian)
