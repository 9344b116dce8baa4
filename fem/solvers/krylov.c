/* Krylov solvers (see krylov.h). */
#include "krylov.h"

#include "fem/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*solve)(Ksp *k, LinOp A, Pc *pc, const Vec *b, Vec *x, KspResult *res, double target);
    int work; /* the work vectors k->v[0 .. work) it uses */
} KspMethod;

static const KspMethod *method(KspType t);

int ksp_create(Ksp *k, const Vec *like, const KspSettings *set) {
    memset(k, 0, sizeof *k);
    k->set = *set;
    if (k->set.restart <= 0) k->set.restart = 50;
    /* only the vectors the method uses: a vector of the fine level a piece (6 MB at 745k dofs) */
    const int work = method(k->set.type) ? method(k->set.type)->work : KSP_WORK;
    for (int i = 0; i < work; i++) FEM_TRY(vec_duplicate(&k->v[i], like));
    if (k->set.type == KSP_GMRES) {
        k->nbasis = k->set.restart + 1;
        FEM_ALLOC(k->basis, k->nbasis, "GMRES basis");
        for (int i = 0; i < k->nbasis; i++) FEM_TRY(vec_duplicate(&k->basis[i], like));
    }
    return FEM_OK;
}

void ksp_destroy(Ksp *k) {
    for (int i = 0; i < KSP_WORK; i++) vec_destroy(&k->v[i]);
    for (int i = 0; i < k->nbasis && k->basis; i++) vec_destroy(&k->basis[i]);
    free(k->basis);
    memset(k, 0, sizeof *k);
}

static int finish(KspResult *res, double target, int it) {
    res->iterations = it;
    res->converged = res->rnorm <= target;
    if (!res->converged && !res->reason[0]) {
        res->capped = 1;
        snprintf(res->reason, sizeof res->reason,
                 "stopped at its cap of %d iterations with |r| = %.3e > %.3e", it, res->rnorm, target);
    }
    return FEM_OK;
}

static void monitor(const Ksp *k, int it, const KspResult *res, double target) {
    if (k->set.monitor) k->set.monitor(k->set.monitor_ctx, it, res->rnorm, res->rnorm0, target);
}

static int cg(Ksp *k, LinOp A, Pc *pc, const Vec *b, Vec *x, KspResult *res, double target) {
    Vec *r = &k->v[0], *z = &k->v[1], *p = &k->v[2], *Ap = &k->v[3];
    FEM_TRY(vec_zero(x));
    FEM_TRY(vec_copy(r, b));
    double rr, rz, pAp;
    FEM_TRY(vec_dot(r, r, &rr));
    res->rnorm = sqrt(rr);
    FEM_TRY(pc_apply(pc, r, z));
    FEM_TRY(vec_copy(p, z));
    FEM_TRY(vec_dot(r, z, &rz));
    int it = 0;
    while (res->rnorm > target && it < k->set.max_iterations) {
        FEM_TRY(A.apply(A.ctx, p, Ap));
        FEM_TRY(vec_dot(p, Ap, &pAp));
        if (!(pAp > 0.0)) {
            snprintf(res->reason, sizeof res->reason,
                     "CG breakdown: p.Ap = %g (the Jacobian is not positive definite)", pAp);
            break;
        }
        double alpha = rz / pAp;
        FEM_TRY(vec_axpby(alpha, p, 1.0, x));
        FEM_TRY(vec_axpby(-alpha, Ap, 1.0, r));
        FEM_TRY(vec_dot(r, r, &rr));
        res->rnorm = sqrt(rr);
        it++;
        monitor(k, it, res, target);
        if (!isfinite(res->rnorm)) {
            snprintf(res->reason, sizeof res->reason, "CG produced NaN");
            break;
        }
        if (res->rnorm <= target) break;
        double rz_new;
        FEM_TRY(pc_apply(pc, r, z));
        FEM_TRY(vec_dot(r, z, &rz_new));
        FEM_TRY(vec_axpby(1.0, z, rz_new / rz, p));
        rz = rz_new;
    }
    return finish(res, target, it);
}

/* GMRES's least-squares problem on the host: applies the earlier Givens rotations to column j of H, makes
 * the next rotation and updates g; returns the new residual norm |g[j+1]|. */
static double givens(int m, int j, double *H, double *cs, double *sn, double *g) {
    for (int i = 0; i < j; i++) {
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
    return fabs(g[j + 1]);
}

typedef struct {
    double *H, *cs, *sn, *g, *y;
} Hessenberg;

/* One Arnoldi step: basis[j+1] from M^-1 basis[j], column j of H. */
static int arnoldi(Ksp *k, LinOp A, Pc *pc, int j, Hessenberg *h, double *hn) {
    int m = k->set.restart;
    Vec *w = &k->v[1], *z = &k->v[2];
    FEM_TRY(pc_apply(pc, &k->basis[j], z));
    FEM_TRY(A.apply(A.ctx, z, w));
    for (int i = 0; i <= j; i++) {
        FEM_TRY(vec_dot(w, &k->basis[i], &h->H[i * m + j]));
        FEM_TRY(vec_axpby(-h->H[i * m + j], &k->basis[i], 1.0, w));
    }
    FEM_TRY(vec_norm(w, hn));
    h->H[(j + 1) * m + j] = *hn;
    if (*hn > 0.0) FEM_TRY(vec_axpby(1.0 / *hn, w, 0.0, &k->basis[j + 1]));
    return FEM_OK;
}

/* x += M^-1 (sum_i y_i basis_i), y from the triangular system of the first j columns; then the true residual
 * r = b - A x and its norm beta (the next cycle starts from it). */
static int gmres_update(Ksp *k, LinOp A, Pc *pc, const Vec *b, Vec *x, Hessenberg *h, int j, double *beta) {
    int m = k->set.restart;
    Vec *r = &k->v[0], *w = &k->v[1], *z = &k->v[2], *y_vec = &k->v[3];
    for (int i = j - 1; i >= 0; i--) { /* back substitution */
        double s = h->g[i];
        for (int l = i + 1; l < j; l++) s -= h->H[i * m + l] * h->y[l];
        h->y[i] = s / h->H[i * m + i];
    }
    FEM_TRY(vec_zero(y_vec));
    for (int i = 0; i < j; i++) FEM_TRY(vec_axpby(h->y[i], &k->basis[i], 1.0, y_vec));
    FEM_TRY(pc_apply(pc, y_vec, z));
    FEM_TRY(vec_axpby(1.0, z, 1.0, x));
    FEM_TRY(A.apply(A.ctx, x, w));
    FEM_TRY(vec_copy(r, b));
    FEM_TRY(vec_axpby(-1.0, w, 1.0, r));
    return vec_norm(r, beta);
}

/* One restart cycle of at most m Arnoldi steps; *j: the steps taken. */
static int gmres_cycle(Ksp *k, LinOp A, Pc *pc, Hessenberg *h, double beta, KspResult *res, double target,
                       int *it, int *j) {
    int m = k->set.restart;
    memset(h->H, 0, sizeof(double) * (size_t)(m + 1) * m);
    memset(h->g, 0, sizeof(double) * (size_t)(m + 1));
    h->g[0] = beta;
    FEM_TRY(vec_axpby(1.0 / beta, &k->v[0], 0.0, &k->basis[0]));
    for (*j = 0; *j < m && *it < k->set.max_iterations;) {
        double hn;
        FEM_TRY(arnoldi(k, A, pc, *j, h, &hn));
        res->rnorm = givens(m, *j, h->H, h->cs, h->sn, h->g);
        (*it)++;
        (*j)++;
        monitor(k, *it, res, target);
        if (!isfinite(res->rnorm)) {
            snprintf(res->reason, sizeof res->reason, "GMRES produced NaN");
            break;
        }
        if (res->rnorm <= target || hn == 0.0) break;
    }
    return FEM_OK;
}

/* Right-preconditioned restarted GMRES with modified Gram-Schmidt; Givens rotations on the host. */
static int gmres(Ksp *k, LinOp A, Pc *pc, const Vec *b, Vec *x, KspResult *res, double target) {
    int m = k->set.restart, it = 0;
    Hessenberg h = {calloc((size_t)(m + 1) * m, sizeof(double)), calloc((size_t)m, sizeof(double)),
                    calloc((size_t)m, sizeof(double)), calloc((size_t)m + 1, sizeof(double)),
                    calloc((size_t)m, sizeof(double))};
    int status = (h.H && h.cs && h.sn && h.g && h.y)
                     ? FEM_OK
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory in GMRES");
    if (!status) status = vec_zero(x);
    if (!status) status = vec_copy(&k->v[0], b);
    double beta = 0.0;
    if (!status) status = vec_norm(&k->v[0], &beta);
    res->rnorm = beta;
    while (!status && res->rnorm > target && it < k->set.max_iterations) {
        int j = 0;
        status = gmres_cycle(k, A, pc, &h, beta, res, target, &it, &j);
        if (status || !isfinite(res->rnorm)) break;
        status = gmres_update(k, A, pc, b, x, &h, j, &beta);
        res->rnorm = beta;
    }
    free(h.H);
    free(h.cs);
    free(h.sn);
    free(h.g);
    free(h.y);
    FEM_TRY(status);
    return finish(res, target, it);
}

/* Right-preconditioned BiCGStab. */
static int bicgstab(Ksp *k, LinOp A, Pc *pc, const Vec *b, Vec *x, KspResult *res, double target) {
    Vec *r = &k->v[0], *r0 = &k->v[1], *p = &k->v[2], *v = &k->v[3], *s = &k->v[4], *y = &k->v[5],
        *t = &k->v[6], *z = &k->v[7];
    FEM_TRY(vec_zero(x));
    FEM_TRY(vec_copy(r, b));
    FEM_TRY(vec_copy(r0, b));
    FEM_TRY(vec_zero(p));
    FEM_TRY(vec_zero(v));
    double rho = 1.0, alpha = 1.0, omega = 1.0, rr;
    FEM_TRY(vec_dot(r, r, &rr));
    res->rnorm = sqrt(rr);
    int it = 0;
    while (res->rnorm > target && it < k->set.max_iterations) {
        double rho_new;
        FEM_TRY(vec_dot(r0, r, &rho_new));
        if (rho_new == 0.0 || omega == 0.0) {
            snprintf(res->reason, sizeof res->reason, "BiCGStab breakdown");
            break;
        }
        double beta = (rho_new / rho) * (alpha / omega);
        FEM_TRY(vec_axpby(-omega, v, 1.0, p));
        FEM_TRY(vec_axpby(1.0, r, beta, p));
        FEM_TRY(pc_apply(pc, p, y));
        FEM_TRY(A.apply(A.ctx, y, v));
        double r0v;
        FEM_TRY(vec_dot(r0, v, &r0v));
        alpha = rho_new / r0v;
        FEM_TRY(vec_copy(s, r));
        FEM_TRY(vec_axpby(-alpha, v, 1.0, s));
        FEM_TRY(vec_axpby(alpha, y, 1.0, x));
        FEM_TRY(pc_apply(pc, s, z));
        FEM_TRY(A.apply(A.ctx, z, t));
        double ts, tt;
        FEM_TRY(vec_dot(t, s, &ts));
        FEM_TRY(vec_dot(t, t, &tt));
        omega = tt > 0 ? ts / tt : 0.0;
        FEM_TRY(vec_axpby(omega, z, 1.0, x));
        FEM_TRY(vec_copy(r, s));
        FEM_TRY(vec_axpby(-omega, t, 1.0, r));
        FEM_TRY(vec_dot(r, r, &rr));
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

static const KspMethod methods[] = {{"CG", cg, 4}, {"GMRES", gmres, 4}, {"BiCGStab", bicgstab, 8}};

static const KspMethod *method(KspType t) {
    return t >= KSP_CG && t <= KSP_BICGSTAB ? &methods[t - KSP_CG] : NULL;
}

const char *ksp_name(KspType t) {
    return method(t) ? method(t)->name : "unknown";
}

int ksp_solve(Ksp *k, LinOp A, Pc *pc, const Vec *b, Vec *x, KspResult *res) {
    memset(res, 0, sizeof *res);
    const KspMethod *m = method(k->set.type);
    if (!m) return fem_fail(FEM_ERR_INTERNAL, "unknown Krylov method %d", (int)k->set.type);
    FEM_TRY(vec_norm(b, &res->rnorm0));
    double target = fmax(k->set.rtol * res->rnorm0, k->set.atol);
    return m->solve(k, A, pc, b, x, res, target);
}
