/* Heat transfer: the model (materials, boundary conditions, time discretisation) and its derived results. */
#ifndef FEMTO_HEAT_H
#define FEMTO_HEAT_H

#include "physics/model.h"

FEM_EXTERN_C_BEGIN

/* The heat model of pb on the scalar space sp. */
int heat_model_create(const Problem *pb, const Space *sp, Model *md);
/* Refuses (FEM_ERR_INPUT, naming the problem file) a steady problem whose boundary conditions leave the
 * temperature level free (heat fluxes only). */
int heat_check_level(const Problem *pb, const Model *md);
/* Time discretisation: the time derivative is a T + h (h: the auxiliary field), spatial terms weigh theta. */
void heat_set_time(Model *md, double a, double theta);
/* Heat flux -k A grad T [W/m^2] at every node (equispaced lattice positions), out[nnodes][3] (host); T: the
 * temperature on the device that solved it. */
int heat_flux_nodes(const Model *md, const Space *sp, const Vec *T, double *out);

/* The energy rho c T integrated over the body [J, or J/m in 2D] for the temperature T (device). */
int heat_energy(const Model *md, const Space *sp, const Vec *T, int qdegree, double *E);

typedef struct {
    char boundary[PROBLEM_NAME_MAX];
    const char *kind; /* "temperature", "flux", "convection", "radiation" */
    double watts;     /* heat into the body [W] (per metre of depth in 2D) */
} HeatFlow;

/* "temperature", "flux", "convection", "radiation" for a HeatBcKind. */
const char *heat_bc_kind(int kind);

/* Heat into the body through each boundary condition (Dirichlet ones from the unconstrained residual
 * `reaction`, natural ones by integrating their flux) and the source integral (source NULL: not computed).
 * flows has room for pb->heat.nbcs entries. On a rank's part (md->dist) the reaction holds the rank's owned
 * dofs (its ghosts are not read) and every flow is summed over the ranks (collective). */
int heat_balance(const Model *md, const Problem *pb, const Space *sp, const Vec *T, const double *reaction,
                 HeatFlow *flows, double *source);

FEM_EXTERN_C_END

#endif
