/* The fused GPU operator (gpu/fused.cu, gpu/fused_simplex.cu's register kernel on simplices of order <= 3 and
 * gpu/fused_tensor.cu's sum-factorised kernel on quadrilaterals and hexahedra of order <= 6) against the CPU
 * device, against the shared-memory fused kernel alone and against the GPU's separate kernels:
 * the residual R(u) and the Jacobian action J v at a random state, for linear and neo-Hookean elasticity and
 * for heat with a temperature-dependent conductivity and convection and steady heat with a constant
 * anisotropic conductivity (the compact q-point data form of fem/qfunction.h, which the fused kernels must
 * run), on one mesh, every order given, with atomic and with gather assembly. Errors ||gpu - cpu|| / ||cpu||
 * must be <= 1e-12, and gather assembly (on the register kernel by element patches: deterministic) must give
 * bitwise the same results twice; the fused device must report the fused implementation where its blocks
 * allow it, and on quadrilaterals and hexahedra run cell block 0 in a fused kernel at every order
 * (gpu_fused_occupancy reports its registers), the shared-memory device only where the full tables are fused
 * (p <= 2). GEOMETRY_ORDER 2 reads the mesh with second-order cells and moves their nodes off the straight
 * sides (test_curve_mesh: a box's own order-2 cells are affine), so that the register kernel reads the
 * geometry at every q-point.
 *
 * SIZE meshes the .geo at that element size (a finer mesh: many patches of the register kernel, and nodes
 * that patches share).
 *
 * usage: test_gpu_fused MESH.geo MAXORDER [GEOMETRY_ORDER [SIZE]]      (exit 77 without a GPU) */
#include "common/femto_test.h"
#include "elasticity/elas_test.h"
#include "heat/heat_test.h"
#include "physics/heat.h"
#ifdef FEMTO_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#include <math.h>
#include <string.h>

#define TOL 1e-12
enum { NDEV = 5 };
/* The case's Jacobian action must run from the compact q-point data on the fused devices (1, 2), and on
 * simplices of the register kernel on the atomic one on patches (gpu/fused_simplex.cu) unless
 * FEMTO_GPU_PATCH=0, when it must not. */
static int expect_qdata, expect_patch;
/* ... and on patches, with the shape tables in constant memory: straight-sided cells at heat's exact rule,
 * unless FEMTO_GPU_CONST_TABLES=0 */
static int expect_const;
/* The split layout (one lane per component) reads its tables from constant memory: linear elasticity at p = 2
 * and 3 on straight-sided simplices, unless FEMTO_GPU_CONST_TABLES=0 */
static int expect_split_const;
/* With gather assembly (no patches) the one-thread kernel reads its tables from constant memory too:
 * constant-k heat at p = 3 on straight-sided triangles (tetrahedra's Jacobian action from q-point data keeps
 * shared tables), unless FEMTO_GPU_CONST_TABLES=0 */
static int expect_one_const;
/* Tetrahedra up to p = 3 (20 nodes: the register kernel's instances of their own) run the register kernel on
 * the fused devices: checked where the cell block is the last launch (constant-k heat, no natural conditions)
 */
static int expect_register;
/* Whether the environment turns a GPU option off (NAME=0). */
static int env_off(const char *name) {
    const char *v = getenv(name);
    return v && strcmp(v, "0") == 0;
}

/* The mesh's element size over the scripts' own (at most 0.5): the random displacements scale with it. */
static double size_scale = 1.0;

typedef struct {
    Device *dev[NDEV]; /* cpu, gpu fused atomic, gpu fused gather, gpu separate kernels, gpu shared-memory
                          fused */
} Devices;

static double rel_diff(int64_t n, const double *a, const double *b) {
    double d = 0.0, s = 0.0;
    for (int64_t i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]), s += b[i] * b[i];
    return sqrt(d / (s > 0 ? s : 1.0));
}

/* R(u) and J v on device d, downloaded; impl: the operator's implementation name; regs: the registers of the
 * fused kernel of cell block 0's Jacobian action (0: not fused). */
static void apply(Device *d, const Space *sp, const Model *md, const double *u, const double *v, double *R,
                  double *Jv, const char **impl, int *regs) {
    int64_t n = sp->ndofs;
    Operator op;
    CHECK_OK(op_create(&op, d, sp, &md->phys, 0, md->cell_tags, md->facet_tags));
    CHECK_OK(op_set_dirichlet(&op, md->ndir, md->dir_dofs));
    *impl = op.implementation;
    Vec U, V, W;
    CHECK_OK(vec_create(&U, d, n));
    CHECK_OK(vec_create(&V, d, n));
    CHECK_OK(vec_create(&W, d, n));
    CHECK_OK(vec_upload(&U, u));
    CHECK_OK(vec_upload(&V, v));
    CHECK_OK(op_residual(&op, &U, &W));
    CHECK_OK(vec_download(&W, R));
    CHECK_OK(op_jacobian(&op, &V, &W));
    CHECK_OK(vec_download(&W, Jv));
    *regs = 0;
#ifdef FEMTO_HAVE_CUDA
    int blocks = 0;
    if (d->kind == DEV_CUDA && expect_qdata && strcmp(op.implementation, "cuda-fused") == 0)
        CHECK(strstr(gpu_last_launch(d), "(q-point data)") != NULL,
              "p = %d: the fused Jacobian action of constant-k heat did not run from the q-point data: %s",
              sp->order, gpu_last_launch(d));
    if (d->kind == DEV_CUDA && expect_patch && d->assembly == ASSEMBLE_ATOMIC &&
        strcmp(op.implementation, "cuda-fused") == 0)
        CHECK((strstr(gpu_last_launch(d), "(patches)") != NULL) == (expect_patch > 0),
              "p = %d: the register kernel %s on patches: %s", sp->order,
              expect_patch > 0 ? "did not run" : "ran", gpu_last_launch(d));
    if (d->kind == DEV_CUDA && expect_patch > 0 && d->assembly == ASSEMBLE_ATOMIC &&
        strcmp(op.implementation, "cuda-fused") == 0)
        CHECK((strstr(gpu_last_launch(d), "(constant tables)") != NULL) == expect_const,
              "p = %d: the patch kernel %s its tables from constant memory: %s", sp->order,
              expect_const ? "did not read" : "read", gpu_last_launch(d));
    if (d->kind == DEV_CUDA && strcmp(op.implementation, "cuda-fused") == 0 &&
        strstr(gpu_last_launch(d), "lanes/elem"))
        CHECK((strstr(gpu_last_launch(d), "(constant tables)") != NULL) == expect_split_const,
              "p = %d: the split kernel %s its tables from constant memory: %s", sp->order,
              expect_split_const ? "did not read" : "read", gpu_last_launch(d));
    if (d->kind == DEV_CUDA && expect_one_const && d->assembly == ASSEMBLE_GATHER &&
        strcmp(op.implementation, "cuda-fused") == 0)
        CHECK(strstr(gpu_last_launch(d), "(constant tables)") != NULL &&
                  strstr(gpu_last_launch(d), "1 elem/thread"),
              "p = %d: the one-thread kernel did not read its tables from constant memory: %s", sp->order,
              gpu_last_launch(d));
    /* gather assembly: on the register kernel by patches (deterministic), but for the one-thread kernel of
     * tetrahedra of order 3 on constant tables, and none with FEMTO_GPU_PATCH=0 */
    if (d->kind == DEV_CUDA && d->assembly == ASSEMBLE_GATHER &&
        strstr(gpu_last_launch(d), "fused-simplex")) {
        const char *l = gpu_last_launch(d);
        const int one3c =
            sp->cells[0].ndof == 20 && strstr(l, "1 elem/thread") && strstr(l, "(constant tables)");
        const int want = !env_off("FEMTO_GPU_PATCH") && !one3c;
        CHECK((strstr(l, "gather assembly on patches (deterministic)") != NULL) == want,
              "p = %d: gather assembly %s on patches: %s", sp->order, want ? "did not run" : "ran", l);
    }
    if (d->kind == DEV_CUDA && expect_register && strcmp(op.implementation, "cuda-fused") == 0)
        CHECK(strstr(gpu_last_launch(d), "fused-simplex") != NULL,
              "p = %d tetrahedra: the Jacobian action did not run on the register kernel: %s", sp->order,
              gpu_last_launch(d));
    if (d->kind == DEV_CUDA) CHECK_OK(gpu_fused_occupancy(&op, 0, 0, regs, &blocks));
#endif
    vec_destroy(&U), vec_destroy(&V), vec_destroy(&W);
    op_destroy(&op);
}

static void compare(Devices *D, const char *what, const Space *sp, const Model *md, double base, double amp) {
    int64_t n = sp->ndofs;
    double *u = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n), *R[NDEV], *J[NDEV];
    uint64_t seed = 2024;
    for (int64_t i = 0; i < n; i++)
        u[i] = base + amp * (test_rand(&seed) - 0.5), v[i] = test_rand(&seed) - 0.5;
    const char *impl[NDEV];
    int regs[NDEV];
    for (int k = 0; k < NDEV; k++) {
        R[k] = malloc(sizeof(double) * n), J[k] = malloc(sizeof(double) * n);
        apply(D->dev[k], sp, md, u, v, R[k], J[k], &impl[k], &regs[k]);
    }
    static const char *names[NDEV] = {"", "fused atomic", "fused gather", "separate kernels",
                                      "shared-memory fused"};
    /* gather assembly is deterministic: the fused gather device again, bitwise the same */
    {
        double *R2 = malloc(sizeof(double) * n), *J2 = malloc(sizeof(double) * n);
        const char *im;
        int rg;
        apply(D->dev[2], sp, md, u, v, R2, J2, &im, &rg);
        CHECK(memcmp(R2, R[2], sizeof(double) * n) == 0 && memcmp(J2, J[2], sizeof(double) * n) == 0,
              "%s p = %d, fused gather: two runs differ (residual %.3e, Jacobian %.3e)", what, sp->order,
              rel_diff(n, R2, R[2]), rel_diff(n, J2, J[2]));
        free(R2), free(J2);
    }
    for (int k = 1; k < NDEV; k++) {
        double er = rel_diff(n, R[k], R[0]), ej = rel_diff(n, J[k], J[0]);
        printf("  %s p = %d, %s (%s, %d registers): residual %.2e, Jacobian %.2e\n", what, sp->order,
               names[k], impl[k], regs[k], er, ej);
        CHECK(er <= TOL && ej <= TOL, "%s p = %d %s: residual %.3e, Jacobian %.3e against the CPU", what,
              sp->order, names[k], er, ej);
    }
    CHECK(strcmp(impl[3], "ref") == 0, "the unfused device runs the default implementation, not %s", impl[3]);
    if (shape_is_tensor(sp->cells[0].shape) && sp->order <= 6) {
        for (int k = 1; k <= 2; k++)
            CHECK(strcmp(impl[k], "cuda-fused") == 0 && regs[k] > 0,
                  "%s p = %d %s: cell block 0 is not fused (%s, %d registers)", what, sp->order, names[k],
                  impl[k], regs[k]);
        CHECK((regs[4] > 0) == (sp->order <= 2), "%s p = %d, shared-memory fused: %d registers", what,
              sp->order, regs[4]);
    }
    for (int k = 0; k < NDEV; k++) free(R[k]), free(J[k]);
    free(u), free(v);
}

static void elasticity(Devices *D, const Mesh *m, int p, ElasticModel model) {
    Space sp;
    CHECK_OK(space_create(m, p, m->dim, &sp));
    ElasticMaterial mat = elas_material(2e5, 0.3, 1000, 1e-5, 293);
    ElasticBc bcs[2] = {elas_bc(ELASTIC_BC_FIXED, "left", 7, 0, 0, 0),
                        elas_bc(ELASTIC_BC_TRACTION, "right", 0, 10.0, -20.0, m->dim == 3 ? 30.0 : 0.0)};
    Problem *pb = elas_problem(model, &mat, 2, bcs);
    pb->elasticity.gravity[m->dim - 1] = -9.81;
    Model md;
    CHECK_OK(elasticity_model_create(pb, &sp, &md));
    /* random nodal displacements of amplitude a give gradients of about a p^2 / h: 0.02 / p^2 keeps every
     * neo-Hookean point uninverted (det F > 0) up to p = 6 (0.02 at p = 4 inverted some: NaN on every device)
     */
    expect_split_const = model == ELASTIC_LINEAR && (p == 2 || p == 3) &&
                         !shape_is_tensor(sp.cells[0].shape) && m->cells[0].order == 1 &&
                         !env_off("FEMTO_GPU_CONST_TABLES");
    compare(D, model == ELASTIC_LINEAR ? "linear elasticity" : "neo-Hookean", &sp, &md, 0.0,
            0.02 / (p * p) * size_scale);
    expect_split_const = 0;
    model_destroy(&md);
    space_destroy(&sp);
}

/* Heat with k(T) and convection, or (constant) steady with a constant anisotropic conductivity and only a
 * fixed temperature: the Jacobian's compact q-point data form, which the fused kernels must then run (their
 * launch line says so: the cell block is the last launch) on quadrilaterals and hexahedra and on simplices of
 * the register kernel (p <= 3), there on patches of elements with atomic assembly except on tetrahedra of
 * order 3 (the shape tables in constant memory on straight-sided cells). */
static void heat(Devices *D, const Mesh *m, int p, int constant) {
    Space sp;
    CHECK_OK(space_create(m, p, 1, &sp));
    static Problem pb;
    memset(&pb, 0, sizeof pb);
    snprintf(pb.path, sizeof pb.path, "test");
    HeatMaterial mat = {
        .k_kind = CONDUCTIVITY_POLYNOMIAL, .k_ncoef = 3, .k_coef = {5, 0.02, 1e-5}, .source = 100};
    if (constant) mat = heat_test_constant_anisotropic();
    HeatBc bc[2] = {{.kind = HEAT_BC_TEMPERATURE, .boundary = "left", .value = 300},
                    {.kind = HEAT_BC_CONVECTION, .boundary = "right", .h = 30, .ambient = 280}};
    pb.heat.nmaterials = 1, pb.heat.materials = &mat, pb.heat.nbcs = constant ? 1 : 2, pb.heat.bcs = bc;
    Model md;
    CHECK_OK(heat_model_create(&pb, &sp, &md));
    const Shape s = sp.cells[0].shape;
    expect_qdata = constant && (shape_is_tensor(s) || p <= 3);
    expect_register = constant && s == SHAPE_TET && p <= 3;
    /* (not on tetrahedra of order 3, where the one-thread kernel is faster) */
    if (expect_qdata && !shape_is_tensor(s))
        expect_patch = env_off("FEMTO_GPU_PATCH") || (s == SHAPE_TET && p == 3) ? -1 : 1;
    expect_const = expect_patch > 0 && m->cells[0].order == 1 && !env_off("FEMTO_GPU_CONST_TABLES");
    expect_one_const =
        constant && s == SHAPE_TRI && p == 3 && m->cells[0].order == 1 && !env_off("FEMTO_GPU_CONST_TABLES");
    compare(D, constant ? "heat constant k" : "heat k(T)", &sp, &md, 350.0, 100.0);
    expect_qdata = expect_patch = expect_const = expect_one_const = expect_register = 0;
    model_destroy(&md);
    space_destroy(&sp);
}

int main(int argc, char **argv) {
    if (argc < 3)
        return fprintf(stderr, "usage: test_gpu_fused MESH.geo MAXORDER [GEOMETRY_ORDER [SIZE]]\n"), 2;
#ifndef FEMTO_HAVE_CUDA
    (void)argv, (void)elasticity, (void)heat;
    printf("skipped: built without CUDA\n");
    return TEST_SKIP;
#else
    Device cpu, fa, fg, sep, shm;
    CHECK_OK(test_device(&cpu, DEV_CPU, 2, ASSEMBLE_GATHER));
    if (test_device(&fa, DEV_CUDA, 0, ASSEMBLE_ATOMIC)) return TEST_SKIP;
    CHECK_OK(test_device(&fg, DEV_CUDA, 0, ASSEMBLE_GATHER));
    CHECK_OK(test_device(&sep, DEV_CUDA, 0, ASSEMBLE_GATHER));
    CHECK_OK(test_device(&shm, DEV_CUDA, 0, ASSEMBLE_ATOMIC));
    GpuTuning t;
    memset(&t, 0, sizeof t);
    t.unfused = 1;
    CHECK_OK(gpu_device_tune(&sep, &t));
    t.unfused = 0, t.fused_shared = 1;
    CHECK_OK(gpu_device_tune(&shm, &t));
    Devices D = {{&cpu, &fa, &fg, &sep, &shm}};
    Mesh m;
    MeshReadOptions mo = {0};
    mo.order = argc > 3 ? atoi(argv[3]) : 0;
    mo.size = argc > 4 ? atof(argv[4]) : 0.0;
    if (mo.size > 0.0) size_scale = mo.size / 0.5;
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    if (mo.order == 2) test_curve_mesh(&m, 0.015); /* the box's own order-2 cells are straight, so affine */
    for (int p = 1; p <= atoi(argv[2]); p++) {
        elasticity(&D, &m, p, ELASTIC_LINEAR);
        elasticity(&D, &m, p, ELASTIC_NEO_HOOKEAN);
        heat(&D, &m, p, 0);
        heat(&D, &m, p, 1);
    }
    mesh_destroy(&m);
    return test_result("test_gpu_fused");
#endif
}
