/* Plausibility of a solution (see sanity.h). */
#include "sanity.h"


#include <math.h>
#include <stdlib.h>

void sanity_heat(const Space *sp, const double *T, FemWarnings *w) {
    int64_t imin = 0;
    for (int64_t i = 1; i < sp->nnodes; i++)
        if (T[i] < T[imin]) imin = i;
    const double *x = &sp->node_x[3 * imin];
    if (sp->nnodes > 0 && T[imin] < 0.0)
        fem_warn(
            w,
            "the lowest temperature, %.6g K at (%.4g, %.4g, %.4g), is below absolute zero: check the units "
            "of the heat fluxes (W/m^2), sources (W/m^3) and conductivities (W/(m K))",
            T[imin], x[0], x[1], x[2]);
}

/* The largest extent of the body along x, y or z [m]. */
static double body_size(const Mesh *m) {
    double lo[3], hi[3], size = 0.0;
    mesh_bounding_box(m, lo, hi);
    for (int c = 0; c < 3; c++) size = fmax(size, hi[c] - lo[c]);
    return size;
}

/* The node where the function `nodal` (one value per node) is largest. */
static int64_t largest(const double *nodal, int64_t n) {
    int64_t imax = 0;
    for (int64_t i = 1; i < n; i++)
        if (nodal[i] > nodal[imax]) imax = i;
    return imax;
}

int sanity_elasticity(const Space *sp, const double *u, const double *gradient, FemWarnings *w) {
    int nc = sp->ncomp;
    double *nodal = fem_malloc(sizeof(double) * (size_t)(sp->nnodes + 1), "plausibility checks");
    if (!nodal) return FEM_ERR_INTERNAL;
    for (int64_t i = 0; i < sp->nnodes; i++) {
        double s = 0.0;
        for (int c = 0; c < nc; c++) s += u[i * nc + c] * u[i * nc + c];
        nodal[i] = sqrt(s);
    }
    int64_t i = largest(nodal, sp->nnodes);
    double size = body_size(sp->mesh);
    const double *x = &sp->node_x[3 * i];
    if (sp->nnodes > 0 && nodal[i] > size)
        fem_warn(
            w,
            "the largest displacement, %.3g m at (%.4g, %.4g, %.4g), is larger than the body itself (%.3g m "
            "across): check the units of the elastic constants (Pa) and of the loads (Pa, m, m/s^2)",
            nodal[i], x[0], x[1], x[2], size);
    free(nodal);
    if (!gradient || sp->nnodes == 0) return FEM_OK;
    i = largest(gradient, sp->nnodes);
    x = &sp->node_x[3 * i];
    if (gradient[i] > 1.0)
        fem_warn(
            w,
            "the displacement gradient reaches %.3g at (%.4g, %.4g, %.4g), far beyond the small strains a "
            "linear model describes: check the units of the elastic constants (Pa) and of the loads, or use "
            "model=\"neo-hookean\"",
            gradient[i], x[0], x[1], x[2]);
    return FEM_OK;
}
