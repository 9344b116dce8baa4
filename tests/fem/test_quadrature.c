/* Quadrature rules (fem/quadrature.h) and the q-point geometry (fem/geometry.h).
 *
 * usage: test_quadrature rules
 *   For every shape and degree 1..31: weights positive and summing to the reference volume (1, 1/2, 1, 1/6,
 *   1, within 1e-14 relative), points inside the cell, and every monomial of the rule's degree (total degree
 *   on simplices, per-variable degree on tensor shapes) integrated exactly: x^a y^b z^c over the unit simplex
 *   is a! b! c! / (a + b + c + d)!, over [0,1]^d it is prod 1/(a_k + 1) (within 1e-14 relative to the
 *   reference volume). On hexahedra above degree 11 only the exponents 0, 1, 2, d-2, d-1, d per axis are
 *   integrated, and the rule is checked to be the product of its 1D rule, which is checked in full. The 1D
 *   rule with n <= 10 points is not exact for x^(2n): its relative error, above 1e-12, shows the check can
 *   fail.
 *
 * usage: test_quadrature volume MESH.geo EXPECTED
 *   The weights w det J of geometry_cells summed over every cell of the mesh equal the mesh's volume:
 *   EXPECTED (a box), or, with EXPECTED = "cells", the sum of the volumes of its straight cells computed
 *   directly from their corners (|det [x1-x0, x2-x0, x3-x0]| / 6, or the triangle's |cross| / 2). Within
 *   1e-13 relative, for quadrature degrees 1, 2, 5 and 9. */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/geometry.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static double factorial(int n) {
    double f = 1.0;
    for (int i = 2; i <= n; i++) f *= i;
    return f;
}

static double exact_integral(Shape s, const int e[3]) {
    int d = shape_dim(s);
    if (shape_is_tensor(s)) {
        double v = 1.0;
        for (int a = 0; a < d; a++) v /= e[a] + 1.0;
        return v;
    }
    double num = 1.0;
    int sum = 0;
    for (int a = 0; a < d; a++) num *= factorial(e[a]), sum += e[a];
    return num / factorial(sum + d);
}

static void check_rules(void) {
    const Shape shapes[] = {SHAPE_LINE, SHAPE_TRI, SHAPE_QUAD, SHAPE_TET, SHAPE_HEX};
    for (int si = 0; si < 5; si++) {
        Shape s = shapes[si];
        int d = shape_dim(s);
        double vol = shape_reference_volume(s), worst_sum = 0.0, worst_mono = 0.0;
        int outside = 0, nonpositive = 0, worst_deg = 0;
        for (int deg = 1; deg <= QUADRATURE_MAX_DEGREE; deg++) {
            Quadrature q;
            CHECK_OK(quadrature_create(s, deg, &q));
            double sum = 0.0;
            for (int k = 0; k < q.npts; k++) {
                sum += q.w[k];
                nonpositive += !(q.w[k] > 0.0);
                double t = 0.0;
                for (int a = 0; a < d; a++) {
                    outside += q.xi[3 * k + a] <= 0.0 || q.xi[3 * k + a] >= 1.0;
                    t += q.xi[3 * k + a];
                }
                outside += !shape_is_tensor(s) && t >= 1.0;
            }
            worst_sum = fmax(worst_sum, fabs(sum - vol) / vol);
            /* monomials with exponents up to deg (total on simplices), from tables of powers */
            int e[3], np1 = deg + 1;
            int lim[3] = {deg, d > 1 ? deg : 0, d > 2 ? deg : 0};
            double *pw = malloc(sizeof(double) * (size_t)q.npts * 3 * np1);
            for (int k = 0; k < q.npts; k++)
                for (int a = 0; a < 3; a++) {
                    double *t = &pw[((size_t)k * 3 + a) * np1];
                    t[0] = 1.0;
                    for (int j = 1; j <= deg; j++) t[j] = t[j - 1] * q.xi[3 * k + a];
                }
            /* hexahedra above degree 11: the exponents 0, 1, 2, deg-2, deg-1, deg per axis (the rule's
             * product structure, checked below, carries exactness to the rest) */
            int sparse = s == SHAPE_HEX && deg > 11;
            for (e[2] = 0; e[2] <= lim[2]; e[2]++)
                for (e[1] = 0; e[1] <= lim[1]; e[1]++)
                    for (e[0] = 0; e[0] <= lim[0]; e[0]++) {
                        if (!shape_is_tensor(s) && e[0] + e[1] + e[2] > deg) continue;
                        if (sparse && ((e[0] > 2 && e[0] < deg - 2) || (e[1] > 2 && e[1] < deg - 2) ||
                                       (e[2] > 2 && e[2] < deg - 2)))
                            continue;
                        double v = 0.0;
                        for (int k = 0; k < q.npts; k++) {
                            const double *t = &pw[(size_t)k * 3 * np1];
                            v += q.w[k] * t[e[0]] * t[np1 + e[1]] * t[2 * np1 + e[2]];
                        }
                        double err = fabs(v - exact_integral(s, e)) / vol;
                        if (err > worst_mono) worst_mono = err, worst_deg = deg;
                    }
            free(pw);
            if (shape_is_tensor(s)) { /* points and weights are the products of the 1D rule's, x fastest */
                int n = q.n1d, bad = q.npts != (d == 1 ? n : d == 2 ? n * n : n * n * n);
                for (int k = 0; k < q.npts && !bad; k++) {
                    int idx[3] = {k % n, (k / n) % n, k / (n * n)};
                    double w = 1.0;
                    for (int a = 0; a < d; a++) {
                        bad |= q.xi[3 * k + a] != q.xi1d[idx[a]];
                        w *= q.w1d[idx[a]];
                    }
                    /* the rule forms its products in long double and rounds once; the product of the
                     * rounded 1D weights may differ from that by a rounding or two */
                    bad |= fabs(q.w[k] - w) > 4.5e-16 * w;
                }
                CHECK(!bad, "%s degree %d: the rule is not the tensor product of its 1D rule", shape_name(s),
                      deg);
            }
            if (s == SHAPE_LINE && q.n1d <= 10) { /* n points: x^(2n) is one degree too many; its error
                                                   * falls like 4^-2n, to 3e-11 at n = 10, still far above
                                                   * rounding (1e-15) */
                int e2[3] = {2 * q.n1d, 0, 0};
                double v = 0.0;
                for (int k = 0; k < q.npts; k++) v += q.w[k] * pow(q.xi[3 * k], e2[0]);
                CHECK(fabs(v - exact_integral(s, e2)) > 1e-12 * exact_integral(s, e2),
                      "the %d-point Gauss rule integrates x^%d exactly, which no %d-point rule can", q.n1d,
                      2 * q.n1d, q.n1d);
            }
            quadrature_destroy(&q);
        }
        CHECK(worst_sum < 1e-14, "%s: weights sum to the reference volume %.17g only within %.3g",
              shape_name(s), vol, worst_sum);
        CHECK(outside == 0 && nonpositive == 0, "%s: %d points outside the cell, %d non-positive weights",
              shape_name(s), outside, nonpositive);
        CHECK(worst_mono < 1e-14,
              "%s: a monomial of the rule's degree is integrated with error %.3g (degree %d)", shape_name(s),
              worst_mono, worst_deg);
    }
    CHECK(quadrature_create(SHAPE_TET, QUADRATURE_MAX_DEGREE + 1, &(Quadrature){0}) == FEM_ERR_INPUT,
          "degree %d must be refused", QUADRATURE_MAX_DEGREE + 1);
}

/* Volume of the straight cells of a mesh from their corners. */
static double corner_volume(const Mesh *m) {
    double v = 0.0;
    for (int b = 0; b < m->ncell_blocks; b++) {
        const MeshBlock *mb = &m->cells[b];
        for (int64_t c = 0; c < mb->count; c++) {
            const double *x[4];
            for (int k = 0; k < shape_nvertices(mb->shape) && k < 4; k++)
                x[k] =
                    &m->x[3 * (int64_t)mb->nodes[c * mb->nnodes + lattice_vertex(mb->shape, mb->order, k)]];
            double a[3], bb[3], cc[3];
            for (int i = 0; i < 3; i++) a[i] = x[1][i] - x[0][i], bb[i] = x[2][i] - x[0][i];
            if (mb->shape == SHAPE_TET) {
                for (int i = 0; i < 3; i++) cc[i] = x[3][i] - x[0][i];
                v += fabs(a[0] * (bb[1] * cc[2] - bb[2] * cc[1]) - a[1] * (bb[0] * cc[2] - bb[2] * cc[0]) +
                          a[2] * (bb[0] * cc[1] - bb[1] * cc[0])) /
                     6.0;
            } else if (mb->shape == SHAPE_TRI) {
                v += fabs(a[0] * bb[1] - a[1] * bb[0]) / 2.0;
            } else {
                CHECK(0, "corner volumes are for triangles and tetrahedra, not %s", shape_name(mb->shape));
            }
        }
    }
    return v;
}

static void check_volume(const char *geo, const char *expected) {
    Mesh m;
    MeshReadOptions mo = {0};
    CHECK_OK(mesh_read(test_mesh(geo), &mo, &m));
    double want = strcmp(expected, "cells") == 0 ? corner_volume(&m) : atof(expected);
    const int degrees[] = {1, 2, 5, 9};
    for (int di = 0; di < 4; di++) {
        double vol = 0.0;
        for (int b = 0; b < m.ncell_blocks; b++) {
            Quadrature q;
            CHECK_OK(quadrature_create(m.cells[b].shape, degrees[di], &q));
            int stride = GEO_STRIDE(m.dim);
            double *geo_q = malloc(sizeof(double) * (size_t)(m.cells[b].count * q.npts * stride));
            CHECK_OK(geometry_cells(&m, b, &q, m.cells[b].count, NULL, geo_q, NULL));
            for (int64_t k = 0; k < m.cells[b].count * q.npts; k++) vol += geo_q[k * stride];
            free(geo_q);
            quadrature_destroy(&q);
        }
        CHECK(fabs(vol - want) < 1e-13 * want,
              "%s, degree %d: the q-point weights sum to %.17g, the volume is %.17g", geo, degrees[di], vol,
              want);
    }
    mesh_destroy(&m);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "rules") == 0)
        check_rules();
    else if (argc >= 4 && strcmp(argv[1], "volume") == 0)
        check_volume(argv[2], argv[3]);
    else
        return fprintf(stderr, "usage: %s rules | volume MESH.geo EXPECTED|cells\n", argv[0]), 2;
    return test_result(argv[1]);
}
