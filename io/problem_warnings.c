/* problem_warnings: values a problem file may hold that are valid but probably a slip (see problem.h). */
#include "problem.h"

#include <stdio.h>

/* Below this, a temperature in kelvin is cryogenic, and far more often a temperature in degrees Celsius. */
static const double COLD_K = 100.0;

static void cold(const Problem *pb, FemWarnings *w, int line, const char *what, double T) {
    if (!(T < COLD_K)) return;
    fem_warn(w,
             "%s:%d: %s is %g K, below %g K; femto's temperatures are in kelvin (if %g is meant in degrees "
             "Celsius, write %g)",
             pb->path, line, what, T, COLD_K, T, T + 273.15);
}

void problem_warnings(const Problem *pb, FemWarnings *w) {
    char what[PROBLEM_NAME_MAX + 64];
    const HeatProblem *h = &pb->heat;
    if (h->initial_at.line)
        cold(pb, w, h->initial_at.line, "the initial temperature", h->initial_temperature);
    for (int i = 0; i < h->nbcs; i++) {
        const HeatBc *b = &h->bcs[i];
        int fixed = b->kind == HEAT_BC_TEMPERATURE;
        if (b->kind == HEAT_BC_FLUX) continue;
        snprintf(what, sizeof what, "the %s temperature on boundary '%s'", fixed ? "fixed" : "ambient",
                 b->boundary);
        cold(pb, w, b->at.line, what, fixed ? b->value : b->ambient);
    }
    const ElasticProblem *e = &pb->elasticity;
    if (e->has_temperature)
        cold(pb, w, e->temperature_at.line, "the temperature for thermal strain", e->temperature);
    for (int i = 0; i < e->nmaterials; i++) {
        const ElasticMaterial *m = &e->materials[i];
        snprintf(what, sizeof what, "the reference temperature of material '%s'", m->region);
        if (m->expansion != 0.0) cold(pb, w, m->at.line, what, m->reference_temperature);
    }
}
