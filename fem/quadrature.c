#include "quadrature.h"

#include "dense.h"
#include "error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Recurrence coefficients of the orthonormal polynomials for (1-t)^alpha on [-1,1] (beta = 0):
 * b[k+1] p_{k+1} = (t - a[k]) p_k - b[k] p_{k-1}, k = 0..n-1. */
static void jacobi_recurrence(int n, int alpha, long double *a, long double *b) {
    long double al = alpha, be = 0.0L;
    b[0] = 0.0L;
    for (int k = 0; k < n; k++) {
        long double s = 2.0L * k + al + be;
        a[k] = (k == 0) ? (be - al) / (al + be + 2.0L) : (be * be - al * al) / (s * (s + 2.0L));
        long double kk = k + 1.0L, s1 = 2.0L * kk + al + be;
        b[k + 1] =
            sqrtl(4.0L * kk * (kk + al) * (kk + be) * (kk + al + be) / (s1 * s1 * (s1 + 1.0L) * (s1 - 1.0L)));
    }
}

/* Gauss-Jacobi rule in long double: Golub-Welsch for first guesses (nodes are the eigenvalues of the Jacobi
 * matrix), then Newton on the degree-n orthonormal polynomial for each node, and the weights as Christoffel
 * numbers 1 / sum_{k<n} p_k(t)^2. Mapped to [0,1] with the weight (1-x)^alpha. */
static void gauss_jacobi_long(int n, int alpha, long double *x, long double *w) {
    enum { NMAX = 32 };
    double J[NMAX * NMAX], V[NMAX * NMAX];
    long double a[NMAX + 1], b[NMAX + 1];
    jacobi_recurrence(n, alpha, a, b);
    memset(J, 0, sizeof J);
    for (int k = 0; k < n; k++) {
        J[k * n + k] = (double)a[k];
        if (k + 1 < n) J[k * n + k + 1] = J[(k + 1) * n + k] = (double)b[k + 1];
    }
    dense_symmetric_eigen(n, J, V);
    long double t[NMAX];
    for (int i = 0; i < n; i++) t[i] = J[i * n + i];
    for (int i = 0; i < n; i++) /* sort ascending */
        for (int j = i + 1; j < n; j++)
            if (t[j] < t[i]) {
                long double tmp = t[i];
                t[i] = t[j];
                t[j] = tmp;
            }
    /* p_0 = 1 / sqrt(mu0), mu0 = integral of (1-t)^alpha over [-1,1] = 2^(alpha+1) / (alpha+1) */
    long double p0 = 1.0L / sqrtl(ldexpl(1.0L, alpha + 1) / (alpha + 1.0L));
    for (int i = 0; i < n; i++) {
        long double sum = 0.0L;
        for (int it = 0; it < 8; it++) {
            long double pm = 0.0L, p = p0, dpm = 0.0L, dp = 0.0L;
            sum = 0.0L;
            for (int k = 0; k < n; k++) {
                sum += p * p;
                long double pn = ((t[i] - a[k]) * p - b[k] * pm) / b[k + 1];
                long double dpn = (p + (t[i] - a[k]) * dp - b[k] * dpm) / b[k + 1];
                pm = p, p = pn, dpm = dp, dp = dpn;
            }
            long double step = p / dp;
            t[i] -= step;
            if (fabsl(step) <= 1e-19L * (1.0L + fabsl(t[i])) && it > 0) break;
        }
        x[i] = 0.5L * (t[i] + 1.0L);
        w[i] = ldexpl(1.0L / sum, -(alpha + 1)); /* dx = dt / 2, (1-x)^alpha = ((1-t)/2)^alpha */
    }
}

void gauss_jacobi(int n, int alpha, double *x, double *w) {
    long double xl[32], wl[32];
    gauss_jacobi_long(n, alpha, xl, wl);
    for (int i = 0; i < n; i++) x[i] = (double)xl[i], w[i] = (double)wl[i];
}

int quadrature_default_degree(int p, int g) {
    return 2 * p + (g > 1 ? g - 1 : 0);
}

int quadrature_collapsed_points(Shape s, int degree) {
    int n = (degree < 1 ? 1 : degree) / 2 + 1, npts = 1; /* 2n - 1 >= degree */
    for (int a = 0; a < shape_dim(s); a++) npts *= n;
    return npts;
}

/* The tabulated symmetric rule for this degree when it has fewer points than the collapsed one, else NULL. */
static const QuadratureTable *symmetric_rule(Shape s, int degree) {
    int count = 0;
    const QuadratureTable *t = quadrature_symmetric_table(s, &count);
    if (!t || degree > count || t[degree - 1].npts >= quadrature_collapsed_points(s, degree)) return NULL;
    return &t[degree - 1];
}

int quadrature_create(Shape s, int degree, Quadrature *q) {
    memset(q, 0, sizeof *q);
    if (degree < 1) degree = 1;
    if (degree > QUADRATURE_MAX_DEGREE)
        return fem_fail(FEM_ERR_INPUT, "quadrature degree %d is above the largest supported (%d)", degree,
                        QUADRATURE_MAX_DEGREE);
    int d = shape_dim(s), n = degree / 2 + 1; /* 2n - 1 >= degree */
    q->shape = s;
    q->degree = degree;
    const QuadratureTable *sym = shape_is_tensor(s) ? NULL : symmetric_rule(s, degree);
    q->npts = sym ? sym->npts : quadrature_collapsed_points(s, degree);
    FEM_ALLOC(q->xi, 3 * q->npts, "quadrature points");
    FEM_ALLOC(q->w, q->npts, "quadrature weights");
    if (sym) {
        for (int k = 0; k < q->npts; k++) {
            const double *row = &sym->data[k * (d + 1)];
            for (int a = 0; a < 3; a++) q->xi[3 * k + a] = a < d ? row[a] : 0.0;
            q->w[k] = row[d];
        }
        return FEM_OK;
    }
    long double x[3][32], w[3][32];
    if (shape_is_tensor(s)) {
        q->n1d = n;
        FEM_ALLOC(q->xi1d, n, "quadrature points");
        FEM_ALLOC(q->w1d, n, "quadrature weights");
        gauss_jacobi_long(n, 0, x[0], w[0]);
        for (int i = 0; i < n; i++) q->xi1d[i] = (double)x[0][i], q->w1d[i] = (double)w[0][i];
        for (int a = 1; a < d; a++)
            memcpy(x[a], x[0], n * sizeof(long double)), memcpy(w[a], w[0], n * sizeof(long double));
    } else {
        for (int a = 0; a < d; a++) gauss_jacobi_long(n, a, x[a], w[a]); /* weights (1-v)^1, (1-w)^2 */
    }
    /* products in long double, rounded once */
    for (int k = 0; k < q->npts; k++) {
        int i = k % n, j = (k / n) % n, l = k / (n * n);
        double *xi = &q->xi[3 * k];
        if (shape_is_tensor(s)) {
            int ia[3] = {i, j, l};
            long double wk = 1.0L;
            for (int a = 0; a < d; a++) xi[a] = (double)x[a][ia[a]], wk *= w[a][ia[a]];
            q->w[k] = (double)wk;
        } else if (d == 2) { /* (u, v) -> (u (1-v), v) */
            xi[0] = (double)(x[0][i] * (1.0L - x[1][j]));
            xi[1] = (double)x[1][j];
            q->w[k] = (double)(w[0][i] * w[1][j]);
        } else { /* (u, v, t) -> (u (1-v)(1-t), v (1-t), t) */
            xi[0] = (double)(x[0][i] * (1.0L - x[1][j]) * (1.0L - x[2][l]));
            xi[1] = (double)(x[1][j] * (1.0L - x[2][l]));
            xi[2] = (double)x[2][l];
            q->w[k] = (double)(w[0][i] * w[1][j] * w[2][l]);
        }
    }
    return FEM_OK;
}

void quadrature_destroy(Quadrature *q) {
    free(q->xi);
    free(q->w);
    free(q->xi1d);
    free(q->w1d);
    memset(q, 0, sizeof *q);
}
