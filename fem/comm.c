/* One process: the local sums are the global ones (see comm.h). */
#include "comm.h"

#include "error.h"

int comm_sum(double *v, int n) {
    (void)v, (void)n;
    return FEM_OK;
}
