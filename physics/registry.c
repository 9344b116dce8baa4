/* The physics femto solves, in the order a run solves them (see physics.h): heat first, since elasticity may
 * read the temperature it solves. */
#include "physics/physics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

extern const PhysicsType heat_type, elasticity_type, reaction_diffusion_type;

const PhysicsType *const physics_types[] = {&heat_type, &elasticity_type, &reaction_diffusion_type};
const int physics_ntypes = (int)(sizeof physics_types / sizeof physics_types[0]);

void report_line(const Report *rep, const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    rep->line(rep->ctx, text);
}

void physics_extremes(const Space *sp, const double *u, int ncomp, int64_t *imin, int64_t *imax, double *vmin,
                      double *vmax) {
    *imin = *imax = 0;
    *vmin = INFINITY, *vmax = -INFINITY;
    for (int64_t n = 0; n < sp->nnodes; n++) {
        double v = 0.0;
        if (ncomp == 1)
            v = u[n];
        else
            for (int c = 0; c < ncomp; c++) v += u[n * ncomp + c] * u[n * ncomp + c];
        if (ncomp > 1) v = sqrt(v);
        if (v < *vmin) *vmin = v, *imin = n;
        if (v > *vmax) *vmax = v, *imax = n;
    }
}
