/* Manufactured solutions for linear elasticity: -div sigma(u) = b on the unit square (plane strain) or cube
 * with u = u_exact on the boundary, u_exact,c = sin(k_c . x + phi_c) (one plane wave per component). With
 * constant lambda and mu, div sigma = (lambda + mu) grad(div u) + mu lap u, so
 *   b_c = (lambda + mu) sum_j k_jj k_jc sin(theta_j) + mu |k_c|^2 sin(theta_c),  theta_j = k_j . x + phi_j,
 * given to the operator as a q-point source. On uniformly refined meshes the L2 error must fall at rate p + 1
 * and the H1 seminorm error at rate p (within 0.15).
 * On "cuda" the solve runs on the GPU, and the finest level is solved on the CPU too: the two displacement
 * fields must agree to the solver tolerance.
 * usage: test_elasticity_mms MESH.geo ORDER LEVELS [cpu|cuda] [MESH_SIZE] */
#include "elas_test.h"

static const double K[3][3] = {{1.0, 0.5, 0.3}, {0.4, 1.1, -0.6}, {-0.7, 0.3, 0.9}};
static const double PHI[3] = {0.2, 1.0, -0.5};
static const double LAMBDA = 1.5, MU = 1.0;

typedef struct {
    int dim;
} Ctx;

static void exact(int dim, const double *x, double *u, double *g) {
    for (int c = 0; c < dim; c++) {
        double th = PHI[c];
        for (int b = 0; b < dim; b++) th += K[c][b] * x[b];
        u[c] = sin(th);
        if (g)
            for (int b = 0; b < dim; b++) g[c * dim + b] = K[c][b] * cos(th);
    }
}

static void source(int dim, const double *x, double *s) {
    double sn[3];
    for (int c = 0; c < dim; c++) {
        double th = PHI[c];
        for (int b = 0; b < dim; b++) th += K[c][b] * x[b];
        sn[c] = sin(th);
    }
    for (int c = 0; c < dim; c++) {
        double k2 = 0.0, gd = 0.0;
        for (int b = 0; b < dim; b++) k2 += K[c][b] * K[c][b];
        for (int j = 0; j < dim; j++) gd += K[j][j] * K[j][c] * sn[j];
        s[c] = (LAMBDA + MU) * gd + MU * k2 * sn[c];
    }
}

static void errors_at(void *vctx, const CellPoint *p, double *out) {
    int dim = ((Ctx *)vctx)->dim;
    double u[3], g[9];
    exact(dim, p->x, u, g);
    out[0] = out[1] = 0.0;
    for (int c = 0; c < dim; c++) {
        out[0] += (p->u[c] - u[c]) * (p->u[c] - u[c]);
        for (int b = 0; b < dim; b++)
            out[1] += (p->g[c * dim + b] - g[c * dim + b]) * (p->g[c * dim + b] - g[c * dim + b]);
    }
}

/* Solves the manufactured problem on dev; returns u (malloc'ed). */
static double *solve(Device *dev, const Space *sp, int *newton, int *cg) {
    int dim = sp->mesh->dim;
    ElasticMaterial mat;
    memset(&mat, 0, sizeof mat);
    mat.lambda = LAMBDA;
    mat.mu = MU;
    ElasticBc bc = elas_bc(ELASTIC_BC_DISPLACEMENT, "boundary", 7, 0, 0, 0);
    Problem *pb = elas_problem(ELASTIC_LINEAR, &mat, 1, &bc);
    Model md;
    CHECK_OK(elasticity_model_create(pb, sp, &md));
    for (int64_t i = 0; i < md.ndir; i++) {
        double ue[3];
        exact(dim, &sp->node_x[3 * (md.dir_dofs[i] / dim)], ue, NULL);
        md.dir_values[i] = ue[md.dir_dofs[i] % dim];
    }
    double *src[MESH_MAX_BLOCKS] = {0};
    {
        Operator op;
        CHECK_OK(op_create(&op, dev, sp, &md.phys, 0, md.cell_tags, md.facet_tags));
        for (int b = 0; b < sp->ncell_blocks; b++) {
            double *x;
            CHECK_OK(op_qpoint_coordinates(&op, b, &x));
            int64_t n = op.cells[b].nelem * op.cells[b].basis.tables.nq;
            src[b] = malloc(sizeof(double) * dim * n);
            for (int64_t k = 0; k < n; k++) source(dim, &x[3 * k], &src[b][dim * k]);
            free(x);
        }
        op_destroy(&op);
    }
    double *u = calloc(sp->ndofs, sizeof(double));
    ElasSolve es = {.steps = 1, .rtol = 1e-11, .src = src};
    CHECK_OK(elas_solve(dev, sp, &md, u, &es));
    *newton = es.newton_iterations;
    *cg = es.linear_iterations;
    for (int b = 0; b < sp->ncell_blocks; b++) free(src[b]);
    model_destroy(&md);
    return u;
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: %s MESH ORDER LEVELS [cpu|cuda] [MESH_SIZE]\n", argv[0]), 2;
    const char *mesh_name = argv[1];
    int p = atoi(argv[2]), levels = atoi(argv[3]);
    int cuda = argc > 4 && strcmp(argv[4], "cuda") == 0;
    double size = argc > 5 ? atof(argv[5]) : 0.0;
    Device dev;
    if (test_device(&dev, cuda ? DEV_CUDA : DEV_CPU, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    double eL2[8], eH1[8];
    for (int level = 0; level < levels; level++) {
        Mesh m;
        elas_read_mesh(mesh_name, size, 1, level, &m);
        Space sp;
        CHECK_OK(space_create(&m, p, m.dim, &sp));
        int newton, cg;
        double *u = solve(&dev, &sp, &newton, &cg);
        double err[2];
        Ctx ctx = {m.dim};
        CHECK_OK(functional_cells(&sp, u, NULL, 2 * p + 4, errors_at, &ctx, 2, err));
        eL2[level] = sqrt(err[0]);
        eH1[level] = sqrt(err[1]);
        printf("%s p=%d level %d (%s): %lld dofs, Newton %d (CG %d), L2 %.3e, H1 %.3e", mesh_name, p, level,
               dev.name, (long long)sp.ndofs, newton, cg, eL2[level], eH1[level]);
        if (level > 0)
            printf(", rates %.2f %.2f", log(eL2[level - 1] / eL2[level]) / log(2),
                   log(eH1[level - 1] / eH1[level]) / log(2));
        printf("\n");
        if (cuda && level == levels - 1) {
            Device cpu;
            CHECK_OK(test_device(&cpu, DEV_CPU, 0, ASSEMBLE_GATHER));
            double *uc = solve(&cpu, &sp, &newton, &cg);
            double diff = 0.0, scale = 0.0;
            for (int64_t i = 0; i < sp.ndofs; i++) {
                diff = fmax(diff, fabs(u[i] - uc[i]));
                scale = fmax(scale, fabs(uc[i]));
            }
            printf("CPU vs GPU: max difference %.3e (max |u| %.3e)\n", diff, scale);
            CHECK(diff <= 1e-8 * scale, "CPU and GPU displacements differ by %.3e, expected <= 1e-8 * %.3e",
                  diff, scale);
            free(uc);
            device_destroy(&cpu);
        }
        free(u);
        space_destroy(&sp);
        mesh_destroy(&m);
    }
    double rL2 = log(eL2[levels - 2] / eL2[levels - 1]) / log(2),
           rH1 = log(eH1[levels - 2] / eH1[levels - 1]) / log(2);
    CHECK(fabs(rL2 - (p + 1)) <= 0.15, "L2 rate %.3f, expected %d +- 0.15", rL2, p + 1);
    CHECK(fabs(rH1 - p) <= 0.15, "H1 rate %.3f, expected %d +- 0.15", rH1, p);
    device_destroy(&dev);
    return test_result("test_elasticity_mms");
}
