/* Heat's energy accounts for the summary (physics/heat_hooks.c): the heat into the body through every
 * boundary condition and from the sources, now, and over a transient run (physics/heat_transient.c) the same
 * integrated in time with the energy stored, closing the balance
 *     stored energy change  =  integral over time of (heat through the boundaries + sources).
 *
 * The heat through a fixed-temperature boundary is the unconstrained residual on its nodes (docs/design.md):
 * in a transient run that residual holds the time term too, so the balance closes to the solver's tolerance
 * for backward Euler (and BDF2 once its steps are alike); what is left is the time scheme's own error. */
#ifndef FEMTO_HEAT_BALANCE_H
#define FEMTO_HEAT_BALANCE_H

#include "physics/heat.h"
#include "physics/physics.h"

FEM_EXTERN_C_BEGIN

/* Heat into the body through each boundary condition (flows: room for pb->heat.nbcs) and from the sources
 * [W, or W/m in 2D], for the solution s->u with the operator in its current state. */
int heat_flows_now(const PhysicsState *s, HeatFlow *flows, double *source);

/* The step hook of a transient run: the heat flows at time t (the time derivative of the step, the spatial
 * terms at t), integrated into s->track with the scheme's weights. */
int heat_step(const PhysicsState *s, double t);

/* A transient run's summary of the energy: each boundary's heat at the final time and over the run, the
 * sources, the stored energy change and the balance's residual. */
int heat_transient_balance(const PhysicsState *s, const Report *rep);

FEM_EXTERN_C_END

#endif
