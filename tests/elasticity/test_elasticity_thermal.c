/* Thermal strain, from a uniform temperature and from a temperature field (the operator's auxiliary field).
 *  free:     linear elasticity with the temperature field T = T_ref + T0 + g x: the thermal strain
 *            alpha (T - T_ref) I is compatible, with displacement u_x = a x + b/2 (x^2 - y^2 - z^2),
 *            u_y = a y + b x y, u_z = a z + b x z (a = alpha T0, b = alpha g), and no stress. Prescribing
 * this u on the boundary, the order-2 solution must reproduce it at every node (1e-10 of max |u|) with nodal
 * stress below 1e-8 of E alpha max(T - T_ref) and no strain energy. 3D (hexahedra, tetrahedra) and 2D plane
 * stress (plane strain is not stress-free: eps_zz = 0). clamped:  a unit cube held on its whole boundary and
 * heated uniformly by dT: u = 0 and the stress is uniform, linear sigma = -E alpha dT / (1 - 2 nu) I with
 * energy density 3 E (alpha dT)^2 / (2 (1 - 2 nu)); neo-Hookean with F = I, F_e = I / theta, theta = 1 +
 * alpha dT: sigma = theta^2 (mu (1 / theta - theta) - 3 lambda theta ln theta) I and energy theta^3 (mu/2 (3
 * / theta^2 - 3)
 *            + 3 mu ln theta + 9 lambda / 2 (ln theta)^2). Nodal stresses to 1e-10, total energy to 1e-10.
 *  field:    a constant temperature field gives the same displacement as the same uniform temperature
 *            (relative 1e-12), linear and neo-Hookean, on a cantilever under its own weight.
 * usage: test_elasticity_thermal free|clamped|field */
#include "elas_test.h"

static const double E = 1000.0, NU = 0.3, ALPHA = 2e-3, TREF = 300.0;

static void free_expansion(Device *dev, const char *mesh_name) {
    Mesh m;
    elas_read_mesh(mesh_name, 0, 1, 0, &m);
    int dim = m.dim;
    Space sp, ss;
    CHECK_OK(space_create(&m, 2, dim, &sp));
    CHECK_OK(space_create(&m, 2, 1, &ss));
    CHECK(ss.nnodes == sp.nnodes, "scalar and vector spaces have different nodes");
    const double T0 = 40.0, g = 25.0, a = ALPHA * T0, b = ALPHA * g;
    double *T = malloc(sizeof(double) * sp.nnodes), *ue = malloc(sizeof(double) * sp.ndofs);
    double umax = 0.0;
    for (int64_t n = 0; n < sp.nnodes; n++) {
        const double *x = &sp.node_x[3 * n];
        T[n] = TREF + T0 + g * x[0];
        double u[3] = {a * x[0] + 0.5 * b * (x[0] * x[0] - x[1] * x[1] - x[2] * x[2]),
                       a * x[1] + b * x[0] * x[1], a * x[2] + b * x[0] * x[2]};
        for (int c = 0; c < dim; c++) ue[n * dim + c] = u[c], umax = fmax(umax, fabs(u[c]));
    }
    ElasticMaterial mat = elas_material(E, NU, 0, ALPHA, TREF);
    ElasticBc bc = elas_bc(ELASTIC_BC_DISPLACEMENT, "boundary", 7, 0, 0, 0);
    Problem *pb = elas_problem(ELASTIC_LINEAR, &mat, 1, &bc);
    pb->elasticity.coupled_temperature = 1;
    pb->elasticity.plane = PLANE_STRESS;
    Model md;
    CHECK_OK(elasticity_model_create(pb, &sp, &md));
    CHECK(qf_reads(&md.phys.cell_residual, QF_AUX) == QF_VALUE, "a coupled model must read the auxiliary field");
    for (int64_t i = 0; i < md.ndir; i++) md.dir_values[i] = ue[md.dir_dofs[i]];
    double *u = calloc(sp.ndofs, sizeof(double));
    ElasSolve es = {.rtol = 1e-12, .Taux = T};
    CHECK_OK(elas_solve(dev, &sp, &md, u, &es));
    double err = 0.0;
    for (int64_t i = 0; i < sp.ndofs; i++) err = fmax(err, fabs(u[i] - ue[i]));
    double *sig = malloc(sizeof(double) * 6 * sp.nnodes), smax = 0.0, energy;
    CHECK_OK(elasticity_stress_nodes(&md, &sp, test_host_vec(sp.ndofs, u), T, sig, NULL, NULL, NULL));
    for (int64_t k = 0; k < 6 * sp.nnodes; k++) smax = fmax(smax, fabs(sig[k]));
    CHECK_OK(elasticity_strain_energy(&md, &sp, test_host_vec(sp.ndofs, u), T, &energy));
    double sref = E * ALPHA * (T0 + g);
    printf(
        "free expansion %s%s (p=2, %lld dofs, CG %d): max nodal error %.3e of max |u| %.3e; max |sigma| %.3e "
        "(%.1e of E alpha dT); strain energy %.3e J\n",
        mesh_name, dim == 2 ? " plane stress" : "", (long long)sp.ndofs, es.linear_iterations, err / umax,
        umax, smax, smax / sref, energy);
    CHECK(err <= 1e-10 * umax, "free thermal expansion not reproduced: %.3e relative", err / umax);
    CHECK(smax <= 1e-8 * sref, "free thermal expansion has stress %.3e relative", smax / sref);
    CHECK(fabs(energy) <= 1e-14 * sref * ALPHA * (T0 + g), "free thermal expansion stores energy %.3e",
          energy);
    free(T), free(ue), free(u), free(sig);
    model_destroy(&md);
    space_destroy(&ss);
    space_destroy(&sp);
    mesh_destroy(&m);
}

static void clamped(Device *dev, ElasticModel model) {
    Mesh m;
    elas_read_mesh("cube_hex.geo", 0, 1, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, 3, &sp));
    const double dT = 150.0; /* alpha dT = 0.3: a large thermal stretch for the neo-Hookean case */
    ElasticMaterial mat = elas_material(E, NU, 0, ALPHA, TREF);
    ElasticBc bc = elas_bc(ELASTIC_BC_FIXED, "boundary", 7, 0, 0, 0);
    Problem *pb = elas_problem(model, &mat, 1, &bc);
    pb->elasticity.has_temperature = 1;
    pb->elasticity.temperature = TREF + dT;
    Model md;
    CHECK_OK(elasticity_model_create(pb, &sp, &md));
    double *u = calloc(sp.ndofs, sizeof(double)), *sig = malloc(sizeof(double) * 6 * sp.nnodes);
    double *vm = malloc(sizeof(double) * sp.nnodes), *w = malloc(sizeof(double) * sp.nnodes), energy;
    ElasSolve es = {.rtol = 1e-12, .atol = 1e-10}; /* uniform stress: the residual starts at round-off */
    CHECK_OK(elas_solve(dev, &sp, &md, u, &es));
    CHECK_OK(elasticity_stress_nodes(&md, &sp, test_host_vec(sp.ndofs, u), NULL, sig, vm, w, NULL));
    CHECK_OK(elasticity_strain_energy(&md, &sp, test_host_vec(sp.ndofs, u), NULL, &energy));
    double lam = mat.lambda, mu = mat.mu, th = 1 + ALPHA * dT, s, W;
    if (model == ELASTIC_LINEAR) {
        s = -E * ALPHA * dT / (1 - 2 * NU);
        W = 3 * E * ALPHA * dT * ALPHA * dT / (2 * (1 - 2 * NU));
    } else {
        s = th * th * (mu * (1 / th - th) - 3 * lam * th * log(th));
        W = th * th * th *
            (0.5 * mu * (3 / (th * th) - 3) + 3 * mu * log(th) + 4.5 * lam * log(th) * log(th));
    }
    double serr = 0.0, werr = 0.0;
    for (int64_t n = 0; n < sp.nnodes; n++) {
        for (int k = 0; k < 6; k++) serr = fmax(serr, fabs(sig[6 * n + k] - (k < 3 ? s : 0.0)));
        serr = fmax(serr, vm[n]);
        werr = fmax(werr, fabs(w[n] - W));
    }
    printf("clamped cube heated by %.0f K, %s: sigma %.9e (closed form %.9e, worst nodal error %.2e), energy "
           "%.9e J (closed form %.9e, nodal densities off by at most %.2e)\n",
           dT, model == ELASTIC_LINEAR ? "linear" : "neo-Hookean", sig[0], s, serr / fabs(s), energy, W,
           werr / W);
    CHECK(serr <= 1e-10 * fabs(s), "heated clamped cube: stress off by %.3e relative", serr / fabs(s));
    CHECK(werr <= 1e-10 * W && fabs(energy - W) <= 1e-10 * W,
          "heated clamped cube: energy %.9e, expected %.9e", energy, W);
    free(u), free(sig), free(vm), free(w);
    model_destroy(&md);
    space_destroy(&sp);
    mesh_destroy(&m);
}

static void field_vs_uniform(Device *dev, ElasticModel model) {
    Mesh m;
    elas_read_mesh("beam_hex_coarse.geo", 0, 1, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, 3, &sp));
    double *u[2], *T = malloc(sizeof(double) * sp.nnodes);
    for (int64_t n = 0; n < sp.nnodes; n++) T[n] = 450.0;
    for (int k = 0; k < 2; k++) {
        ElasticMaterial mat = elas_material(210e9, 0.3, 7850, 1.2e-5, 293.15);
        ElasticBc bc = elas_bc(ELASTIC_BC_FIXED, "left", 7, 0, 0, 0);
        Problem *pb = elas_problem(model, &mat, 1, &bc);
        pb->elasticity.gravity[2] = -9.81;
        pb->elasticity.has_temperature = !k;
        pb->elasticity.temperature = 450.0;
        pb->elasticity.coupled_temperature = k;
        Model md;
        CHECK_OK(elasticity_model_create(pb, &sp, &md));
        u[k] = calloc(sp.ndofs, sizeof(double));
        ElasSolve es = {.rtol = 1e-11, .Taux = k ? T : NULL};
        CHECK_OK(elas_solve(dev, &sp, &md, u[k], &es));
        model_destroy(&md);
    }
    double diff = 0.0, scale = 0.0;
    for (int64_t i = 0; i < sp.ndofs; i++)
        diff = fmax(diff, fabs(u[0][i] - u[1][i])), scale = fmax(scale, fabs(u[0][i]));
    printf("%s: uniform temperature vs the same temperature as a field: max |u| %.6e m, difference %.3e\n",
           model == ELASTIC_LINEAR ? "linear" : "neo-Hookean", scale, diff);
    CHECK(diff <= 1e-12 * scale, "uniform temperature and field differ by %.3e relative", diff / scale);
    free(u[0]), free(u[1]), free(T);
    space_destroy(&sp);
    mesh_destroy(&m);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "free";
    Device dev;
    if (test_device(&dev, DEV_CPU, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    if (strcmp(mode, "free") == 0) {
        free_expansion(&dev, "cube_hex.geo");
        free_expansion(&dev, "cube_tet_coarse.geo");
        free_expansion(&dev, "square_quad.geo");
    } else if (strcmp(mode, "clamped") == 0) {
        clamped(&dev, ELASTIC_LINEAR);
        clamped(&dev, ELASTIC_NEO_HOOKEAN);
    } else {
        field_vs_uniform(&dev, ELASTIC_LINEAR);
        field_vs_uniform(&dev, ELASTIC_NEO_HOOKEAN);
    }
    device_destroy(&dev);
    return test_result("test_elasticity_thermal");
}
