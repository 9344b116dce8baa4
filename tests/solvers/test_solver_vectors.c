/* What the Krylov solvers and the preconditioners keep on the device (fem/solvers/krylov.c, pc.c): the work
 * vectors their method uses and no more, counted by the device (bytes_in_use), and every method still
 * solves with them.
 *
 * For vectors of N doubles: CG and GMRES keep 4 (GMRES its restart + 1 basis vectors besides), BiCGStab 8;
 * Jacobi keeps the diagonal's inverse, Chebyshev-Jacobi the diagonal and the smoother's 3 (its Lanczos start
 * and product are the setup's alone), multigrid and none nothing (multigrid makes its vectors per level at
 * setup). Each method then solves the 1D Laplacian (tridiagonal 2, -1) for a
 * known solution without preconditioner to rtol 1e-10, and destroying it returns every byte. */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/solvers/krylov.h"
#include "fem/solvers/pc.h"

#include <math.h>
#include <string.h>

enum { N = 100 };

/* y = A x, A = tridiag(-1, 2, -1) (the CPU device's vectors are host memory) */
static int laplacian(void *ctx, const Vec *x, Vec *y) {
    (void)ctx;
    for (int64_t i = 0; i < N; i++)
        y->data[i] = 2.0 * x->data[i] - (i > 0 ? x->data[i - 1] : 0.0) - (i + 1 < N ? x->data[i + 1] : 0.0);
    return FEM_OK;
}

static int64_t vectors(int64_t bytes) {
    return bytes / (int64_t)(sizeof(double) * N);
}

static void check_ksp(Device *d, const Vec *like, KspType type, int64_t want) {
    const char *name = ksp_name(type);
    int64_t before = d->bytes_in_use;
    Ksp k;
    KspSettings set = {.type = type, .rtol = 1e-10, .max_iterations = 2000, .restart = 30};
    CHECK_OK(ksp_create(&k, like, &set));
    int64_t kept = vectors(d->bytes_in_use - before);
    CHECK(kept == want, "%s keeps %lld vectors of %d doubles, expected %lld", name, (long long)kept, N,
          (long long)want);
    /* a solve with them: b = A x* for x*_i = sin(3 i) + i / N */
    Vec xs, b, x;
    CHECK_OK(vec_create(&xs, d, N));
    CHECK_OK(vec_create(&b, d, N));
    CHECK_OK(vec_create(&x, d, N));
    for (int i = 0; i < N; i++) xs.data[i] = sin(3.0 * i) + (double)i / N;
    laplacian(NULL, &xs, &b);
    Pc pc;
    PcSettings ps = {.type = PC_NONE};
    CHECK_OK(pc_create(&pc, like, &ps));
    LinOp A = {laplacian, NULL};
    CHECK_OK(pc_setup(&pc, A, NULL, NULL));
    KspResult res;
    CHECK_OK(ksp_solve(&k, A, &pc, &b, &x, &res));
    double err = 0.0, norm = 0.0;
    for (int i = 0; i < N; i++) err += pow(x.data[i] - xs.data[i], 2), norm += xs.data[i] * xs.data[i];
    /* ||e|| <= cond(A) ||r|| / ||b||: cond about 4 N^2 / pi^2 = 4,053 */
    CHECK(res.converged && sqrt(err / norm) < 1e-6, "%s: converged %d in %d iterations, error %.3e", name,
          res.converged, res.iterations, sqrt(err / norm));
    printf("%s: %lld work vectors, %d iterations, error %.2e\n", name, (long long)kept, res.iterations,
           sqrt(err / norm));
    pc_destroy(&pc);
    vec_destroy(&xs), vec_destroy(&b), vec_destroy(&x);
    ksp_destroy(&k);
    CHECK(d->bytes_in_use == before, "%s: %lld bytes left after destroying", name,
          (long long)(d->bytes_in_use - before));
}

static void check_pc(Device *d, const Vec *like, PcType type, int64_t want) {
    int64_t before = d->bytes_in_use;
    Pc pc;
    PcSettings set = {.type = type};
    CHECK_OK(pc_create(&pc, like, &set));
    int64_t kept = vectors(d->bytes_in_use - before);
    CHECK(kept == want, "%s keeps %lld vectors of %d doubles, expected %lld", pc_name(type), (long long)kept,
          N, (long long)want);
    printf("%s: %lld vectors\n", pc_name(type), (long long)kept);
    pc_destroy(&pc);
    CHECK(d->bytes_in_use == before, "%s: %lld bytes left after destroying", pc_name(type),
          (long long)(d->bytes_in_use - before));
}

int main(void) {
    Device d;
    int st = test_device(&d, DEV_CPU, 1, ASSEMBLE_GATHER);
    if (st) return st;
    Vec like;
    CHECK_OK(vec_create(&like, &d, N));
    check_ksp(&d, &like, KSP_CG, 4);
    check_ksp(&d, &like, KSP_GMRES, 4 + 31);
    check_ksp(&d, &like, KSP_BICGSTAB, 8);
    check_pc(&d, &like, PC_NONE, 0);
    check_pc(&d, &like, PC_JACOBI, 1);
    check_pc(&d, &like, PC_CHEBYSHEV, 4);
    check_pc(&d, &like, PC_MULTIGRID, 0);
    vec_destroy(&like);
    device_destroy(&d);
    return test_result("test_solver_vectors");
}
