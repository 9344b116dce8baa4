/* The elasticity step of `femto-app run` (filled in with the elasticity physics). */
#include "run.h"

#include "fem/error.h"

int run_elasticity(Run *r, int check_only) {
    (void)check_only;
    return fem_fail(FEM_ERR_INPUT, "%s: elasticity is not available yet", r->pb.path);
}
