/* Lagrange bases on the reference cells (fem/element.h), checked from their tables alone.
 *
 * usage: test_basis SHAPE (line, tri, quad, tet, hex): every order, 1..3 on simplices, 1..8 on tensor shapes.
 *   - Kronecker: phi_i(x_j) = delta_ij at the lattice nodes (within 1e-12).
 *   - Partition of unity: sum_i phi_i = 1 and sum_i grad phi_i = 0 at 40 random points of the cell (values
 *     within 1e-12; gradients, which reach a few hundred for p = 8, within 1e-10).
 *   - Reproduction: the interpolant sum_i f(x_i) phi_i of every monomial f of the element's space (total
 *     degree <= p on simplices, degree <= p in each variable on tensor shapes: Q_p) equals f and its gradient
 *     grad f at random points, within 1e-12 (values) and 1e-10 (gradients), since such f lie in the span.
 *   - The check can fail: x^(p+1) is not reproduced (error above 1e-7, five orders above rounding; it is
 *     1e-5 at p = 8 where the nodal polynomial prod (x - x_i) is smallest), so the order is exactly p.
 *   - GLL points of orders 2, 3, 4 are the known roots: 1/2; (1 -+ 1/sqrt 5)/2; 1/2, (1 -+ sqrt(3/7))/2. */
#include "common/femto_test.h"
#include "fem/element.h"

#include <math.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A uniformly random point of the reference cell. */
static void random_point(Shape s, double xi[3]) {
    int d = shape_dim(s);
    for (;;) {
        double sum = 0.0;
        xi[0] = xi[1] = xi[2] = 0.0;
        for (int a = 0; a < d; a++) xi[a] = urand(), sum += xi[a];
        if (shape_is_tensor(s) || sum <= 1.0) return;
    }
}

/* Monomial with exponents e at xi, and its gradient. */
static double monomial(const int e[3], const double *xi, int d, double g[3]) {
    double v = 1.0;
    for (int a = 0; a < d; a++) v *= pow(xi[a], e[a]);
    for (int b = 0; b < d; b++) {
        g[b] = e[b] == 0 ? 0.0 : e[b] * pow(xi[b], e[b] - 1);
        for (int a = 0; a < d; a++)
            if (a != b) g[b] *= pow(xi[a], e[a]);
    }
    return v;
}

enum { NPTS = 40 };

static void check_order(Shape s, int p) {
    int n = lattice_count(s, p), d = shape_dim(s);
    double *nodes = malloc(sizeof(double) * 3 * n), *val = malloc(sizeof(double) * n * n);
    double pts[3 * NPTS], *pv = malloc(sizeof(double) * NPTS * n),
                          *pg = malloc(sizeof(double) * NPTS * n * d);
    for (int i = 0; i < n; i++) {
        int lat[3];
        lattice_node(s, p, i, lat);
        lattice_position(s, p, lat, &nodes[3 * i]);
    }
    CHECK(basis_tabulate(s, p, n, nodes, val, NULL), "%s p=%d: no basis", shape_name(s), p);
    double kron = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) kron = fmax(kron, fabs(val[j * n + i] - (i == j)));
    CHECK(kron < 1e-12, "%s p=%d: phi_i(x_j) differs from delta_ij by %.3g", shape_name(s), p, kron);

    for (int k = 0; k < NPTS; k++) random_point(s, &pts[3 * k]);
    basis_tabulate(s, p, NPTS, pts, pv, pg);
    double unity = 0.0, gsum = 0.0;
    for (int k = 0; k < NPTS; k++) {
        double sv = 0.0, sg[3] = {0, 0, 0};
        for (int i = 0; i < n; i++) {
            sv += pv[k * n + i];
            for (int b = 0; b < d; b++) sg[b] += pg[(k * n + i) * d + b];
        }
        unity = fmax(unity, fabs(sv - 1.0));
        for (int b = 0; b < d; b++) gsum = fmax(gsum, fabs(sg[b]));
    }
    CHECK(unity < 1e-12, "%s p=%d: sum of the basis differs from 1 by %.3g", shape_name(s), p, unity);
    CHECK(gsum < 1e-10, "%s p=%d: sum of the basis gradients is %.3g, not 0", shape_name(s), p, gsum);

    /* every monomial of the space: exponents are the lattice multi-indices of order p */
    double ev = 0.0, eg = 0.0, *fn = malloc(sizeof(double) * n);
    for (int m = 0; m < n; m++) {
        int e[3];
        double gn[3];
        lattice_node(s, p, m, e);
        for (int i = 0; i < n; i++) fn[i] = monomial(e, &nodes[3 * i], d, gn);
        for (int k = 0; k < NPTS; k++) {
            double g[3], fv = monomial(e, &pts[3 * k], d, g), iv = 0.0, ig[3] = {0, 0, 0};
            for (int i = 0; i < n; i++) {
                double fi = fn[i];
                iv += fi * pv[k * n + i];
                for (int b = 0; b < d; b++) ig[b] += fi * pg[(k * n + i) * d + b];
            }
            ev = fmax(ev, fabs(iv - fv));
            for (int b = 0; b < d; b++) eg = fmax(eg, fabs(ig[b] - g[b]));
        }
    }
    CHECK(ev < 1e-12, "%s p=%d: interpolated monomials of the space are off by %.3g", shape_name(s), p, ev);
    CHECK(eg < 1e-10, "%s p=%d: their interpolated gradients are off by %.3g", shape_name(s), p, eg);

    /* one degree more is not in the space */
    int e[3] = {p + 1, 0, 0};
    double worst = 0.0;
    for (int k = 0; k < NPTS; k++) {
        double g[3], gn[3], fv = monomial(e, &pts[3 * k], d, g), iv = 0.0;
        for (int i = 0; i < n; i++) iv += monomial(e, &nodes[3 * i], d, gn) * pv[k * n + i];
        worst = fmax(worst, fabs(iv - fv));
    }
    CHECK(worst > 1e-7, "%s p=%d: x^%d is reproduced to %.3g, so the basis is not of order %d", shape_name(s),
          p, p + 1, worst, p);
    free(fn);
    free(nodes);
    free(val);
    free(pv);
    free(pg);
}

static void check_gll(void) {
    double x[9];
    gll_points(2, x);
    CHECK(x[0] == 0.0 && fabs(x[1] - 0.5) < 1e-15 && x[2] == 1.0, "GLL p=2: %.17g %.17g %.17g", x[0], x[1],
          x[2]);
    gll_points(3, x);
    double a = 0.5 * (1 - 1 / sqrt(5.0));
    CHECK(fabs(x[1] - a) < 1e-15 && fabs(x[2] - (1 - a)) < 1e-15,
          "GLL p=3: %.17g %.17g, expected %.17g %.17g", x[1], x[2], a, 1 - a);
    gll_points(4, x);
    double b = 0.5 * (1 - sqrt(3.0 / 7.0));
    CHECK(fabs(x[1] - b) < 1e-15 && fabs(x[2] - 0.5) < 1e-15 && fabs(x[3] - (1 - b)) < 1e-15,
          "GLL p=4: %.17g %.17g %.17g, expected %.17g 0.5 %.17g", x[1], x[2], x[3], b, 1 - b);
    for (int p = 1; p <= 8; p++) {
        gll_points(p, x);
        double asym = 0.0;
        int ascending = 1;
        for (int i = 0; i <= p; i++) asym = fmax(asym, fabs(x[i] + x[p - i] - 1.0));
        for (int i = 0; i < p; i++) ascending &= x[i] < x[i + 1];
        CHECK(asym < 1e-15 && ascending, "GLL p=%d: not ascending or not symmetric (%.3g)", p, asym);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) return fprintf(stderr, "usage: %s line|tri|quad|tet|hex\n", argv[0]), 2;
    const char *names[] = {"", "line", "tri", "quad", "tet", "hex"};
    Shape s = SHAPE_NONE;
    for (int i = 1; i <= 5; i++)
        if (strcmp(argv[1], names[i]) == 0) s = (Shape)i;
    if (s == SHAPE_NONE) return fprintf(stderr, "unknown shape '%s'\n", argv[1]), 2;
    for (int p = 1; p <= element_max_order(s); p++) check_order(s, p);
    if (s == SHAPE_LINE) check_gll();
    return test_result(argv[1]);
}
