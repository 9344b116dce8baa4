/* A forked child that runs a library femto does not trust with its own process (Gmsh reading a mesh,
 * PLplot drawing a plot): such a library may crash, call exit() or print to the terminal. */
#ifndef FEMTO_CHILD_H
#define FEMTO_CHILD_H

#include <sys/types.h>

/* In the child, first: dies with the parent, default signal handling (the parent's handlers, which remove
 * the run's staging folder, must not run here), no blocked signals, stdin/stdout/stderr on /dev/null, glibc's
 * fatal messages there too, and no core file. Ends the child (_exit) when the parent is already gone. */
void child_begin(pid_t parent);

#endif
