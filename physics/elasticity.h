/* Elasticity: the model (materials, supports, loads, temperature) and its derived results. The q-point
 * physics and its formulas are in elasticity_qf.h: small-strain linear elasticity (thermal strain
 * alpha (T - T_ref) I added to the strain) and compressible neo-Hookean hyperelasticity in the reference
 * configuration (thermal strain multiplicative, F = F_e F_theta with F_theta = (1 + alpha (T - T_ref)) I;
 * pressure a follower load on the deformed surface).
 *
 * State kept per q-point for the Jacobian: none for linear elasticity (its tangent is constant); neo-Hookean
 * cells 10 doubles (H_e = F_e - I row-major, then theta), facets 6 (the current tangents dx/dxi_1, dx/dxi_2).
 *
 * The displacement field has ncomp = mesh dimension components, interleaved (dof = node * ncomp + c). 2D
 * meshes are plane strain or plane stress (pb->elasticity.plane); forces and energies in 2D are per metre of
 * depth.
 *
 * What a caller (the app) does with it:
 *  - Load stepping: elasticity_set_load(md, L) scales tractions, pressure, gravity and the thermal strain;
 *    then op_update_ctx(op). The prescribed displacements scale too, but they live in the solution vector:
 *    the caller sets u[md->dir_dofs[i]] = L * md->dir_values[i] (dir_values hold the full-load values) before
 *    each Newton solve. Linear elasticity is affine (one Newton step, NewtonSettings.linear = 1, one load
 *    step); neo-Hookean needs load steps for large loads (elasticity_nonlinear).
 *  - Krylov: CG when md->symmetric, else GMRES (neo-Hookean with a pressure follower load).
 *  - Coupled temperature (pb->elasticity.coupled_temperature): md->phys.uses_aux is 1; before any residual
 *    the caller sets op->aux to a device L-vector of the temperature (the scalar space of the same mesh and
 *    order); without it the q-points read T = 0 K. The derived results below take it on the device that solved.
 *  - Neo-Hookean with prescribed displacements: applied at once, a displaced boundary next to an interior at
 *    rest can fold the first layer of elements (NaN residual at Newton's first iterate): load steps help.
 *  - Output: elasticity_stress_nodes (Cauchy stress, von Mises, strain-energy density per node),
 *    elasticity_strain_energy, elasticity_reactions (from op_residual_unconstrained at the solution),
 *    elasticity_extremes. They use the current load factor: call them with the load at which u was solved. */
#ifndef FEMTO_ELASTICITY_H
#define FEMTO_ELASTICITY_H

#include "physics/model.h"

FEM_EXTERN_C_BEGIN

/* The elasticity model of pb on the vector space sp (sp->ncomp = mesh dimension). Load factor 1. */
int elasticity_model_create(const Problem *pb, const Space *sp, Model *md);
/* Refuses (FEM_ERR_INPUT, naming the problem file and the free motions) supports that leave a rigid-body
 * motion free: the displacement would not be determined. */
int elasticity_check_supports(const Problem *pb, const Space *sp, const Model *md);
/* Load factor L (see above): the caller re-uploads the constants with op_update_ctx. */
void elasticity_set_load(Model *md, double factor);
double elasticity_load(const Model *md);
/* 1 for the neo-Hookean model (Newton with load steps), 0 for linear elasticity (an affine residual). */
int elasticity_nonlinear(const Model *md);

/* At every node (equispaced lattice positions, averaged over the cells sharing a node): the Cauchy stress
 * [Pa] stress[nnodes][6] in ParaView's order XX YY ZZ XY YZ XZ (2D: ZZ is the plane-strain sigma_zz, 0 in
 * plane stress; YZ = XZ = 0), von_mises[nnodes] [Pa] and energy[nnodes], the strain-energy density [J/m^3]
 * per reference volume; von_mises and energy may be NULL. gradient[nnodes], unless NULL: the largest
 * |du_i/dx_j| at each node (the plausibility check's, physics/sanity.h), from the same evaluation, which then
 * sets up its points once for both. u: the displacement, T: the temperature field (device, scalar space of
 * the same mesh and order) for a coupled model or NULL; outputs on the host. */
int elasticity_stress_nodes(const Model *md, const Space *sp, const Vec *u, const double *T, double *stress,
                            double *von_mises, double *energy, double *gradient);
/* Total strain energy [J] (per metre of depth in 2D): the integral of the energy density (elastic part
 * only: thermal strain stores none). */
int elasticity_strain_energy(const Model *md, const Space *sp, const Vec *u, const double *T, double *energy);

typedef struct {
    char boundary[PROBLEM_NAME_MAX];
    const char *kind; /* "fixed", "displacement", "traction", "pressure" */
    double force[3];  /* [N] (per metre of depth in 2D) acting on the body */
} ElasticForce;

/* Forces on the body per boundary condition, at the current load factor: for fixed and displacement
 * boundaries the reaction of the support, summed over that boundary's nodes from `reaction` = the
 * unconstrained residual at the solution (op_residual_unconstrained, downloaded; a dof constrained by two
 * conditions counts for the first); for tractions and pressures the applied load (the integral of t, or of -p
 * n over the reference boundary, or over the current boundary for the neo-Hookean follower load). body[3]:
 * the body force int rho g (zero, and not integrated, without gravity). At equilibrium the forces and body
 * sum to zero. forces: room for pb->elasticity.nbcs entries. On a rank's part (md->dist) the reaction holds
 * the rank's owned dofs (its ghosts are not read) and every force is summed over the ranks (collective). */
int elasticity_reactions(const Model *md, const Problem *pb, const Space *sp, const Vec *u, const double *reaction,
                         ElasticForce *forces, double body[3]);

typedef struct {
    double max_displacement, max_displacement_at[3]; /* largest |u| [m] and its node's coordinates */
    double max_von_mises, max_von_mises_at[3];       /* largest nodal von Mises stress [Pa] and where */
} ElasticExtremes;

/* From the displacement u and the nodal von Mises stress (elasticity_stress_nodes; NULL: that part is 0),
 * both on the host at every node of sp; locations are sp->node_x. Collective over the ranks' parts when d is
 * set (sp = &d->space, fem/dist.h: each rank's owned nodes, ties to the lowest global node); d NULL: the
 * whole space. */
int elasticity_extremes(const Dist *d, const Space *sp, const double *u, const double *von_mises,
                        ElasticExtremes *ex);

FEM_EXTERN_C_END

#endif
