#include "quadrature.h"

#include "dense.h"
#include "error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Golub-Welsch: nodes are the eigenvalues of the Jacobi matrix of the orthogonal polynomials for
 * (1-t)^alpha on [-1,1] (beta = 0), weights mu0 times the squared first eigenvector components. */
void gauss_jacobi(int n, int alpha, double *x, double *w) {
    enum { NMAX = 32 };
    double J[NMAX * NMAX], V[NMAX * NMAX];
    double a = alpha, b = 0.0;
    memset(J, 0, sizeof J);
    for (int k = 0; k < n; k++) {
        double s = 2.0 * k + a + b;
        J[k * n + k] = (k == 0) ? (b - a) / (a + b + 2.0) : (b * b - a * a) / (s * (s + 2.0));
        if (k + 1 < n) {
            double kk = k + 1.0, s1 = 2.0 * kk + a + b;
            double off =
                sqrt(4.0 * kk * (kk + a) * (kk + b) * (kk + a + b) / (s1 * s1 * (s1 + 1.0) * (s1 - 1.0)));
            J[k * n + k + 1] = J[(k + 1) * n + k] = off;
        }
    }
    dense_symmetric_eigen(n, J, V);
    /* mu0 = integral of (1-t)^alpha over [-1,1] = 2^(alpha+1) / (alpha+1); map to [0,1]: divide by
     * 2^(alpha+1) */
    double mu0 = 1.0 / (alpha + 1.0);
    int idx[NMAX];
    for (int i = 0; i < n; i++) idx[i] = i;
    for (int i = 0; i < n; i++) /* sort ascending */
        for (int j = i + 1; j < n; j++)
            if (J[idx[j] * n + idx[j]] < J[idx[i] * n + idx[i]]) {
                int t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
            }
    for (int i = 0; i < n; i++) {
        int k = idx[i];
        x[i] = 0.5 * (J[k * n + k] + 1.0);
        w[i] = mu0 * V[0 * n + k] * V[0 * n + k];
    }
}

int quadrature_default_degree(int p, int g) {
    return 2 * p + (g > 1 ? g - 1 : 0);
}

int quadrature_create(Shape s, int degree, Quadrature *q) {
    memset(q, 0, sizeof *q);
    if (degree < 1) degree = 1;
    if (degree > QUADRATURE_MAX_DEGREE)
        return fem_fail(FEM_ERR_INPUT, "quadrature degree %d is above the largest supported (%d)", degree,
                        QUADRATURE_MAX_DEGREE);
    int d = shape_dim(s), n = (degree + 2) / 2; /* 2n - 1 >= degree */
    q->shape = s;
    q->degree = degree;
    q->npts = 1;
    for (int a = 0; a < d; a++) q->npts *= n;
    FEM_ALLOC(q->xi, 3 * q->npts, "quadrature points");
    FEM_ALLOC(q->w, q->npts, "quadrature weights");
    double x[3][32], w[3][32];
    if (shape_is_tensor(s)) {
        q->n1d = n;
        FEM_ALLOC(q->xi1d, n, "quadrature points");
        FEM_ALLOC(q->w1d, n, "quadrature weights");
        gauss_jacobi(n, 0, q->xi1d, q->w1d);
        for (int a = 0; a < d; a++)
            memcpy(x[a], q->xi1d, n * sizeof(double)), memcpy(w[a], q->w1d, n * sizeof(double));
    } else {
        for (int a = 0; a < d; a++) gauss_jacobi(n, a, x[a], w[a]); /* weights (1-v)^1, (1-w)^2 */
    }
    for (int k = 0; k < q->npts; k++) {
        int i = k % n, j = (k / n) % n, l = k / (n * n);
        double *xi = &q->xi[3 * k];
        if (shape_is_tensor(s)) {
            int ia[3] = {i, j, l};
            q->w[k] = 1.0;
            for (int a = 0; a < d; a++) xi[a] = x[a][ia[a]], q->w[k] *= w[a][ia[a]];
        } else if (d == 2) { /* (u, v) -> (u (1-v), v) */
            xi[0] = x[0][i] * (1.0 - x[1][j]);
            xi[1] = x[1][j];
            q->w[k] = w[0][i] * w[1][j];
        } else { /* (u, v, t) -> (u (1-v)(1-t), v (1-t), t) */
            xi[0] = x[0][i] * (1.0 - x[1][j]) * (1.0 - x[2][l]);
            xi[1] = x[1][j] * (1.0 - x[2][l]);
            xi[2] = x[2][l];
            q->w[k] = w[0][i] * w[1][j] * w[2][l];
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
