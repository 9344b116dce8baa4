/* Every q-point function of every physics, in one list: each backend instantiates it into a table indexed
 * by QF_<name>, and a physics names its q-functions by those ids
 * (QF_DESCRIBE below). Adding a q-function is its FEM_HD point function in the physics' *_qf.h and one entry
 * here; no backend file changes. */
#ifndef FEMTO_PHYSICS_QFUNCTIONS_H
#define FEMTO_PHYSICS_QFUNCTIONS_H

#include "physics/elasticity_qf.h"
#include "physics/heat_qf.h"
#include "physics/reaction_diffusion_qf.h"

/* fem's own (fem/qfunction.h: the geometry at evaluation points, whose id fem knows), the operator's
 * (residual and Jacobian, cells and facets), then the outputs' (fem/evaluate.h); a backend that specialises
 * only the operator's instantiates that list alone, by id. */
#define FEMTO_QFUNCTIONS(X) FEMTO_FEM_QFUNCTIONS(X) FEMTO_OPERATOR_QFUNCTIONS(X) FEMTO_OUTPUT_QFUNCTIONS(X)
#define FEMTO_OPERATOR_QFUNCTIONS(X)                                                                         \
    X(heat_cell_residual)                                                                                    \
    X(heat_cell_jacobian)                                                                                    \
    X(heat_facet_residual)                                                                                   \
    X(heat_facet_jacobian)                                                                                   \
    X(elas_linear_residual)                                                                                  \
    X(elas_linear_jacobian)                                                                                  \
    X(elas_nh_residual)                                                                                      \
    X(elas_nh_jacobian)                                                                                      \
    X(elas_linear_facet_residual)                                                                            \
    X(elas_zero_facet_jacobian)                                                                              \
    X(elas_nh_facet_residual)                                                                                \
    X(elas_nh_facet_jacobian)                                                                                \
    X(rd_cell)                                                                                               \
    X(heat_cell_jacobian_qdata)
#define FEMTO_OUTPUT_QFUNCTIONS(X)                                                                           \
    X(heat_flux_out)                                                                                         \
    X(heat_source_out)                                                                                       \
    X(heat_flow_out)                                                                                         \
    X(heat_energy_out)                                                                                       \
    X(elas_stress_out)                                                                                       \
    X(elas_energy_out)                                                                                       \
    X(elas_body_out)                                                                                         \
    X(elas_load_out)                                                                                         \
    X(elas_gradient_out)

/* The operator's cell q-functions again, each with its component count (1, or 0 for one per space dimension),
 * the layout of the records it reads as `geo` (0: the cells' geometry, else a QfQdata layout of
 * fem/qfunction.h) and what it writes (fem/qfunction.h's QfField eval: QF_VALUE | QF_GRAD, s and f; QF_GRAD,
 * f alone with s = 0, which a kernel need not integrate; the physics' descriptor of the same id says the
 * same, which test_cpu_fused checks): backends that specialise a kernel on these (gpu/fused_simplex.cu's
 * register kernel, gpu/fused_tensor.cu) instantiate this list; a cell q-function missing here runs on the
 * generic kernels. */
#define FEMTO_CELL_QFUNCTIONS(X)                                                                             \
    X(heat_cell_residual, 1, 0, QF_VALUE | QF_GRAD)                                                          \
    X(heat_cell_jacobian, 1, 0, QF_VALUE | QF_GRAD)                                                          \
    X(elas_linear_residual, 0, 0, QF_VALUE | QF_GRAD)                                                        \
    X(elas_linear_jacobian, 0, 0, QF_GRAD)                                                                   \
    X(elas_nh_residual, 0, 0, QF_VALUE | QF_GRAD)                                                            \
    X(elas_nh_jacobian, 0, 0, QF_GRAD)                                                                       \
    X(rd_cell, 1, 0, QF_VALUE | QF_GRAD)                                                                     \
    X(heat_cell_jacobian_qdata, 1, QF_QDATA_SYM, QF_GRAD)

#define FEMTO_QF_ID_(name) QF_##name,
enum { FEMTO_QFUNCTIONS(FEMTO_QF_ID_) QF_COUNT };
#undef FEMTO_QF_ID_
/* fem's q-functions come first, so that the ids fem/qfunction.h names are theirs (a compile-time check) */
enum { QF_FEM_IDS_HOLD_ = 1 / ((int)QF_geometry_out == (int)QF_ID_GEOMETRY) };

/* The id and name fields of a QFunction descriptor: QFunction q = {QF_DESCRIBE(heat_cell_residual), ...}. */
#define QF_DESCRIBE(fn) .id = QF_##fn, .name = #fn

/* What cell q-function id writes, by the list above (QF_VALUE | QF_GRAD for one not on it). */
static inline unsigned qf_cell_writes(int id) {
#define QF_CELL_WRITES_(fn, nc, gl, out)                                                                     \
    if (id == QF_##fn) return (out);
    FEMTO_CELL_QFUNCTIONS(QF_CELL_WRITES_)
#undef QF_CELL_WRITES_
    return QF_VALUE | QF_GRAD;
}

#ifdef __cplusplus
/* The same at compile time, for kernels that take the point function as a template argument
 * (gpu/fused_simplex.cu, gpu/fused_tensor.cu). */
template <void (*POINT)(const QfArgs *, int64_t)> FEM_HD static constexpr unsigned qf_point_writes() {
#define QF_POINT_WRITES_(fn, nc, gl, out)                                                                    \
    if (POINT == fn) return (out);
    FEMTO_CELL_QFUNCTIONS(QF_POINT_WRITES_)
#undef QF_POINT_WRITES_
    return QF_VALUE | QF_GRAD;
}
/* Whether it writes s: where it does not (s = 0), the kernels leave out the terms of s. */
template <void (*POINT)(const QfArgs *, int64_t)> FEM_HD static constexpr bool qf_point_writes_s() {
    return (qf_point_writes<POINT>() & QF_VALUE) != 0;
}
#endif

#endif
