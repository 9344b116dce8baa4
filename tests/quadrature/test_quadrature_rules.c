/* Quadrature rules on every reference cell.
 *
 * usage: test_quadrature SHAPE DEGREE   one rule: every monomial x^a y^b z^c of total degree <= DEGREE
 *                                       (each exponent <= DEGREE on tensor cells) integrated to 1e-14
 *                                       relative; weights positive; points strictly inside; the point count
 *                                       and, for the symmetric simplex rules, the points themselves and their
 *                                       full symmetry
 *        test_quadrature table          the (degree, points) table of every shape, and the table's own
 *                                       consistency (what it covers, and that every rule it supplies has
 *                                       fewer points than the collapsed rule it replaces) */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/quadrature.h"

#include <math.h>
#include <string.h>

static const Shape SHAPES[] = {SHAPE_LINE, SHAPE_TRI, SHAPE_QUAD, SHAPE_TET, SHAPE_HEX};
static const char *const NAMES[] = {"line", "tri", "quad", "tet", "hex"};

static long double binomial(int n, int k) {
    long double c = 1.0L;
    for (int i = 1; i <= k; i++) c = c * (n - k + i) / i; /* exact: every partial value is an integer */
    return c;
}

/* Integral of x^e[0] y^e[1] z^e[2] over the reference cell. Unit simplex: e0! e1! e2! / (n + dim)!, n the
 * total degree, written as 1 / ((n+1)...(n+dim) multinomial(n; e)) to stay exact in floating point. */
static long double exact_moment(Shape s, const int e[3]) {
    int dim = shape_dim(s);
    if (shape_is_tensor(s)) {
        long double v = 1.0L;
        for (int a = 0; a < dim; a++) v /= e[a] + 1;
        return v;
    }
    int n = e[0] + e[1] + (dim == 3 ? e[2] : 0);
    long double multinomial = binomial(n, e[0]) * binomial(n - e[0], e[1]), v = 1.0L;
    for (int k = 1; k <= dim; k++) v /= n + k;
    return v / multinomial;
}

/* The tabulated symmetric rule quadrature_create should use for this degree (NULL: the collapsed rule). */
static const QuadratureTable *expected_symmetric(Shape s, int degree) {
    int count;
    const QuadratureTable *t = quadrature_symmetric_table(s, &count);
    if (!t || degree > count || t[degree - 1].npts >= quadrature_collapsed_points(s, degree)) return NULL;
    return &t[degree - 1];
}

/* Every permutation of the barycentric coordinates maps the rule onto itself, weights included. */
static int is_fully_symmetric(const Quadrature *q) {
    int dim = shape_dim(q->shape), nb = dim + 1;
    static const int perm3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    int nperm = dim == 2 ? 6 : 24;
    for (int g = 0; g < nperm; g++) {
        int p[4];
        if (dim == 2) {
            memcpy(p, perm3[g], sizeof perm3[g]);
        } else { /* g = 6 * (position of 3) + permutation of 0, 1, 2 */
            int pos = g / 6, m = 0;
            for (int i = 0; i < 4; i++) p[i] = i == pos ? 3 : perm3[g % 6][m++];
        }
        for (int k = 0; k < q->npts; k++) {
            double b[4], bg[4], x[3] = {0, 0, 0};
            b[0] = 1.0;
            for (int a = 0; a < dim; a++) b[a + 1] = q->xi[3 * k + a], b[0] -= b[a + 1];
            for (int i = 0; i < nb; i++) bg[i] = b[p[i]];
            for (int a = 0; a < dim; a++) x[a] = bg[a + 1];
            int found = 0;
            for (int l = 0; l < q->npts && !found; l++) {
                double dist = 0.0;
                for (int a = 0; a < dim; a++) dist = fmax(dist, fabs(q->xi[3 * l + a] - x[a]));
                found = dist < 1e-14 && fabs(q->w[l] - q->w[k]) <= 1e-15 * q->w[k];
            }
            if (!found) return 0;
        }
    }
    return 1;
}

static int check_rule(Shape s, int degree) {
    Quadrature q;
    CHECK_OK(quadrature_create(s, degree, &q));
    int dim = shape_dim(s), tensor = shape_is_tensor(s);
    CHECK(q.shape == s && q.degree == degree, "%s degree %d: rule says shape %d degree %d", shape_name(s),
          degree, (int)q.shape, q.degree);

    /* which rule, and how many points */
    const QuadratureTable *sym = tensor ? NULL : expected_symmetric(s, degree);
    int npts = sym ? sym->npts : quadrature_collapsed_points(s, degree);
    CHECK(q.npts == npts, "%s degree %d: %d points, expected %d", shape_name(s), degree, q.npts, npts);
    if (q.npts != npts) return quadrature_destroy(&q), 1;
    if (sym) {
        CHECK(sym->degree >= degree, "%s degree %d: the table's rule is only of degree %d", shape_name(s),
              degree, sym->degree);
        CHECK(sym->npts < quadrature_collapsed_points(s, degree), "not fewer points than the collapsed rule");
        CHECK(q.n1d == 0 && !q.xi1d && !q.w1d, "a symmetric rule has no 1D factors");
        for (int k = 0; k < q.npts; k++) {
            for (int a = 0; a < dim; a++)
                CHECK(q.xi[3 * k + a] == sym->data[k * (dim + 1) + a], "point %d differs from the table", k);
            CHECK(q.w[k] == sym->data[k * (dim + 1) + dim], "weight %d differs from the table", k);
        }
        CHECK(is_fully_symmetric(&q), "%s degree %d: the rule is not fully symmetric", shape_name(s), degree);
    }
    if (tensor) { /* lexicographic tensor product of the 1D rule, x fastest */
        int n = q.n1d;
        CHECK(n > 0 && q.xi1d && q.w1d, "a tensor rule has its 1D factors");
        for (int k = 0; k < q.npts && n > 0; k++) {
            int ia[3] = {k % n, (k / n) % n, k / (n * n)};
            double w = 1.0;
            for (int a = 0; a < dim; a++) {
                CHECK(q.xi[3 * k + a] == q.xi1d[ia[a]], "tensor point %d axis %d", k, a);
                w *= q.w1d[ia[a]];
            }
            CHECK(fabs(q.w[k] - w) <= 1e-15 * w, "tensor weight %d", k);
        }
    }

    /* weights positive, points strictly inside, unused coordinates zero */
    for (int k = 0; k < q.npts; k++) {
        const double *x = &q.xi[3 * k];
        double sum = 0.0, lo = 1.0, hi = 0.0;
        for (int a = 0; a < dim; a++) sum += x[a], lo = fmin(lo, x[a]), hi = fmax(hi, x[a]);
        int inside = lo > 0.0 && (tensor ? hi < 1.0 : sum < 1.0);
        CHECK(inside, "%s degree %d: point %d (%g, %g, %g) is not strictly inside", shape_name(s), degree, k,
              x[0], x[1], x[2]);
        for (int a = dim; a < 3; a++) CHECK(x[a] == 0.0, "point %d: unused coordinate %d is %g", k, a, x[a]);
        CHECK(q.w[k] > 0.0, "%s degree %d: weight %d is %g", shape_name(s), degree, k, q.w[k]);
    }

    /* monomials: per-point powers in long double, so the sum itself adds no error worth the name */
    long double *pw = malloc(sizeof(long double) * q.npts * 3 * (degree + 1));
    for (int k = 0; k < q.npts; k++)
        for (int a = 0; a < 3; a++) {
            long double *p = &pw[(k * 3 + a) * (degree + 1)];
            p[0] = 1.0L;
            for (int e = 1; e <= degree; e++) p[e] = p[e - 1] * q.xi[3 * k + a];
        }
    double worst = 0.0;
    int worst_e[3] = {0, 0, 0}, nmono = 0;
    int emax[3] = {degree, dim > 1 ? degree : 0, dim > 2 ? degree : 0};
    long double *c = malloc(sizeof(long double) * q.npts); /* w y^e1 z^e2 per point */
    for (int e2 = 0; e2 <= emax[2]; e2++)
        for (int e1 = 0; e1 <= emax[1]; e1++) {
            if (!tensor && e1 + e2 > degree) continue;
            for (int k = 0; k < q.npts; k++) {
                const long double *p = &pw[k * 3 * (degree + 1)];
                c[k] = q.w[k] * p[(degree + 1) + e1] * p[2 * (degree + 1) + e2];
            }
            for (int e0 = 0; e0 <= (tensor ? emax[0] : degree - e1 - e2); e0++) {
                int e[3] = {e0, e1, e2};
                long double sum = 0.0L;
                for (int k = 0; k < q.npts; k++) sum += c[k] * pw[k * 3 * (degree + 1) + e0];
                long double ex = exact_moment(s, e);
                double rel = (double)fabsl(sum / ex - 1.0L);
                nmono++;
                if (rel > worst) worst = rel, memcpy(worst_e, e, sizeof e);
            }
        }
    free(c);
    free(pw);
    CHECK(worst <= 1e-14, "%s degree %d: monomial x^%d y^%d z^%d off by %.2e relative", shape_name(s), degree,
          worst_e[0], worst_e[1], worst_e[2], worst);
    printf("%s degree %d: %d points (%s), %d monomials, largest relative error %.1e (x^%d y^%d z^%d)\n",
           shape_name(s), degree, q.npts,
           sym      ? sym->orbits
           : tensor ? "tensor Gauss-Legendre"
                    : "collapsed",
           nmono, worst, worst_e[0], worst_e[1], worst_e[2]);
    quadrature_destroy(&q);
    return 0;
}

static void print_table(void) {
    for (int si = 0; si < 5; si++) {
        Shape s = SHAPES[si];
        int count;
        const QuadratureTable *t = quadrature_symmetric_table(s, &count);
        printf("%s\n  degree  points  rule\n", shape_name(s));
        for (int d = 1; d <= QUADRATURE_MAX_DEGREE; d++) {
            Quadrature q;
            CHECK_OK(quadrature_create(s, d, &q));
            const QuadratureTable *sym = shape_is_tensor(s) ? NULL : expected_symmetric(s, d);
            printf("  %6d  %6d  ", d, q.npts);
            if (sym)
                printf("symmetric %s (degree %d; collapsed: %d points)\n", sym->orbits, sym->degree,
                       quadrature_collapsed_points(s, d));
            else if (t && d <= count)
                printf("collapsed (the symmetric rule has %d)\n", t[d - 1].npts);
            else
                printf("%s\n", shape_is_tensor(s) ? "tensor" : "collapsed");
            quadrature_destroy(&q);
        }
    }
}

static void check_table(void) {
    const Shape simplices[2] = {SHAPE_TRI, SHAPE_TET};
    const int at_least[2] = {12, 8}; /* degrees the table must cover */
    for (int i = 0; i < 2; i++) {
        Shape s = simplices[i];
        int count;
        const QuadratureTable *t = quadrature_symmetric_table(s, &count);
        CHECK(t && count >= at_least[i] && count <= QUADRATURE_MAX_DEGREE, "%s: %d symmetric rules",
              shape_name(s), count);
        for (int d = 1; t && d <= count; d++) {
            CHECK(t[d - 1].degree >= d && t[d - 1].npts > 0 && t[d - 1].data && t[d - 1].orbits,
                  "%s table entry %d", shape_name(s), d);
            /* the rules the task is about: from degree 2 on, the symmetric rule must win, except where the
             * collapsed rule is already as small (triangle degree 3: 4 points; tetrahedron degree 3: 8) */
            int wins = t[d - 1].npts < quadrature_collapsed_points(s, d);
            int tie_ok = d == 1 || d == 3;
            CHECK(wins || tie_ok, "%s degree %d: %d symmetric points, collapsed %d", shape_name(s), d,
                  t[d - 1].npts, quadrature_collapsed_points(s, d));
        }
    }
    int count;
    CHECK(quadrature_symmetric_table(SHAPE_QUAD, &count) == NULL && count == 0, "no table for quads");
    /* degree clamping and the upper limit */
    Quadrature q;
    CHECK_OK(quadrature_create(SHAPE_TET, 0, &q));
    CHECK(q.degree == 1 && q.npts == 1, "degree 0 is degree 1");
    quadrature_destroy(&q);
    CHECK(quadrature_create(SHAPE_TRI, QUADRATURE_MAX_DEGREE + 1, &q) == FEM_ERR_INPUT, "degree above max");
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "table") == 0) {
        print_table();
        check_table();
        return test_result("test_quadrature table");
    }
    if (argc != 3) return fprintf(stderr, "usage: %s SHAPE DEGREE | table\n", argv[0]), 2;
    int si = -1, degree = atoi(argv[2]);
    for (int i = 0; i < 5; i++)
        if (strcmp(argv[1], NAMES[i]) == 0) si = i;
    if (si < 0 || degree < 1 || degree > QUADRATURE_MAX_DEGREE)
        return fprintf(stderr, "unknown shape %s or degree %d out of 1..%d\n", argv[1], degree,
                       QUADRATURE_MAX_DEGREE),
               2;
    check_rule(SHAPES[si], degree);
    return test_result("test_quadrature");
}
