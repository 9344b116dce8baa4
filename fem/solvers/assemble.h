/* An operator's Jacobian assembled into a sparse matrix (the coarsest multigrid level): element matrices
 * from the operator's table (OperatorOps.element_matrices, at the state of its last residual), summed into a
 * CSR matrix on the host, with constrained dofs eliminated as the operator eliminates them (identity rows
 * and zero columns, so the matrix keeps the physics' symmetry). */
#ifndef FEMTO_ASSEMBLE_H
#define FEMTO_ASSEMBLE_H

#include "fem/operator.h"
#include "sparse.h"

FEM_EXTERN_C_BEGIN

int op_assemble(Operator *op, CsrMatrix *A);

/* op_assemble in two steps, for a caller that hands the pattern to a solver's analysis before the values are
 * known: op_assembly_pattern makes A's rows and columns (values zero) from the element connectivity and the
 * constrained dofs, and the plan that op_assembly_values fills A's values with (the same matrix, bitwise, as
 * op_assemble's), as often as op's state changes; op_assembly_destroy frees the plan (A is the caller's). */
typedef struct OpAssembly OpAssembly;
int op_assembly_pattern(Operator *op, CsrMatrix *A, OpAssembly **plan);
int op_assembly_values(Operator *op, OpAssembly *plan, CsrMatrix *A);
void op_assembly_destroy(OpAssembly **plan);

FEM_EXTERN_C_END

#endif
