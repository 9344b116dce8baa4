/* p-multigrid transfers between spaces of two orders on one mesh (fem/transfer.h).
 *
 * usage: test_transfer MESH.geo P_FINE P_COARSE [cpu|cuda]   (cuda: on the GPU, exit 77 without one)
 * On the mesh read with its own geometry, along both ways of transferring (node matrices, element kernels):
 *   (a) prolongation reproduces a field of the coarse order exactly: the coarse nodal values of
 *       f(x) = 1 + x - 2y + 3z (plus x^2 - y z for a coarse order of 2 and above), prolonged, equal f at every
 *       fine node within 1e-12 (relative to the largest |f|) on affine cells;
 *   (b) restriction is the transpose of prolongation: for random x (fine), y (coarse),
 *       x . (P y) = (P^T x) . y within 1e-12 relative;
 *   (c) injection after prolongation is the identity on coarse fields, within 1e-12;
 *   (d) with 3 interleaved components, (a) holds for each (component c carries (c + 1) f). */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/transfer.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static double field(const double *x, int quadratic) {
    return 1 + x[0] - 2 * x[1] + 3 * x[2] + (quadratic ? x[0] * x[0] - x[1] * x[2] : 0.0);
}

static double dot(int64_t n, const double *a, const double *b) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* (a)/(d): prolongation of the coarse interpolant of f against f at the fine nodes; returns the error. */
static double prolongation_error(Device *d, const Space *sf, const Space *sc, int nc, int quadratic) {
    Transfer t;
    CHECK_OK(transfer_create(&t, d, sf, sc, nc));
    Vec uc, uf;
    CHECK_OK(vec_create(&uc, d, sc->nnodes * nc));
    CHECK_OK(vec_create(&uf, d, sf->nnodes * nc));
    double *hc = malloc(sizeof(double) * (size_t)(sc->nnodes * nc)), *hf = malloc(sizeof(double) * (size_t)(sf->nnodes * nc));
    for (int64_t n = 0; n < sc->nnodes; n++)
        for (int c = 0; c < nc; c++) hc[n * nc + c] = (c + 1) * field(&sc->node_x[3 * n], quadratic);
    CHECK_OK(vec_upload(&uc, hc));
    CHECK_OK(transfer_prolong(&t, &uc, &uf));
    CHECK_OK(vec_download(&uf, hf));
    double err = 0.0, big = 0.0;
    for (int64_t n = 0; n < sf->nnodes; n++)
        for (int c = 0; c < nc; c++) {
            double want = (c + 1) * field(&sf->node_x[3 * n], quadratic);
            err = fmax(err, fabs(hf[n * nc + c] - want));
            big = fmax(big, fabs(want));
        }
    free(hc), free(hf);
    vec_destroy(&uc), vec_destroy(&uf);
    transfer_destroy(&t);
    return err / big;
}

/* (b) and (c) */
static void transpose_and_injection(Device *d, const Space *sf, const Space *sc, int nc, double *transpose_err,
                                    double *inject_err) {
    Transfer t;
    CHECK_OK(transfer_create(&t, d, sf, sc, nc));
    int64_t nf = sf->nnodes * nc, ncs = sc->nnodes * nc;
    double *x = malloc(sizeof(double) * nf), *y = malloc(sizeof(double) * ncs), *Py = malloc(sizeof(double) * nf),
           *PTx = malloc(sizeof(double) * ncs), *back = malloc(sizeof(double) * ncs);
    uint64_t seed = 12345;
    for (int64_t i = 0; i < nf; i++) x[i] = test_rand(&seed) - 0.5;
    for (int64_t i = 0; i < ncs; i++) y[i] = test_rand(&seed) - 0.5;
    Vec vx, vy, vPy, vPTx, vback;
    CHECK_OK(vec_create(&vx, d, nf));
    CHECK_OK(vec_create(&vPy, d, nf));
    CHECK_OK(vec_create(&vy, d, ncs));
    CHECK_OK(vec_create(&vPTx, d, ncs));
    CHECK_OK(vec_create(&vback, d, ncs));
    CHECK_OK(vec_upload(&vx, x));
    CHECK_OK(vec_upload(&vy, y));
    CHECK_OK(transfer_prolong(&t, &vy, &vPy));
    CHECK_OK(transfer_restrict(&t, &vx, &vPTx));
    CHECK_OK(transfer_inject(&t, &vPy, &vback));
    CHECK_OK(vec_download(&vPy, Py));
    CHECK_OK(vec_download(&vPTx, PTx));
    CHECK_OK(vec_download(&vback, back));
    double a = dot(nf, x, Py), b = dot(ncs, PTx, y);
    *transpose_err = fabs(a - b) / fmax(fabs(a), 1e-300);
    *inject_err = 0.0;
    for (int64_t i = 0; i < ncs; i++) *inject_err = fmax(*inject_err, fabs(back[i] - y[i]));
    Vec *vs[] = {&vx, &vy, &vPy, &vPTx, &vback};
    for (int i = 0; i < 5; i++) vec_destroy(vs[i]);
    free(x), free(y), free(Py), free(PTx), free(back);
    transfer_destroy(&t);
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: test_transfer MESH P_FINE P_COARSE [cpu|cuda]\n"), 2;
    int pf = atoi(argv[2]), pc = atoi(argv[3]), cuda = argc > 4 && strcmp(argv[4], "cuda") == 0;
    Mesh m;
    MeshReadOptions mo = {0};
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    Device d;
    if (cuda && test_device(&d, DEV_CUDA, 0, ASSEMBLE_GATHER)) return TEST_SKIP;
    if (!cuda) CHECK_OK(test_device(&d, DEV_CPU, 2, ASSEMBLE_GATHER));
    Space sf, sc;
    CHECK_OK(space_create(&m, pf, 1, &sf));
    CHECK_OK(space_create(&m, pc, 1, &sc));
    /* both ways of transferring: node matrices (the default), and the element kernels */
    for (int elements = 0; elements < 2; elements++) {
        setenv("FEMTO_TRANSFER_ELEMENTS", elements ? "1" : "0", 1);
        const char *way = elements ? "element kernels" : "node matrices";
        double e1 = prolongation_error(&d, &sf, &sc, 1, pc >= 2), e3 = prolongation_error(&d, &sf, &sc, 3, pc >= 2);
        double te, ie;
        transpose_and_injection(&d, &sf, &sc, 3, &te, &ie);
        printf("%s p = %d -> %d (%lld -> %lld nodes), %s, %s: prolongation error %.2e (1 component), %.2e (3 "
               "components); x.Py - P^T x.y: %.2e relative; injection after prolongation: %.2e\n",
               argv[1], pf, pc, (long long)sf.nnodes, (long long)sc.nnodes, cuda ? "GPU" : "CPU", way, e1, e3, te,
               ie);
        CHECK(e1 <= 1e-12, "%s: prolongation of a field of order %d is not exact: %.3e", way, pc, e1);
        CHECK(e3 <= 1e-12, "%s: prolongation of 3 components is not exact: %.3e", way, e3);
        CHECK(te <= 1e-12, "%s: restriction is not the transpose of prolongation: %.3e", way, te);
        CHECK(ie <= 1e-12, "%s: injection does not invert prolongation on coarse fields: %.3e", way, ie);
    }
    unsetenv("FEMTO_TRANSFER_ELEMENTS");
    space_destroy(&sf);
    space_destroy(&sc);
    device_destroy(&d);
    mesh_destroy(&m);
    return test_result("test_transfer");
}
