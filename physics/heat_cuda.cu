/* The heat q-point functions as CUDA kernels (the physics itself is in heat_qf.h). */
#include "gpu/qfunction.cuh"
#include "physics/heat_qf.h"

FEM_QF_CUDA(heat_cell_residual_cuda, heat_cell_residual)
FEM_QF_CUDA(heat_cell_jacobian_cuda, heat_cell_jacobian)
FEM_QF_CUDA(heat_facet_residual_cuda, heat_facet_residual)
FEM_QF_CUDA(heat_facet_jacobian_cuda, heat_facet_jacobian)
