/* The fused CPU operator (cpu/fused.c) against the default implementation (fem/operator_ref.c, what
 * FEMTO_CPU_FUSED=0 leaves): the residual R(u) and the Jacobian action J v at a random state, for linear and
 * neo-Hookean elasticity (gravity, a traction, a q-point source) and for heat with a temperature-dependent
 * conductivity, convection and a transient term (the auxiliary field), and for steady heat with a constant
 * anisotropic conductivity, whose Jacobian action the fused operator runs from the compact q-point data
 * (physics/heat_qf.h) while the default keeps the geometry, every order up to MAXORDER, on 1 and 2 threads.
 * Expected: ||fused - default|| / ||default|| <= 1e-12 (the same sums, added into the output in
 * another order), the fused results bitwise the same on 1 and 2 threads (its assembly order does not depend
 * on the threads), and the operator naming the implementation it runs.
 *
 * usage: test_cpu_fused compare MESH.geo MAXORDER FIXED LOADED [REFINE [GEOMETRY_ORDER]]   (boundaries the
 *        cases fix and load; the mesh refined REFINE times, read with cells of GEOMETRY_ORDER: 2 curved,
 *        by test_curve_mesh, since the box's own order-2 cells are straight)
 *        test_cpu_fused bench MESH.geo SIZE ORDER elasticity|heat|heat-constant REPS   (timings of both
 *        implementations on 1 and 2 threads, best of REPS; not a test; heat-constant: steady, constant k, the
 *        Jacobian's compact q-point data form, which FEMTO_QDATA=0 turns off to compare) */
#include "common/femto_test.h"
#include "cpu/fused.h"
#include "elasticity/elas_test.h"
#include "heat/heat_test.h"
#include "physics/heat.h"
#include "physics/qfunctions.h"

#include <math.h>
#include <omp.h>
#include <string.h>
#include <time.h>

#define TOL 1e-12

typedef struct {
    double *R, *Jv;
    double *diag, *K; /* the assembled diagonal; the element matrices of cell block 0 */
    int64_t nK;
    const char *impl;
    int threaded; /* a cell block large enough for the fused operator's threads and colours */
    int qdata;    /* every cell block's Jacobian action runs the compact q-point data form (op_block_qdata) */
} Result;

/* A physics on a space with its random state u, direction v and optional extras (per-block sources, an
 * auxiliary L-vector). */
typedef struct {
    const Space *sp;
    Model md;
    double *u, *v;
    double *src[MESH_MAX_BLOCKS];
    double *aux;
} Case;

static double rel_diff(int64_t n, const double *a, const double *b) {
    double d = 0.0, s = 0.0;
    for (int64_t i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]), s += b[i] * b[i];
    return sqrt(d / (s > 0 ? s : 1.0));
}

static int op_for(const Case *cs, Device *d, int fused, Operator *op) {
    if (!fused) setenv("FEMTO_CPU_FUSED", "0", 1);
    int status = op_create(op, d, cs->sp, &cs->md.phys, 0, cs->md.cell_tags, cs->md.facet_tags);
    unsetenv("FEMTO_CPU_FUSED");
    if (!status) status = op_set_dirichlet(op, cs->md.ndir, cs->md.dir_dofs);
    for (int b = 0; b < cs->sp->ncell_blocks && !status; b++) status = op_set_source(op, b, cs->src[b]);
    op->aux = cs->aux;
    return status;
}

/* R(u) and J v with the fused (1) or the default (0) implementation (CPU device: host arrays). */
static Result run(const Case *cs, Device *d, int fused) {
    int64_t n = cs->sp->ndofs;
    Result r = {.R = malloc(sizeof(double) * n),
                .Jv = malloc(sizeof(double) * n),
                .diag = malloc(sizeof(double) * n)};
    Operator op;
    CHECK_OK(op_for(cs, d, fused, &op));
    /* the fused operator's diagonal and element matrices go through q-point arrays of their own, a few
     * elements at a time (the default's, made by its applications, hold the whole block) */
    if (fused) op.qp_chunk_points = 37;
    r.impl = op.implementation;
    r.qdata = 1;
    for (int b = 0; b < op.ncells; b++) {
        r.qdata &= op_block_qdata(&op, &op.cells[b], 0) != NULL;
        const ElemView *v = &op.cells[b].view;
        r.threaded |=
            v->nelem * v->ndof * v->nq > FUSED_PARALLEL_WORK && v->nelem >= 4 * fused_chunk_size(v->nelem);
    }
    CHECK_OK(op_residual(&op, TEST_VEC(d, n, cs->u), TEST_VEC(d, n, r.R)));
    CHECK_OK(op_jacobian(&op, TEST_VEC(d, n, cs->v), TEST_VEC(d, n, r.Jv)));
    CHECK_OK(op_diagonal(&op, TEST_VEC(d, n, r.diag)));
    const OpBlock *b0 = &op.cells[0];
    const int64_t m = (int64_t)b0->basis.tables.ndof * op.phys.ncomp;
    r.nK = b0->nelem * m * m;
    r.K = malloc(sizeof(double) * (size_t)(r.nK + 1));
    CHECK_OK(op.ops.element_matrices(&op, 0, 0, r.K));
    if (fused) { /* in one chunk a block: bitwise the same */
        double *diag1 = malloc(sizeof(double) * n), *K1 = malloc(sizeof(double) * (size_t)(r.nK + 1));
        op.qp_chunk_points = INT64_MAX / 2;
        CHECK_OK(op_diagonal(&op, TEST_VEC(d, n, diag1)));
        CHECK_OK(op.ops.element_matrices(&op, 0, 0, K1));
        CHECK(memcmp(diag1, r.diag, sizeof(double) * n) == 0 && memcmp(K1, r.K, sizeof(double) * r.nK) == 0,
              "the diagonal or the element matrices differ between chunks of a few elements and one chunk");
        free(diag1), free(K1);
    }
    for (int b = 0; b < op.ncells && fused; b++)
        CHECK(!op.cells[b].uq && !op.cells[b].s && !op.cells[b].duq && !op.cells[b].f && !op.cells[b].evec,
              "the fused operator made the default's q-point arrays or element vectors of cell block %d", b);
    /* physics/qfunctions.h's list says what each cell q-function writes, and the GPU's fused kernels skip s
     * where it says none: checked once a case (on the default's run), it agrees with the descriptor, and the
     * default's q-point s of such a Jacobian, just evaluated at a random direction, is zero */
    const QFunction *qf[2] = {&op.phys.cell_residual, &op.phys.cell_jacobian};
    for (int k = 0; k < 2 && !fused; k++)
        CHECK(qf_cell_writes(qf[k]->id) == qf[k]->out.eval,
              "%s: the list of cell q-functions says it writes %u, its descriptor %u", qf[k]->name,
              qf_cell_writes(qf[k]->id), qf[k]->out.eval);
    if (!fused && !(qf_cell_writes(op.phys.cell_jacobian.id) & QF_VALUE))
        for (int b = 0; b < op.ncells; b++) {
            const OpBlock *ob = &op.cells[b];
            int64_t k = ob->nelem * ob->basis.tables.nq * op.phys.ncomp, nonzero = 0;
            for (int64_t i = 0; i < k; i++) nonzero += ob->s[i] != 0.0;
            CHECK(nonzero == 0, "%s writes s = 0, but %lld of %lld q-point values of block %d are not",
                  op.phys.cell_jacobian.name, (long long)nonzero, (long long)k, b);
        }
    op_destroy(&op);
    return r;
}

/* Returns whether the case ran the fused operator's threaded, coloured path. qdata: whether the case is one
 * whose Jacobian action the fused operator runs from the compact q-point data (the default never does: it
 * is the present path the compact form must reproduce). */
static int compare(Device *dev[2], const Case *cs, const char *what, int qdata) {
    int64_t n = cs->sp->ndofs, p = cs->sp->order;
    Result ref = run(cs, dev[0], 0), f[2];
    CHECK(strcmp(ref.impl, "ref") == 0, "FEMTO_CPU_FUSED=0 runs the default implementation, not %s",
          ref.impl);
    for (int k = 0; k < 2; k++) {
        f[k] = run(cs, dev[k], 1);
        CHECK(f[k].qdata == qdata, "%s p = %d: the operator %s the compact q-point data form", what, (int)p,
              qdata ? "does not run" : "runs");
        double er = rel_diff(n, f[k].R, ref.R), ej = rel_diff(n, f[k].Jv, ref.Jv);
        printf("  %s p = %d, %d thread(s), %s: residual %.2e, Jacobian %.2e\n", what, (int)p, dev[k]->threads,
               f[k].impl, er, ej);
        CHECK(strcmp(f[k].impl, "cpu-fused") == 0, "%s p = %d: the CPU runs %s, not the fused operator", what,
              (int)p, f[k].impl);
        CHECK(er <= TOL && ej <= TOL,
              "%s p = %d, %d thread(s): residual %.3e, Jacobian %.3e from the default", what, (int)p,
              dev[k]->threads, er, ej);
        /* the same kernels on the state each residual stored (the same up to round-off) */
        double ed = rel_diff(n, f[k].diag, ref.diag);
        double ek = f[k].nK == ref.nK ? rel_diff(ref.nK, f[k].K, ref.K) : 1.0;
        CHECK(ed <= TOL && ek <= TOL,
              "%s p = %d, %d thread(s): the diagonal %.3e, the element matrices %.3e from the default's",
              what, (int)p, dev[k]->threads, ed, ek);
    }
    CHECK(memcmp(f[0].R, f[1].R, sizeof(double) * n) == 0 &&
              memcmp(f[0].Jv, f[1].Jv, sizeof(double) * n) == 0,
          "%s p = %d: the fused results differ between 1 and 2 threads", what, (int)p);
    free(ref.R), free(ref.Jv), free(ref.diag), free(ref.K);
    for (int k = 0; k < 2; k++) free(f[k].R), free(f[k].Jv), free(f[k].diag), free(f[k].K);
    return f[1].threaded;
}

/* Random state: u = base + amp (r - 1/2), v = r - 1/2. */
static void case_state(Case *cs, double base, double amp) {
    int64_t n = cs->sp->ndofs;
    uint64_t seed = 77 + (uint64_t)n;
    cs->u = malloc(sizeof(double) * n), cs->v = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++)
        cs->u[i] = base + amp * (test_rand(&seed) - 0.5), cs->v[i] = test_rand(&seed) - 0.5;
}

static void case_free(Case *cs) {
    for (int b = 0; b < MESH_MAX_BLOCKS; b++) free(cs->src[b]);
    free(cs->u), free(cs->v), free(cs->aux);
    model_destroy(&cs->md);
}

/* Random q-point sources on every cell block (their sizes from an operator of the case). */
static void case_sources(Case *cs, Device *d) {
    Operator op;
    CHECK_OK(op_for(cs, d, 0, &op));
    uint64_t seed = 5;
    for (int b = 0; b < cs->sp->ncell_blocks; b++) {
        int64_t k = op.cells[b].nelem * op.cells[b].basis.tables.nq * cs->md.ncomp;
        cs->src[b] = malloc(sizeof(double) * (k + 1));
        for (int64_t i = 0; i < k; i++) cs->src[b][i] = test_rand(&seed) - 0.5;
    }
    op_destroy(&op);
}

/* Elasticity with gravity, a traction on bnd[1] and q-point sources, at random displacements of amplitude amp
 * (small against the cells, so that none inverts). */
static void elasticity_case(Case *cs, Device *d, const Space *sp, ElasticModel model, const char *const *bnd,
                            double amp) {
    memset(cs, 0, sizeof *cs);
    cs->sp = sp;
    static ElasticMaterial mat;
    static ElasticBc bcs[2];
    mat = elas_material(2e5, 0.3, 1000, 1e-5, 293);
    bcs[0] = elas_bc(ELASTIC_BC_FIXED, bnd[0], 7, 0, 0, 0);
    bcs[1] = elas_bc(ELASTIC_BC_TRACTION, bnd[1], 0, 10.0, -20.0, sp->mesh->dim == 3 ? 30.0 : 0.0);
    Problem *pb = elas_problem(model, &mat, 2, bcs);
    pb->elasticity.gravity[sp->mesh->dim - 1] = -9.81;
    CHECK_OK(elasticity_model_create(pb, sp, &cs->md));
    case_state(cs, 0.0, amp);
    case_sources(cs, d);
}

/* Heat with k(T) = 5 + 0.02 T + 1e-5 T^2, a source, convection on bnd[1], a fixed temperature on bnd[0], and
 * a backward-Euler step (a = 1/dt, the history term -T_n/dt as the auxiliary field). */
/* Heat with k(T), convection and a transient term (constant 0), or steady with a constant anisotropic
 * conductivity (1: the physics' compact q-point data form holds). */
static void heat_case(Case *cs, const Space *sp, const char *const *bnd, int constant) {
    memset(cs, 0, sizeof *cs);
    cs->sp = sp;
    static Problem pb;
    static HeatMaterial mat;
    static HeatBc bc[2];
    memset(&pb, 0, sizeof pb);
    snprintf(pb.path, sizeof pb.path, "test");
    mat = (HeatMaterial){.k_kind = CONDUCTIVITY_POLYNOMIAL,
                         .k_ncoef = 3,
                         .k_coef = {5, 0.02, 1e-5},
                         .source = 100,
                         .density = 7800,
                         .specific_heat = 500};
    if (constant) mat = heat_test_constant_anisotropic();
    bc[0] = (HeatBc){.kind = HEAT_BC_TEMPERATURE, .value = 300};
    bc[1] = (HeatBc){.kind = HEAT_BC_CONVECTION, .h = 30, .ambient = 280};
    snprintf(bc[0].boundary, sizeof bc[0].boundary, "%s", bnd[0]);
    snprintf(bc[1].boundary, sizeof bc[1].boundary, "%s", bnd[1]);
    pb.heat.nmaterials = 1, pb.heat.materials = &mat, pb.heat.nbcs = 2, pb.heat.bcs = bc;
    pb.time.scheme = constant ? TIME_STEADY : TIME_BACKWARD_EULER;
    CHECK_OK(heat_model_create(&pb, sp, &cs->md));
    case_state(cs, 350.0, 100.0);
    if (constant) return;
    heat_set_time(&cs->md, 10.0, 0.5);
    uint64_t seed = 9;
    cs->aux = malloc(sizeof(double) * sp->ndofs);
    for (int64_t i = 0; i < sp->ndofs; i++) cs->aux[i] = -35.0 * (1.0 + 0.1 * (test_rand(&seed) - 0.5));
}

/* Every case on the mesh (refined `refine` times) at orders 1 .. maxp, fixing bnd[0] and loading bnd[1]. With
 * refine > 0 the cases at maxp must be large enough for the fused operator's threads and colours (else the
 * comparison between 1 and 2 threads would prove nothing). */
static int compare_mesh(const char *geo, int maxp, const char *const *bnd, int refine, int gorder) {
    Device d1, d2;
    CHECK_OK(test_device(&d1, DEV_CPU, 1, ASSEMBLE_GATHER));
    CHECK_OK(test_device(&d2, DEV_CPU, 2, ASSEMBLE_GATHER));
    Device *dev[2] = {&d1, &d2};
    Mesh m;
    MeshReadOptions mo = {.refine = refine, .order = gorder};
    CHECK_OK(mesh_read(test_mesh(geo), &mo, &m));
    if (gorder == 2) { /* the box's order-2 cells are straight, so affine: moved to be curved */
        test_curve_mesh(&m, 0.015);
        CHECK(mesh_block_geometry_order(&m, &m.cells[0]) == 2, "%s: the moved cells are not curved", geo);
    }
    printf("%s, %d refinement(s): %lld cells\n", geo, refine, (long long)m.cells[0].count);
    double amp = 0.02 / (1 << refine); /* the same displacement gradients on every refinement */
    for (int p = 1; p <= maxp; p++) {
        Space sv, ss;
        CHECK_OK(space_create(&m, p, m.dim, &sv));
        CHECK_OK(space_create(&m, p, 1, &ss));
        Case cs;
        int threaded = 1;
        /* past p = 3 the gradients of random nodal values grow as p^2: kept at p = 3's (else neo-Hookean
         * points invert, NaN on both implementations) */
        const double ap = amp * (p > 3 ? 9.0 / (p * p) : 1.0);
        elasticity_case(&cs, &d1, &sv, ELASTIC_LINEAR, bnd, ap);
        threaded &= compare(dev, &cs, "linear elasticity", 0);
        case_free(&cs);
        elasticity_case(&cs, &d1, &sv, ELASTIC_NEO_HOOKEAN, bnd, ap);
        threaded &= compare(dev, &cs, "neo-Hookean", 0);
        case_free(&cs);
        heat_case(&cs, &ss, bnd, 0);
        threaded &= compare(dev, &cs, "heat k(T), transient", 0);
        case_free(&cs);
        heat_case(&cs, &ss, bnd, 1);
        threaded &= compare(dev, &cs, "heat constant anisotropic k, steady", 1);
        case_free(&cs);
        CHECK(refine == 0 || p < maxp || threaded,
              "%s refined %d times is too small to run the fused operator's threads at p = %d", geo, refine,
              p);
        space_destroy(&sv);
        space_destroy(&ss);
    }
    mesh_destroy(&m);
    device_destroy(&d1);
    device_destroy(&d2);
    return test_result("test_cpu_fused");
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Seconds of one call of R(u) (residual 1) or J v (0): wall-clock, or CPU time of the calling thread (serial
 * runs on a machine shared with other work). */
static double time_once(Operator *op, const Case *cs, int residual, double *out) {
    int64_t n = cs->sp->ndofs;
    int cpu = op->dev->threads == 1;
    double t0 = cpu ? cpu_seconds() : omp_get_wtime();
    if (residual)
        CHECK_OK(op_residual(op, TEST_VEC(op->dev, n, cs->u), TEST_VEC(op->dev, n, out)));
    else
        CHECK_OK(op_jacobian(op, TEST_VEC(op->dev, n, cs->v), TEST_VEC(op->dev, n, out)));
    return (cpu ? cpu_seconds() : omp_get_wtime()) - t0;
}

/* Both implementations on 1 and 2 threads, taking turns for reps rounds (the machine is shared: the best of
 * the rounds is the figure). */
static int bench(const char *geo, double size, int p, const char *physics, int reps) {
    Mesh m;
    MeshReadOptions mo = {.size = size};
    CHECK_OK(mesh_read(geo, &mo, &m));
    int elas = strcmp(physics, "elasticity") == 0;
    Space sp;
    CHECK_OK(space_create(&m, p, elas ? m.dim : 1, &sp));
    Device d[2];
    CHECK_OK(test_device(&d[0], DEV_CPU, 1, ASSEMBLE_GATHER));
    CHECK_OK(test_device(&d[1], DEV_CPU, 2, ASSEMBLE_GATHER));
    Case cs;
    static const char *const beam[2] = {"clamp", "top"}; /* bench/problems/cantilever-tet.geo */
    if (elas)
        elasticity_case(&cs, &d[0], &sp, ELASTIC_LINEAR, beam, 1e-4);
    else
        heat_case(&cs, &sp, beam, strcmp(physics, "heat-constant") == 0);
    printf("%s p = %d: %lld cells, %lld dofs, best of %d\n", physics, p, (long long)sp.cells[0].count,
           (long long)sp.ndofs, reps);
    Operator op[4];
    double best[4][2], *out = malloc(sizeof(double) * sp.ndofs);
    for (int k = 0; k < 4; k++) {
        CHECK_OK(op_for(&cs, &d[k / 2], k % 2, &op[k]));
        best[k][0] = best[k][1] = 1e30;
    }
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < 4; k++)
            for (int res = 0; res < 2; res++) {
                if (getenv("ONLY_FUSED") && (k % 2 == 0 || k > 1)) continue;
                double t = time_once(&op[k], &cs, res, out);
                if (t < best[k][res]) best[k][res] = t;
            }
    for (int k = 0; k < 4; k++) {
        if (best[k][0] < 1e30) /* (with ONLY_FUSED the others are not timed) */
            printf("  %d thread(s), %-9s: residual %8.2f ms, Jacobian action %8.2f ms (%.3f GDOF/s)\n",
                   d[k / 2].threads, op[k].implementation, 1e3 * best[k][1], 1e3 * best[k][0],
                   1e-9 * sp.ndofs / best[k][0]);
        op_destroy(&op[k]);
    }
    free(out);
    case_free(&cs);
    space_destroy(&sp);
    mesh_destroy(&m);
    return test_result("test_cpu_fused bench");
}

int main(int argc, char **argv) {
    if (argc >= 6 && argc <= 8 && strcmp(argv[1], "compare") == 0) {
        const char *const bnd[2] = {argv[4], argv[5]};
        return compare_mesh(argv[2], atoi(argv[3]), bnd, argc >= 7 ? atoi(argv[6]) : 0,
                            argc == 8 ? atoi(argv[7]) : 0);
    }
    if (argc == 7 && strcmp(argv[1], "bench") == 0)
        return bench(argv[2], atof(argv[3]), atoi(argv[4]), argv[5], atoi(argv[6]));
    fprintf(stderr, "usage: test_cpu_fused compare MESH.geo MAXORDER FIXED LOADED [REFINE [GEOMETRY_ORDER]]\n"
                    "       test_cpu_fused bench MESH.geo SIZE ORDER elasticity|heat|heat-constant REPS\n");
    return 2;
}
