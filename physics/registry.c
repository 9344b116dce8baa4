/* The physics femto solves, in the order a run solves them (see physics.h): heat first, since elasticity may
 * read the temperature it solves. */
#include "physics/physics.h"

#include "fem/comm.h"
#include "fem/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

int physics_extremes(const Dist *d, const Space *sp, const double *u, int ncomp, DistExtremes *e) {
    if (ncomp == 1) return dist_node_extremes(d, sp, u, e);
    double *v = malloc(sizeof(double) * (size_t)(sp->nnodes + 1));
    int status = v ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the extremes");
    if (d) status = comm_agree(status);
    if (status) return free(v), status;
    for (int64_t n = 0; n < sp->nnodes; n++) {
        double s = 0.0;
        for (int c = 0; c < ncomp; c++) s += u[n * ncomp + c] * u[n * ncomp + c];
        v[n] = sqrt(s);
    }
    status = dist_node_extremes(d, sp, v, e);
    free(v);
    return status;
}
