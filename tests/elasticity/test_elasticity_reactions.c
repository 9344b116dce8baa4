/* Reactions balance the applied loads: for a body in equilibrium the support reactions (summed from the
 * unconstrained residual over each fixed boundary's nodes), the applied tractions and pressures (integrated
 * over their boundaries) and the body force int rho g sum to zero, component by component, to 1e-8 of the
 * largest of these forces (the roller case's thermal reactions are a hundred times its applied loads). The
 * applied loads must also equal their closed forms (m g, t A). Cases, on the steel cantilever
 * (tests/meshes/beam_hex*.geo): traction: linear, clamped at x = 0, an oblique end traction and gravity;
 *   roller:   linear, clamped at x = 0 and on rollers (u_z = 0) along the bottom face, which shares an edge
 *             with the clamp (those dofs must count once), end traction, gravity and a uniform temperature
 *             rise;
 *   follower: neo-Hookean rubber-like unit cube (tests/meshes/cube_hex.geo), clamped at x = 0, a follower
 *             pressure of 0.2 E on x = 1 with a shear traction there, and gravity; 4 load steps with GMRES.
 * The pressure's resultant is taken on the deformed face: the face grows (Poisson) and turns (shear), so it
 * must differ from the reference -p A n. usage: test_elasticity_reactions traction|roller|follower */
#include "elas_test.h"

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "traction";
    Device dev;
    if (test_device(&dev, DEV_CPU, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    int follower = strcmp(mode, "follower") == 0, roller = strcmp(mode, "roller") == 0;
    const char *mesh_name = follower ? "cube_hex.geo" : "beam_hex.geo";
    Mesh m;
    elas_read_mesh(mesh_name, 0, 1, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, 3, &sp));
    const double E = follower ? 1e6 : 210e9, rho = follower ? 1000 : 7850, A = follower ? 1.0 : 0.01;
    const double t[3] = {2e5, -1e5, -3e5}, tf[3] = {0, 5e4, 2e4}, *tr = follower ? tf : t, pressure = 0.2 * E;
    ElasticMaterial mat = elas_material(E, follower ? 0.45 : 0.3, rho, 1.2e-5, 293.15);
    ElasticBc bcs[4];
    int nbc = 0;
    bcs[nbc++] = elas_bc(ELASTIC_BC_FIXED, "left", 7, 0, 0, 0);
    bcs[nbc++] = elas_bc(ELASTIC_BC_TRACTION, "right", 0, tr[0], tr[1], tr[2]);
    if (roller) bcs[nbc++] = elas_bc(ELASTIC_BC_FIXED, "bottom", 4, 0, 0, 0);
    if (follower) bcs[nbc++] = elas_bc(ELASTIC_BC_PRESSURE, "right", 0, pressure, 0, 0);
    Problem *pb = elas_problem(follower ? ELASTIC_NEO_HOOKEAN : ELASTIC_LINEAR, &mat, nbc, bcs);
    pb->elasticity.gravity[0] = 1.5, pb->elasticity.gravity[2] = -9.81;
    if (roller) pb->elasticity.has_temperature = 1, pb->elasticity.temperature = 343.15;
    Model md;
    CHECK_OK(elasticity_model_create(pb, &sp, &md));
    double *u = calloc(sp.ndofs, sizeof(double)), *R = malloc(sizeof(double) * sp.ndofs);
    ElasSolve es = {.steps = follower ? 4 : 1, .rtol = 1e-10, .reaction = R, .verbose = 1};
    CHECK_OK(elas_solve(&dev, &sp, &md, u, &es));
    ElasticForce f[4];
    double body[3], sum[3] = {0, 0, 0}, largest = 0.0;
    CHECK_OK(elasticity_reactions(&md, pb, &sp, test_host_vec(sp.ndofs, u), R, f, body));
    printf("%s (%s, %s, %lld dofs, Newton %d, %s %d):\n", mode, follower ? "neo-Hookean" : "linear",
           mesh_name, (long long)sp.ndofs, es.newton_iterations, md.symmetric ? "CG" : "GMRES",
           es.linear_iterations);
    for (int i = 0; i < nbc; i++) {
        printf("  %-12s %-7s (%+.9e, %+.9e, %+.9e) N\n", f[i].kind, f[i].boundary, f[i].force[0],
               f[i].force[1], f[i].force[2]);
        for (int c = 0; c < 3; c++) sum[c] += f[i].force[c];
        largest = fmax(largest, sqrt(f[i].force[0] * f[i].force[0] + f[i].force[1] * f[i].force[1] +
                                     f[i].force[2] * f[i].force[2]));
    }
    printf("  %-20s (%+.9e, %+.9e, %+.9e) N\n", "body force", body[0], body[1], body[2]);
    largest = fmax(largest, sqrt(body[0] * body[0] + body[1] * body[1] + body[2] * body[2]));
    double imb = 0.0;
    for (int c = 0; c < 3; c++) imb = fmax(imb, fabs(sum[c] + body[c]));
    printf("  sum of all forces: (%+.3e, %+.3e, %+.3e) N, %.3e of the largest force %.6e N\n",
           sum[0] + body[0], sum[1] + body[1], sum[2] + body[2], imb / largest, largest);
    CHECK(imb <= 1e-8 * largest, "the forces do not balance: %.3e relative", imb / largest);
    /* the applied loads against their closed forms (both beams and the cube have volume A * 1 m) */
    double mass = rho * A, g = mass * 9.81;
    CHECK(fabs(body[0] - mass * 1.5) <= 1e-10 * g && fabs(body[1]) <= 1e-10 * g &&
              fabs(body[2] + g) <= 1e-10 * g,
          "body force (%.9e, %.9e, %.9e), expected (%.9e, 0, %.9e)", body[0], body[1], body[2], mass * 1.5,
          -g);
    for (int c = 0; c < 3; c++)
        CHECK(fabs(f[1].force[c] - tr[c] * A) <= 1e-9 * 3e5 * A,
              "end traction resultant %d: %.9e, expected %.9e", c, f[1].force[c], tr[c] * A);
    if (follower) {
        const ElasticForce *pf = &f[2];
        printf("  pressure resultant on the reference face would be (%.6e, 0, 0) N\n", -pressure * A);
        CHECK(pf->force[0] < -1.01 * pressure * A && fabs(pf->force[1]) > 1e-3 * pressure * A,
              "follower pressure resultant (%.6e, %.6e, %.6e) is not that of a grown and turned face",
              pf->force[0], pf->force[1], pf->force[2]);
    }
    free(u);
    free(R);
    model_destroy(&md);
    space_destroy(&sp);
    mesh_destroy(&m);
    device_destroy(&dev);
    return test_result("test_elasticity_reactions");
}
