/* Assembly of an operator's Jacobian (fem/solvers/assemble.h) against its specification: the element
 * matrices of every block (op->ops.element_matrices) as (row, column, value) triplets, constrained rows and
 * columns left out and a 1 on each constrained diagonal, summed by csr_from_triplets in triplet order (cell
 * blocks, then facet blocks, elements in order). op_assemble must give that matrix bitwise (same rows,
 * columns and values, compared with ==), with 1 and 3 threads alike.
 *
 * usage: test_assemble check              elasticity (clamped beam, traction facets) and heat (a fixed
 *                                          temperature, convection facets), orders 1 and 2, tetrahedra
 *        test_assemble cholmod            the same matrices (order 1, the coarse level's) solved by the
 * CHOLMOD coarse solver: for a known x (smooth, nonzero on every dof, the prescribed values included), b = A
 * x gives back x to 1e-10 relative (built with CHOLMOD only) test_assemble bench MESH SIZE P   times
 * op_assemble and the triplet path on one mesh (elasticity) with the threads of OMP_NUM_THREADS (not a CTest
 * test) */
#include "common/femto_test.h"
#include "elasticity/elas_test.h"
#include "fem/solvers/assemble.h"
#include "fem/solvers/coarse.h"
#include "physics/heat.h"

#include <math.h>
#include <omp.h>

/* The specification: triplets of the unconstrained entries, then csr_from_triplets. */
static int triplet_assemble(Operator *op, CsrMatrix *A, double *element_seconds) {
    int64_t n = op->space->ndofs, cap = op->ndir, t = 0;
    int nc = op->phys.ncomp, nblocks = op->ncells + op->nfacets;
    for (int k = 0; k < nblocks; k++) {
        const OpBlock *b = k < op->ncells ? &op->cells[k] : &op->facets[k - op->ncells];
        cap += b->nelem * (b->basis.tables.ndof * nc) * (b->basis.tables.ndof * nc);
    }
    char *fixed = calloc(n, 1);
    int32_t *rows = malloc(sizeof(int32_t) * (cap + 1)), *cols = malloc(sizeof(int32_t) * (cap + 1));
    double *vals = malloc(sizeof(double) * (cap + 1));
    for (int64_t i = 0; i < op->ndir; i++) {
        fixed[op->dir_host[i]] = 1;
        rows[t] = cols[t] = op->dir_host[i], vals[t++] = 1.0;
    }
    *element_seconds = 0;
    for (int k = 0; k < nblocks; k++) {
        int facet = k >= op->ncells, bi = facet ? k - op->ncells : k;
        const OpBlock *b = facet ? &op->facets[bi] : &op->cells[bi];
        const SpaceBlock *sb = facet ? &op->space->facets[bi] : &op->space->cells[bi];
        int nd = b->basis.tables.ndof, m = nd * nc;
        if (b->nelem == 0) continue;
        double *K = malloc(sizeof(double) * b->nelem * m * m), t0 = omp_get_wtime();
        CHECK_OK(op->ops.element_matrices(op, facet, bi, K));
        *element_seconds += omp_get_wtime() - t0;
        for (int64_t e = 0; e < b->nelem; e++) {
            const fem_idx *dofs = &sb->dofs[(facet ? b->list[e] : e) * nd];
            for (int r = 0; r < m; r++)
                for (int c = 0; c < m; c++) {
                    int32_t row = dofs[r / nc] * nc + r % nc, col = dofs[c / nc] * nc + c % nc;
                    if (fixed[row] || fixed[col]) continue;
                    rows[t] = row, cols[t] = col, vals[t++] = K[(e * m + r) * m + c];
                }
        }
        free(K);
    }
    int status = csr_from_triplets(n, n, t, rows, cols, vals, A);
    free(fixed), free(rows), free(cols), free(vals);
    return status;
}

static void expect_same(const CsrMatrix *A, const CsrMatrix *R, const char *what) {
    CHECK(A->nrows == R->nrows && A->ncols == R->ncols && A->nnz == R->nnz,
          "%s: %lld x %lld with %lld nonzeros, expected %lld x %lld with %lld", what, (long long)A->nrows,
          (long long)A->ncols, (long long)A->nnz, (long long)R->nrows, (long long)R->ncols,
          (long long)R->nnz);
    if (A->nnz != R->nnz || A->nrows != R->nrows) return;
    int64_t bad_rows = 0, bad_cols = 0, bad_vals = 0;
    for (int64_t r = 0; r <= A->nrows; r++) bad_rows += A->rowptr[r] != R->rowptr[r];
    for (int64_t k = 0; k < A->nnz; k++)
        bad_cols += A->cols[k] != R->cols[k], bad_vals += A->vals[k] != R->vals[k];
    CHECK(!bad_rows && !bad_cols && !bad_vals, "%s: %lld row starts, %lld columns, %lld values differ", what,
          (long long)bad_rows, (long long)bad_cols, (long long)bad_vals);
}

/* op_assemble against the triplet path, with 1 and 3 threads. */
static void compare_assembly(Operator *op, const Model *md, const char *what) {
    CsrMatrix R, A1, A2;
    double element_seconds;
    CHECK_OK(triplet_assemble(op, &R, &element_seconds));
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK_OK(op_assemble(op, &A1));
    omp_set_num_threads(3);
    CHECK_OK(op_assemble(op, &A2));
    omp_set_num_threads(threads);
    printf("%s: %lld rows (%lld constrained), %lld nonzeros, %d facet blocks\n", what, (long long)R.nrows,
           (long long)md->ndir, (long long)R.nnz, op->nfacets);
    CHECK(R.nnz > R.nrows, "%s: a matrix of %lld nonzeros is too small to test anything", what,
          (long long)R.nnz);
    expect_same(&A1, &R, "1 thread");
    expect_same(&A2, &R, "3 threads");
    csr_destroy(&R), csr_destroy(&A1), csr_destroy(&A2);
}

/* The CHOLMOD coarse solver on op's assembled matrix: b = A x for a known x, then x back from b. x is smooth
 * and of one sign nowhere zero, so the relative error is not that of a few small entries. */
static void solve_known(Operator *op, const Model *md, const char *what) {
    CsrMatrix A;
    CHECK_OK(op_assemble(op, &A));
    int64_t n = A.nrows;
    double *x = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++) x[i] = 1.0 + 0.5 * sin(0.37 * (double)i);
    CHECK_OK(csr_matvec(&A, x, b));
    CoarseOptions o = {.type = COARSE_CHOLMOD, .block_size = op->phys.ncomp};
    CoarseSolver *cs;
    CHECK_OK(coarse_create(op->dev, &A, &o, &cs));
    CHECK_OK(coarse_apply(cs, b, y));
    double err = 0, xmax = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(y[i] - x[i])), xmax = fmax(xmax, fabs(x[i]));
    printf("%s: %lld rows (%lld constrained), %lld nonzeros; %s: max |x - x_known| / max |x_known| = %.2e\n",
           what, (long long)n, (long long)md->ndir, (long long)A.nnz, coarse_describe(cs), err / xmax);
    CHECK(md->ndir > 0 && A.nnz > 5 * n, "%s: a matrix too small to test anything", what);
    CHECK(err <= 1e-10 * xmax,
          "%s: the CHOLMOD solve is %.2e from the known solution (relative), expected 1e-10", what,
          err / xmax);
    coarse_destroy(&cs);
    free(x), free(b), free(y);
    csr_destroy(&A);
}

typedef void (*OperatorCheck)(Operator *op, const Model *md, const char *what);

/* op at a zero state (its last residual), then the check. */
static void check_operator(Device *dev, const Space *sp, const Model *md, OperatorCheck check,
                           const char *what) {
    Operator op;
    CHECK_OK(op_create(&op, dev, sp, &md->phys, 0, md->cell_tags, md->facet_tags));
    CHECK_OK(op_set_dirichlet(&op, md->ndir, md->dir_dofs));
    Vec U, W;
    CHECK_OK(vec_create(&U, dev, sp->ndofs));
    CHECK_OK(vec_create(&W, dev, sp->ndofs));
    CHECK_OK(vec_zero(&U));
    CHECK_OK(op_residual(&op, &U, &W));
    check(&op, md, what);
    vec_destroy(&U), vec_destroy(&W);
    op_destroy(&op);
}

/* The check on the model's operator, then the model and its space are destroyed. */
static void check_model(Device *dev, Space *sp, Model *md, OperatorCheck check, const char *physics) {
    char what[64];
    snprintf(what, sizeof what, "%s p = %d", physics, sp->order);
    check_operator(dev, sp, md, check, what);
    model_destroy(md);
    space_destroy(sp);
}

static void check_elasticity(Device *dev, const Mesh *m, int p, OperatorCheck check) {
    Space sp;
    CHECK_OK(space_create(m, p, 3, &sp));
    ElasticMaterial mat = elas_material(200e9, 0.3, 7850, 0, 293);
    ElasticBc bcs[2] = {elas_bc(ELASTIC_BC_FIXED, "clamp", 7, 0, 0, 0),
                        elas_bc(ELASTIC_BC_TRACTION, "top", 0, 0, 0, -1e5)};
    Model md;
    CHECK_OK(elasticity_model_create(elas_problem(ELASTIC_LINEAR, &mat, 2, bcs), &sp, &md));
    check_model(dev, &sp, &md, check, "elasticity");
}

static void check_heat(Device *dev, const Mesh *m, int p, OperatorCheck check) {
    Space sp;
    CHECK_OK(space_create(m, p, 1, &sp));
    static Problem pb;
    memset(&pb, 0, sizeof pb);
    snprintf(pb.path, sizeof pb.path, "test");
    HeatMaterial mat = {.k_kind = CONDUCTIVITY_CONSTANT, .k = 15, .source = 1e5};
    HeatBc bc[2] = {{.kind = HEAT_BC_TEMPERATURE, .boundary = "clamp", .value = 300},
                    {.kind = HEAT_BC_CONVECTION, .boundary = "top", .h = 50, .ambient = 290}};
    pb.physics = PHYSICS_HEAT;
    pb.heat.present = 1, pb.heat.nmaterials = 1, pb.heat.materials = &mat, pb.heat.nbcs = 2, pb.heat.bcs = bc;
    Model md;
    CHECK_OK(heat_model_create(&pb, &sp, &md));
    check_model(dev, &sp, &md, check, "heat");
}

/* Wall-clock seconds of op_assemble and of the triplet path (element matrices counted apart). */
static void bench(Device *dev, const char *mesh, double size, int p) {
    Mesh m;
    elas_read_mesh(mesh, size, 0, 0, &m);
    Space sp;
    CHECK_OK(space_create(&m, p, 3, &sp));
    ElasticMaterial mat = elas_material(200e9, 0.3, 7850, 0, 293);
    ElasticBc bcs[1] = {elas_bc(ELASTIC_BC_FIXED, "clamp", 7, 0, 0, 0)};
    Model md;
    CHECK_OK(elasticity_model_create(elas_problem(ELASTIC_LINEAR, &mat, 1, bcs), &sp, &md));
    Operator op;
    CHECK_OK(op_create(&op, dev, &sp, &md.phys, 0, md.cell_tags, md.facet_tags));
    CHECK_OK(op_set_dirichlet(&op, md.ndir, md.dir_dofs));
    Vec U, W;
    CHECK_OK(vec_create(&U, dev, sp.ndofs));
    CHECK_OK(vec_create(&W, dev, sp.ndofs));
    CHECK_OK(vec_zero(&U));
    CHECK_OK(op_residual(&op, &U, &W));
    CsrMatrix A, R;
    double element_seconds, t0 = omp_get_wtime();
    CHECK_OK(triplet_assemble(&op, &R, &element_seconds));
    double t1 = omp_get_wtime();
    CHECK_OK(op_assemble(&op, &A));
    double t2 = omp_get_wtime();
    printf(
        "%lld rows, %lld nonzeros, %d threads: element matrices %.3f s; triplets + csr_from_triplets %.3f s; "
        "op_assemble %.3f s (%.3f s beyond the element matrices)\n",
        (long long)A.nrows, (long long)A.nnz, omp_get_max_threads(), element_seconds,
        t1 - t0 - element_seconds, t2 - t1, t2 - t1 - element_seconds);
    expect_same(&A, &R, "bench");
    csr_destroy(&A), csr_destroy(&R);
    vec_destroy(&U), vec_destroy(&W);
    op_destroy(&op);
    model_destroy(&md);
    space_destroy(&sp);
    mesh_destroy(&m);
}

int main(int argc, char **argv) {
    Device dev;
    CHECK_OK(test_device(&dev, DEV_CPU, 0, ASSEMBLE_GATHER));
    int solve = argc == 2 && !strcmp(argv[1], "cholmod");
    if (argc == 2 && (solve || !strcmp(argv[1], "check"))) {
        Mesh m;
        elas_read_mesh("beam_tet.geo", 0.04, 0, 0, &m);
        OperatorCheck check = solve ? solve_known : compare_assembly;
        for (int p = 1; p <= (solve ? 1 : 2); p++) {
            check_elasticity(&dev, &m, p, check);
            check_heat(&dev, &m, p, check);
        }
        mesh_destroy(&m);
    } else if (argc == 5 && !strcmp(argv[1], "bench")) {
        bench(&dev, argv[2], atof(argv[3]), atoi(argv[4]));
    } else {
        fprintf(stderr, "usage: test_assemble check | cholmod | bench MESH SIZE P\n");
        return 2;
    }
    device_destroy(&dev);
    return test_result("test_assemble");
}
