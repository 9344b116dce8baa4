/* Heat transfer at one q-point: -div(k(T) A grad T) + rho c dT/dt = Q, with flux, convection and radiation on
 * boundaries (the radiation term's linearisation, 4 eps sigma T^3, is symmetric). FEM_HD: one source for
 * every backend (physics/qfunctions.h lists them).
 *
 * Weak form (per unit test function v): R(T) = int rho c (a T + h) v + theta (k A grad T . grad v - Q v)
 *                                             + theta int_boundary g(T) v,
 * where a T + h is the discrete time derivative (a = 1/dt, h = -T_n/dt for backward Euler; a = 0 steady; h
 * comes in as the auxiliary field) and theta weighs the spatial terms (1/2 for Crank-Nicolson, else 1).
 * Boundary terms g(T): -q (flux into the body), h (T - T_inf) (convection), eps sigma (T^4 - T_inf^4)
 * (radiation). The linearisation is exact: the k'(T) term makes it unsymmetric. */
#ifndef FEMTO_HEAT_QF_H
#define FEMTO_HEAT_QF_H

#include "fem/qfunction.h"

enum { HEAT_MAX_MATERIALS = 32, HEAT_MAX_BCS = 64, HEAT_TABLE_MAX = 64 };
enum { HEAT_K_CONSTANT = 0, HEAT_K_POLYNOMIAL = 1, HEAT_K_TABLE = 2 };

#define HEAT_STEFAN_BOLTZMANN 5.670374419e-8 /* W m^-2 K^-4 (CODATA 2018, exact by SI definition) */

typedef struct {
    int kind, n; /* conductivity: constant (c[0]), polynomial (c[0..n)), table (T[i], c[i]) */
    double c[HEAT_TABLE_MAX], T[HEAT_TABLE_MAX];
    int anisotropic;
    double A[9]; /* multiplier of k, row-major dim x dim (identity when isotropic) */
    double rhoc; /* rho c [J/(m^3 K)] */
    double Q;    /* source [W/m^3] */
} HeatMaterial_;

/* The natural conditions acting on a facet, summed (a surface may both convect and radiate):
 * g(T) = -q + h T - hT + sigma (e T^4 - eT4), with h = sum h_i, hT = sum h_i T_inf,i, e = sum eps_i,
 * eT4 = sum eps_i T_inf,i^4. */
typedef struct {
    double q, h, hT, e, eT4;
} HeatBc_;

typedef struct {
    int dim, nmat, nbc;
    int transient; /* a time derivative will be discretised (the capacity term is then present) */
    double a;     /* mass coefficient of the time derivative */
    double theta; /* weight of the spatial terms */
    HeatMaterial_ mat[HEAT_MAX_MATERIALS];
    HeatBc_ bc[HEAT_MAX_BCS];
} HeatCtx;

/* k(T) and dk/dT */
FEM_HD static inline void heat_conductivity(const HeatMaterial_ *m, double T, double *k, double *dk) {
    if (m->kind == HEAT_K_CONSTANT) {
        *k = m->c[0];
        *dk = 0.0;
    } else if (m->kind == HEAT_K_POLYNOMIAL) {
        double v = 0.0, d = 0.0;
        for (int i = m->n - 1; i >= 0; i--) {
            d = d * T + v;
            v = v * T + m->c[i];
        }
        *k = v;
        *dk = d;
    } else {
        int n = m->n;
        if (T <= m->T[0]) {
            *k = m->c[0];
            *dk = 0.0;
        } else if (T >= m->T[n - 1]) {
            *k = m->c[n - 1];
            *dk = 0.0;
        } else {
            int i = 0;
            while (T > m->T[i + 1]) i++;
            double slope = (m->c[i + 1] - m->c[i]) / (m->T[i + 1] - m->T[i]);
            *k = m->c[i] + slope * (T - m->T[i]);
            *dk = slope;
        }
    }
}

/* y = A x for the material's anisotropy (dim x dim) */
FEM_HD static inline void heat_aniso(const HeatMaterial_ *m, int dim, const double *x, double *y) {
    for (int i = 0; i < dim; i++) {
        y[i] = x[i];
        if (m->anisotropic) {
            y[i] = 0.0;
            for (int j = 0; j < dim; j++) y[i] += m->A[i * 3 + j] * x[j];
        }
    }
}

/* state: k, then dk * A grad T (dim) */
FEM_HD static inline void heat_cell_residual(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    const HeatMaterial_ *m = &ctx->mat[qf_tag(a, i)];
    int d = a->dim;
    double T = 0.0, g[3] = {0, 0, 0}, Ag[3], k, dk, s, f[3];
    qf_cell_in(a, i, &T, g);
    heat_conductivity(m, T, &k, &dk);
    heat_aniso(m, d, g, Ag);
    for (int b = 0; b < d; b++) f[b] = ctx->theta * k * Ag[b];
    s = -ctx->theta * m->Q;
    if (ctx->a != 0.0) s += m->rhoc * (ctx->a * T + (a->aux ? a->aux[i] : 0.0));
    double *st = a->state + i * a->nstate;
    st[0] = k;
    for (int b = 0; b < d; b++) st[1 + b] = dk * Ag[b];
    qf_cell_out(a, i, &s, f);
}

FEM_HD static inline void heat_cell_jacobian(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    const HeatMaterial_ *m = &ctx->mat[qf_tag(a, i)];
    int d = a->dim;
    double dT = 0.0, g[3] = {0, 0, 0}, Ag[3], s, f[3];
    qf_cell_in(a, i, &dT, g);
    heat_aniso(m, d, g, Ag);
    if (m->kind == HEAT_K_CONSTANT) {
        /* k is the material's constant and dk = 0: the same f as from the state, without reading it (the
         * stored state is most of the bytes a Jacobian action moves) */
        for (int b = 0; b < d; b++) f[b] = ctx->theta * (m->c[0] * Ag[b]);
    } else {
        const double *st = a->state + i * a->nstate;
        for (int b = 0; b < d; b++) f[b] = ctx->theta * (st[0] * Ag[b] + st[1 + b] * dT);
    }
    s = m->rhoc * ctx->a * dT;
    qf_cell_out(a, i, &s, f);
}

/* ---- the compact q-point data of the Jacobian (fem/qfunction.h, QfQdata): with a constant conductivity and
 * no time derivative the Jacobian action is f = theta k A grad dT, s = 0, which in reference coordinates is
 * f_ref = w det J J^-1 f = theta D grad_ref dT with the symmetric D = k w det J J^-1 A J^-T. */

/* D at q-point i from the cell geometry (a->geo) and the element's material, into a->s (layout QF_QDATA_SYM).
 */
FEM_HD static inline void heat_qdata_setup(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    const HeatMaterial_ *m = &ctx->mat[qf_tag(a, i)];
    const int d = a->dim, n = qf_geo_doubles(QF_QDATA_SYM, d);
    const double *geo = a->geo + i * GEO_STRIDE(d), *Jinv = geo + 1;
    for (int s = 0; s < d; s++) {
        double AJ[3]; /* A times row s of J^-1 */
        heat_aniso(m, d, Jinv + s * d, AJ);
        for (int r = 0; r <= s; r++) {
            double v = 0.0;
            for (int b = 0; b < d; b++) v += Jinv[r * d + b] * AJ[b];
            a->s[i * n + qf_sym_index(d, r, s)] = m->c[0] * geo[0] * v;
        }
    }
}

/* The Jacobian action from D (a->geo holds it, layout QF_QDATA_SYM): heat_cell_jacobian's result where
 * heat_qdata_valid (heat.c) holds. */
FEM_HD static inline void heat_cell_jacobian_qdata(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    const int d = a->dim;
    const double *D = a->geo + i * qf_geo_doubles(QF_QDATA_SYM, d), *du = a->du + i * d;
    for (int r = 0; r < d; r++) {
        double v = 0.0;
        for (int s = 0; s < d; s++) v += D[r <= s ? qf_sym_index(d, r, s) : qf_sym_index(d, s, r)] * du[s];
        a->f[i * d + r] = ctx->theta * v;
    }
    a->s[i] = 0.0;
}

/* g(T) and dg/dT of the conditions on a facet */
FEM_HD static inline void heat_boundary(const HeatBc_ *bc, double T, double *g, double *dg) {
    double T3 = T * T * T;
    *g = -bc->q + bc->h * T - bc->hT + HEAT_STEFAN_BOLTZMANN * (bc->e * T3 * T - bc->eT4);
    *dg = bc->h + 4.0 * HEAT_STEFAN_BOLTZMANN * bc->e * T3;
}

FEM_HD static inline void heat_facet_residual(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    double T = a->u[i], g, dg;
    heat_boundary(&ctx->bc[qf_tag(a, i)], T, &g, &dg);
    a->state[i] = ctx->theta * dg;
    double s = ctx->theta * g;
    qf_facet_out(a, i, &s);
}

FEM_HD static inline void heat_facet_jacobian(const QfArgs *a, int64_t i) {
    double s = a->state[i] * a->u[i];
    qf_facet_out(a, i, &s);
}

/* ---- output q-functions (fem/evaluate.h) */

/* The heat flux -k A grad T [W/m^2], three values (zero beyond the space's dimension). */
FEM_HD static inline void heat_flux_out(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    const HeatMaterial_ *m = &ctx->mat[qf_tag(a, i)];
    double T = 0.0, g[3] = {0, 0, 0}, Ag[3], k, dk, q[3] = {0, 0, 0};
    qf_cell_in(a, i, &T, g);
    heat_conductivity(m, T, &k, &dk);
    heat_aniso(m, a->dim, g, Ag);
    for (int b = 0; b < a->dim; b++) q[b] = -k * Ag[b];
    qf_output(a, i, 0, q);
}

/* The heat source Q [W/m^3] (integrated: the heat the sources put in). */
FEM_HD static inline void heat_source_out(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    double Q = ctx->mat[qf_tag(a, i)].Q;
    qf_output(a, i, 0, &Q);
}

/* The energy density rho c T [J/m^3] (integrated: the heat stored, counted from 0 K). */
FEM_HD static inline void heat_energy_out(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    double T = 0.0, g[3] = {0, 0, 0};
    qf_cell_in(a, i, &T, g);
    double e = ctx->mat[qf_tag(a, i)].rhoc * T;
    qf_output(a, i, 0, &e);
}

/* The heat that the conditions of record bc[tag] put into the body per area, -g(T) [W/m^2] (integrated over
 * a boundary: the heat flow through it). */
FEM_HD static inline void heat_flow_out(const QfArgs *a, int64_t i) {
    const HeatCtx *ctx = (const HeatCtx *)a->ctx;
    double g, dg;
    heat_boundary(&ctx->bc[qf_tag(a, i)], a->u[i], &g, &dg);
    g = -g;
    qf_output(a, i, 1, &g);
}

#endif
