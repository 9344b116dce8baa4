/* The communicator (see comm.h). MPI's own state is process-wide, so the only state kept here is whether this
 * module started MPI and must therefore finalise it. */
#include "comm.h"

#include "error.h"

#ifdef FEMTO_HAVE_MPI
#include <mpi.h>
#include <stdlib.h>

static void finalize_at_exit(void) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

int comm_ensure_init(void) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return FEM_OK;
    /* Open MPI, started without mpirun: no notes about unused network components, and no helper daemon
     * (orted) behind the process, which starts faster and needs only the libraries. A user's own setting
     * wins. */
    setenv("OMPI_MCA_btl_base_warn_component_unused", "0", 0);
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK"))
        setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "MPI could not be initialised (MPI_Init_thread failed)");
    /* Errors are values here too: MPI reports them instead of aborting the process. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    atexit(finalize_at_exit);
    return FEM_OK;
}

int comm_sum(double *v, int n) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized || n <= 0 || comm_size() == 1) return FEM_OK;
    if (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fem_fail(FEM_ERR_INTERNAL, "a global sum over %d MPI ranks failed", comm_size());
    return FEM_OK;
}

int comm_rank(void) {
    int initialized = 0, rank = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int comm_size(void) {
    int initialized = 0, size = 1;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

#else /* built without MPI: one process */

int comm_ensure_init(void) {
    return FEM_OK;
}
int comm_sum(double *v, int n) {
    (void)v, (void)n;
    return FEM_OK;
}
int comm_rank(void) {
    return 0;
}
int comm_size(void) {
    return 1;
}

#endif
