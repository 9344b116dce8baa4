/* Heat's energy accounts: the heat flows now, and over a transient run (see heat_balance.h). */
#include "heat_balance.h"

#include "fem/error.h"
#include "physics/heat_qf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Where a transient run's accounts live in PhysicsTrack.v, for nb boundary conditions, each a block of nb + 1
 * values (the sources last): the heat integrated in time, the heat now (at the last step), the spatial part
 * of it at the last step (Crank-Nicolson), the last step's increment (BDF2); then the initial energy, the
 * integral of rho c T_0. */
enum { TRACK_INTEGRAL, TRACK_NOW, TRACK_SPATIAL, TRACK_INCREMENT, TRACK_INITIAL };
static double *track(PhysicsTrack *tr, int nb, int block) {
    return &tr->v[block * (nb + 1)];
}

int heat_flows_now(const PhysicsState *s, HeatFlow *flows, double *source) {
    const Space *sp = s->sp;
    /* the sources' total is the same at every step (a constant per material): after a transient run's first
     * step it is the one kept with that step's flows, not integrated over every cell again */
    double *total = source;
    if (s->track && s->track->steps > 0) *source = track(s->track, s->pb->heat.nbcs, TRACK_NOW)[s->pb->heat.nbcs], total = NULL;
    double *reaction = malloc(sizeof(double) * (size_t)(sp->ndofs + 1));
    if (!reaction) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the heat balance");
    int status = s->residual(s, reaction); /* collective over MPI ranks */
    if (!status) status = heat_balance(s->md, s->pb, sp, s->u, reaction, flows, total);
    free(reaction);
    return status;
}


/* The integral of rho c T [J, or J/m in 2D] for a temperature T on the host. */
static int energy_of(const PhysicsState *s, const double *T, double *E) {
    Vec v;
    FEM_TRY(vec_duplicate(&v, s->u));
    int status = vec_upload(&v, T);
    if (!status) status = heat_energy(s->md, s->sp, &v, s->pb->quadrature_degree, E);
    vec_destroy(&v);
    return status;
}

/* The initial energy (the integral of rho c T_0, T_0 the initial temperature) into *E, and the heat each
 * fixed temperature brings in at the start into in[i]: the stepper prescribes the fixed temperatures from
 * the first instant on, and the energy of that jump, the integral of rho c (T_fixed - T_0) over its nodes'
 * cells, enters in no time step (the exact solution's flux is infinite at that instant, and integrable). */
static int initial_energy(const PhysicsState *s, double *E, double *in) {
    const Model *md = s->md;
    const HeatProblem *hp = &s->pb->heat;
    int64_t n = s->sp->ndofs;
    double *T = malloc(sizeof(double) * (size_t)(n + 1)), *x = calloc((size_t)n + 1, sizeof(double));
    char *claimed = calloc((size_t)n + 1, 1); /* a node shared by two fixed temperatures counts once */
    int status =
        T && x && claimed ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the heat balance");
    for (int64_t i = 0; !status && i < n; i++) T[i] = hp->initial_temperature;
    if (!status) status = energy_of(s, T, E);
    for (int64_t d = 0; !status && d < md->ndir; d++) T[md->dir_dofs[d]] = md->dir_values[d];
    for (int b = 0; b < hp->nbcs && !status; b++) {
        const PhysicalGroup *g;
        fem_idx *nodes;
        int64_t k = 0;
        if (hp->bcs[b].kind != HEAT_BC_TEMPERATURE) continue;
        status = model_boundary(s->pb, s->sp->mesh, hp->bcs[b].boundary, hp->bcs[b].at.line, &g);
        if (!status) status = space_group_nodes(s->sp, g, &nodes, &k);
        if (status) break;
        for (int64_t j = 0; j < k; j++)
            if (!claimed[nodes[j]])
                claimed[nodes[j]] = 1, x[nodes[j]] = T[nodes[j]] - hp->initial_temperature;
        status = energy_of(s, x, &in[b]);
        for (int64_t j = 0; j < k; j++) x[nodes[j]] = 0.0;
        free(nodes);
    }
    free(T);
    free(x);
    free(claimed);
    return status;
}

/* The flows now into now[0, nb] (the sources last) with the time derivative a T + h of the step (a = 0:
 * none) and the spatial terms taken wholly at the new time; the stepper's state is put back after. */
static int flows_with(const PhysicsState *s, double a, double *now) {
    int nb = s->pb->heat.nbcs;
    HeatCtx *ctx = s->md->ctx;
    double a0 = ctx->a, theta0 = ctx->theta;
    int change = a != a0 || theta0 != 1.0, status = FEM_OK;
    HeatFlow *flows = calloc((size_t)nb + 1, sizeof *flows);
    if (!flows) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the heat balance");
    if (change) {
        heat_set_time(s->md, a, 1.0);
        status = op_update_ctx(s->op);
    }
    if (!status) status = heat_flows_now(s, flows, &now[nb]);
    if (change) {
        heat_set_time(s->md, a0, theta0);
        int back = op_update_ctx(s->op);
        if (!status) status = back;
    }
    for (int i = 0; i < nb; i++) now[i] = flows[i].watts;
    free(flows);
    return status;
}

/* The heat of one step is integrated as the scheme itself integrates it, so that the balance closes to the
 * solver's tolerance: backward Euler takes the flows at the new time over the step; Crank-Nicolson (theta =
 * 1/2) the time term at the new time and the mean of the spatial terms at both ends; BDF2, whose time
 * derivative (3/2 d_n+1 - 1/2 d_n) / dt mixes two steps' energy changes d, the increment d_n+1 = 2/3 dt Q +
 * 1/3 d_n that this implies (exact for the energy, and dt Q for steady flows). */
int heat_step(const PhysicsState *s, double t) {
    PhysicsTrack *tr = s->track;
    int nb = s->pb->heat.nbcs;
    if (!tr || TRACK_INITIAL * (nb + 1) >= PHYSICS_TRACK_MAX)
        return fem_fail(FEM_ERR_INTERNAL, "no room to account for the heat through %d boundaries", nb);
    const HeatCtx *ctx = s->md->ctx;
    double full[HEAT_MAX_BCS + 1], spatial[HEAT_MAX_BCS + 1], a = ctx->a, theta = ctx->theta;
    if (tr->steps == 0) {
        tr->t = s->pb->time.start;
        FEM_TRY(initial_energy(s, track(tr, nb, TRACK_INITIAL), track(tr, nb, TRACK_INTEGRAL)));
    }
    double dt = t - tr->t;
    int cn = s->pb->time.scheme == TIME_CRANK_NICOLSON, bdf2 = fabs(a * dt - 1.5) < 1e-9;
    FEM_TRY(flows_with(s, a, full));
    if (cn) FEM_TRY(flows_with(s, 0.0, spatial));
    double *sum = track(tr, nb, TRACK_INTEGRAL), *now = track(tr, nb, TRACK_NOW);
    double *last_spatial = track(tr, nb, TRACK_SPATIAL), *last_inc = track(tr, nb, TRACK_INCREMENT);
    for (int i = 0; i <= nb; i++) {
        double inc = dt * full[i];
        if (cn) inc -= dt * (1.0 - theta) * (spatial[i] - last_spatial[i]), last_spatial[i] = spatial[i];
        if (bdf2) inc = 2.0 / 3.0 * inc + last_inc[i] / 3.0;
        sum[i] += inc;
        last_inc[i] = inc;
        now[i] = full[i];
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
    FEM_TRY(heat_energy(s->md, s->sp, s->u, s->pb->quadrature_degree, &E));
    const char *W = two_d ? "W/m" : "W", *J = two_d ? "J/m" : "J";
    PhysicsTrack *acc = s->track;
    const double *now = track(acc, nb, TRACK_NOW), *sum = track(acc, nb, TRACK_INTEGRAL);
    double stored = E - *track(acc, nb, TRACK_INITIAL), in = sum[nb], scale = fmax(fabs(stored), fabs(in));
    char key[PROBLEM_NAME_MAX + 24];
    for (int i = 0; i < nb; i++) {
        report_line(rep,
                    "  heat into the body through '%s' (%s): %.6g %s at t = %.6g s, %.6g %s over the run\n",
                    hp->bcs[i].boundary, heat_bc_kind(hp->bcs[i].kind), now[i], W, tr->t, sum[i], J);
        snprintf(key, sizeof key, "heat_in:%s", hp->bcs[i].boundary);
        rep->key(rep->ctx, key, now[i], W);
        snprintf(key, sizeof key, "heat_in_total:%s", hp->bcs[i].boundary);
        rep->key(rep->ctx, key, sum[i], J);
        in += sum[i];
        scale = fmax(scale, fabs(sum[i]));
    }
    double imbalance = scale > 0 ? fabs(stored - in) / scale : 0.0;
    rep->key(rep->ctx, "heat_source", now[nb], W);
    rep->key(rep->ctx, "heat_source_total", sum[nb], J);
    rep->key(rep->ctx, "stored_energy_change", stored, J);
    rep->key(rep->ctx, "energy_imbalance", imbalance, "");
    report_line(rep,
                "  heat from sources: %.6g %s at t = %.6g s, %.6g %s over the run\n"
                "  stored energy change (rho c (T_end - T_0) integrated): %.6g %s\n"
                "  energy balance: %.3g %s (%.2g of the largest term)\n",
                now[nb], W, tr->t, sum[nb], J, stored, J, stored - in, J, imbalance);
    return FEM_OK;
}
