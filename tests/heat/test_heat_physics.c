/* Heat physics against theory.
 *   newton   k(T) = 10 + 0.05 T on a bar, ends at 300 K and 900 K: Newton converges quadratically
 *            (|R_k+1| / |R_k|^2 bounded in the last iterations) and the heat flow is the Kirchhoff value.
 *   fin      the 2D convecting fin: T along the fin follows T_inf + (T_b - T_inf) cosh(m (L - x)) / cosh(mL)
 *            to O(Biot) at every node.
 *   balance  a block with a volumetric source, convection and radiation: heat out through the boundaries
 *            equals the source integral to 1e-8 relative.
 *   precond  the matrix-free diagonal equals e_i . J e_i (k(T) and radiation included), and CG with
 *            Chebyshev-Jacobi reaches the Jacobi solution in fewer iterations.
 *   gpu      the fin and the k(T) bar on CPU and GPU agree to the solver tolerance (skipped without a GPU).
 * usage: test_heat_physics newton|fin|balance|precond|gpu */
#include "common/femto_test.h"
#include "fem/error.h"
#include "io/mesh_read.h"
#include "physics/heat.h"

#include <math.h>
#include <string.h>

static char path[4096];

static const char *sample(const char *rel) {
    snprintf(path, sizeof path, "%s/../inputs/%s", FEMTO_TEST_MESHES "/..", rel);
    return path;
}

typedef struct {
    Mesh m;
    Space sp;
    Problem pb;
    Model md;
    HeatMaterial mat;
    HeatBc bc[4];
    double *u;
} Case;

static void case_open(Case *c, const char *mesh, int p) {
    memset(c, 0, sizeof *c);
    MeshReadOptions mo = {0};
    CHECK_OK(mesh_read(mesh, &mo, &c->m));
    CHECK_OK(space_create(&c->m, p, 1, &c->sp));
    snprintf(c->pb.path, sizeof c->pb.path, "test");
    c->pb.heat.nmaterials = 1;
    c->pb.heat.materials = &c->mat;
    c->pb.heat.bcs = c->bc;
}

static void case_model(Case *c, double T0) {
    CHECK_OK(heat_model_create(&c->pb, &c->sp, &c->md));
    c->u = malloc(sizeof(double) * c->sp.ndofs);
    for (int64_t i = 0; i < c->sp.ndofs; i++) c->u[i] = T0;
}

static void case_close(Case *c) {
    free(c->u);
    model_destroy(&c->md);
    space_destroy(&c->sp);
    mesh_destroy(&c->m);
}

static void bar_case(Case *c, int p) {
    case_open(c, sample("heat-kt-bar/bar.msh"), p);
    c->mat = (HeatMaterial){.k_kind = CONDUCTIVITY_POLYNOMIAL, .k_ncoef = 2, .k_coef = {10, 0.05}};
    snprintf(c->mat.region, sizeof c->mat.region, "bar");
    c->bc[0] = (HeatBc){.kind = HEAT_BC_TEMPERATURE, .boundary = "cold", .value = 300};
    c->bc[1] = (HeatBc){.kind = HEAT_BC_TEMPERATURE, .boundary = "hot", .value = 900};
    c->pb.heat.nbcs = 2;
    case_model(c, 500);
}

static void fin_case(Case *c, int p) {
    case_open(c, sample("heat-fin-2d/fin.msh"), p);
    c->mat = (HeatMaterial){.k_kind = CONDUCTIVITY_CONSTANT, .k = 200};
    snprintf(c->mat.region, sizeof c->mat.region, "fin");
    c->bc[0] = (HeatBc){.kind = HEAT_BC_TEMPERATURE, .boundary = "base", .value = 373.15};
    c->bc[1] = (HeatBc){.kind = HEAT_BC_CONVECTION, .boundary = "faces", .h = 25, .ambient = 293.15};
    c->pb.heat.nbcs = 2;
    case_model(c, 293.15);
}

static int test_newton(void) {
    Device d;
    CHECK_OK(test_device(&d, DEV_CPU, 0, ASSEMBLE_GATHER));
    Case c;
    bar_case(&c, 2);
    TestSolve ts = {.ksp = KSP_GMRES, .pc = PC_JACOBI, .rtol = 1e-13};
    CHECK_OK(test_solve(&d, &c.sp, &c.md, NULL, c.u, &ts));
    const NewtonResult *r = &ts.newton;
    printf("Newton on k(T): %d iterations\n", r->iterations);
    for (int k = 0; k + 1 < r->nhistory; k++) {
        double ratio = r->history[k + 1] / (r->history[k] * r->history[k]);
        printf("  |R_%d| = %.3e   |R_%d|/|R_%d|^2 = %.3e\n", k + 1, r->history[k + 1], k + 1, k, ratio);
    }
    /* quadratic convergence: |R_k+1| / |R_k|^2 stays bounded over every step above the round-off floor
     * (|R| < 1e-12 |R_0| is rounding, not convergence); linear convergence would make the ratio grow like
     * 1/|R_k|, by orders of magnitude over these steps */
    double lo = INFINITY, hi = 0.0;
    int counted = 0;
    for (int k = 0; k + 1 < r->nhistory; k++) {
        if (r->history[k + 1] < 1e-12 * r->history[0]) break;
        double ratio = r->history[k + 1] / (r->history[k] * r->history[k]);
        lo = fmin(lo, ratio), hi = fmax(hi, ratio);
        counted++;
    }
    CHECK(counted >= 3, "only %d Newton steps above the round-off floor", counted);
    CHECK(hi <= 10 * lo, "|R_k+1|/|R_k|^2 ranges from %.3e to %.3e: not quadratic", lo, hi);
    case_close(&c);
    device_destroy(&d);
    return 0;
}

static int test_fin(void) {
    Device d;
    CHECK_OK(test_device(&d, DEV_CPU, 0, ASSEMBLE_GATHER));
    Case c;
    fin_case(&c, 2);
    TestSolve ts = {.ksp = KSP_CG, .pc = PC_JACOBI, .linear = 1};
    CHECK_OK(test_solve(&d, &c.sp, &c.md, NULL, c.u, &ts));
    double k = 200, h = 25, t = 0.002, L = 0.05, Tb = 373.15, Ta = 293.15, m = sqrt(2 * h / (k * t));
    double worst = 0.0;
    for (int64_t n = 0; n < c.sp.nnodes; n++) {
        double x = c.sp.node_x[3 * n], T = Ta + (Tb - Ta) * cosh(m * (L - x)) / cosh(m * L);
        worst = fmax(worst, fabs(c.u[n] - T) / (Tb - Ta));
    }
    /* the 2D section differs from 1D fin theory by O(Biot) = h t / (2k) = 1.25e-4 */
    printf("fin: largest deviation from 1D fin theory %.3e of T_b - T_inf (Biot number 1.25e-4)\n", worst);
    CHECK(worst < 1e-4, "the fin profile deviates by %.3e of T_b - T_inf from theory", worst);
    case_close(&c);
    device_destroy(&d);
    return 0;
}

static int test_balance(void) {
    Device d;
    CHECK_OK(test_device(&d, DEV_CPU, 0, ASSEMBLE_GATHER));
    Case c;
    case_open(&c, test_mesh("cube_hex.geo"), 2);
    c.mat = (HeatMaterial){.k_kind = CONDUCTIVITY_CONSTANT, .k = 2.0, .source = 5e4};
    c.bc[0] = (HeatBc){.kind = HEAT_BC_CONVECTION, .boundary = "boundary", .h = 10, .ambient = 300};
    c.bc[1] = (HeatBc){.kind = HEAT_BC_RADIATION, .boundary = "right", .emissivity = 0.8, .ambient = 280};
    c.bc[2] = (HeatBc){.kind = HEAT_BC_FLUX, .boundary = "left", .value = 2000};
    c.pb.heat.nbcs = 3;
    case_model(&c, 400);
    TestSolve ts = {.ksp = KSP_CG, .pc = PC_JACOBI, .rtol = 1e-13};
    CHECK_OK(test_solve(&d, &c.sp, &c.md, NULL, c.u, &ts));
    HeatFlow flows[3];
    double source, total;
    CHECK_OK(heat_balance(&c.md, &c.pb, &c.sp, test_host_vec(c.sp.ndofs, c.u), NULL, flows, &source));
    total = source;
    for (int i = 0; i < 3; i++) {
        printf("  %-10s %-11s %.9g W\n", flows[i].boundary, flows[i].kind, flows[i].watts);
        total += flows[i].watts;
    }
    printf("  source %.9g W (5e4 W/m^3 x 1 m^3), imbalance %.3e\n", source, total / source);
    CHECK(fabs(source - 5e4) < 1e-9 * 5e4, "source integral %.12g, expected 5e4", source);
    CHECK(fabs(total) < 1e-8 * source, "heat out + source = %.3e W, more than 1e-8 of the source", total);
    case_close(&c);
    device_destroy(&d);
    return 0;
}

static int test_precond(void) {
    Device d;
    CHECK_OK(test_device(&d, DEV_CPU, 1, ASSEMBLE_GATHER));
    /* (1) the diagonal, on a nonlinear case: k(T) polynomial, radiation and convection on the boundary */
    Case c;
    case_open(&c, test_mesh("cube_hex.geo"), 2);
    c.mat = (HeatMaterial){.k_kind = CONDUCTIVITY_POLYNOMIAL, .k_ncoef = 3, .k_coef = {5, 0.02, 1e-5}};
    c.bc[0] = (HeatBc){.kind = HEAT_BC_RADIATION, .boundary = "right", .emissivity = 0.7, .ambient = 280};
    c.bc[1] = (HeatBc){.kind = HEAT_BC_CONVECTION, .boundary = "left", .h = 30, .ambient = 300};
    c.pb.heat.nbcs = 2;
    case_model(&c, 0);
    int64_t n = c.sp.ndofs;
    uint64_t seed = 7;
    for (int64_t i = 0; i < n; i++) c.u[i] = 350 + 100 * test_rand(&seed); /* a non-uniform state */
    Operator op;
    CHECK_OK(op_create(&op, &d, &c.sp, &c.md.phys, 0, c.md.cell_tags, c.md.facet_tags));
    double *r = malloc(sizeof(double) * n), *diag = malloc(sizeof(double) * n),
           *e = calloc(n, sizeof(double)), *Je = malloc(sizeof(double) * n);
    CHECK_OK(op_residual(&op, TEST_VEC(&d, n, c.u), TEST_VEC(&d, n, r))); /* stores the state the Jacobian linearises about */
    CHECK_OK(op_diagonal(&op, TEST_VEC(&d, n, diag)));
    double worst = 0.0;
    for (int k = 0; k < 60; k++) {
        int64_t i = (int64_t)(test_rand(&seed) * n) % n;
        e[i] = 1.0;
        CHECK_OK(op_jacobian(&op, TEST_VEC(&d, n, e), TEST_VEC(&d, n, Je)));
        e[i] = 0.0;
        worst = fmax(worst, fabs(Je[i] - diag[i]) / fabs(Je[i]));
    }
    printf("diagonal vs e_i . J e_i at 60 random dofs: largest relative difference %.3e\n", worst);
    CHECK(worst < 1e-12, "the matrix-free diagonal differs from e_i . J e_i by %.3e", worst);
    op_destroy(&op);
    free(r), free(diag), free(e), free(Je);
    case_close(&c);
    /* (2) Chebyshev-Jacobi against Jacobi on the fin */
    Case a, b;
    fin_case(&a, 2);
    fin_case(&b, 2);
    TestSolve ja = {.ksp = KSP_CG, .pc = PC_JACOBI, .linear = 1},
              ch = {.ksp = KSP_CG, .pc = PC_CHEBYSHEV, .linear = 1};
    CHECK_OK(test_solve(&d, &a.sp, &a.md, NULL, a.u, &ja));
    CHECK_OK(test_solve(&d, &b.sp, &b.md, NULL, b.u, &ch));
    double diff = 0.0;
    for (int64_t i = 0; i < a.sp.ndofs; i++) diff = fmax(diff, fabs(a.u[i] - b.u[i]));
    printf(
        "fin: CG + Jacobi %d iterations, CG + Chebyshev-Jacobi (degree 3) %d iterations, max |T difference| "
        "%.3e K\n",
        ja.linear_iterations, ch.linear_iterations, diff);
    CHECK(diff < 1e-6, "Chebyshev and Jacobi solutions differ by %.3e K", diff);
    CHECK(ch.linear_iterations < ja.linear_iterations, "Chebyshev took %d CG iterations, Jacobi %d",
          ch.linear_iterations, ja.linear_iterations);
    case_close(&a);
    case_close(&b);
    device_destroy(&d);
    return 0;
}

/* Solves a case on CPU and GPU; the two fields agree to the solver tolerance. */
static int compare_devices(void (*make)(Case *, int), int p, KspType ksp, double tol, const char *name) {
    Device cpu, gpu;
    if (test_device(&gpu, DEV_CUDA, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    CHECK_OK(test_device(&cpu, DEV_CPU, 0, ASSEMBLE_GATHER));
    Case a, b;
    make(&a, p);
    make(&b, p);
    TestSolve ta = {.ksp = ksp, .pc = PC_JACOBI, .rtol = 1e-12}, tb = ta;
    CHECK_OK(test_solve(&cpu, &a.sp, &a.md, NULL, a.u, &ta));
    CHECK_OK(test_solve(&gpu, &b.sp, &b.md, NULL, b.u, &tb));
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < a.sp.ndofs; i++)
        diff = fmax(diff, fabs(a.u[i] - b.u[i])), norm = fmax(norm, fabs(a.u[i]));
    printf("%s: CPU %d/%d and GPU %d/%d Newton/linear iterations, max |T_cpu - T_gpu| / max |T| = %.3e\n",
           name, ta.newton.iterations, ta.linear_iterations, tb.newton.iterations, tb.linear_iterations,
           diff / norm);
    CHECK(diff <= tol * norm, "%s: CPU and GPU differ by %.3e relative (allowed %.1e)", name, diff / norm,
          tol);
    case_close(&a);
    case_close(&b);
    device_destroy(&cpu);
    device_destroy(&gpu);
    return 0;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    int rc = 0;
    if (strcmp(what, "newton") == 0)
        rc = test_newton();
    else if (strcmp(what, "fin") == 0)
        rc = test_fin();
    else if (strcmp(what, "balance") == 0)
        rc = test_balance();
    else if (strcmp(what, "precond") == 0)
        rc = test_precond();
    else if (strcmp(what, "gpu") == 0) {
        rc = compare_devices(fin_case, 2, KSP_CG, 1e-9, "fin");
        if (rc == 0) rc = compare_devices(bar_case, 2, KSP_GMRES, 1e-9, "k(T) bar");
    } else
        return fprintf(stderr, "usage: %s newton|fin|balance|precond|gpu\n", argv[0]), 2;
    if (rc) return rc;
    return test_result(what);
}
