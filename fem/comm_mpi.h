/* The MPI communicator of a run, for the libraries that take one (hypre's BoomerAMG): the one place outside
 * comm.c that names it, so that a run on a sub-communicator changes only comm.c. Only for code built with MPI
 * (FEMTO_HAVE_MPI); it includes <mpi.h>, which comm.h keeps away from every other file (the CUDA ones too).
 */
#ifndef FEMTO_COMM_MPI_H
#define FEMTO_COMM_MPI_H

#include "comm.h"

#ifdef FEMTO_HAVE_MPI
#include <mpi.h>

/* Every rank of the run: MPI_COMM_WORLD today. */
MPI_Comm comm_world(void);
/* This process alone (a one-process solve inside a run of several ranks). */
MPI_Comm comm_self(void);
#endif

#endif
