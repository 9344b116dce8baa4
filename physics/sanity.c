/* Plausibility of a solution (see sanity.h). */
#include "sanity.h"

#include <math.h>

void sanity_heat(const DistExtremes *T, FemWarnings *w) {
    const double *x = T->x[0];
    if (T->node[0] >= 0 && T->value[0] < 0.0)
        fem_warn(
            w,
            "the lowest temperature, %.6g K at (%.4g, %.4g, %.4g), is below absolute zero: check the units "
            "of the heat fluxes (W/m^2), sources (W/m^3) and conductivities (W/(m K))",
            T->value[0], x[0], x[1], x[2]);
}

int sanity_elasticity(const Dist *d, const Space *sp, double max_displacement, const double at[3],
                      const double *gradient, FemWarnings *w) {
    double lo[3], hi[3], size = 0.0; /* the body's largest extent along x, y or z [m] */
    FEM_TRY(dist_bounding_box(d, sp->mesh, lo, hi));
    for (int c = 0; c < 3; c++) size = fmax(size, hi[c] - lo[c]);
    if (max_displacement > size)
        fem_warn(
            w,
            "the largest displacement, %.3g m at (%.4g, %.4g, %.4g), is larger than the body itself (%.3g m "
            "across): check the units of the elastic constants (Pa) and of the loads (Pa, m, m/s^2)",
            max_displacement, at[0], at[1], at[2], size);
    if (!gradient) return FEM_OK;
    DistExtremes g;
    FEM_TRY(dist_node_extremes(d, sp, gradient, 1, &g));
    if (g.node[1] >= 0 && g.value[1] > 1.0)
        fem_warn(
            w,
            "the displacement gradient reaches %.3g at (%.4g, %.4g, %.4g), far beyond the small strains a "
            "linear model describes: check the units of the elastic constants (Pa) and of the loads, or use "
            "model=\"neo-hookean\"",
            g.value[1], g.x[1][0], g.x[1][1], g.x[1][2]);
    return FEM_OK;
}
