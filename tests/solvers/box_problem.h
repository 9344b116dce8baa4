/* Assembled test matrices for the coarse solvers: first-order (trilinear) hexahedra on a structured box, the
 * kind of matrix the order-1 multigrid level assembles, with Dirichlet dofs eliminated by identity rows and
 * zero columns. */
#ifndef FEMTO_TEST_BOX_PROBLEM_H
#define FEMTO_TEST_BOX_PROBLEM_H

#include "fem/solvers/sparse.h"

typedef struct {
    CsrMatrix A;
    double *b;      /* a load on the free dofs, 0 on the fixed ones */
    double *coords; /* [nnodes][3] */
    char *fixed;    /* [ndofs]: 1 on the Dirichlet dofs */
    int64_t nnodes, ndofs, ntriplets;
    int block_size;
    double assemble_seconds, csr_seconds; /* element loop, csr_from_triplets (wall clock) */
    double csr_cpu_seconds;               /* csr_from_triplets, CPU time of all threads */
} BoxProblem;

/* -Laplace(u) = 1 on the unit cube, n^3 elements, u = 0 on all six faces. */
int box_poisson(int n, BoxProblem *p);

/* Linear elasticity of a steel beam 1 x 0.1 x 0.1 m (E = 200 GPa, nu = 0.3), 10n x n x n elements, clamped at
 * x = 0, under its own weight (7850 kg/m^3, g = 9.81 m/s^2, in -z). */
int box_beam(int n, BoxProblem *p);

void box_destroy(BoxProblem *p);

#endif
