/* Helpers for femto's test programs: checks that print what was expected and what came out, and a small
 * driver that solves a Model on a device. */
#ifndef FEMTO_TEST_H
#define FEMTO_TEST_H

#include "cpu/cpu.h"
#include "fem/device.h"
#include "fem/solvers/newton.h"
#include "fem/space.h"
#include "fem/tables.h"
#include "physics/model.h"

#include <stdio.h>
#include <stdlib.h>

extern int test_failures;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            test_failures++;                                                                                 \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
        }                                                                                                    \
    } while (0)

/* Fails the test with the library's message when a femto call fails. */
#define CHECK_OK(call)                                                                                       \
    do {                                                                                                     \
        int check_ok_rc_ = (call);                                                                           \
        if (check_ok_rc_) {                                                                                  \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, check_ok_rc_,     \
                    fem_last_error());                                                                       \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

#define TEST_SKIP 77

/* A Vec of n host doubles p on a (serial) CPU device: for derived results of a solution the test holds on the
 * host (a ring of 8 views: valid until 8 more are made). */
const Vec *test_host_vec(int64_t n, double *p);

/* A Vec view of n doubles of device memory p (for tests that drive an Operator with raw arrays). */
#define TEST_VEC(device_, count_, ptr_) (&(Vec){.dev = (device_), .n = (count_), .nowned = (count_), .data = (ptr_)})

/* Exit status of a test program. */
int test_result(const char *name);

/* Creates a device of this kind (registering the CUDA backend when built in). Returns TEST_SKIP with a line
 * on stdout when a CUDA device was asked for and there is none. */
int test_device(Device *d, DevKind kind, int threads, AssembleKind assembly);

/* The path of a mesh in tests/meshes (FEMTO_TEST_MESHES is set by CMake). */
const char *test_mesh(const char *name);

/* A uniform random number in [0, 1) from a xorshift generator (state: any nonzero seed). */
double test_rand(uint64_t *state);

/* Moves every node that is no cell's corner by the smooth displacement amp * (sin(3y+1) cos(2z),
 * sin(2z+2) cos(3x), sin(3x+3) cos(2y)) (no z component in 2D): second-order cells become curved, and
 * differently curved, while nodes shared by cells stay shared. */
void test_curve_mesh(Mesh *m, double amp);

/* The ElemView (fem/device.h) of cell block b of sp with tables t and ncomp components, pointing at host
 * memory: what a CPU device's kernels read. */
ElemView test_elem_view(const Space *sp, int b, const ElementTables *t, int ncomp);

/* Solves the model with Newton + Krylov on device d, from u (host, ndofs; overwritten with the solution).
 * The Dirichlet values are set from md->dir_values. src: optional per-cell-block q-point sources. */
typedef struct {
    KspType ksp;
    PcType pc;
    double rtol;
    int linear;
    NewtonResult newton;
    int linear_iterations;
} TestSolve;
int test_solve(Device *d, const Space *sp, Model *md, double **src, double *u, TestSolve *ts);

/* The kernels' view of one block of a space on a device, built as fem/operator.c builds it: cell block b
 * (facet 0) or the whole facet block b (facet 1), the space's ncomp components, tables of the given
 * quadrature degree (0: femto's default), dofs and their transpose copied to the device. */
typedef struct {
    Device *dev;
    ElementTables tables; /* host */
    ElemView view;        /* device pointers */
    void *owned[7];
} TestBlock;
int test_block_create(Device *d, const Space *sp, int facet, int b, int qdegree, TestBlock *tb);
void test_block_destroy(TestBlock *tb);

#endif
