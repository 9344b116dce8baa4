/* The CPU device's element kernels: serial, threaded with atomic assembly, threaded with gather assembly.
 *
 * usage: test_kernels MESH.geo REFINE P...
 * The mesh refined REFINE times; every order P in turn, with 1 and with 3 components. On random data
 * (L-vector u, q-point values s and fluxes f, and a nonzero starting residual r0):
 *   interpolate: 2 threads give bitwise the values and gradients of 1 thread, since each element's q-point
 *     values are computed by the same arithmetic whatever thread runs it (no sums across elements);
 *   integrate: r = r0 + sum_e P_e^T (B^T s + G^T f):
 *     - threaded atomic and threaded gather equal serial within 1e-13 relative to max |r| (the sums over the
 *       elements of a node are the same terms in another order);
 *     - gather equals atomic within 1e-13 relative;
 *     - gather run twice is bitwise identical (each node sums its element slots in a fixed order);
 *   adjoint: <uq, s> + <duq, f> = <u, r - r0>, integrate is the transpose of interpolate (within 1e-12
 *     relative to the sum of the magnitudes of the terms);
 *   tensor: on quadrilaterals and hexahedra the sum-factorised kernels equal the full-table kernels
 *     (ElemView.tensor = 0) within 1e-13 relative, for interpolate and integrate. */
#include "common/femto_test.h"
#include "fem/error.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static uint64_t seed = 0x853c49e6748fea9bull;

static void fill_random(double *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = 2 * test_rand(&seed) - 1;
}

static double max_abs(const double *x, int64_t n) {
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

static double max_diff(const double *x, const double *y, int64_t n) {
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(x[i] - y[i]));
    return m;
}

static void integrate(Device *d, const ElemView *v, const double *sq, const double *fq, const double *r0,
                      int64_t ndofs, double *r, double *evec) {
    memcpy(r, r0, sizeof(double) * ndofs);
    CHECK_OK(d->ops.integrate(d, v, sq, fq, r, evec));
}

static void check_block(Device dev[3], const Space *sp, int b, int ncomp) {
    const SpaceBlock *sb = &sp->cells[b];
    ElementTables t;
    CHECK_OK(tables_create(sb->shape, sp->order, quadrature_default_degree(sp->order, 1), &t));
    ElemView v = test_elem_view(sp, b, &t, ncomp);
    int dim = v.dim, p = sp->order;
    const char *sh = shape_name(sb->shape);
    int64_t ndofs = sp->nnodes * ncomp, nqv = v.nelem * v.nq * ncomp;
    double *u = malloc(sizeof(double) * ndofs), *s = malloc(sizeof(double) * nqv),
           *f = malloc(sizeof(double) * nqv * dim), *r0 = malloc(sizeof(double) * ndofs);
    double *evec = malloc(sizeof(double) * v.nelem * ncomp * v.ndof);
    fill_random(u, ndofs);
    fill_random(s, nqv);
    fill_random(f, nqv * dim);
    fill_random(r0, ndofs);

    /* interpolate: serial vs 2 threads, bitwise */
    double *uq[2], *duq[2];
    for (int k = 0; k < 2; k++) {
        uq[k] = malloc(sizeof(double) * nqv);
        duq[k] = malloc(sizeof(double) * nqv * dim);
        CHECK_OK(dev[k].ops.interpolate(&dev[k], &v, u, uq[k], duq[k]));
    }
    CHECK(memcmp(uq[0], uq[1], sizeof(double) * nqv) == 0 &&
              memcmp(duq[0], duq[1], sizeof(double) * nqv * dim) == 0,
          "%s p=%d ncomp=%d: threaded interpolation differs from serial (%.3g, %.3g)", sh, p, ncomp,
          max_diff(uq[0], uq[1], nqv), max_diff(duq[0], duq[1], nqv * dim));

    /* integrate: serial, threaded atomic, threaded gather (twice) */
    double *r[4];
    for (int k = 0; k < 4; k++) r[k] = malloc(sizeof(double) * ndofs);
    integrate(&dev[0], &v, s, f, r0, ndofs, r[0], evec);
    integrate(&dev[1], &v, s, f, r0, ndofs, r[1], evec);
    integrate(&dev[2], &v, s, f, r0, ndofs, r[2], evec);
    integrate(&dev[2], &v, s, f, r0, ndofs, r[3], evec);
    double scale = max_abs(r[0], ndofs);
    double atomic_serial = max_diff(r[1], r[0], ndofs) / scale,
           gather_serial = max_diff(r[2], r[0], ndofs) / scale,
           gather_atomic = max_diff(r[2], r[1], ndofs) / scale;
    CHECK(atomic_serial < 1e-13, "%s p=%d ncomp=%d: threaded atomic integration differs from serial by %.3g",
          sh, p, ncomp, atomic_serial);
    CHECK(gather_serial < 1e-13, "%s p=%d ncomp=%d: threaded gather integration differs from serial by %.3g",
          sh, p, ncomp, gather_serial);
    CHECK(gather_atomic < 1e-13, "%s p=%d ncomp=%d: gather differs from atomic by %.3g", sh, p, ncomp,
          gather_atomic);
    CHECK(memcmp(r[2], r[3], sizeof(double) * ndofs) == 0,
          "%s p=%d ncomp=%d: gather assembly is not bitwise reproducible (%.3g)", sh, p, ncomp,
          max_diff(r[2], r[3], ndofs));

    /* adjoint: <uq, s> + <duq, f> = <u, r - r0> */
    double lhs = 0.0, rhs = 0.0, mag = 0.0;
    for (int64_t k = 0; k < nqv; k++) lhs += uq[0][k] * s[k], mag += fabs(uq[0][k] * s[k]);
    for (int64_t k = 0; k < nqv * dim; k++) lhs += duq[0][k] * f[k], mag += fabs(duq[0][k] * f[k]);
    for (int64_t i = 0; i < ndofs; i++) rhs += u[i] * (r[0][i] - r0[i]);
    CHECK(fabs(lhs - rhs) < 1e-12 * mag,
          "%s p=%d ncomp=%d: <Bu, s> + <Gu, f> = %.17g but <u, B^T s + G^T f> = %.17g", sh, p, ncomp, lhs,
          rhs);

    /* sum factorisation against the full tables */
    double tensor_i = 0.0, tensor_r = 0.0;
    if (v.tensor) {
        ElemView full = v;
        full.tensor = 0;
        CHECK_OK(dev[0].ops.interpolate(&dev[0], &full, u, uq[1], duq[1]));
        tensor_i = fmax(max_diff(uq[0], uq[1], nqv) / max_abs(uq[0], nqv),
                        max_diff(duq[0], duq[1], nqv * dim) / max_abs(duq[0], nqv * dim));
        integrate(&dev[0], &full, s, f, r0, ndofs, r[1], evec);
        tensor_r = max_diff(r[0], r[1], ndofs) / scale;
        CHECK(tensor_i < 1e-13,
              "%s p=%d ncomp=%d: sum-factorised interpolation differs from the full tables by %.3g", sh, p,
              ncomp, tensor_i);
        CHECK(tensor_r < 1e-13,
              "%s p=%d ncomp=%d: sum-factorised integration differs from the full tables by %.3g", sh, p,
              ncomp, tensor_r);
    }
    printf("%s p=%d ncomp=%d: %lld cells; |atomic-serial| %.2g, |gather-serial| %.2g, |gather-atomic| %.2g; "
           "adjoint %.2g; tensor %.2g %.2g\n",
           sh, p, ncomp, (long long)v.nelem, atomic_serial, gather_serial, gather_atomic,
           fabs(lhs - rhs) / mag, tensor_i, tensor_r);
    for (int k = 0; k < 2; k++) free(uq[k]), free(duq[k]);
    for (int k = 0; k < 4; k++) free(r[k]);
    free(u), free(s), free(f), free(r0), free(evec);
    tables_destroy(&t);
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: %s MESH.geo REFINE P...\n", argv[0]), 2;
    Device dev[3];
    CHECK_OK(cpu_device_create(&dev[0], 1, ASSEMBLE_ATOMIC));
    CHECK_OK(cpu_device_create(&dev[1], 2, ASSEMBLE_ATOMIC));
    CHECK_OK(cpu_device_create(&dev[2], 2, ASSEMBLE_GATHER));
    Mesh m;
    MeshReadOptions mo = {.order = 1, .refine = atoi(argv[2])};
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    for (int i = 3; i < argc; i++) {
        Space sp;
        CHECK_OK(space_create(&m, atoi(argv[i]), 1, &sp));
        for (int b = 0; b < m.ncell_blocks; b++) {
            check_block(dev, &sp, b, 1);
            check_block(dev, &sp, b, 3);
        }
        space_destroy(&sp);
    }
    mesh_destroy(&m);
    for (int k = 0; k < 3; k++) device_destroy(&dev[k]);
    return test_result("test_kernels");
}
