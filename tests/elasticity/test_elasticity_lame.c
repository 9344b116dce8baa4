/* Lame's thick-walled cylinder under internal pressure, linear elasticity, 2D: a quarter of the annulus
 * a = 1 <= r <= b = 2 (tests/meshes/quarter_annulus.geo, geometric order 2) with symmetry supports (u_y = 0
 * on y = 0, u_x = 0 on x = 0), pressure p on r = a, order 2.
 *
 * Analytic radial displacement (Timoshenko & Goodier, Theory of Elasticity, 3rd ed., section 28; Barber,
 * Elasticity, chapter 8), with A = a^2 p / (b^2 - a^2):
 *   plane strain: u_r(r) = (1 + nu) A / E ((1 - 2 nu) r + b^2 / r), sigma_zz = 2 nu A (uniform);
 *   plane stress: u_r(r) = A / E ((1 - nu) r + (1 + nu) b^2 / r).
 * Asserted: u_r at every node of the inner and outer radius within 0.5% of these; the nodal sigma_zz of plane
 * strain equal to nu (sigma_xx + sigma_yy) at every node (1e-10) and its mean over the nodes within 1% of
 * 2 nu A (0 in plane stress); and the reactions of the two symmetry supports balance the pressure's resultant
 * (-p int n ds over the inner arc) to 1e-8. */
#include "elas_test.h"

static double ur_exact(int plane_stress, double E, double nu, double a, double b, double p, double r) {
    double A = a * a * p / (b * b - a * a);
    if (plane_stress) return A / E * ((1 - nu) * r + (1 + nu) * b * b / r);
    return (1 + nu) * A / E * ((1 - 2 * nu) * r + b * b / r);
}

/* worst relative error of u_r over the nodes of a boundary group */
static double radial_error(const Problem *pb, const Space *sp, const double *u, const char *group, int ps,
                           double E, double nu, double p, double *ur_mean) {
    const PhysicalGroup *g;
    CHECK_OK(model_boundary(pb, sp->mesh, group, 0, &g));
    fem_idx *nodes;
    int64_t n;
    CHECK_OK(space_group_nodes(sp, g, &nodes, &n));
    double worst = 0.0, sum = 0.0;
    for (int64_t k = 0; k < n; k++) {
        const double *x = &sp->node_x[3 * nodes[k]];
        double r = hypot(x[0], x[1]);
        double ur = (u[2 * nodes[k]] * x[0] + u[2 * nodes[k] + 1] * x[1]) / r;
        double want = ur_exact(ps, E, nu, 1.0, 2.0, p, r);
        worst = fmax(worst, fabs(ur - want) / fabs(want));
        sum += ur;
    }
    *ur_mean = sum / n;
    free(nodes);
    return worst;
}

int main(void) {
    Device dev;
    if (test_device(&dev, DEV_CPU, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    Mesh m;
    elas_read_mesh("quarter_annulus.geo", 0, 2, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, 2, &sp));
    const double E = 200e9, nu = 0.3, p = 100e6;
    for (int ps = 0; ps < 2; ps++) {
        ElasticMaterial mat = elas_material(E, nu, 0, 0, 293.15);
        ElasticBc bcs[3] = {elas_bc(ELASTIC_BC_FIXED, "bottom", 2, 0, 0, 0),
                            elas_bc(ELASTIC_BC_FIXED, "side", 1, 0, 0, 0),
                            elas_bc(ELASTIC_BC_PRESSURE, "inner", 0, p, 0, 0)};
        Problem *pb = elas_problem(ELASTIC_LINEAR, &mat, 3, bcs);
        pb->elasticity.plane = ps ? PLANE_STRESS : PLANE_STRAIN;
        Model md;
        CHECK_OK(elasticity_model_create(pb, &sp, &md));
        double *u = calloc(sp.ndofs, sizeof(double)), *R = malloc(sizeof(double) * sp.ndofs);
        ElasSolve es = {.steps = 1, .rtol = 1e-12, .reaction = R};
        CHECK_OK(elas_solve(&dev, &sp, &md, u, &es));
        double mi, mo;
        double ei = radial_error(pb, &sp, u, "inner", ps, E, nu, p, &mi);
        double eo = radial_error(pb, &sp, u, "outer", ps, E, nu, p, &mo);
        printf("Lame cylinder, plane %s, p=2, %lld dofs, CG %d: u_r(a) %.6e (exact %.6e, worst error %.2e), "
               "u_r(b) %.6e (exact %.6e, worst error %.2e)\n",
               ps ? "stress" : "strain", (long long)sp.ndofs, es.linear_iterations, mi,
               ur_exact(ps, E, nu, 1, 2, p, 1), ei, mo, ur_exact(ps, E, nu, 1, 2, p, 2), eo);
        CHECK(ei <= 5e-3, "u_r at the inner radius off by %.3e relative, expected <= 0.5%%", ei);
        CHECK(eo <= 5e-3, "u_r at the outer radius off by %.3e relative, expected <= 0.5%%", eo);

        double *sig = malloc(sizeof(double) * 6 * sp.nnodes);
        CHECK_OK(elasticity_stress_nodes(&md, &sp, test_host_vec(sp.ndofs, u), NULL, sig, NULL, NULL, NULL));
        double A = p / 3.0, szz = ps ? 0.0 : 2 * nu * A, mean = 0.0, cons = 0.0;
        for (int64_t n = 0; n < sp.nnodes; n++) {
            const double *s = &sig[6 * n];
            mean += s[2] / sp.nnodes;
            cons = fmax(cons, fabs(s[2] - (ps ? 0.0 : nu * (s[0] + s[1]))));
        }
        printf("  sigma_zz: want %.6e, mean over the nodes %.6e; |sigma_zz - nu (sigma_xx + sigma_yy)| <= "
               "%.3e\n",
               szz, mean, cons);
        CHECK(fabs(mean - szz) <= 0.01 * 2 * nu * A, "mean sigma_zz %.6e, expected %.6e within 1%%", mean,
              szz);
        CHECK(cons <= 1e-10 * p, "sigma_zz differs from nu (sigma_xx + sigma_yy) by %.3e", cons);

        ElasticForce f[3];
        double body[3];
        CHECK_OK(elasticity_reactions(&md, pb, &sp, test_host_vec(sp.ndofs, u), R, f, body));
        double sum[2] = {0, 0};
        for (int i = 0; i < 3; i++) {
            printf("  %-12s %-7s force (%.6e, %.6e) N/m\n", f[i].kind, f[i].boundary, f[i].force[0],
                   f[i].force[1]);
            for (int c = 0; c < 2; c++) sum[c] += f[i].force[c];
        }
        /* the pressure's resultant on the quarter arc: p a (1, 1) */
        double scale = p * 1.0, imb = hypot(sum[0] + body[0], sum[1] + body[1]);
        printf("  imbalance %.3e (relative %.3e); pressure resultant (%.6e, %.6e), exact (%.6e, %.6e)\n", imb,
               imb / scale, f[2].force[0], f[2].force[1], p, p);
        CHECK(imb <= 1e-8 * scale, "forces do not balance: %.3e relative", imb / scale);
        CHECK(fabs(f[2].force[0] - p) <= 1e-6 * p && fabs(f[2].force[1] - p) <= 1e-6 * p,
              "pressure resultant (%.9e, %.9e), expected (%.9e, %.9e)", f[2].force[0], f[2].force[1], p, p);
        free(sig);
        free(u);
        free(R);
        model_destroy(&md);
    }
    space_destroy(&sp);
    mesh_destroy(&m);
    device_destroy(&dev);
    return test_result("test_elasticity_lame");
}
