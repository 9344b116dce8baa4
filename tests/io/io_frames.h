/* Synthetic output frames for the io tests, built from known functions so that a reader can check every
 * value.
 *
 * A frame holds blocks of cells; cell c of block b has its own points, at the equispaced lattice of its order
 * (lattice index / p) mapped through io_test_map and shifted by (3c, 3b, 0). The cell lists its points in VTK
 * order through vtk_node_order, so a wrong permutation shows up as a wrong curved cell in VTK and ParaView.
 * The same formulas live in io_check.py; both sides evaluate them in the same order of operations, so values
 * agree to the last bit or so. */
#ifndef FEMTO_TEST_IO_FRAMES_H
#define FEMTO_TEST_IO_FRAMES_H

#include "io/output.h"

#include <stdio.h>

typedef struct {
    Shape shape;
    int order;
    int ncells;
} IoBlockSpec;

/* x = F(xi) for a cell of order p: degree p in each variable (total degree p), so a Lagrange cell of order p
 * reproduces it exactly; the 1/p keeps the Jacobian close to the identity at every order. */
void io_test_map(int p, int dim, const double xi[3], double x[3]);

/* The frame: points, blocks, the point arrays "temperature" (scalar), "displacement" (vector) and "stress"
 * (6-tensor) evaluated at time `t`, the cell arrays "region" (block + 1) and "cell_value", and field data.
 * With mesh_only, only "region" and the field data (what h5out_open takes). */
int io_test_frame(OutFrame *f, int dim, int nblocks, const IoBlockSpec *blocks, double t, int mesh_only);

/* Replaces the point and cell data of `f` by their values at time t (for a time series on one mesh). */
void io_test_fill(OutFrame *f, double t);

/* The io unit tests' check: a failed expectation is counted in io_test_failures (the program's exit status)
 * and printed with its place and a printf-style explanation. */
extern int io_test_failures;
#define EXPECT(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            io_test_failures++;                                                                              \
            fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);                              \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
        }                                                                                                    \
    } while (0)

#endif
