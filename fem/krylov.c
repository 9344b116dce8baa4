/* Krylov solvers and preconditioners (see krylov.h). */
#include "krylov.h"

#include "dense.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPS (k->dev->ops)
#define BYTES(k) (sizeof(double) * (size_t)(k)->n)

const char *ksp_name(KspType t) {
    return t == KSP_CG ? "CG" : t == KSP_GMRES ? "GMRES" : "BiCGStab";
}
const char *pc_name(PcType t) {
    return t == PC_JACOBI ? "Jacobi" : t == PC_CHEBYSHEV ? "Chebyshev-Jacobi" : "none";
}

static int dot(Ksp *k, const double *x, const double *y, double *out) {
    return OPS.dot(k->dev, k->n, x, y, out);
}
static int axpby(Ksp *k, double a, const double *x, double b, double *y) {
    return OPS.axpby(k->dev, k->n, a, x, b, y);
}
static int copy(Ksp *k, double *dst, const double *src) {
    return OPS.copy(k->dev, dst, src, BYTES(k));
}
static int zero(Ksp *k, double *x) {
    return OPS.zero(k->dev, x, BYTES(k));
}

int ksp_create(Ksp *k, Device *dev, int64_t n, const KspSettings *set) {
    memset(k, 0, sizeof *k);
    k->dev = dev;
    k->n = n;
    k->set = *set;
    if (k->set.restart <= 0) k->set.restart = 50;
    if (k->set.cheb_degree <= 0) k->set.cheb_degree = 3;
    for (int i = 0; i < 8; i++) FEM_TRY(device_alloc(dev, (void **)&k->v[i], BYTES(k)));
    FEM_TRY(device_alloc(dev, (void **)&k->inv_diag, BYTES(k)));
    if (k->set.type == KSP_GMRES) {
        k->nbasis = k->set.restart + 1;
        FEM_ALLOC(k->basis, k->nbasis, "GMRES basis");
        for (int i = 0; i < k->nbasis; i++) FEM_TRY(device_alloc(dev, (void **)&k->basis[i], BYTES(k)));
    }
    return FEM_OK;
}

void ksp_destroy(Ksp *k) {
    if (!k->dev) return;
    for (int i = 0; i < 8; i++) device_free(k->dev, k->v[i]);
    device_free(k->dev, k->inv_diag);
    for (int i = 0; i < k->nbasis && k->basis; i++) device_free(k->dev, k->basis[i]);
    free(k->basis);
    memset(k, 0, sizeof *k);
}

/* ---------------------------------------------------------------- preconditioners */

/* z = M^-1 r. Chebyshev: k steps of the Chebyshev iteration for A z = r preconditioned by D^-1, on the
 * interval [lmin, lmax] of D^-1 A; a fixed symmetric positive polynomial in D^-1 A, so CG may use it.
 * Work vectors v[5..7]. */
static int precondition(Ksp *k, LinOp A, const double *r, double *z) {
    if (k->set.pc == PC_NONE) return copy(k, z, r);
    if (k->set.pc == PC_JACOBI) return OPS.mult(k->dev, k->n, k->inv_diag, r, z);
    double theta = 0.5 * (k->lmax + k->lmin), delta = 0.5 * (k->lmax - k->lmin), sigma = theta / delta;
    double rho = 1.0 / sigma;
    double *res = k->v[5], *d = k->v[6], *t = k->v[7];
    FEM_TRY(OPS.mult(k->dev, k->n, k->inv_diag, r, d));
    FEM_TRY(axpby(k, 1.0 / theta, d, 0.0, d));
    FEM_TRY(copy(k, z, d));
    for (int it = 1; it < k->set.cheb_degree; it++) {
        FEM_TRY(A.apply(A.ctx, z, t));
        FEM_TRY(copy(k, res, r));
        FEM_TRY(axpby(k, -1.0, t, 1.0, res));
        double rho_new = 1.0 / (2.0 * sigma - rho);
        FEM_TRY(OPS.mult(k->dev, k->n, k->inv_diag, res, t));
        FEM_TRY(axpby(k, 2.0 * rho_new / delta, t, rho_new * rho, d));
        FEM_TRY(axpby(k, 1.0, d, 1.0, z));
        rho = rho_new;
    }
    return FEM_OK;
}

/* Extreme eigenvalues of D^-1 A from the Lanczos matrix of Jacobi-preconditioned CG on a random vector. */
static int estimate_eigenvalues(Ksp *k, LinOp A) {
    enum { STEPS = 16 };
    double alpha[STEPS], beta[STEPS];
    double *b = k->v[0], *x = k->v[1], *r = k->v[2], *z = k->v[3], *p = k->v[4], *Ap = k->v[5];
    double *host = malloc(BYTES(k));
    if (!host) return fem_fail(FEM_ERR_INTERNAL, "out of host memory estimating eigenvalues");
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (int64_t i = 0; i < k->n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        host[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
    int status = OPS.upload(k->dev, b, host, BYTES(k));
    free(host);
    FEM_TRY(status);
    FEM_TRY(zero(k, x));
    FEM_TRY(copy(k, r, b));
    FEM_TRY(OPS.mult(k->dev, k->n, k->inv_diag, r, z));
    FEM_TRY(copy(k, p, z));
    double rz;
    FEM_TRY(dot(k, r, z, &rz));
    int m = 0;
    for (; m < STEPS && rz > 0; m++) {
        double pAp, rz_new;
        FEM_TRY(A.apply(A.ctx, p, Ap));
        FEM_TRY(dot(k, p, Ap, &pAp));
        if (!(pAp > 0)) break;
        alpha[m] = rz / pAp;
        FEM_TRY(axpby(k, -alpha[m], Ap, 1.0, r));
        FEM_TRY(OPS.mult(k->dev, k->n, k->inv_diag, r, z));
        FEM_TRY(dot(k, r, z, &rz_new));
        beta[m] = rz_new / rz;
        rz = rz_new;
        FEM_TRY(axpby(k, 1.0, z, beta[m], p));
    }
    if (m == 0) return fem_fail(FEM_ERR_SOLVER, "Chebyshev setup: the operator is not positive definite");
    double T[STEPS * STEPS] = {0}, V[STEPS * STEPS];
    for (int j = 0; j < m; j++) {
        T[j * m + j] = 1.0 / alpha[j] + (j ? beta[j - 1] / alpha[j - 1] : 0.0);
        if (j + 1 < m) T[j * m + j + 1] = T[(j + 1) * m + j] = sqrt(beta[j]) / alpha[j];
    }
    dense_symmetric_eigen(m, T, V);
    k->lmin = INFINITY;
    k->lmax = 0.0;
    for (int j = 0; j < m; j++) k->lmin = fmin(k->lmin, T[j * m + j]), k->lmax = fmax(k->lmax, T[j * m + j]);
    /* Lanczos underestimates the largest eigenvalue and overestimates the smallest: widen the top (the
     * polynomial must stay positive up to the true maximum); a high bottom only weakens the preconditioner */
    k->lmax *= 1.1;
    k->lmin = fmax(k->lmin, k->lmax / 1000.0);
    return FEM_OK;
}

int ksp_setup(Ksp *k, LinOp A, const double *diag) {
    if (k->set.pc == PC_NONE) return FEM_OK;
    FEM_TRY(OPS.recip(k->dev, k->n, diag, k->inv_diag));
    if (k->set.pc == PC_CHEBYSHEV) FEM_TRY(estimate_eigenvalues(k, A));
    return FEM_OK;
}

/* ---------------------------------------------------------------- solvers */

static int finish(KspResult *res, double target, int it) {
    res->iterations = it;
    res->converged = res->rnorm <= target;
    if (!res->converged && !res->reason[0]) {
        res->capped = 1;
        snprintf(res->reason, sizeof res->reason, "stopped at its cap of %d iterations with |r| = %.3e > %.3e",
                 it, res->rnorm, target);
    }
    return FEM_OK;
}

static void monitor(const Ksp *k, int it, const KspResult *res, double target) {
    if (k->set.monitor) k->set.monitor(k->set.monitor_ctx, it, res->rnorm, res->rnorm0, target);
}

static int cg(Ksp *k, LinOp A, const double *b, double *x, KspResult *res, double target) {
    double *r = k->v[0], *z = k->v[1], *p = k->v[2], *Ap = k->v[3];
    FEM_TRY(zero(k, x));
    FEM_TRY(copy(k, r, b));
    double rr, rz, pAp;
    FEM_TRY(dot(k, r, r, &rr));
    res->rnorm = sqrt(rr);
    FEM_TRY(precondition(k, A, r, z));
    FEM_TRY(copy(k, p, z));
    FEM_TRY(dot(k, r, z, &rz));
    int it = 0;
    while (res->rnorm > target && it < k->set.max_iterations) {
        FEM_TRY(A.apply(A.ctx, p, Ap));
        FEM_TRY(dot(k, p, Ap, &pAp));
        if (!(pAp > 0.0)) {
            snprintf(res->reason, sizeof res->reason,
                     "CG breakdown: p.Ap = %g (the Jacobian is not positive definite)", pAp);
            break;
        }
        double alpha = rz / pAp;
        FEM_TRY(axpby(k, alpha, p, 1.0, x));
        FEM_TRY(axpby(k, -alpha, Ap, 1.0, r));
        FEM_TRY(dot(k, r, r, &rr));
        res->rnorm = sqrt(rr);
        it++;
        monitor(k, it, res, target);
        if (!isfinite(res->rnorm)) {
            snprintf(res->reason, sizeof res->reason, "CG produced NaN");
            break;
        }
        if (res->rnorm <= target) break;
        double rz_new;
        FEM_TRY(precondition(k, A, r, z));
        FEM_TRY(dot(k, r, z, &rz_new));
        FEM_TRY(axpby(k, 1.0, z, rz_new / rz, p));
        rz = rz_new;
    }
    return finish(res, target, it);
}

/* Right-preconditioned restarted GMRES with modified Gram-Schmidt; Givens rotations on the host. */
static int gmres(Ksp *k, LinOp A, const double *b, double *x, KspResult *res, double target) {
    int m = k->set.restart, it = 0;
    double *r = k->v[0], *w = k->v[1], *z = k->v[2], *y_vec = k->v[3];
    double *H = calloc((size_t)(m + 1) * m, sizeof(double)), *cs = calloc((size_t)m, sizeof(double)),
           *sn = calloc((size_t)m, sizeof(double)), *g = calloc((size_t)m + 1, sizeof(double)),
           *y = calloc((size_t)m, sizeof(double));
    int status =
        (H && cs && sn && g && y) ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory in GMRES");
    if (!status) status = zero(k, x);
    if (!status) status = copy(k, r, b);
    double beta = 0.0;
    if (!status) status = dot(k, r, r, &beta);
    beta = sqrt(beta);
    res->rnorm = beta;
    while (!status && res->rnorm > target && it < k->set.max_iterations) {
        memset(H, 0, sizeof(double) * (size_t)(m + 1) * m);
        memset(g, 0, sizeof(double) * (size_t)(m + 1));
        g[0] = beta;
        status = axpby(k, 1.0 / beta, r, 0.0, k->basis[0]);
        int j = 0;
        for (; j < m && !status && it < k->set.max_iterations; j++) {
            status = precondition(k, A, k->basis[j], z);
            if (!status) status = A.apply(A.ctx, z, w);
            for (int i = 0; i <= j && !status; i++) {
                status = dot(k, w, k->basis[i], &H[i * m + j]);
                if (!status) status = axpby(k, -H[i * m + j], k->basis[i], 1.0, w);
            }
            double hn = 0.0;
            if (!status) status = dot(k, w, w, &hn);
            hn = sqrt(hn);
            H[(j + 1) * m + j] = hn;
            if (!status && hn > 0.0) status = axpby(k, 1.0 / hn, w, 0.0, k->basis[j + 1]);
            for (int i = 0; i < j; i++) { /* apply earlier rotations */
                double a = H[i * m + j], c = H[(i + 1) * m + j];
                H[i * m + j] = cs[i] * a + sn[i] * c;
                H[(i + 1) * m + j] = -sn[i] * a + cs[i] * c;
            }
            double a = H[j * m + j], c = H[(j + 1) * m + j], den = hypot(a, c);
            cs[j] = den > 0 ? a / den : 1.0;
            sn[j] = den > 0 ? c / den : 0.0;
            H[j * m + j] = den;
            H[(j + 1) * m + j] = 0.0;
            g[j + 1] = -sn[j] * g[j];
            g[j] = cs[j] * g[j];
            res->rnorm = fabs(g[j + 1]);
            it++;
            monitor(k, it, res, target);
            if (!isfinite(res->rnorm)) {
                snprintf(res->reason, sizeof res->reason, "GMRES produced NaN");
                j++;
                break;
            }
            if (res->rnorm <= target || hn == 0.0) {
                j++;
                break;
            }
        }
        if (status || !isfinite(res->rnorm)) break;
        for (int i = j - 1; i >= 0; i--) { /* back substitution */
            double s = g[i];
            for (int l = i + 1; l < j; l++) s -= H[i * m + l] * y[l];
            y[i] = s / H[i * m + i];
        }
        status = zero(k, y_vec);
        for (int i = 0; i < j && !status; i++) status = axpby(k, y[i], k->basis[i], 1.0, y_vec);
        if (!status) status = precondition(k, A, y_vec, z);
        if (!status) status = axpby(k, 1.0, z, 1.0, x);
        /* true residual for the restart */
        if (!status) status = A.apply(A.ctx, x, w);
        if (!status) status = copy(k, r, b);
        if (!status) status = axpby(k, -1.0, w, 1.0, r);
        if (!status) status = dot(k, r, r, &beta);
        beta = sqrt(beta);
        res->rnorm = beta;
    }
    free(H);
    free(cs);
    free(sn);
    free(g);
    free(y);
    FEM_TRY(status);
    return finish(res, target, it);
}

/* Right-preconditioned BiCGStab. */
static int bicgstab(Ksp *k, LinOp A, const double *b, double *x, KspResult *res, double target) {
    double *r = k->v[0], *r0 = k->v[1], *p = k->v[2], *v = k->v[3], *s = k->v[4], *y = k->v[5], *t = k->v[6],
           *z = k->v[7];
    FEM_TRY(zero(k, x));
    FEM_TRY(copy(k, r, b));
    FEM_TRY(copy(k, r0, b));
    FEM_TRY(zero(k, p));
    FEM_TRY(zero(k, v));
    double rho = 1.0, alpha = 1.0, omega = 1.0, rr;
    FEM_TRY(dot(k, r, r, &rr));
    res->rnorm = sqrt(rr);
    int it = 0;
    /* Chebyshev uses v[5..7] as work: BiCGStab supports Jacobi only */
    if (k->set.pc == PC_CHEBYSHEV) k->set.pc = PC_JACOBI;
    while (res->rnorm > target && it < k->set.max_iterations) {
        double rho_new;
        FEM_TRY(dot(k, r0, r, &rho_new));
        if (rho_new == 0.0 || omega == 0.0) {
            snprintf(res->reason, sizeof res->reason, "BiCGStab breakdown");
            break;
        }
        double beta = (rho_new / rho) * (alpha / omega);
        FEM_TRY(axpby(k, -omega, v, 1.0, p));
        FEM_TRY(axpby(k, 1.0, r, beta, p));
        FEM_TRY(precondition(k, A, p, y));
        FEM_TRY(A.apply(A.ctx, y, v));
        double r0v;
        FEM_TRY(dot(k, r0, v, &r0v));
        alpha = rho_new / r0v;
        FEM_TRY(copy(k, s, r));
        FEM_TRY(axpby(k, -alpha, v, 1.0, s));
        FEM_TRY(axpby(k, alpha, y, 1.0, x));
        FEM_TRY(precondition(k, A, s, z));
        FEM_TRY(A.apply(A.ctx, z, t));
        double ts, tt;
        FEM_TRY(dot(k, t, s, &ts));
        FEM_TRY(dot(k, t, t, &tt));
        omega = tt > 0 ? ts / tt : 0.0;
        FEM_TRY(axpby(k, omega, z, 1.0, x));
        FEM_TRY(copy(k, r, s));
        FEM_TRY(axpby(k, -omega, t, 1.0, r));
        FEM_TRY(dot(k, r, r, &rr));
        res->rnorm = sqrt(rr);
        rho = rho_new;
        it++;
        monitor(k, it, res, target);
        if (!isfinite(res->rnorm)) {
            snprintf(res->reason, sizeof res->reason, "BiCGStab produced NaN");
            break;
        }
    }
    return finish(res, target, it);
}

int ksp_solve(Ksp *k, LinOp A, const double *b, double *x, KspResult *res) {
    memset(res, 0, sizeof *res);
    double bb;
    FEM_TRY(dot(k, b, b, &bb));
    res->rnorm0 = sqrt(bb);
    double target = fmax(k->set.rtol * res->rnorm0, k->set.atol);
    if (k->set.type == KSP_CG) return cg(k, A, b, x, res, target);
    if (k->set.type == KSP_GMRES) return gmres(k, A, b, x, res, target);
    return bicgstab(k, A, b, x, res, target);
}
