/* What an interruption does to a run that is writing results.
 *
 * SIGINT (Ctrl-C), SIGTERM and SIGHUP end a run at once, as they always did, but first remove the staging
 * folder of the result set being written (io/resultset.h), so that the results folder keeps the previous
 * run's files exactly as they were and holds no half-written ones. One line on stderr says so. A signal that
 * arrives while a set is being moved into place waits for the move (milliseconds) and then ends the
 * process: the set is complete by then. SIGKILL cannot be caught; the next run into the folder removes what
 * a killed run left (resultset_begin).
 *
 * The handler must find the staging folder without asking anyone, so this module keeps the one piece of
 * process-wide state a handler needs: the folder of the set now being written and who may touch it (an
 * atomic state, so that a handler running on an OpenMP or CUDA thread and the main thread never both do).
 * One set at a time is guarded; a second one (tests) is simply not cleaned up on a signal. */
#ifndef FEMTO_INTERRUPT_H
#define FEMTO_INTERRUPT_H

/* Installs the handlers (app/main.c, once); `program` starts the line printed on an interruption. A signal
 * the process inherited as ignored (nohup) stays ignored. */
void interrupt_install(const char *program);

/* From here on a signal removes the directory `path` (open as `fd`, -1 if not) before ending the process.
 * Returns 1 when this set is guarded, 0 when another one already is. */
int interrupt_guard(const char *path, int fd);
/* The caller of a successful interrupt_guard is about to move or remove the folder itself: signals wait until
 * interrupt_release. Does not return while a handler on another thread is removing the folder (that handler
 * ends the process). */
void interrupt_hold(void);
/* The folder is no longer guarded; a signal that waited is delivered now (it ends the process). */
void interrupt_release(void);

#endif
