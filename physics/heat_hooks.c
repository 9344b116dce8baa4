/* Heat as a run sees it (physics.h): checks, time discretisation, the heat flux for output, and the summary
 * with the energy balance. */
#include "fem/error.h"
#include "physics/heat_balance.h"
#include "physics/physics.h"
#include "physics/sanity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *heat_reads(const Problem *pb) {
    (void)pb;
    return NULL;
}

static int heat_transient(const Problem *pb) {
    return pb->time.scheme != TIME_STEADY;
}

static int heat_check(const Problem *pb, const Space *sp, const Model *md) {
    (void)sp;
    FEM_TRY(heat_check_level(pb, md));
    if (pb->time.scheme == TIME_STEADY) return FEM_OK;
    for (int i = 0; i < pb->heat.nmaterials; i++)
        if (!(pb->heat.materials[i].density > 0 && pb->heat.materials[i].specific_heat > 0))
            return fem_fail(FEM_ERR_INPUT, "%s:%d: a transient run needs density and specific-heat on material '%s'",
                            pb->path, pb->heat.materials[i].at.line, pb->heat.materials[i].region);
    return FEM_OK;
}

static void heat_describe(const Problem *pb, const Model *md, char *buf, size_t len) {
    snprintf(buf, len, "%s%s", pb->time.scheme == TIME_STEADY ? "steady" : "transient",
             md->linear ? "" : ", nonlinear");
}

static double heat_initial(const Problem *pb) {
    return pb->heat.initial_temperature;
}

static int heat_fields(const PhysicsState *s, NodalField *out, int *n) {
    *n = 0;
    if (!s->pb->output.flux) return FEM_OK;
    double *q = malloc(sizeof(double) * 3 * (size_t)(s->sp->nnodes + 1));
    if (!q) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the heat flux");
    int status = heat_flux_nodes(s->md, s->sp, s->u, q);
    if (status) return free(q), status;
    out[(*n)++] = (NodalField){"heat_flux", "W/m^2", 3, q};
    return FEM_OK;
}

/* Heat into the body through every boundary plus the sources must vanish (steady runs). */
static int energy_balance(const PhysicsState *s, const Report *rep) {
    const Problem *pb = s->pb;
    HeatFlow *flows = calloc((size_t)pb->heat.nbcs + 1, sizeof *flows);
    double source = 0.0;
    int status = flows ? heat_flows_now(s, flows, &source) : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    if (!status) {
        const char *unit = s->sp->mesh->dim == 2 ? "W/m" : "W";
        double total = source, scale = fabs(source);
        for (int i = 0; i < pb->heat.nbcs; i++) {
            report_line(rep, "  heat into the body through '%s' (%s): %.6g %s\n", flows[i].boundary, flows[i].kind,
                        flows[i].watts, unit);
            total += flows[i].watts;
            char key[PROBLEM_NAME_MAX + 16];
            snprintf(key, sizeof key, "heat_in:%s", flows[i].boundary);
            rep->key(rep->ctx, key, flows[i].watts, unit);
            scale = fmax(scale, fabs(flows[i].watts));
        }
        rep->key(rep->ctx, "heat_source", source, unit);
        rep->key(rep->ctx, "energy_imbalance", scale > 0 ? fabs(total) / scale : 0.0, "");
        report_line(rep, "  heat from sources: %.6g %s\n  energy balance: %.3g %s (%.2g of the largest term)\n", source,
                    unit, total, unit, scale > 0 ? fabs(total) / scale : 0.0);
    }
    free(flows);
    return status;
}

static int heat_summary(const PhysicsState *s, const Report *rep) {
    DistExtremes T;
    FEM_TRY(dist_node_extremes(s->md->dist, s->sp, s->u_host, 1, &T));
    sanity_heat(&T, rep->warnings);
    const double *xl = T.x[0], *xh = T.x[1];
    rep->key(rep->ctx, "temperature_min", T.value[0], "K");
    rep->key(rep->ctx, "temperature_max", T.value[1], "K");
    report_line(rep, "  temperature: min %.6g K at (%.4g, %.4g, %.4g), max %.6g K at (%.4g, %.4g, %.4g)\n",
                T.value[0], xl[0], xl[1], xl[2], T.value[1], xh[0], xh[1], xh[2]);
    int status = s->pb->time.scheme != TIME_STEADY ? heat_transient_balance(s, rep) : energy_balance(s, rep);
    if (status) report_line(rep, "  (energy balance not available: %s)\n", fem_last_error());
    return FEM_OK;
}

const PhysicsType heat_type = {
    .name = "heat",
    .field = "temperature",
    .unit = "K",
    .components = NULL,
    .reads = heat_reads,
    .transient = heat_transient,
    .create = heat_model_create,
    .check = heat_check,
    .describe = heat_describe,
    .initial = heat_initial,
    .set_load = NULL,
    .set_time = heat_set_time,
    .fields = heat_fields,
    .step = heat_step,
    .summary = heat_summary,
};
