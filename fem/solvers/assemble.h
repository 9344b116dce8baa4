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

FEM_EXTERN_C_END

#endif
