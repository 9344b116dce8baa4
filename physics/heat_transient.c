/* Heat's energy accounts: the heat flows now, and over a transient run (see heat_balance.h). */
#include "heat_balance.h"

#include "fem/error.h"
#include "fem/functional.h"
#include "physics/heat_qf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int heat_flows_now(const PhysicsState *s, HeatFlow *flows, double *source) {
    const Space *sp = s->sp;
    Vec R;
    double *reaction = malloc(sizeof(double) * (size_t)sp->ndofs);
    if (!reaction) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the heat balance");
    int status = vec_duplicate(&R, s->u);
    if (status) return free(reaction), status;
    status = op_residual_unconstrained(s->op, s->u, &R);
    if (!status) status = vec_download(&R, reaction);
    if (!status) status = heat_balance(s->md, s->pb, sp, s->u_host, reaction, flows, source);
    vec_destroy(&R);
    free(reaction);
    return status;
}

/* Where a transient run's accounts live in PhysicsTrack.v, for nb boundary conditions: the heat through each
 * and from the sources integrated in time [0, nb], the same now (at the last step) [nb + 1, 2 nb + 1], and
 * the initial energy, the integral of rho c T_0. */
static int track_now(int nb) {
    return nb + 1;
}
static int track_initial(int nb) {
    return 2 * nb + 2;
}

typedef struct {
    const Model *md;
    const HeatCtx *ctx;
} EnergyCtx;

static void energy_at(void *vctx, const CellPoint *p, double *out) {
    const EnergyCtx *e = vctx;
    out[0] = e->ctx->mat[e->md->cell_tags[p->block][p->cell]].rhoc * p->u[0];
}

/* The integral of rho c T [J, or J/m in 2D]. */
static int energy_of(const PhysicsState *s, const double *T, double *E) {
    EnergyCtx e = {s->md, s->md->ctx};
    return functional_cells(s->sp, T, NULL, s->pb->quadrature_degree, energy_at, &e, 1, E);
}

/* The energy of the state the first step starts from: the initial temperature with the fixed temperatures
 * applied (the stepper prescribes them from the start on, and the heat they bring in at that instant goes
 * through no boundary over a time step: counting it as stored would be an imbalance of the discretisation,
 * not of the physics). */
static int initial_energy(const PhysicsState *s, double *E) {
    const Model *md = s->md;
    double *T0 = malloc(sizeof(double) * (size_t)(s->sp->ndofs + 1));
    if (!T0) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the heat balance");
    for (int64_t i = 0; i < s->sp->ndofs; i++) T0[i] = s->pb->heat.initial_temperature;
    for (int64_t d = 0; d < md->ndir; d++) T0[md->dir_dofs[d]] = md->dir_values[d];
    int status = energy_of(s, T0, E);
    free(T0);
    return status;
}

/* The flows now into now[0, nb] (the sources last), with the spatial terms taken wholly at the new time:
 * a Crank-Nicolson step weighs them by theta = 1/2, and its heat through a boundary is the mean of the two
 * ends of the step, which heat_step forms. */
static int flows_at_step_end(const PhysicsState *s, double *now) {
    int nb = s->pb->heat.nbcs;
    HeatCtx *ctx = s->md->ctx;
    double a = ctx->a, theta = ctx->theta;
    HeatFlow *flows = calloc((size_t)nb + 1, sizeof *flows);
    if (!flows) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the heat balance");
    int status = FEM_OK;
    if (theta != 1.0) {
        heat_set_time(s->md, a, 1.0);
        status = op_update_ctx(s->op);
    }
    if (!status) status = heat_flows_now(s, flows, &now[nb]);
    if (theta != 1.0) { /* the stepper's state back, for the next step */
        heat_set_time(s->md, a, theta);
        int back = op_update_ctx(s->op);
        if (!status) status = back;
    }
    for (int i = 0; i < nb; i++) now[i] = flows[i].watts;
    free(flows);
    return status;
}

int heat_step(const PhysicsState *s, double t) {
    PhysicsTrack *tr = s->track;
    int nb = s->pb->heat.nbcs;
    if (!tr || track_initial(nb) >= PHYSICS_TRACK_MAX)
        return fem_fail(FEM_ERR_INTERNAL, "no room to account for the heat through %d boundaries", nb);
    double now[HEAT_MAX_BCS + 1], theta = ((const HeatCtx *)s->md->ctx)->theta;
    FEM_TRY(flows_at_step_end(s, now));
    if (tr->steps == 0) {
        tr->t = s->pb->time.start;
        FEM_TRY(initial_energy(s, &tr->v[track_initial(nb)]));
    }
    double dt = t - tr->t, *last = &tr->v[track_now(nb)];
    for (int i = 0; i <= nb; i++) { /* the scheme's weights: theta at the new end, 1 - theta at the old */
        tr->v[i] += dt * (theta * now[i] + (1.0 - theta) * last[i]);
        last[i] = now[i];
    }
    tr->steps++;
    tr->t = t;
    return FEM_OK;
}

int heat_transient_balance(const PhysicsState *s, const Report *rep) {
    const PhysicsTrack *tr = s->track;
    const HeatProblem *hp = &s->pb->heat;
    int nb = hp->nbcs, two_d = s->sp->mesh->dim == 2;
    if (!tr || tr->steps == 0) return fem_fail(FEM_ERR_INTERNAL, "no time step was accounted for");
    double E;
    FEM_TRY(energy_of(s, s->u_host, &E));
    const char *W = two_d ? "W/m" : "W", *J = two_d ? "J/m" : "J";
    const double *now = &tr->v[track_now(nb)];
    double stored = E - tr->v[track_initial(nb)], in = tr->v[nb], scale = fmax(fabs(stored), fabs(in));
    char key[PROBLEM_NAME_MAX + 24];
    for (int i = 0; i < nb; i++) {
        report_line(rep,
                    "  heat into the body through '%s' (%s): %.6g %s at t = %.6g s, %.6g %s over the run\n",
                    hp->bcs[i].boundary, heat_bc_kind(hp->bcs[i].kind), now[i], W, tr->t, tr->v[i], J);
        snprintf(key, sizeof key, "heat_in:%s", hp->bcs[i].boundary);
        rep->key(rep->ctx, key, now[i], W);
        snprintf(key, sizeof key, "heat_in_total:%s", hp->bcs[i].boundary);
        rep->key(rep->ctx, key, tr->v[i], J);
        in += tr->v[i];
        scale = fmax(scale, fabs(tr->v[i]));
    }
    double imbalance = scale > 0 ? fabs(stored - in) / scale : 0.0;
    rep->key(rep->ctx, "heat_source", now[nb], W);
    rep->key(rep->ctx, "heat_source_total", tr->v[nb], J);
    rep->key(rep->ctx, "stored_energy_change", stored, J);
    rep->key(rep->ctx, "energy_imbalance", imbalance, "");
    report_line(rep,
                "  heat from sources: %.6g %s at t = %.6g s, %.6g %s over the run\n"
                "  stored energy change (rho c (T_end - T_0) integrated): %.6g %s\n"
                "  energy balance: %.3g %s (%.2g of the largest term)\n",
                now[nb], W, tr->t, tr->v[nb], J, stored, J, stored - in, J, imbalance);
    return FEM_OK;
}
