/* Elasticity at one q-point: small-strain isotropic linear elasticity and compressible neo-Hookean
 * hyperelasticity (total Lagrangian), with gravity, thermal strain, tractions and pressure. FEM_HD:
 * one source for every backend (physics/qfunctions.h lists them).
 *
 * Weak form (per unit test function v, reference configuration): R(u) = int f : grad v + s . v
 *                                                                       + int_boundary s_b . v,
 * f = sigma (linear) or P (neo-Hookean, first Piola-Kirchhoff), s = -L rho g, L the load factor.
 *
 * Linear: sigma = lambda tr(eps) I + 2 mu eps - (3 lambda + 2 mu) alpha dT I, eps = sym(grad u), dT = L (T -
 * T_ref). 2D plane strain keeps eps_zz = 0 (sigma_zz = lambda tr eps - (3 lambda + 2 mu) alpha dT); plane
 * stress eliminates eps_zz from sigma_zz = 0, which gives the in-plane law with lambda* = 2 lambda mu /
 * (lambda + 2 mu) and the thermal modulus 2 mu (3 lambda + 2 mu) / (lambda + 2 mu) = E / (1 - nu) (Timoshenko
 * & Goodier, Theory of Elasticity, 3rd ed., sections 98 and 150). The Jacobian is the same law without the
 * thermal and gravity terms: symmetric.
 *
 * Neo-Hookean: W(F) = mu/2 (tr C - 3) - mu ln J + lambda/2 (ln J)^2, P = mu (F - F^-T) + lambda ln J F^-T,
 * and its exact linearisation dP[X] = mu X + lambda tr(F^-1 X) F^-T + (mu - lambda ln J) F^-T X^T F^-T (Bonet
 * & Wood, Nonlinear Continuum Mechanics for Finite Element Analysis, 2nd ed., sections 6.4.3 and 6.5.2),
 * which at F = I is the linear law. Thermal strain is multiplicative: F = F_e F_theta with F_theta = theta I,
 * theta = 1 + alpha dT, so the energy per reference volume is theta^3 W(F_e) and P = theta^2 P_e(F / theta),
 * dP[X] = theta dP_e(F_e)[X]. 2D plane strain: F_33 = 1 (F_e,33 = 1 / theta); plane stress: F_33 solves P_33
 * = 0 at each q-point (a scalar Newton iteration) and the tangent is condensed on dP_33 = 0. State per
 * q-point: H_e = F_e - I (3 x 3, row-major) and theta.
 *
 * Boundary terms: traction t (per reference area, a dead load): s_b = -L t. Pressure p (> 0 pushes into the
 * body, n the outward normal): linear, s_b = L p n on the reference boundary; neo-Hookean, a follower load on
 * the current boundary: s_b dA = L p n da = L p (w sign) (T1 + du/dxi1) x (T2 + du/dxi2) per reference
 * q-point (3D), L p (w sign) (t_y, -t_x) with t = T1 + du/dxi (2D), whose linearisation is unsymmetric. */
#ifndef FEMTO_ELASTICITY_QF_H
#define FEMTO_ELASTICITY_QF_H

#include "fem/qfunction.h"

#include <math.h>

enum { ELAS_MAX_MATERIALS = 32, ELAS_MAX_BCS = 64 };
enum { ELAS_LINEAR = 0, ELAS_NEO_HOOKEAN = 1 };
enum { ELAS_TEMP_NONE = 0, ELAS_TEMP_UNIFORM = 1, ELAS_TEMP_FIELD = 2 };
enum { ELAS_NH_STATE = 10, ELAS_NH_FSTATE = 6 };

typedef struct {
    double lambda, mu; /* Lame parameters [Pa] */
    double lambda_eff; /* in-plane lambda: lambda, or lambda* in plane stress */
    double beta3;      /* 3 lambda + 2 mu: stress per unit thermal strain */
    double beta_eff;   /* beta3, or 2 mu (3 lambda + 2 mu) / (lambda + 2 mu) in plane stress */
    double rho, alpha, Tref;
} ElasMaterial_;

/* The natural conditions acting on a facet, summed: traction t[3] [Pa] and pressure p [Pa]. */
typedef struct {
    double t[3], p;
} ElasBc_;

typedef struct {
    int dim, model, plane_stress, temp_mode, nmat, nbc;
    double load;        /* L: scales loads, gravity and thermal strain */
    double temperature; /* uniform temperature (ELAS_TEMP_UNIFORM) [K] */
    double gravity[3];
    ElasMaterial_ mat[ELAS_MAX_MATERIALS];
    ElasBc_ bc[ELAS_MAX_BCS];
} ElasCtx;

/* Load-scaled temperature change at q-point i (T from the auxiliary field, the uniform value or T_ref). */
FEM_HD static inline double elas_dT(const ElasCtx *c, const ElasMaterial_ *m, double Tfield) {
    double T = c->temp_mode == ELAS_TEMP_FIELD     ? Tfield
               : c->temp_mode == ELAS_TEMP_UNIFORM ? c->temperature
                                                   : m->Tref;
    return c->load * (T - m->Tref);
}

/* ---- linear elasticity */

/* Cauchy stress sig (3 x 3) and, when W is not NULL, the strain-energy density 1/2 sigma : (eps - eps_th)
 * from the displacement gradient g (dim x dim, g[c * dim + b] = du_c/dx_b) and the thermal strain eth. */
FEM_HD static inline void elas_linear_stress(const ElasCtx *c, int d, const ElasMaterial_ *m, const double *g,
                                             double eth, double *sig, double *W) {
    double eps[9] = {0};
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++) eps[a * 3 + b] = 0.5 * (g[a * d + b] + g[b * d + a]);
    double tr = 0.0;
    for (int a = 0; a < d; a++) tr += eps[a * 3 + a];
    double lam = m->lambda, beta = m->beta3;
    if (d == 2 && c->plane_stress) {
        lam = m->lambda_eff;
        beta = m->beta_eff;
        /* eps_zz from sigma_zz = 0 (for the energy only) */
        eps[8] = (m->beta3 * eth - m->lambda * tr) / (m->lambda + 2.0 * m->mu);
    }
    for (int k = 0; k < 9; k++) sig[k] = 2.0 * m->mu * eps[k];
    for (int a = 0; a < d; a++) sig[a * 3 + a] += lam * tr - beta * eth;
    if (d == 2) sig[8] = c->plane_stress ? 0.0 : m->lambda * tr - m->beta3 * eth;
    if (W) {
        double w = 0.0;
        for (int k = 0; k < 9; k++) w += sig[k] * (eps[k] - ((k % 4 == 0) ? eth : 0.0));
        *W = 0.5 * w;
    }
}

FEM_HD static inline void elas_linear_residual(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasMaterial_ *m = &c->mat[qf_tag(a, i)];
    int d = a->dim;
    double u[3], g[9], sig[9], s[3], f[9];
    qf_cell_in(a, i, u, g);
    double eth = m->alpha * elas_dT(c, m, a->aux ? a->aux[i] : 0.0);
    elas_linear_stress(c, d, m, g, eth, sig, NULL);
    for (int p = 0; p < d; p++) {
        s[p] = -c->load * m->rho * c->gravity[p];
        for (int b = 0; b < d; b++) f[p * d + b] = sig[p * 3 + b];
    }
    qf_cell_out(a, i, s, f);
}

FEM_HD static inline void elas_linear_jacobian(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasMaterial_ *m = &c->mat[qf_tag(a, i)];
    int d = a->dim;
    double u[3], g[9], sig[9], s[3] = {0, 0, 0}, f[9];
    qf_cell_in(a, i, u, g);
    elas_linear_stress(c, d, m, g, 0.0, sig, NULL);
    for (int p = 0; p < d; p++)
        for (int b = 0; b < d; b++) f[p * d + b] = sig[p * 3 + b];
    qf_cell_out(a, i, s, f);
}

/* ---- neo-Hookean
 * Everything is computed from H_e = F_e - I rather than F_e, so that small strains lose no digits:
 * F - F^-T = H + H^T F^-T (from F^-T = I - H^T F^-T) and J - 1 = tr H + I2(H) + det H, ln J = log1p(J - 1).
 * Written naively, F - F^-T and ln det F cancel to about 1e-16 / strain relative accuracy. */

/* det(I + H) - 1 for a 3 x 3 H: the invariants tr H + 1/2 ((tr H)^2 - tr H^2) + det H */
FEM_HD static inline double elas_det1pm1(const double *H) {
    double tr = H[0] + H[4] + H[8], tr2 = 0.0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) tr2 += H[a * 3 + b] * H[b * 3 + a];
    double det = H[0] * (H[4] * H[8] - H[5] * H[7]) - H[1] * (H[3] * H[8] - H[5] * H[6]) +
                 H[2] * (H[3] * H[7] - H[4] * H[6]);
    return tr + 0.5 * (tr * tr - tr2) + det;
}

/* P_e(I + He) (3 x 3); returns ln J and F^-1. */
FEM_HD static inline double elas_nh_piola(const ElasMaterial_ *m, const double *He, double *P, double *Finv) {
    double F[9];
    for (int k = 0; k < 9; k++) F[k] = He[k] + ((k % 4 == 0) ? 1.0 : 0.0);
    geometry_invert(3, F, Finv);
    double lnJ = log1p(elas_det1pm1(He)); /* NaN for an inverted point: Newton's line search backs off */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double HtFt = 0.0; /* (He^T F^-T)_ab */
            for (int k = 0; k < 3; k++) HtFt += He[k * 3 + a] * Finv[b * 3 + k];
            P[a * 3 + b] = m->mu * (He[a * 3 + b] + HtFt) + m->lambda * lnJ * Finv[b * 3 + a];
        }
    return lnJ;
}

/* dP = dP_e(F)[X] = mu X + lambda tr(F^-1 X) F^-T + (mu - lambda ln J) (F^-1 X F^-1)^T */
FEM_HD static inline void elas_nh_tangent(const ElasMaterial_ *m, const double *Finv, double lnJ,
                                          const double *X, double *dP) {
    double XF[9], M[9], tr = 0.0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double v = 0.0;
            for (int k = 0; k < 3; k++) v += X[a * 3 + k] * Finv[k * 3 + b];
            XF[a * 3 + b] = v;
            tr += Finv[a * 3 + b] * X[b * 3 + a];
        }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double v = 0.0;
            for (int k = 0; k < 3; k++) v += Finv[a * 3 + k] * XF[k * 3 + b];
            M[a * 3 + b] = v;
        }
    double cg = m->mu - m->lambda * lnJ;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            dP[a * 3 + b] = m->mu * X[a * 3 + b] + m->lambda * tr * Finv[b * 3 + a] + cg * M[b * 3 + a];
}

/* Plane stress: He_33 = y such that P_33 = 0 for the in-plane part of He, i.e. with x = 1 + y the stretch,
 * h(y) = mu (x^2 - 1) + lambda ln(J2 x) = mu y (2 + y) + lambda log1p(j2 + y + j2 y) = 0, j2 = J2 - 1 the
 * in-plane determinant less one (Newton from y = 0; h' = 2 mu x + lambda / x). */
FEM_HD static inline double elas_nh_plane_stress_h33(const ElasMaterial_ *m, double j2) {
    double y = 0.0;
    for (int it = 0; it < 50; it++) {
        double x = 1.0 + y;
        double h = m->mu * y * (2.0 + y) + m->lambda * log1p(j2 + y + j2 * y);
        double dy = -h / (2.0 * m->mu * x + m->lambda / x);
        if (x + dy <= 0.0) dy = -0.5 * x;
        y += dy;
        if (!(fabs(dy) > 1e-16 * (1.0 + fabs(y)))) break;
    }
    return y;
}

/* H_e = F_e - I (3 x 3) of the displacement gradient g with the thermal stretch theta = 1 + tm1:
 * F_e = F / theta, so H_e = (H - tm1 I) / theta (plane strain: F_33 = 1). */
FEM_HD static inline void elas_nh_he(const ElasCtx *c, int d, const ElasMaterial_ *m, const double *g,
                                     double tm1, double *He) {
    double theta = 1.0 + tm1;
    for (int k = 0; k < 9; k++) He[k] = 0.0;
    for (int a = 0; a < d; a++)
        for (int b = 0; b < d; b++) He[a * 3 + b] = g[a * d + b] / theta;
    for (int a = 0; a < 3; a++) He[a * 3 + a] -= tm1 / theta;
    if (d == 2 && c->plane_stress) {
        double j2 = He[0] + He[4] + He[0] * He[4] - He[1] * He[3];
        He[8] = elas_nh_plane_stress_h33(m, j2);
    }
}

/* dP = theta dP_e(F_e)[X] for X with X_33 = 0 in 2D, condensed on dP_33 = 0 in plane stress. */
FEM_HD static inline void elas_nh_dP(const ElasCtx *c, int d, const ElasMaterial_ *m, const double *Finv,
                                     double lnJ, double theta, const double *X, double *dP) {
    elas_nh_tangent(m, Finv, lnJ, X, dP);
    if (d == 2 && c->plane_stress) {
        double E33[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1}, Z[9];
        elas_nh_tangent(m, Finv, lnJ, E33, Z);
        double x33 = -dP[8] / Z[8];
        for (int k = 0; k < 9; k++) dP[k] += x33 * Z[k];
    }
    for (int k = 0; k < 9; k++) dP[k] *= theta;
}

/* state: He (3 x 3), theta */
FEM_HD static inline void elas_nh_residual(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasMaterial_ *m = &c->mat[qf_tag(a, i)];
    int d = a->dim;
    double u[3], g[9], He[9], Pe[9], Finv[9], s[3], f[9];
    qf_cell_in(a, i, u, g);
    double tm1 = m->alpha * elas_dT(c, m, a->aux ? a->aux[i] : 0.0), theta = 1.0 + tm1;
    elas_nh_he(c, d, m, g, tm1, He);
    elas_nh_piola(m, He, Pe, Finv);
    double *st = a->state + i * a->nstate;
    for (int k = 0; k < 9; k++) st[k] = He[k];
    st[9] = theta;
    for (int p = 0; p < d; p++) {
        s[p] = -c->load * m->rho * c->gravity[p];
        for (int b = 0; b < d; b++) f[p * d + b] = theta * theta * Pe[p * 3 + b];
    }
    qf_cell_out(a, i, s, f);
}

FEM_HD static inline void elas_nh_jacobian(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasMaterial_ *m = &c->mat[qf_tag(a, i)];
    int d = a->dim;
    double u[3], g[9], X[9] = {0}, F[9], Finv[9], dP[9], s[3] = {0, 0, 0}, f[9];
    qf_cell_in(a, i, u, g);
    const double *st = a->state + i * a->nstate;
    for (int k = 0; k < 9; k++) F[k] = st[k] + ((k % 4 == 0) ? 1.0 : 0.0);
    geometry_invert(3, F, Finv);
    double lnJ = log1p(elas_det1pm1(st));
    for (int p = 0; p < d; p++)
        for (int b = 0; b < d; b++) X[p * 3 + b] = g[p * d + b];
    elas_nh_dP(c, d, m, Finv, lnJ, st[9], X, dP);
    for (int p = 0; p < d; p++)
        for (int b = 0; b < d; b++) f[p * d + b] = dP[p * 3 + b];
    qf_cell_out(a, i, s, f);
}

/* Cauchy stress sig (3 x 3) and energy density per reference volume W of the neo-Hookean law:
 * sigma = J^-1 P F^T = J_e^-1 P_e F_e^T (P = theta^2 P_e, F = theta F_e, J = theta^3 J_e), W = theta^3
 * W(F_e). */
FEM_HD static inline void elas_nh_stress(const ElasCtx *c, int d, const ElasMaterial_ *m, const double *g,
                                         double tm1, double *sig, double *W) {
    double He[9], Pe[9], Finv[9];
    elas_nh_he(c, d, m, g, tm1, He);
    double lnJe = elas_nh_piola(m, He, Pe, Finv), Je = exp(lnJe);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double v = Pe[a * 3 + b]; /* F_e = I + He */
            for (int k = 0; k < 3; k++) v += Pe[a * 3 + k] * He[b * 3 + k];
            sig[a * 3 + b] = v / Je;
        }
    if (W) {
        double trC3 = 0.0, theta = 1.0 + tm1; /* tr C - 3 = 2 tr He + |He|^2 */
        for (int k = 0; k < 9; k++) trC3 += He[k] * He[k] + ((k % 4 == 0) ? 2.0 * He[k] : 0.0);
        *W = theta * theta * theta * (0.5 * m->mu * trC3 - m->mu * lnJe + 0.5 * m->lambda * lnJe * lnJe);
    }
}

/* ---- boundary terms */

FEM_HD static inline void elas_linear_facet_residual(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasBc_ *bc = &c->bc[qf_tag(a, i)];
    const double *n = qf_facet_geo(a, i) + FGEO_N;
    double s[3];
    for (int p = 0; p < a->dim; p++) s[p] = c->load * (bc->p * n[p] - bc->t[p]);
    qf_facet_out(a, i, s);
}

/* Dead loads on the reference boundary: the Jacobian has no boundary term. */
FEM_HD static inline void elas_zero_facet_jacobian(const QfArgs *a, int64_t i) {
    for (int p = 0; p < a->ncomp; p++) a->s[i * a->ncomp + p] = 0.0;
}

/* The current area vector n da of a reference q-point (w sign t1 x t2), from current tangents t1, t2. */
FEM_HD static inline void elas_area_vector(int dim, double ws, const double *t1, const double *t2,
                                           double *nda) {
    if (dim == 2) {
        nda[0] = ws * t1[1];
        nda[1] = -ws * t1[0];
        nda[2] = 0.0;
    } else {
        nda[0] = ws * (t1[1] * t2[2] - t1[2] * t2[1]);
        nda[1] = ws * (t1[2] * t2[0] - t1[0] * t2[2]);
        nda[2] = ws * (t1[0] * t2[1] - t1[1] * t2[0]);
    }
}

/* Current tangents t_r = T_r + du/dxi_r from the facet geometry and reference gradients du[ncomp][dim-1]. */
FEM_HD static inline void elas_current_tangents(int dim, const double *geo, const double *du, double *t1,
                                                double *t2) {
    int rd = dim - 1;
    for (int p = 0; p < 3; p++) {
        t1[p] = geo[FGEO_T1 + p] + (p < dim ? du[p * rd] : 0.0);
        t2[p] = geo[FGEO_T2 + p] + (p < dim && rd > 1 ? du[p * rd + 1] : 0.0);
    }
}

/* Neo-Hookean: dead traction plus follower pressure, written as reference integrand values (not through
 * qf_facet_out: the pressure term carries its own area). State: the current tangents t1, t2. */
FEM_HD static inline void elas_nh_facet_residual(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasBc_ *bc = &c->bc[qf_tag(a, i)];
    const double *geo = qf_facet_geo(a, i);
    int d = a->dim;
    double *st = a->state + i * a->nstate, nda[3];
    elas_current_tangents(d, geo, a->du + i * d * (d - 1), st, st + 3);
    elas_area_vector(d, geo[FGEO_WS], st, st + 3, nda);
    for (int p = 0; p < d; p++) a->s[i * d + p] = c->load * (bc->p * nda[p] - bc->t[p] * geo[FGEO_WDA]);
}

/* ds = L p w sign (dt1 x t2 + t1 x dt2) (3D), L p w sign (dt_y, -dt_x) (2D), dt_r = d(du)/dxi_r. */
FEM_HD static inline void elas_nh_facet_jacobian(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasBc_ *bc = &c->bc[qf_tag(a, i)];
    const double *geo = qf_facet_geo(a, i), *st = a->state + i * a->nstate;
    int d = a->dim, rd = d - 1;
    const double *du = a->du + i * d * rd;
    double dt1[3] = {0, 0, 0}, dt2[3] = {0, 0, 0}, x1[3], x2[3];
    for (int p = 0; p < d; p++) {
        dt1[p] = du[p * rd];
        if (rd > 1) dt2[p] = du[p * rd + 1];
    }
    double k = c->load * bc->p;
    if (d == 2) {
        elas_area_vector(2, geo[FGEO_WS], dt1, dt2, x1);
        for (int p = 0; p < 2; p++) a->s[i * 2 + p] = k * x1[p];
        return;
    }
    elas_area_vector(3, geo[FGEO_WS], dt1, st + 3, x1);
    elas_area_vector(3, geo[FGEO_WS], st, dt2, x2);
    for (int p = 0; p < 3; p++) a->s[i * 3 + p] = k * (x1[p] + x2[p]);
}

/* ---- derived quantities */

/* Cauchy stress (3 x 3) and strain-energy density (per reference volume) at a point. */
FEM_HD static inline void elas_point_stress(const ElasCtx *c, const ElasMaterial_ *m, const double *g,
                                            double Tfield, double *sig, double *W) {
    double dT = elas_dT(c, m, Tfield);
    if (c->model == ELAS_NEO_HOOKEAN)
        elas_nh_stress(c, c->dim, m, g, m->alpha * dT, sig, W);
    else
        elas_linear_stress(c, c->dim, m, g, m->alpha * dT, sig, W);
}

/* von Mises equivalent stress of sig (3 x 3) */
FEM_HD static inline double elas_von_mises(const double *s) {
    double a = s[0] - s[4], b = s[4] - s[8], e = s[8] - s[0];
    return sqrt(0.5 * (a * a + b * b + e * e) + 3.0 * (s[1] * s[1] + s[5] * s[5] + s[2] * s[2]));
}

/* ---- output q-functions (fem/evaluate.h); the temperature of thermal strain is the auxiliary field */

FEM_HD static inline void elas_stress_energy(const QfArgs *a, int64_t i, double *sig, double *W) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasMaterial_ *m = &c->mat[qf_tag(a, i)];
    double u[3], g[9] = {0};
    qf_cell_in(a, i, u, g);
    elas_point_stress(c, m, g, a->aux ? a->aux[i] : m->Tref, sig, W);
}

/* The Cauchy stress in ParaView's order XX YY ZZ XY YZ XZ [Pa], von Mises [Pa], strain-energy density [J/m^3]. */
FEM_HD static inline void elas_stress_out(const QfArgs *a, int64_t i) {
    double sig[9], W, out[8];
    elas_stress_energy(a, i, sig, &W);
    out[0] = sig[0], out[1] = sig[4], out[2] = sig[8], out[3] = sig[1], out[4] = sig[5], out[5] = sig[2];
    out[6] = elas_von_mises(sig);
    out[7] = W;
    qf_output(a, i, 0, out);
}

/* The strain-energy density (integrated: the strain energy). */
FEM_HD static inline void elas_energy_out(const QfArgs *a, int64_t i) {
    double sig[9], W;
    elas_stress_energy(a, i, sig, &W);
    qf_output(a, i, 0, &W);
}

/* The body force L rho g [N/m^3] (integrated: the body's weight). */
FEM_HD static inline void elas_body_out(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    double rho = c->mat[qf_tag(a, i)].rho, f[3];
    for (int k = 0; k < 3; k++) f[k] = c->load * rho * c->gravity[k];
    qf_output(a, i, 0, f);
}

/* The force per reference area that the tractions and pressures of record bc[tag] apply to the body [Pa]:
 * L (t - p n), n on the current surface for the neo-Hookean follower load (integrated: the applied load). */
FEM_HD static inline void elas_load_out(const QfArgs *a, int64_t i) {
    const ElasCtx *c = (const ElasCtx *)a->ctx;
    const ElasBc_ *bc = &c->bc[qf_tag(a, i)];
    const double *geo = qf_facet_geo(a, i);
    int d = c->dim;
    double n[3] = {0, 0, 0}, f[3] = {0, 0, 0};
    if (c->model == ELAS_NEO_HOOKEAN) {
        double t1[3], t2[3];
        elas_current_tangents(d, geo, a->du + i * d * (d - 1), t1, t2);
        elas_area_vector(d, geo[FGEO_WS], t1, t2, n);
        for (int k = 0; k < d; k++) n[k] /= geo[FGEO_WDA];
    } else {
        for (int k = 0; k < d; k++) n[k] = geo[FGEO_N + k];
    }
    for (int k = 0; k < d; k++) f[k] = c->load * (bc->t[k] - bc->p * n[k]);
    qf_output(a, i, 1, f);
}

/* The largest |du_i / dx_j| at a point (plausibility of a small-strain solution). */
FEM_HD static inline void elas_gradient_out(const QfArgs *a, int64_t i) {
    double u[3], g[9] = {0}, big = 0.0;
    qf_cell_in(a, i, u, g);
    for (int k = 0; k < a->ncomp * a->dim; k++) big = fmax(big, fabs(g[k]));
    qf_output(a, i, 0, &big);
}

#endif
