/* femto-bench's CG rows: one whole CG iteration (the operator, the vector updates and dot products, the
 * preconditioner) on a problem file's linear system, on every device configuration, with the pieces of the
 * iteration timed apart; and the operator rows of that problem. Issue 13 wants the iteration of the p = 2
 * tetrahedral cantilever (bench/problems/cantilever-tet.xml, 745k dofs) at <= 0.2 ms with Jacobi on the GPU.
 *
 * The system is Newton's first one: J(u0) du = -R(u0) at u0 = the initial guess with the Dirichlet values set
 * (u0 = 0 for the cantilever). CG runs a fixed number of iterations (--cg-iterations, tolerance 0), so every
 * configuration does the same work; the time per iteration is the median solve time over the iterations
 * done, one start-up (a preconditioner application and two dot products) included. */
#include "bench_operator.h"

#include "fem/error.h"
#include "fem/solvers/krylov.h"
#include "io/mesh_read.h"
#include "physics/elasticity.h"
#include "physics/heat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Ksp ksp;
    Pc pc;
    LinOp A;
    Vec b, x;
    KspResult res;
} Cg;

static int call_cg(void *p) {
    Cg *c = p;
    return ksp_solve(&c->ksp, c->A, &c->pc, &c->b, &c->x, &c->res);
}
static int call_pc(void *p) {
    Cg *c = p;
    return pc_apply(&c->pc, &c->b, &c->x);
}
static int call_axpby(void *p) {
    Cg *c = p;
    return vec_axpby(1e-3, &c->b, 1.0, &c->x);
}
static int call_dot(void *p) {
    Cg *c = p;
    double d;
    return vec_dot(&c->b, &c->x, &d);
}
static int call_jacobian(void *p) {
    Cg *c = p;
    return c->A.apply(c->A.ctx, &c->b, &c->x);
}

/* The problem's space, model and the state u0 (host), read as femto-app would. */
typedef struct {
    Problem pb;
    Mesh mesh;
    Space sp;
    Model md;
    double *u0, *dir_x;
} CgProblem;

static void problem_open(const Options *o, CgProblem *P) {
    memset(P, 0, sizeof *P);
    if (problem_read(o->cg_problem, &P->pb)) bench_die("reading the CG problem");
    const Problem *pb = &P->pb;
    MeshReadResult got;
    MeshReadOptions mo = {.size = o->cg_size > 0 ? o->cg_size : pb->mesh_size,
                          .order = pb->mesh_order,
                          .refine = pb->mesh_refine,
                          .cache_dir = o->mesh_cache,
                          .result = &got};
    fprintf(stderr, "femto-bench: CG rows: meshing %s ...\n", pb->mesh_file);
    if (mesh_read(pb->mesh_file, &mo, &P->mesh)) bench_die("meshing the CG problem");
    int elastic = (pb->physics & PHYSICS_ELASTICITY) != 0;
    if (space_create(&P->mesh, pb->order, elastic ? P->mesh.dim : 1, &P->sp))
        bench_die("the CG problem's space");
    if (elastic ? elasticity_model_create(pb, &P->sp, &P->md) : heat_model_create(pb, &P->sp, &P->md))
        bench_die("the CG problem's model");
    int64_t n = P->sp.ndofs;
    P->u0 = bench_malloc(sizeof(double) * (size_t)n);
    P->dir_x = bench_malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        P->u0[i] = elastic ? 0.0 : pb->heat.initial_temperature, P->dir_x[i] = bench_rnd();
    for (int64_t i = 0; i < P->md.ndir; i++) P->u0[P->md.dir_dofs[i]] = P->md.dir_values[i];
}

static void problem_close(CgProblem *P) {
    free(P->u0), free(P->dir_x);
    model_destroy(&P->md);
    space_destroy(&P->sp);
    mesh_destroy(&P->mesh);
    problem_destroy(&P->pb);
}

/* b = -R(u0), the preconditioner set up at u0, a CG of o->cg_iterations iterations. */
static void cg_setup(const Options *o, Operator *op, const double *u0, Cg *c) {
    Vec u;
    PcSettings ps = {.type = strcmp(o->cg_pc, "multigrid") ? PC_JACOBI : PC_MULTIGRID, .cheb_degree = 3};
    KspSettings ks = {.type = KSP_CG, .rtol = 0, .atol = 0, .max_iterations = o->cg_iterations};
    c->A = op_linop(op);
    if (vec_create(&u, op->dev, op->space->ndofs) || vec_create(&c->b, op->dev, op->space->ndofs) ||
        vec_create(&c->x, op->dev, op->space->ndofs) || vec_upload(&u, u0) || op_residual(op, &u, &c->b) ||
        vec_axpby(0.0, &u, -1.0, &c->b) || ksp_create(&c->ksp, &c->b, &ks) || pc_create(&c->pc, &c->b, &ps) ||
        pc_setup(&c->pc, c->A, op, &u))
        bench_die("setting up CG");
    vec_destroy(&u);
}

static void cg_destroy(Cg *c) {
    ksp_destroy(&c->ksp);
    pc_destroy(&c->pc);
    vec_destroy(&c->b);
    vec_destroy(&c->x);
}

/* One configuration's CG row: the iteration, and its pieces in the launch column. */
static void cg_row(Bench *B, const Options *o, const OpCase *k, const OpConfig *cfg, OpTable *t) {
    Operator op;
    Cg c;
    memset(&c, 0, sizeof c);
    if (bench_op_create(B, cfg, k, &op)) bench_die("the CG problem's operator");
    cg_setup(o, &op, k->u, &c);
    double us = bench_time(B, cfg->dev, o, call_cg, &c);
    int its = c.res.iterations > 0 ? c.res.iterations : 1;
    double t_op = bench_time(B, cfg->dev, o, call_jacobian, &c),
           t_pc = bench_time(B, cfg->dev, o, call_pc, &c);
    double t_ax = bench_time(B, cfg->dev, o, call_axpby, &c),
           t_dot = bench_time(B, cfg->dev, o, call_dot, &c);
    OpRow *r = op_table_add(t);
    bench_op_row(k, cfg, &op,
                 strcmp(o->cg_pc, "multigrid") ? "CG iteration (Jacobi)" : "CG iteration (multigrid)", r);
    r->us = us / its;
    r->element_us = -1;
    r->bytes =
        strcmp(o->cg_pc, "multigrid") ? bench_op_bytes(&op, 0) + 8.0 * CG_VECTOR_PASSES * k->sp->ndofs : 0;
    char s_op[32], s_pc[32], s_ax[32], s_dot[32];
    bench_fmt_us(s_op, sizeof s_op, t_op), bench_fmt_us(s_pc, sizeof s_pc, t_pc);
    bench_fmt_us(s_ax, sizeof s_ax, t_ax), bench_fmt_us(s_dot, sizeof s_dot, t_dot);
    snprintf(r->launch, sizeof r->launch,
             "%s; %d iterations; apart: J x (op_jacobian) %s µs, preconditioner %s µs, axpby %s µs (3 per "
             "iteration), dot %s µs (3 per iteration)",
             pc_describe(&c.pc), its, s_op, s_pc, s_ax, s_dot);
    cg_destroy(&c);
    op_destroy(&op);
}

void bench_cg(Bench *B, const Options *o, OpTable *t) {
    CgProblem P;
    problem_open(o, &P);
    const char *name = strrchr(o->cg_problem, '/');
    OpCase k = {.sp = &P.sp,
                .md = &P.md,
                .ndir = P.md.ndir,
                .dir = P.md.dir_dofs,
                .u = P.u0,
                .x = P.dir_x,
                .linear = P.md.linear};
    snprintf(k.problem, sizeof k.problem, "%s", name ? name + 1 : o->cg_problem);
    for (int b = 0; b < P.mesh.ncell_blocks; b++) {
        size_t l = strlen(k.cells);
        snprintf(k.cells + l, sizeof k.cells - l, "%s%s", b ? ", " : "", P.mesh.cells[b].type->name);
        k.elements += P.mesh.cells[b].count;
    }
    fprintf(stderr, "femto-bench: CG rows: %s, p = %d, %lld dofs ...\n", k.problem, P.sp.order,
            (long long)P.sp.ndofs);
    bench_operator_case(B, o, &k, t);
    OpConfig cfg[BENCH_MAX_CONFIGS];
    int ncfg = bench_op_configs(B, o, cfg);
    for (int i = 0; i < ncfg; i++) cg_row(B, o, &k, &cfg[i], t);
    problem_close(&P);
}
