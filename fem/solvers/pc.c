/* Preconditioners (see pc.h): the table of implementations, Jacobi and Chebyshev-Jacobi. */
#include "pc.h"

#include "fem/dense.h"
#include "fem/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int jacobian_apply(void *ctx, const Vec *x, Vec *y) {
    return op_jacobian((Operator *)ctx, x, y);
}

LinOp op_linop(Operator *op) {
    return (LinOp){jacobian_apply, op};
}

static int jacobian_apply_consistent(void *ctx, const Vec *x, Vec *y) {
    return op_jacobian_consistent((Operator *)ctx, x, y);
}

LinOp op_linop_consistent(Operator *op) {
    return (LinOp){jacobian_apply_consistent, op};
}

/* ---------------------------------------------------------------- Chebyshev-Jacobi */

int chebyshev_create(Chebyshev *c, const Vec *like, int degree) {
    memset(c, 0, sizeof *c);
    c->degree = degree > 0 ? degree : 3;
    Vec *vecs[] = {&c->inv_diag, &c->d, &c->t};
    for (int i = 0; i < 3; i++) FEM_TRY(vec_duplicate(vecs[i], like));
    return FEM_OK;
}

void chebyshev_destroy(Chebyshev *c) {
    Vec *vecs[] = {&c->inv_diag, &c->d, &c->t};
    for (int i = 0; i < 3; i++) vec_destroy(vecs[i]);
}

/* A reproducible pseudo-random vector in [-0.5, 0.5) (the Lanczos start). */
static int random_vector(Vec *b) {
    double *host = malloc(sizeof(double) * (size_t)b->n);
    if (!host) return fem_fail(FEM_ERR_INTERNAL, "out of host memory estimating eigenvalues");
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (int64_t i = 0; i < b->n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        host[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
    int status = vec_upload(b, host);
    free(host);
    return status;
}

enum { LANCZOS_STEPS = 16 };

/* alpha, beta of m <= LANCZOS_STEPS steps of Jacobi-preconditioned CG on A x = b from a random b (r and Ap
 * for the setup only: the smoother keeps three vectors). */
static int lanczos_coefficients(Chebyshev *c, LinOp A, double *alpha, double *beta, int *m) {
    Vec z = c->d, p = c->t, r, Ap;
    FEM_TRY(vec_duplicate(&r, &z));
    int status = vec_duplicate(&Ap, &z);
    if (status) return vec_destroy(&r), status;
    status = random_vector(&r);
    if (!status) status = vec_pointwise_mult(&c->inv_diag, &r, &z);
    if (!status) status = vec_copy(&p, &z);
    double rz = 0.0;
    if (!status) status = vec_dot(&r, &z, &rz);
    for (*m = 0; *m < LANCZOS_STEPS && rz > 0 && !status; (*m)++) {
        double pAp, rz_new;
        status = A.apply(A.ctx, &p, &Ap);
        if (!status) status = vec_dot(&p, &Ap, &pAp);
        if (status || !(pAp > 0)) break;
        alpha[*m] = rz / pAp;
        status = vec_axpby(-alpha[*m], &Ap, 1.0, &r);
        if (!status) status = vec_pointwise_mult(&c->inv_diag, &r, &z);
        if (!status) status = vec_dot(&r, &z, &rz_new);
        beta[*m] = rz_new / rz;
        rz = rz_new;
        if (!status) status = vec_axpby(1.0, &z, beta[*m], &p);
    }
    vec_destroy(&Ap);
    vec_destroy(&r);
    return status;
}

/* Extreme eigenvalues of D^-1 A from the Lanczos matrix of Jacobi-preconditioned CG on a random vector. */
static int estimate_eigenvalues(Chebyshev *c, LinOp A, double lower) {
    double alpha[LANCZOS_STEPS], beta[LANCZOS_STEPS];
    int m = 0;
    FEM_TRY(lanczos_coefficients(c, A, alpha, beta, &m));
    if (m == 0) return fem_fail(FEM_ERR_SOLVER, "Chebyshev setup: the operator is not positive definite");
    double T[LANCZOS_STEPS * LANCZOS_STEPS] = {0}, V[LANCZOS_STEPS * LANCZOS_STEPS];
    for (int j = 0; j < m; j++) {
        T[j * m + j] = 1.0 / alpha[j] + (j ? beta[j - 1] / alpha[j - 1] : 0.0);
        if (j + 1 < m) T[j * m + j + 1] = T[(j + 1) * m + j] = sqrt(beta[j]) / alpha[j];
    }
    dense_symmetric_eigen(m, T, V);
    c->lmin = INFINITY;
    c->lmax = 0.0;
    for (int j = 0; j < m; j++) c->lmin = fmin(c->lmin, T[j * m + j]), c->lmax = fmax(c->lmax, T[j * m + j]);
    /* Lanczos underestimates the largest eigenvalue and overestimates the smallest: widen the top (the
     * polynomial must stay positive up to the true maximum); a high bottom only weakens the preconditioner */
    c->lmax *= 1.1;
    c->lmin = lower > 0 ? lower * c->lmax : fmax(c->lmin, c->lmax / 1000.0);
    return FEM_OK;
}

int chebyshev_setup(Chebyshev *c, LinOp A, const Vec *diag, double lower) {
    FEM_TRY(vec_reciprocal(diag, &c->inv_diag));
    return estimate_eigenvalues(c, A, lower);
}

/* z = p(D^-1 A) D^-1 r: degree steps of the Chebyshev iteration for A z = r from z = 0. */
int chebyshev_apply(Chebyshev *c, LinOp A, const Vec *r, Vec *z) {
    double theta = 0.5 * (c->lmax + c->lmin), delta = 0.5 * (c->lmax - c->lmin), sigma = theta / delta;
    double rho = 1.0 / sigma;
    FEM_TRY(vec_pointwise_mult(&c->inv_diag, r, &c->d));
    FEM_TRY(vec_axpby(1.0 / theta, &c->d, 0.0, &c->d));
    FEM_TRY(vec_copy(z, &c->d));
    for (int it = 1; it < c->degree; it++) {
        FEM_TRY(A.apply(A.ctx, z, &c->t));
        double rho_new = 1.0 / (2.0 * sigma - rho);
        /* d = 2 rho_new / delta D^-1 (r - A z) + rho_new rho d; z += d, in one pass over the vectors */
        FEM_TRY(vec_cheb_step(2.0 * rho_new / delta, &c->inv_diag, r, &c->t, rho_new * rho, &c->d, z));
        rho = rho_new;
    }
    return FEM_OK;
}

/* ---------------------------------------------------------------- the table */

static int none_setup(Pc *pc, LinOp A, Operator *op, const Vec *state) {
    (void)pc, (void)A, (void)op, (void)state;
    return FEM_OK;
}
static int none_apply(Pc *pc, const Vec *r, Vec *z) {
    (void)pc;
    return vec_copy(z, r);
}

static int jacobi_setup(Pc *pc, LinOp A, Operator *op, const Vec *state) {
    (void)A, (void)state;
    FEM_TRY(op_diagonal(op, &pc->diag));
    return vec_reciprocal(&pc->diag, &pc->diag); /* in place: Jacobi keeps the inverse alone */
}
static int jacobi_apply(Pc *pc, const Vec *r, Vec *z) {
    return vec_pointwise_mult(&pc->diag, r, z);
}

static int chebyshev_pc_setup(Pc *pc, LinOp A, Operator *op, const Vec *state) {
    (void)state;
    FEM_TRY(op_diagonal(op, &pc->diag));
    return chebyshev_setup(&pc->cheb, A, &pc->diag, 0.0);
}
static int chebyshev_pc_apply(Pc *pc, const Vec *r, Vec *z) {
    return chebyshev_apply(&pc->cheb, pc->A, r, z);
}

static const PcOps none_ops = {"none", none_setup, none_apply, NULL, NULL};
static const PcOps jacobi_ops = {"Jacobi", jacobi_setup, jacobi_apply, NULL, NULL};
static const PcOps chebyshev_ops = {"Chebyshev-Jacobi", chebyshev_pc_setup, chebyshev_pc_apply, NULL, NULL};
extern const PcOps multigrid_ops; /* multigrid.c */

static const PcOps *pc_table(PcType t) {
    switch (t) {
    case PC_NONE:
        return &none_ops;
    case PC_JACOBI:
        return &jacobi_ops;
    case PC_CHEBYSHEV:
        return &chebyshev_ops;
    case PC_MULTIGRID:
        return &multigrid_ops;
    default:
        return NULL;
    }
}

const char *pc_name(PcType t) {
    const PcOps *ops = pc_table(t);
    return ops ? ops->name : "unknown";
}

int pc_create(Pc *pc, const Vec *like, const PcSettings *set) {
    memset(pc, 0, sizeof *pc);
    pc->set = *set;
    pc->ops = pc_table(set->type);
    if (!pc->ops) return fem_fail(FEM_ERR_INTERNAL, "unknown preconditioner type %d", (int)set->type);
    /* Jacobi keeps the diagonal's inverse, Chebyshev-Jacobi the diagonal and its smoother; multigrid keeps
     * its own per level, and none needs neither */
    if (set->type != PC_JACOBI && set->type != PC_CHEBYSHEV) return FEM_OK;
    FEM_TRY(vec_duplicate(&pc->diag, like));
    if (set->type == PC_JACOBI) return FEM_OK;
    return chebyshev_create(&pc->cheb, like, set->cheb_degree);
}

int pc_setup(Pc *pc, LinOp A, Operator *op, const Vec *state) {
    pc->A = A;
    return pc->ops->setup(pc, A, op, state);
}

int pc_keeps_consistent(const Pc *pc) {
    return pc->set.type == PC_NONE || pc->set.type == PC_JACOBI || pc->set.type == PC_MULTIGRID;
}

int pc_apply(Pc *pc, const Vec *r, Vec *z) {
    return pc->ops->apply(pc, r, z);
}

void pc_destroy(Pc *pc) {
    if (!pc->ops) return;
    if (pc->ops->destroy) pc->ops->destroy(pc);
    vec_destroy(&pc->diag);
    chebyshev_destroy(&pc->cheb);
    memset(pc, 0, sizeof *pc);
}

const char *pc_describe(const Pc *pc) {
    return pc->ops->describe ? pc->ops->describe(pc) : pc->ops->name;
}
