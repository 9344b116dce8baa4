/* The start of a forked child (see child.h). */
#include "child.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

void child_begin(pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(3);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null = open("/dev/null", O_RDWR);
    if (null < 0) _exit(3);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    setenv("LIBC_FATAL_STDERR_", "1", 1); /* glibc's heap-corruption reports: to fd 2, never the tty */
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
}
