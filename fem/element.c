#include "element.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- reference cells */

static const int line_facets[2][4] = {{0}, {1}};
static const int tri_edges[3][2] = {{0, 1}, {1, 2}, {0, 2}};
static const int quad_edges[4][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}};
static const int tet_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
static const int tet_faces[4][4] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
static const int hex_edges[12][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3},
                                     {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
/* x=0, x=1, y=0, y=1, z=0, z=1; corners in each face's own lattice order */
static const int hex_faces[6][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 1, 4, 5},
                                    {2, 3, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}};
static const int line_edge[1][2] = {{0, 1}};

const char *shape_name(Shape s) {
    switch (s) {
    case SHAPE_LINE:
        return "line";
    case SHAPE_TRI:
        return "triangle";
    case SHAPE_QUAD:
        return "quadrilateral";
    case SHAPE_TET:
        return "tetrahedron";
    case SHAPE_HEX:
        return "hexahedron";
    default:
        return "none";
    }
}

int shape_dim(Shape s) {
    static const int dim[] = {0, 1, 2, 2, 3, 3};
    return dim[s];
}

int shape_is_tensor(Shape s) {
    return s == SHAPE_LINE || s == SHAPE_QUAD || s == SHAPE_HEX;
}

int shape_nvertices(Shape s) {
    static const int nv[] = {1, 2, 3, 4, 4, 8};
    return nv[s];
}

Shape shape_facet(Shape s) {
    static const Shape facet[] = {SHAPE_NONE, SHAPE_NONE, SHAPE_LINE, SHAPE_LINE, SHAPE_TRI, SHAPE_QUAD};
    return facet[s];
}

int shape_nfacets(Shape s) {
    static const int nf[] = {0, 2, 3, 4, 4, 6};
    return nf[s];
}

int shape_nedges(Shape s) {
    static const int ne[] = {0, 1, 3, 4, 6, 12};
    return ne[s];
}

const int *shape_edge(Shape s, int e) {
    switch (s) {
    case SHAPE_LINE:
        return line_edge[e];
    case SHAPE_TRI:
        return tri_edges[e];
    case SHAPE_QUAD:
        return quad_edges[e];
    case SHAPE_TET:
        return tet_edges[e];
    case SHAPE_HEX:
        return hex_edges[e];
    default:
        return line_edge[0];
    }
}

int shape_facet_vertices(Shape s, int f, int v[4]) {
    switch (s) {
    case SHAPE_LINE:
        v[0] = line_facets[f][0];
        return 1;
    case SHAPE_TRI:
        memcpy(v, tri_edges[f], 2 * sizeof(int));
        return 2;
    case SHAPE_QUAD:
        memcpy(v, quad_edges[f], 2 * sizeof(int));
        return 2;
    case SHAPE_TET:
        memcpy(v, tet_faces[f], 3 * sizeof(int));
        return 3;
    case SHAPE_HEX:
        memcpy(v, hex_faces[f], 4 * sizeof(int));
        return 4;
    default:
        return 0;
    }
}

double shape_reference_volume(Shape s) {
    static const double vol[] = {1.0, 1.0, 0.5, 1.0, 1.0 / 6.0, 1.0};
    return vol[s];
}

int element_max_order(Shape s) {
    return shape_is_tensor(s) ? ELEMENT_MAX_ORDER_TENSOR : ELEMENT_MAX_ORDER_SIMPLEX;
}

/* ---------------------------------------------------------------- lattice */

static int binomial(int n, int k) {
    if (k < 0 || k > n) return 0;
    int r = 1;
    for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
    return r;
}

int lattice_count(Shape s, int p) {
    int d = shape_dim(s);
    if (shape_is_tensor(s)) {
        int n = 1;
        for (int a = 0; a < d; a++) n *= p + 1;
        return n;
    }
    return binomial(p + d, d);
}

int lattice_interior_count(Shape s, int p) {
    int d = shape_dim(s);
    if (shape_is_tensor(s)) {
        int n = 1;
        for (int a = 0; a < d; a++) n *= p - 1;
        return p >= 1 ? n : 0;
    }
    return binomial(p - 1, d);
}

int lattice_vertex(Shape s, int p, int v) {
    int lat[3] = {0, 0, 0};
    if (shape_is_tensor(s))
        for (int a = 0; a < shape_dim(s); a++) lat[a] = (v >> a & 1) * p;
    else if (v > 0)
        lat[v - 1] = p;
    return lattice_index(s, p, lat);
}

void lattice_node(Shape s, int p, int n, int lat[3]) {
    int d = shape_dim(s);
    lat[0] = lat[1] = lat[2] = 0;
    if (shape_is_tensor(s)) {
        for (int a = 0; a < d; a++) {
            lat[a] = n % (p + 1);
            n /= p + 1;
        }
        return;
    }
    /* simplex: walk layers (k), rows (j), then i */
    int k = 0;
    if (d == 3) {
        while (n >= binomial(p - k + 2, 2)) n -= binomial(p - k + 2, 2), k++;
    }
    int q = p - k, j = 0;
    while (n >= q - j + 1) n -= q - j + 1, j++;
    lat[0] = n;
    lat[1] = j;
    lat[2] = k;
}

int lattice_index(Shape s, int p, const int lat[3]) {
    int d = shape_dim(s);
    for (int a = 0; a < d; a++)
        if (lat[a] < 0 || lat[a] > p) return -1;
    if (shape_is_tensor(s)) {
        int idx = 0;
        for (int a = d - 1; a >= 0; a--) idx = idx * (p + 1) + lat[a];
        return idx;
    }
    int k = d == 3 ? lat[2] : 0;
    if (lat[0] + lat[1] + k > p) return -1;
    int idx = 0;
    for (int kk = 0; kk < k; kk++) idx += binomial(p - kk + 2, 2);
    int q = p - k;
    for (int jj = 0; jj < lat[1]; jj++) idx += q - jj + 1;
    return idx + lat[0];
}

void lattice_site(Shape s, int p, const int lat[3], LatticeSite *site) {
    int d = shape_dim(s);
    memset(site, 0, sizeof *site);
    if (shape_is_tensor(s)) {
        int free_axes[3] = {0, 0, 0}, nfree = 0, base = 0;
        for (int a = 0; a < d; a++) {
            if (lat[a] == 0) continue;
            if (lat[a] == p)
                base |= 1 << a;
            else
                free_axes[nfree++] = a;
        }
        site->dim = nfree;
        site->ncorners = 1 << nfree;
        for (int c = 0; c < site->ncorners; c++) {
            int corner = base;
            for (int m = 0; m < nfree; m++)
                if (c & (1 << m)) corner |= 1 << free_axes[m];
            site->corner[c] = corner;
        }
        for (int m = 0; m < nfree; m++) site->axis[m] = lat[free_axes[m]];
        return;
    }
    int counts[4] = {p - lat[0] - lat[1] - (d == 3 ? lat[2] : 0), lat[0], lat[1], d == 3 ? lat[2] : 0};
    for (int v = 0; v <= d; v++) {
        if (counts[v] == 0) continue;
        site->corner[site->ncorners] = v;
        site->count[site->ncorners] = counts[v];
        site->ncorners++;
    }
    site->dim = site->ncorners - 1;
}

void lattice_position_equispaced(Shape s, int p, const int lat[3], double xi[3]) {
    xi[0] = xi[1] = xi[2] = 0.0;
    for (int a = 0; a < shape_dim(s); a++) xi[a] = (double)lat[a] / p;
}

void lattice_points(Shape s, int p, int equispaced, double *pts) {
    for (int n = 0; n < lattice_count(s, p); n++) {
        int lat[3];
        lattice_node(s, p, n, lat);
        if (equispaced)
            lattice_position_equispaced(s, p, lat, &pts[3 * n]);
        else
            lattice_position(s, p, lat, &pts[3 * n]);
    }
}

/* ---------------------------------------------------------------- 1D polynomials */

/* Legendre P_n and its derivative at x in [-1,1]. */
static void legendre(int n, double x, double *P, double *dP) {
    double p0 = 1.0, p1 = x, d0 = 0.0, d1 = 1.0;
    if (n == 0) {
        *P = 1.0;
        *dP = 0.0;
        return;
    }
    for (int k = 2; k <= n; k++) {
        double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        double d2 = d0 + (2 * k - 1) * p1;
        p0 = p1;
        p1 = p2;
        d0 = d1;
        d1 = d2;
    }
    *P = p1;
    *dP = d1;
}

void gll_points(int p, double *x) {
    x[0] = 0.0;
    x[p] = 1.0;
    for (int i = 1; i < p; i++) {
        /* interior GLL points are the roots of P_p'; Newton from the Chebyshev-Lobatto guess, using
         * (1 - t^2) P'' = 2 t P' - p (p+1) P */
        double t = -cos(M_PI * i / p);
        for (int it = 0; it < 100; it++) {
            double P, dP;
            legendre(p, t, &P, &dP);
            double d2P = (2 * t * dP - p * (p + 1) * P) / (1 - t * t);
            double step = dP / d2P;
            t -= step;
            if (fabs(step) < 1e-16) break;
        }
        x[i] = 0.5 * (t + 1.0);
    }
}

void lattice_position(Shape s, int p, const int lat[3], double xi[3]) {
    double g[ELEMENT_MAX_ORDER_TENSOR + 1];
    gll_points(p, g);
    xi[0] = xi[1] = xi[2] = 0.0;
    int d = shape_dim(s);
    if (shape_is_tensor(s)) {
        for (int a = 0; a < d; a++) xi[a] = g[lat[a]];
        return;
    }
    LatticeSite site;
    lattice_site(s, p, lat, &site);
    /* simplex vertex v sits at e_v (v >= 1) or the origin (v = 0) */
    if (site.dim == 1) {
        /* edge node: GLL spacing from corner[0] towards corner[1] */
        double t = g[site.count[1]];
        int a = site.corner[0], b = site.corner[1];
        if (a > 0) xi[a - 1] += 1.0 - t;
        if (b > 0) xi[b - 1] += t;
        return;
    }
    for (int m = 0; m < site.ncorners; m++)
        if (site.corner[m] > 0) xi[site.corner[m] - 1] += (double)site.count[m] / p;
}

/* ---------------------------------------------------------------- bases */

void basis_tabulate_1d(int p, int npts, const double *pts, double *val, double *grad) {
    double x[ELEMENT_MAX_ORDER_TENSOR + 1];
    gll_points(p, x);
    for (int k = 0; k < npts; k++) {
        double t = pts[k];
        for (int i = 0; i <= p; i++) {
            double v = 1.0, dv = 0.0;
            for (int m = 0; m <= p; m++) {
                if (m == i) continue;
                double f = (t - x[m]) / (x[i] - x[m]);
                dv = dv * f + v / (x[i] - x[m]);
                v *= f;
            }
            if (val) val[k * (p + 1) + i] = v;
            if (grad) grad[k * (p + 1) + i] = dv;
        }
    }
}

/* Monomials x^a y^b z^c with a + b + c <= p, in lattice order of (a, b, c). */
static void monomials(Shape s, int p, const double *x, double *m, double *dm /* [n][3] or NULL */) {
    int n = lattice_count(s, p), d = shape_dim(s);
    for (int k = 0; k < n; k++) {
        int e[3];
        lattice_node(s, p, k, e);
        double pw[3], dpw[3];
        for (int a = 0; a < 3; a++) {
            pw[a] = a < d ? pow(x[a], e[a]) : 1.0;
            dpw[a] = (a < d && e[a] > 0) ? e[a] * pow(x[a], e[a] - 1) : 0.0;
        }
        m[k] = pw[0] * pw[1] * pw[2];
        if (dm) {
            dm[3 * k + 0] = dpw[0] * pw[1] * pw[2];
            dm[3 * k + 1] = pw[0] * dpw[1] * pw[2];
            dm[3 * k + 2] = pw[0] * pw[1] * dpw[2];
        }
    }
}

/* In-place inverse of an n x n matrix by Gauss-Jordan with partial pivoting; returns 0 when singular. */
static int invert(int n, double *A) {
    enum { N = 64 };
    double inv[N * N];
    int perm[N];
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = 0; i < n * n; i++) inv[i] = 0.0;
    for (int i = 0; i < n; i++) inv[i * n + i] = 1.0;
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[piv * n + c])) piv = r;
        if (fabs(A[piv * n + c]) < 1e-14) return 0;
        for (int k = 0; k < n; k++) {
            double t = A[c * n + k];
            A[c * n + k] = A[piv * n + k];
            A[piv * n + k] = t;
            t = inv[c * n + k];
            inv[c * n + k] = inv[piv * n + k];
            inv[piv * n + k] = t;
        }
        double f = 1.0 / A[c * n + c];
        for (int k = 0; k < n; k++) A[c * n + k] *= f, inv[c * n + k] *= f;
        for (int r = 0; r < n; r++) {
            if (r == c) continue;
            double g = A[r * n + c];
            if (g == 0.0) continue;
            for (int k = 0; k < n; k++)
                A[r * n + k] -= g * A[c * n + k], inv[r * n + k] -= g * inv[c * n + k];
        }
    }
    (void)perm;
    memcpy(A, inv, sizeof(double) * n * n);
    return 1;
}

int basis_tabulate(Shape s, int p, int npts, const double *pts, double *val, double *grad) {
    int d = shape_dim(s), n = lattice_count(s, p);
    if (p < 1 || p > element_max_order(s)) return 0;
    if (shape_is_tensor(s)) {
        double v1[3][ELEMENT_MAX_ORDER_TENSOR + 1], g1[3][ELEMENT_MAX_ORDER_TENSOR + 1];
        for (int k = 0; k < npts; k++) {
            for (int a = 0; a < d; a++) basis_tabulate_1d(p, 1, &pts[3 * k + a], v1[a], g1[a]);
            for (int i = 0; i < n; i++) {
                int lat[3];
                lattice_node(s, p, i, lat);
                double v = 1.0;
                for (int a = 0; a < d; a++) v *= v1[a][lat[a]];
                if (val) val[k * n + i] = v;
                if (grad)
                    for (int b = 0; b < d; b++) {
                        double gb = 1.0;
                        for (int a = 0; a < d; a++) gb *= a == b ? g1[a][lat[a]] : v1[a][lat[a]];
                        grad[(k * n + i) * d + b] = gb;
                    }
            }
        }
        return 1;
    }
    /* simplex: phi_i = sum_m A[i][m] mono_m with A = V^{-T}, V[node][mono] */
    double V[20 * 20], m[20], dm[60];
    for (int i = 0; i < n; i++) {
        int lat[3];
        double xi[3];
        lattice_node(s, p, i, lat);
        lattice_position(s, p, lat, xi);
        monomials(s, p, xi, &V[i * n], NULL);
    }
    if (!invert(n, V)) return 0;
    for (int k = 0; k < npts; k++) {
        monomials(s, p, &pts[3 * k], m, dm);
        for (int i = 0; i < n; i++) {
            double v = 0.0, g[3] = {0, 0, 0};
            for (int j = 0; j < n; j++) {
                double a = V[j * n + i]; /* (V^{-1})^T [i][j] */
                v += a * m[j];
                for (int b = 0; b < d; b++) g[b] += a * dm[3 * j + b];
            }
            if (val) val[k * n + i] = v;
            if (grad)
                for (int b = 0; b < d; b++) grad[(k * n + i) * d + b] = g[b];
        }
    }
    return 1;
}
