/* Signal handlers that remove a run's staging folder: see interrupt.h.
 *
 * The state says who owns the staging folder:
 *   IDLE     no folder is guarded: a signal ends the process as if there were no handler;
 *   STAGED   the run is writing into it: the first handler to claim it (STAGED -> BUSY) removes it;
 *   BUSY     the main thread is committing or removing it, or a handler is removing it: a signal waits.
 * The claim is a compare-and-swap on a lock-free atomic, which is async-signal-safe, so whichever thread a
 * signal lands on, exactly one party touches the folder. Everything a handler calls is async-signal-safe
 * (write, unlinkat, rmdir, the getdents64 system call, sigaction, sigprocmask, raise). */
#include "interrupt.h"

#include "fileutil.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { IDLE, STAGED, BUSY };

/* a lock-free atomic is what makes the compare-and-swap safe inside a signal handler */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "io/interrupt.c needs lock-free atomic ints");

static struct {
    atomic_int state;
    atomic_int pending; /* a signal that arrived while BUSY */
    int fd;
    char path[FILEUTIL_PATH_MAX];
    char program[64];
} guard;

static const int guarded_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void say(const char *s) {
    (void)!write(STDERR_FILENO, s, strlen(s));
}

/* Ends the process with `sig` as if it had not been caught (the shell then reports the signal). */
static void die_by(int sig) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached */
}

static void on_signal(int sig) {
    int expected = STAGED;
    if (atomic_compare_exchange_strong(&guard.state, &expected, BUSY)) {
        fileutil_remove_flat_dir(guard.path, guard.fd);
        say(guard.program);
        say(sig == SIGINT    ? ": interrupted (SIGINT)"
            : sig == SIGTERM ? ": terminated (SIGTERM)"
                             : ": hangup (SIGHUP)");
        say(": this run's results were discarded; the results folder holds what it held before\n");
    } else if (expected == BUSY) {
        atomic_store(&guard.pending, sig); /* the owner delivers it when done, */
        if (atomic_load(&guard.state) != IDLE) return;
        /* unless it was done already and did not see it: deliver it here */
    }
    die_by(sig);
}

void interrupt_install(const char *program) {
    snprintf(guard.program, sizeof guard.program, "%s", program);
    for (size_t i = 0; i < sizeof guarded_signals / sizeof guarded_signals[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(guarded_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART; /* a signal that waits must not fail the system calls it interrupted */
        sigemptyset(&sa.sa_mask);
        sigaction(guarded_signals[i], &sa, NULL);
    }
}

int interrupt_guard(const char *path, int fd) {
    if (atomic_load(&guard.state) != IDLE || strlen(path) >= sizeof guard.path) return 0;
    strcpy(guard.path, path);
    guard.fd = fd;
    atomic_store(&guard.pending, 0);
    atomic_store(&guard.state, STAGED); /* publishes path and fd to the handler */
    return 1;
}

void interrupt_hold(void) {
    int expected = STAGED;
    if (!atomic_compare_exchange_strong(&guard.state, &expected, BUSY))
        for (;;) pause(); /* a handler owns the folder and is ending the process */
}

void interrupt_release(void) {
    guard.fd = -1;
    atomic_store(&guard.state, IDLE);
    int sig = atomic_load(&guard.pending);
    if (sig) die_by(sig);
}
