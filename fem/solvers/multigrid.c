/* p-multigrid preconditioning (see multigrid.h). */
#include "pc.h"

#include "fem/error.h"

static int mg_setup(Pc *pc, LinOp A, Operator *op) {
    (void)pc, (void)A, (void)op;
    return fem_fail(FEM_ERR_INTERNAL, "multigrid is not built yet");
}
static int mg_apply(Pc *pc, const Vec *r, Vec *z) {
    (void)pc, (void)r, (void)z;
    return fem_fail(FEM_ERR_INTERNAL, "multigrid is not built yet");
}
const PcOps multigrid_ops = {"multigrid", mg_setup, mg_apply, NULL, NULL};
