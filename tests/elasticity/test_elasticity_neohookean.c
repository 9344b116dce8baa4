/* The neo-Hookean model.
 *  tangent: the matrix-free Jacobian J(u) v equals the central difference (R(u + h v) - R(u - h v)) / 2h of
 * the residual (relative 1e-6) at a large smooth deformation with thermal strain, gravity, a dead traction
 * and a follower pressure, in 3D (hexes, tetrahedra), 2D plane strain and plane stress; the Jacobian's
 * diagonal (op_diagonal) equals e_i . J e_i; and at u = 0 without temperature and pressure the neo-Hookean
 * Jacobian is the linear-elastic one (relative 1e-13). small:   for loads so small that the nonlinearity is
 * below 1e-9 (a cantilever with tip traction, gravity and thermal strain), the neo-Hookean displacement
 * equals the linear one (relative 1e-6). newton:  the cantilever bent far beyond the linear range (tip
 * deflection about a third of its length) in load steps: Newton converges quadratically, |R_k+1| / |R_k|^2
 * (norms relative to |R_0|) stays below a bound in the last iterations of every load step. usage:
 * test_elasticity_neohookean tangent|small|newton */
#include "elas_test.h"

/* ---- tangent */

static double norm(int64_t n, const double *x) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

static void field(const Space *sp, double amp, double k, double *u) {
    int nc = sp->ncomp;
    for (int64_t n = 0; n < sp->nnodes; n++) {
        const double *x = &sp->node_x[3 * n];
        for (int c = 0; c < nc; c++)
            u[n * nc + c] =
                amp * sin(k * (c + 1) * x[0] + 0.7 * k * x[1] - 0.4 * k * (c + 2) * x[2] + 0.3 * c);
    }
}

static void tangent_case(Device *dev, const char *mesh_name, int plane_stress) {
    Mesh m;
    elas_read_mesh(mesh_name, 0, 1, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, m.dim, &sp));
    int64_t n = sp.ndofs;
    size_t bytes = sizeof(double) * n;
    ElasticMaterial mat = elas_material(1000.0, 0.3, 2.0, 2e-3, 300.0);
    ElasticBc bcs[2] = {elas_bc(ELASTIC_BC_PRESSURE, "right", 0, 150.0, 0, 0),
                        elas_bc(ELASTIC_BC_TRACTION, "left", 0, 10.0, -20.0, 30.0)};
    Problem *pb = elas_problem(ELASTIC_NEO_HOOKEAN, &mat, 2, bcs);
    pb->elasticity.plane = plane_stress ? PLANE_STRESS : PLANE_STRAIN;
    pb->elasticity.has_temperature = 1;
    pb->elasticity.temperature = 350.0;
    pb->elasticity.gravity[0] = 1.0, pb->elasticity.gravity[1] = -9.81, pb->elasticity.gravity[2] = 3.0;
    if (m.dim == 2) /* a 2D mesh has no z: femto refuses z loads there rather than drop them */
        pb->elasticity.bcs[1].value[2] = 0.0, pb->elasticity.gravity[2] = 0.0;
    Model md;
    CHECK_OK(elasticity_model_create(pb, &sp, &md));
    CHECK(md.symmetric == 0, "a neo-Hookean model with pressure must report an unsymmetric Jacobian");
    elasticity_set_load(&md, 0.8);
    Operator op;
    CHECK_OK(op_create(&op, dev, &sp, &md.phys, 0, md.cell_tags, md.facet_tags));
    double *u = malloc(bytes), *v = malloc(bytes), *Jv = malloc(bytes), *fd = malloc(bytes),
           *w = malloc(bytes);
    double *du, *dv, *dr;
    CHECK_OK(device_alloc(dev, (void **)&du, bytes));
    CHECK_OK(device_alloc(dev, (void **)&dv, bytes));
    CHECK_OK(device_alloc(dev, (void **)&dr, bytes));
    field(&sp, 0.15, 1.3, u);
    field(&sp, 1.0, 2.1, v);
    CHECK_OK(dev->ops.upload(dev, du, u, bytes));
    CHECK_OK(dev->ops.upload(dev, dv, v, bytes));
    CHECK_OK(op_residual(&op, TEST_VEC(dev, n, du), TEST_VEC(dev, n, dr)));
    CHECK_OK(op_jacobian(&op, TEST_VEC(dev, n, dv), TEST_VEC(dev, n, dr)));
    CHECK_OK(dev->ops.download(dev, Jv, dr, bytes));
    /* diagonal: e_i . J e_i for a few dofs (before the state changes) */
    double *diag = malloc(bytes), *ddiag, dworst = 0.0;
    CHECK_OK(device_alloc(dev, (void **)&ddiag, bytes));
    CHECK_OK(op_diagonal(&op, TEST_VEC(dev, n, ddiag)));
    CHECK_OK(dev->ops.download(dev, diag, ddiag, bytes));
    for (int k = 0; k < 7; k++) {
        int64_t i = (k * 7919 + 13) % n;
        memset(w, 0, bytes);
        w[i] = 1.0;
        CHECK_OK(dev->ops.upload(dev, dv, w, bytes));
        CHECK_OK(op_jacobian(&op, TEST_VEC(dev, n, dv), TEST_VEC(dev, n, dr)));
        CHECK_OK(dev->ops.download(dev, w, dr, bytes));
        dworst = fmax(dworst, fabs(w[i] - diag[i]) / fabs(diag[i]));
    }
    const double h = 1e-6;
    for (int s = 0; s < 2; s++) {
        for (int64_t i = 0; i < n; i++) w[i] = u[i] + (s ? -h : h) * v[i];
        CHECK_OK(dev->ops.upload(dev, du, w, bytes));
        CHECK_OK(op_residual(&op, TEST_VEC(dev, n, du), TEST_VEC(dev, n, dr)));
        CHECK_OK(dev->ops.download(dev, s ? w : fd, dr, bytes));
    }
    for (int64_t i = 0; i < n; i++) fd[i] = (fd[i] - w[i]) / (2 * h);
    for (int64_t i = 0; i < n; i++) w[i] = Jv[i] - fd[i];
    double rel = norm(n, w) / norm(n, Jv);
    printf("tangent %s%s (p=2, %lld dofs): |J v - FD| / |J v| = %.3e; diagonal vs e_i.J e_i: %.3e\n",
           mesh_name,
           m.dim == 3     ? ""
           : plane_stress ? " plane stress"
                          : " plane strain",
           (long long)n, rel, dworst);
    CHECK(rel <= 1e-6, "Jacobian and finite difference differ by %.3e relative", rel);
    CHECK(dworst <= 1e-12, "diagonal differs from e_i . J e_i by %.3e relative", dworst);
    op_destroy(&op);
    model_destroy(&md);

    /* at u = 0, no temperature, no pressure: the neo-Hookean Jacobian is the linear one */
    double *J2 = malloc(bytes);
    for (int k = 0; k < 2; k++) {
        ElasticBc tr = elas_bc(ELASTIC_BC_TRACTION, "left", 0, 10.0, -20.0, m.dim == 3 ? 30.0 : 0.0);
        Problem *p2 = elas_problem(k ? ELASTIC_LINEAR : ELASTIC_NEO_HOOKEAN, &mat, 1, &tr);
        p2->elasticity.plane = plane_stress ? PLANE_STRESS : PLANE_STRAIN;
        CHECK_OK(elasticity_model_create(p2, &sp, &md));
        CHECK_OK(op_create(&op, dev, &sp, &md.phys, 0, md.cell_tags, md.facet_tags));
        CHECK_OK(dev->ops.zero(dev, du, bytes));
        CHECK_OK(dev->ops.upload(dev, dv, v, bytes));
        CHECK_OK(op_residual(&op, TEST_VEC(dev, n, du), TEST_VEC(dev, n, dr)));
        CHECK_OK(op_jacobian(&op, TEST_VEC(dev, n, dv), TEST_VEC(dev, n, dr)));
        CHECK_OK(dev->ops.download(dev, k ? J2 : Jv, dr, bytes));
        op_destroy(&op);
        model_destroy(&md);
    }
    for (int64_t i = 0; i < n; i++) w[i] = Jv[i] - J2[i];
    rel = norm(n, w) / norm(n, J2);
    printf("  at F = I: |J_neo-Hookean v - J_linear v| / |J_linear v| = %.3e\n", rel);
    CHECK(rel <= 1e-13, "the neo-Hookean tangent at F = I differs from linear elasticity by %.3e", rel);
    device_free(dev, du);
    device_free(dev, dv);
    device_free(dev, dr);
    device_free(dev, ddiag);
    free(u), free(v), free(Jv), free(fd), free(w), free(diag), free(J2);
    space_destroy(&sp);
    mesh_destroy(&m);
}

/* ---- cantilever */

static const double E = 210e9, NU = 0.3, H = 0.1;

static double *cantilever(Device *dev, const Space *sp, ElasticModel model, double P, double scale, int steps,
                          int verbose, ElasSolve *es) {
    ElasticMaterial mat = elas_material(E, NU, 7850, 1.2e-5, 293.15);
    ElasticBc bcs[2] = {elas_bc(ELASTIC_BC_FIXED, "left", 7, 0, 0, 0),
                        elas_bc(ELASTIC_BC_TRACTION, "right", 0, 0, 0, -P / (H * H))};
    Problem *pb = elas_problem(model, &mat, 2, bcs);
    pb->elasticity.gravity[2] = -9.81 * scale;
    pb->elasticity.has_temperature = 1;
    pb->elasticity.temperature = 293.15 + 100.0 * scale;
    Model md;
    CHECK_OK(elasticity_model_create(pb, sp, &md));
    double *u = calloc(sp->ndofs, sizeof(double));
    es->steps = steps;
    es->verbose = verbose;
    CHECK_OK(elas_solve(dev, sp, &md, u, es));
    model_destroy(&md);
    return u;
}

static void small_case(Device *dev) {
    Mesh m;
    elas_read_mesh("beam_hex.geo", 0, 1, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, 3, &sp));
    /* P = 1 mN (tip deflection 2e-10 m), gravity and the temperature rise scaled by 1e-6 (thermal strain
     * 1.2e-9): strains and rotations of about 1e-9, so the nonlinearity is of that relative size */
    ElasSolve el = {.rtol = 1e-12}, en = {.rtol = 1e-12};
    double *ul = cantilever(dev, &sp, ELASTIC_LINEAR, 1e-3, 1e-6, 1, 0, &el);
    double *un = cantilever(dev, &sp, ELASTIC_NEO_HOOKEAN, 1e-3, 1e-6, 1, 0, &en);
    double diff = 0.0, scale = 0.0;
    for (int64_t i = 0; i < sp.ndofs; i++)
        diff = fmax(diff, fabs(un[i] - ul[i])), scale = fmax(scale, fabs(ul[i]));
    printf("small loads: max |u| %.3e m; neo-Hookean (Newton %d) vs linear: max difference %.3e (relative "
           "%.3e)\n",
           scale, en.newton_iterations, diff, diff / scale);
    CHECK(diff <= 1e-6 * scale, "neo-Hookean and linear differ by %.3e relative at tiny loads", diff / scale);
    free(ul), free(un);
    space_destroy(&sp);
    mesh_destroy(&m);
}

/* Quadratic convergence: q_k = r_k+1 / r_k^2 with r_k = |R_k| / |R_0| of each load step, over the iterations
 * in the asymptotic range (r_k <= 1e-2) whose next residual is still clear of round-off (r_k+1 >= 1e-10; the
 * residual's floor is about 1e-12 of |R_0| here). Returns the worst; *count: how many were taken. */
static double quadratic_ratios(const NewtonResult *r, int step, int *count) {
    double worst = 0.0;
    printf("  load step %d: |R_k| / |R_0| =", step);
    for (int k = 0; k < r->nhistory; k++) printf(" %.2e", r->history[k] / r->history[0]);
    printf("\n    q_k = r_k+1 / r_k^2 =");
    for (int k = 0; k + 1 < r->nhistory; k++) {
        double rk = r->history[k] / r->history[0], rn = r->history[k + 1] / r->history[0];
        printf(" %.2e", rn / (rk * rk));
        if (rk <= 1e-2 && rn >= 1e-10) worst = fmax(worst, rn / (rk * rk)), (*count)++;
    }
    printf("\n");
    return worst;
}

static void newton_case(Device *dev) {
    Mesh m;
    elas_read_mesh("beam_hex_coarse.geo", 0, 1, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, 3, &sp));
    /* P = 2 MN in 8 load steps: the linear tip deflection would be 0.38 m; the beam (20 x 1 x 1 elements, as
     * a 40 x 2 x 2 one costs ten times more) bends to about a third of its length */
    int steps = 8;
    ElasSolve es = {.rtol = 1e-10};
    double *u = cantilever(dev, &sp, ELASTIC_NEO_HOOKEAN, 2e6, 1.0, steps, 1, &es);
    double worst = 0.0;
    int counted = 0;
    for (int k = 0; k < steps; k++) worst = fmax(worst, quadratic_ratios(&es.step[k], k + 1, &counted));
    double tip = 0.0, tipx = 0.0;
    for (int64_t n = 0; n < sp.nnodes; n++)
        if (u[3 * n + 2] < tip) tip = u[3 * n + 2], tipx = u[3 * n];
    printf("large load: tip displacement (%.4f, %.4f) m after %d load steps, %d Newton iterations (CG %d); "
           "worst q_k %.3e over %d asymptotic iterations\n",
           tipx, tip, steps, es.newton_iterations, es.linear_iterations, worst, counted);
    CHECK(tip < -0.25 && tipx < -0.02, "the beam should bend far beyond the linear range (tip (%.4f, %.4f))",
          tipx, tip);
    CHECK(counted >= steps, "only %d asymptotic Newton iterations to judge", counted);
    CHECK(worst > 0.0 && worst <= 20.0, "Newton's |R_k+1| / |R_k|^2 reached %.3e, expected <= 20 (quadratic)",
          worst);
    free(u);
    space_destroy(&sp);
    mesh_destroy(&m);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "tangent";
    Device dev;
    if (test_device(&dev, DEV_CPU, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    if (strcmp(mode, "tangent") == 0) {
        tangent_case(&dev, "cube_hex.geo", 0);
        tangent_case(&dev, "cube_tet_coarse.geo", 0);
        tangent_case(&dev, "square_quad.geo", 0);
        tangent_case(&dev, "square_tri.geo", 1);
    } else if (strcmp(mode, "small") == 0) {
        small_case(&dev);
    } else {
        newton_case(&dev);
    }
    device_destroy(&dev);
    return test_result("test_elasticity_neohookean");
}
