/* Manufactured solutions for steady heat conduction: -div(grad T) = f on the unit square or cube with
 * T = T_exact on the boundary, T_exact = sin(2x + 1) cos(3y) exp(z/2). On a sequence of uniformly refined
 * meshes the L2 error must fall at rate p + 1 and the H1 seminorm error at rate p (within 0.15).
 * usage: test_heat_mms MESH.geo ORDER REFINEMENTS [cpu|cuda] */
#include "common/femto_test.h"
#include "fem/error.h"
#include "common/test_functional.h"
#include "io/mesh_read.h"
#include "physics/heat.h"

#include <math.h>
#include <string.h>

static double exact(const double *x, double *grad) {
    double a = sin(2 * x[0] + 1), b = cos(3 * x[1]), c = exp(0.5 * x[2]);
    if (grad) {
        grad[0] = 2 * cos(2 * x[0] + 1) * b * c;
        grad[1] = -3 * a * sin(3 * x[1]) * c;
        grad[2] = 0.5 * a * b * c;
    }
    return a * b * c;
}

static void errors_at(void *ctx, const CellPoint *p, double *out) {
    int dim = *(int *)ctx;
    double g[3];
    double e = p->u[0] - exact(p->x, g);
    out[0] = e * e;
    out[1] = 0.0;
    for (int b = 0; b < dim; b++) out[1] += (p->g[b] - g[b]) * (p->g[b] - g[b]);
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: %s MESH ORDER REFINEMENTS [cpu|cuda]\n", argv[0]), 2;
    const char *mesh_name = argv[1];
    int p = atoi(argv[2]), levels = atoi(argv[3]);
    DevKind kind = argc > 4 && strcmp(argv[4], "cuda") == 0 ? DEV_CUDA : DEV_CPU;
    Device dev;
    if (test_device(&dev, kind, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    double eL2[8], eH1[8], h[8];
    for (int level = 0; level < levels; level++) {
        Mesh m;
        MeshReadOptions mo = {.order = 1, .refine = level};
        CHECK_OK(mesh_read(test_mesh(mesh_name), &mo, &m));
        Space sp;
        CHECK_OK(space_create(&m, p, 1, &sp));
        HeatMaterial mat = {.k_kind = CONDUCTIVITY_CONSTANT, .k = 1.0};
        HeatBc bc = {.kind = HEAT_BC_TEMPERATURE, .boundary = "boundary"};
        Problem pb;
        memset(&pb, 0, sizeof pb);
        snprintf(pb.path, sizeof pb.path, "mms");
        pb.heat.nmaterials = 1;
        pb.heat.materials = &mat;
        pb.heat.nbcs = 1;
        pb.heat.bcs = &bc;
        Model md;
        CHECK_OK(heat_model_create(&pb, &sp, &md));
        for (int64_t i = 0; i < md.ndir; i++) md.dir_values[i] = exact(&sp.node_x[3 * md.dir_dofs[i]], NULL);
        /* f = -lap T = (4 + 9 - 1/4) T in 3D, (4 + 9) T in 2D */
        double lap = m.dim == 3 ? 4 + 9 - 0.25 : 13.0;
        double *src[MESH_MAX_BLOCKS] = {0};
        {
            Operator op;
            CHECK_OK(op_create(&op, &dev, &sp, &md.phys, 0, md.cell_tags, md.facet_tags));
            for (int b = 0; b < sp.ncell_blocks; b++) {
                double *x;
                CHECK_OK(op_qpoint_coordinates(&op, b, &x));
                int64_t n = op.cells[b].nelem * op.cells[b].basis.tables.nq;
                src[b] = malloc(sizeof(double) * n);
                for (int64_t k = 0; k < n; k++) src[b][k] = lap * exact(&x[3 * k], NULL);
                free(x);
            }
            op_destroy(&op);
        }
        double *u = calloc(sp.ndofs, sizeof(double));
        TestSolve ts = {.ksp = KSP_CG, .pc = PC_JACOBI, .linear = 1};
        CHECK_OK(test_solve(&dev, &sp, &md, src, u, &ts));
        double err[2];
        int dim = m.dim;
        CHECK_OK(functional_cells(&sp, u, NULL, 2 * p + 4, errors_at, &dim, 2, err));
        eL2[level] = sqrt(err[0]);
        eH1[level] = sqrt(err[1]);
        h[level] = pow(0.5, level);
        printf("%s p=%d level %d: %lld dofs, Newton %d (CG %d), L2 %.3e, H1 %.3e", mesh_name, p, level,
               (long long)sp.ndofs, ts.newton.iterations, ts.linear_iterations, eL2[level], eH1[level]);
        if (level > 0)
            printf(", rates %.2f %.2f", log(eL2[level - 1] / eL2[level]) / log(2),
                   log(eH1[level - 1] / eH1[level]) / log(2));
        printf("\n");
        for (int b = 0; b < sp.ncell_blocks; b++) free(src[b]);
        free(u);
        model_destroy(&md);
        space_destroy(&sp);
        mesh_destroy(&m);
    }
    double rL2 = log(eL2[levels - 2] / eL2[levels - 1]) / log(2),
           rH1 = log(eH1[levels - 2] / eH1[levels - 1]) / log(2);
    CHECK(fabs(rL2 - (p + 1)) <= 0.15, "L2 rate %.3f, expected %d +- 0.15", rL2, p + 1);
    CHECK(fabs(rH1 - p) <= 0.15, "H1 rate %.3f, expected %d +- 0.15", rH1, p);
    (void)h;
    device_destroy(&dev);
    return test_result("test_heat_mms");
}
