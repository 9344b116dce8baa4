/* Cantilever: a steel beam 1 x 0.1 x 0.1 m (tests/meshes/beam_hex.geo, E = 210 GPa, nu = 0.3) clamped at
 * x = 0 (all components fixed), with a shear load P = 1 kN applied as a uniform traction -P/A in z on the
 * free end, order 2. The tip deflection (u_z averaged over the end face) must be within 1% of Timoshenko beam
 * theory (Timoshenko & Gere, Mechanics of Materials; Timoshenko, Phil. Mag. 41, 1921):
 *   delta = P L^3 / (3 E I) + P L / (kappa G A),  I = h^4 / 12, A = h^2, G = E / (2 (1 + nu)),
 * with the shear coefficient kappa = 5/6 of a rectangular section (the value for which the shear strain
 * energy of the parabolic shear-stress distribution is reproduced; Cowper's 10 (1 + nu) / (12 + 11 nu) =
 * 0.850 would change delta by 0.02%, as the shear term is 0.8% of delta here). The 3D clamp holds every
 * component of the end face, which is slightly stiffer than the beam-theory clamp (it also stops the Poisson
 * contraction and the warping of the section there): with 40 x 4 x 4 elements the 3D deflection is 0.76%
 * below Timoshenko's, with this test's 40 x 2 x 2 0.80%, with 20 x 2 x 2 0.92%.
 * Also: the strain energy equals half the work of the load, 1/2 int t . u dA (Clapeyron's theorem; exact
 * for the discrete solution up to the solver tolerance), to 1e-8; the largest displacement is at the free end
 * (x = 1) and the largest nodal von Mises stress at the clamp (x = 0).
 * On "cuda" the solve runs on the GPU and on the CPU; the two displacement fields must agree to the solver
 * tolerance.
 * usage: test_elasticity_cantilever [cpu|cuda] */
#include "elas_test.h"

static const double E = 210e9, NU = 0.3, LEN = 1.0, H = 0.1, P = 1000.0;

static void uz_at(void *ctx, const FacetPoint *p, double *out) {
    (void)ctx;
    out[0] = p->u[2];
    out[1] = 1.0;
}

static double *solve(Device *dev, const Space *sp, int *cg) {
    ElasticMaterial mat = elas_material(E, NU, 7850, 0, 293.15);
    ElasticBc bcs[2] = {elas_bc(ELASTIC_BC_FIXED, "left", 7, 0, 0, 0),
                        elas_bc(ELASTIC_BC_TRACTION, "right", 0, 0, 0, -P / (H * H))};
    Problem *pb = elas_problem(ELASTIC_LINEAR, &mat, 2, bcs);
    Model md;
    CHECK_OK(elasticity_model_create(pb, sp, &md));
    double *u = calloc(sp->ndofs, sizeof(double));
    ElasSolve es = {.steps = 1, .rtol = 1e-10};
    CHECK_OK(elas_solve(dev, sp, &md, u, &es));
    *cg = es.linear_iterations;
    model_destroy(&md);
    return u;
}

int main(int argc, char **argv) {
    int cuda = argc > 1 && strcmp(argv[1], "cuda") == 0;
    Device dev;
    if (test_device(&dev, cuda ? DEV_CUDA : DEV_CPU, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    Mesh m;
    elas_read_mesh("beam_hex.geo", 0, 1, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, 2, 3, &sp));
    int cg;
    double *u = solve(&dev, &sp, &cg);
    const PhysicalGroup *right = mesh_find_group(&m, "right", 2);
    CHECK(right != NULL, "beam_hex.geo has no group 'right'");
    double r[2];
    CHECK_OK(functional_facets(&sp, u, right, 0, uz_at, NULL, 2, r));
    double delta = -r[0] / r[1];
    double I = H * H * H * H / 12, A = H * H, G = E / (2 * (1 + NU)), kappa = 5.0 / 6.0;
    double bending = P * LEN * LEN * LEN / (3 * E * I), shear = P * LEN / (kappa * G * A);
    double want = bending + shear, err = (delta - want) / want;
    printf("cantilever (%s), p=2, %lld dofs, CG %d: tip deflection %.6e m; Timoshenko %.6e m (bending %.6e, "
           "shear %.6e); relative difference %+.3e\n",
           dev.name, (long long)sp.ndofs, cg, delta, want, bending, shear, err);
    CHECK(fabs(err) <= 0.01, "tip deflection %.6e, Timoshenko %.6e: %.2f%% apart, expected <= 1%%", delta,
          want, 100 * err);
    Model md;
    ElasticMaterial mat = elas_material(E, NU, 7850, 0, 293.15);
    Problem *pb = elas_problem(ELASTIC_LINEAR, &mat, 0, NULL);
    CHECK_OK(elasticity_model_create(pb, &sp, &md));
    double energy, work = 0.5 * (-P / (H * H)) * r[0];
    CHECK_OK(elasticity_strain_energy(&md, &sp, test_host_vec(sp.ndofs, u), NULL, &energy));
    double *sig = malloc(sizeof(double) * 6 * sp.nnodes), *vm = malloc(sizeof(double) * sp.nnodes);
    CHECK_OK(elasticity_stress_nodes(&md, &sp, test_host_vec(sp.ndofs, u), NULL, sig, vm, NULL, NULL));
    ElasticExtremes ex;
    CHECK_OK(elasticity_extremes(NULL, &sp, u, vm, &ex));
    printf("strain energy %.9e J, half the load's work %.9e J; max |u| %.6e m at (%g, %g, %g), max von Mises "
           "%.6e Pa at (%g, %g, %g)\n",
           energy, work, ex.max_displacement, ex.max_displacement_at[0], ex.max_displacement_at[1],
           ex.max_displacement_at[2], ex.max_von_mises, ex.max_von_mises_at[0], ex.max_von_mises_at[1],
           ex.max_von_mises_at[2]);
    CHECK(fabs(energy - work) <= 1e-8 * work, "strain energy %.9e, half the work %.9e", energy, work);
    CHECK(ex.max_displacement_at[0] == LEN && ex.max_displacement >= delta,
          "largest displacement %.6e at x = %g, expected at the free end", ex.max_displacement,
          ex.max_displacement_at[0]);
    CHECK(ex.max_von_mises_at[0] == 0.0, "largest von Mises stress at x = %g, expected at the clamp",
          ex.max_von_mises_at[0]);
    free(sig), free(vm);
    model_destroy(&md);
    if (cuda) {
        Device cpu;
        CHECK_OK(test_device(&cpu, DEV_CPU, 0, ASSEMBLE_GATHER));
        double *uc = solve(&cpu, &sp, &cg);
        double diff = 0.0, scale = 0.0;
        for (int64_t i = 0; i < sp.ndofs; i++) {
            diff = fmax(diff, fabs(u[i] - uc[i]));
            scale = fmax(scale, fabs(uc[i]));
        }
        printf("CPU vs GPU: max difference %.3e (max |u| %.3e)\n", diff, scale);
        CHECK(diff <= 1e-8 * scale, "CPU and GPU displacements differ by %.3e, expected <= 1e-8 * %.3e", diff,
              scale);
        free(uc);
        device_destroy(&cpu);
    }
    free(u);
    space_destroy(&sp);
    mesh_destroy(&m);
    device_destroy(&dev);
    return test_result("test_elasticity_cantilever");
}
