/* Patch test: a linear displacement u = A x + b prescribed on the whole boundary of a distorted mesh, with no
 * body force and a uniform temperature change, is reproduced at every node to 1e-10 (its strain, and so its
 * stress, is uniform, hence in equilibrium with zero body force). For linear elasticity the nodal stress must
 * also equal Hooke's law with the thermal strain, computed here independently (3D, plane strain: sigma =
 * lambda tr eps I + 2 mu eps - E alpha dT / (1 - 2 nu) I; plane stress: sigma = E / (1 - nu^2) ((1 - nu) eps
 * + nu tr eps I) - E alpha dT / (1 - nu) I, sigma_zz = 0). The neo-Hookean model takes the same linear field
 * (a homogeneous deformation F = I + A, also in equilibrium). In 2D both plane strain and plane stress.
 * usage: test_elasticity_patch MESH.geo ORDER linear|neo-hookean [REFINEMENTS] */
#include "elas_test.h"

static const double A[3][3] = {{0.10, 0.04, -0.03}, {0.02, -0.05, 0.06}, {-0.04, 0.03, 0.08}};
static const double B[3] = {0.001, -0.002, 0.003};

static void exact(const double *x, int dim, double *u) {
    for (int c = 0; c < dim; c++) {
        u[c] = B[c];
        for (int b = 0; b < dim; b++) u[c] += A[c][b] * x[b];
    }
}

int main(int argc, char **argv) {
    if (argc < 4)
        return fprintf(stderr, "usage: %s MESH ORDER linear|neo-hookean [REFINEMENTS]\n", argv[0]), 2;
    int p = atoi(argv[2]), refine = argc > 4 ? atoi(argv[4]) : 0;
    ElasticModel model = strcmp(argv[3], "linear") == 0 ? ELASTIC_LINEAR : ELASTIC_NEO_HOOKEAN;
    Device dev;
    if (test_device(&dev, DEV_CPU, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    Mesh m;
    elas_read_mesh(argv[1], 0, 0, refine, &m);
    int dim = m.dim;
    Space sp;
    CHECK_OK(space_create(&m, p, dim, &sp));
    const double E = 1.0, nu = 0.3, alpha = 1e-3, Tref = 300.0, dT = 40.0;
    for (int plane = 0; plane < (dim == 2 ? 2 : 1); plane++) {
        ElasticMaterial mat = elas_material(E, nu, 0.0, alpha, Tref);
        ElasticBc bc = elas_bc(ELASTIC_BC_DISPLACEMENT, "boundary", 7, 0, 0, 0);
        Problem *pb = elas_problem(model, &mat, 1, &bc);
        pb->elasticity.plane = plane ? PLANE_STRESS : PLANE_STRAIN;
        pb->elasticity.has_temperature = 1;
        pb->elasticity.temperature = Tref + dT;
        Model md;
        CHECK_OK(elasticity_model_create(pb, &sp, &md));
        for (int64_t i = 0; i < md.ndir; i++) {
            double ue[3];
            int64_t node = md.dir_dofs[i] / dim;
            exact(&sp.node_x[3 * node], dim, ue);
            md.dir_values[i] = ue[md.dir_dofs[i] % dim];
        }
        double *u = calloc(sp.ndofs, sizeof(double));
        /* neo-Hookean: the boundary displacement in load steps (at once it can fold the layer of elements
         * next to the boundary while the interior starts at rest) */
        ElasSolve es = {.steps = model == ELASTIC_LINEAR ? 1 : p + 1, .rtol = 1e-12, .atol = 1e-15};
        CHECK_OK(elas_solve(&dev, &sp, &md, u, &es));
        double err = 0.0;
        for (int64_t n = 0; n < sp.nnodes; n++) {
            double ue[3];
            exact(&sp.node_x[3 * n], dim, ue);
            for (int c = 0; c < dim; c++) err = fmax(err, fabs(u[n * dim + c] - ue[c]));
        }
        printf("%s p=%d %s%s: %lld dofs (%lld free), Newton %d (%s %d), max nodal error %.3e\n", argv[1], p,
               argv[3],
               dim == 3 ? ""
               : plane  ? " plane stress"
                        : " plane strain",
               (long long)sp.ndofs, (long long)(sp.ndofs - md.ndir), es.newton_iterations,
               md.symmetric ? "CG" : "GMRES", es.linear_iterations, err);
        CHECK(err <= 1e-10, "max nodal error %.3e, expected <= 1e-10", err);
        CHECK(sp.ndofs - md.ndir > 0, "the patch has no free dofs");

        /* nodal stress against Hooke's law */
        double *sig = malloc(sizeof(double) * 6 * sp.nnodes), *w = malloc(sizeof(double) * sp.nnodes), energy;
        double *grad = malloc(sizeof(double) * sp.nnodes);
        CHECK_OK(elasticity_stress_nodes(&md, &sp, test_host_vec(sp.ndofs, u), NULL, sig, NULL, w, grad));
        /* the plausibility check's gradient, from the same evaluation: max |A_ij| at every node */
        double gmax = 0.0, gerr = 0.0;
        for (int a = 0; a < dim; a++)
            for (int b = 0; b < dim; b++) gmax = fmax(gmax, fabs(A[a][b]));
        for (int64_t n = 0; n < sp.nnodes; n++) gerr = fmax(gerr, fabs(grad[n] - gmax));
        CHECK(gerr <= 1e-9 * gmax, "nodal displacement gradient off by %.3e, expected max |A_ij| = %.3f", gerr, gmax);
        free(grad);
        CHECK_OK(elasticity_strain_energy(&md, &sp, test_host_vec(sp.ndofs, u), NULL, &energy));
        if (model == ELASTIC_LINEAR) {
            double eps[3][3] = {{0}}, tr = 0.0, se[3][3] = {{0}};
            for (int a = 0; a < dim; a++)
                for (int b = 0; b < dim; b++) eps[a][b] = 0.5 * (A[a][b] + A[b][a]);
            for (int a = 0; a < dim; a++) tr += eps[a][a];
            double lam = mat.lambda, mu = mat.mu;
            if (!plane) {
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++)
                        se[a][b] = 2 * mu * eps[a][b] + (a == b) * (lam * tr - E * alpha * dT / (1 - 2 * nu));
            } else {
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++)
                        se[a][b] = E / (1 - nu * nu) * ((1 - nu) * eps[a][b] + (a == b) * nu * tr) -
                                   (a == b) * E * alpha * dT / (1 - nu);
            }
            double want[6] = {se[0][0], se[1][1], se[2][2], se[0][1], se[1][2], se[0][2]}, serr = 0.0,
                   scale = 0.0;
            for (int k = 0; k < 6; k++) scale = fmax(scale, fabs(want[k]));
            for (int64_t n = 0; n < sp.nnodes; n++)
                for (int k = 0; k < 6; k++) serr = fmax(serr, fabs(sig[n * 6 + k] - want[k]));
            printf("  nodal stress: max error %.3e relative to %.3e (sigma_zz %.6e)\n", serr / scale, scale,
                   sig[2]);
            CHECK(serr <= 1e-8 * scale, "nodal stress error %.3e relative, expected <= 1e-8", serr / scale);
            /* energy density 1/2 sigma : (eps - alpha dT I), over the 3 x 3 tensors: eps_zz = 0 in plane
             * strain, sigma_zz = 0 in plane stress */
            double W = 0.0, werr = 0.0, volume = dim == 3 ? 1.0 : 0.24 * 0.12;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) W += 0.5 * se[a][b] * (eps[a][b] - (a == b) * alpha * dT);
            for (int64_t n = 0; n < sp.nnodes; n++) werr = fmax(werr, fabs(w[n] - W));
            printf("  energy density %.9e (want %.9e, worst nodal error %.2e), total %.9e (want %.9e)\n",
                   w[0], W, werr / W, energy, W * volume);
            CHECK(werr <= 1e-8 * W, "nodal energy density off by %.3e relative", werr / W);
            CHECK(fabs(energy - W * volume) <= 1e-8 * W * volume, "strain energy %.9e, expected %.9e", energy,
                  W * volume);
        }
        free(sig);
        free(w);
        free(u);
        model_destroy(&md);
    }
    space_destroy(&sp);
    mesh_destroy(&m);
    device_destroy(&dev);
    return test_result("test_elasticity_patch");
}
