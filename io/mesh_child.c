/* The reading child: Gmsh reads the .msh (or meshes the .geo) in a forked process, so that a crash inside
 * Gmsh, an allocation without end or an endless loop on a corrupt file ends the child, not femto.
 *
 * The child sets its limits (address space and no core file), sends Gmsh's output and glibc's fatal
 * messages to /dev/null, runs mesh_gmsh_read, writes the mesh as one record (mesh_blob.c) into a memfd the
 * parent made, and reports on a pipe: an estimate record for a .geo (which moves the time limit), then a
 * result record (status, record size, message). The parent waits on the pipe with a deadline, kills the
 * child when it passes, and reads the record back. Only a result record counts as success: a child that
 * dies, is killed or exits before sending one gives one sentence naming the file. The record is checked
 * before use (mesh_blob_read), since a child whose heap Gmsh damaged may still report success. */
#define _GNU_SOURCE /* memfd_create, pipe2 */
#include "mesh_internal.h"

#include "child.h"

#include "fem/error.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RECORD_ESTIMATE = 'E', RECORD_RESULT = 'R', MESSAGE_MAX = 1 << 20 };

/* One report on the pipe, followed by msg_bytes of message (result records only). */
typedef struct {
    int32_t type, status;
    double value; /* estimate: cells; result: 1 when the child came close to its memory limit */
    int64_t blob_bytes;
    int32_t msg_bytes, pad;
} ChildRecord;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The limits for one file: opt's when given, else generous ones a sound file never reaches. */
typedef struct {
    double seconds;      /* < 0: none */
    double budget;       /* bytes of address space on top of what the process had at fork */
    int seconds_by_size; /* 1: seconds follows a .geo's estimate */
} Limits;

/* Gmsh parses an ASCII .msh at 30 MB/s or more here, a binary one several times faster; 1 s per MB leaves a
 * wide margin for slow disks. A .geo gets 10 minutes to build its geometry and mesh its curves, then 200 µs
 * per estimated cell (Gmsh's serial Delaunay makes about 60,000 tetrahedra a second; HXT is faster); with
 * --force the user takes the risk, and there is no limit. Memory: a .msh needs a few times its size in Gmsh
 * (a binary 1M-cell file, 44 MB, peaks at 0.2 GB), so 2 GiB + 32 x its size; a .geo may use 90% of the
 * machine (its size estimate was checked first). */
static Limits default_limits(const MeshFileInfo *f, const MeshReadOptions *opt) {
    double machine = mesh_machine_memory();
    Limits l = {f->geo ? 600.0 : 20.0 + (double)f->bytes / 1e6,
                f->geo ? 0.9 * machine : fmin(machine, 2147483648.0 + 32.0 * (double)f->bytes), f->geo};
    if (f->geo && opt && opt->force) l.seconds = -1, l.seconds_by_size = 0;
    if (opt && opt->time_limit != 0) l.seconds = opt->time_limit, l.seconds_by_size = 0;
    if (opt && opt->memory_limit > 0) l.budget = opt->memory_limit;
    return l;
}

/* ---- the child */

static void send_all(int fd, const void *data, size_t bytes) {
    const char *p = data;
    while (bytes > 0) {
        ssize_t n = write(fd, p, bytes);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(3);
        p += n;
        bytes -= (size_t)n;
    }
}

static void send_estimate(double cells, void *ctx) {
    ChildRecord r = {RECORD_ESTIMATE, 0, cells, 0, 0, 0};
    send_all(*(int *)ctx, &r, sizeof r);
}

/* Bytes of address space in use (from /proc/self/statm; 0 when unknown) and the peak so far (VmPeak). */
static double address_space(int peak) {
    FILE *f = fopen(peak ? "/proc/self/status" : "/proc/self/statm", "r");
    double v = 0;
    char line[256];
    if (f && !peak && fscanf(f, "%lf", &v) == 1) v *= (double)sysconf(_SC_PAGESIZE);
    while (f && peak && fgets(line, sizeof line, f))
        if (sscanf(line, "VmPeak: %lf kB", &v) == 1) v *= 1024.0;
    if (f) fclose(f);
    return v;
}

/* A clean process for Gmsh: default signal handling (the parent's handlers must not run here), nothing on
 * the terminal, no core file, the memory limit, and death with the parent. */
static double child_setup(pid_t parent, double budget) {
    child_begin(parent);
    double limit = address_space(0) + budget;
    if (limit < 9e18) {
        struct rlimit as = {(rlim_t)limit, (rlim_t)limit};
        setrlimit(RLIMIT_AS, &as);
    }
    return limit;
}

static void child_main(pid_t parent, const char *path, const MeshFileInfo *file, const MeshReadOptions *opt,
                       double budget, int status_fd, int data_fd) {
    double limit = child_setup(parent, budget);
    Mesh m;
    MeshGmshHooks hooks = {send_estimate, &status_fd, 1};
    int status = mesh_gmsh_read(path, file->geo, opt, &hooks, &m);
    if (!status && mesh_blob_write(data_fd, &m, 0, 0))
        status = fem_fail(FEM_ERR_INTERNAL, "cannot hand the mesh of '%s' back to femto: %s", path,
                          fem_last_error());
    off_t bytes = status ? 0 : lseek(data_fd, 0, SEEK_CUR);
    const char *msg = status ? fem_last_error() : "";
    size_t n = strnlen(msg, MESSAGE_MAX - 1);
    ChildRecord r = {RECORD_RESULT, status, address_space(1) > limit - 268435456.0, bytes, (int32_t)n, 0};
    send_all(status_fd, &r, sizeof r);
    send_all(status_fd, msg, n);
    _exit(0); /* no atexit handlers, no stdio flush, no Gmsh finalisation: the kernel frees it all */
}

/* ---- the parent */

typedef struct {
    int got_result, status, near_limit;
    int64_t blob_bytes;
    char *msg;
} ChildReport;

/* Takes the complete records at the start of buf[0..*n) and drops them from it. */
static void take_records(char *buf, size_t *n, ChildReport *rep, Limits *lim, double *estimate) {
    size_t used = 0;
    ChildRecord r;
    while (*n - used >= sizeof r) {
        memcpy(&r, buf + used, sizeof r);
        size_t msg = r.msg_bytes > 0 && r.msg_bytes < MESSAGE_MAX ? (size_t)r.msg_bytes : 0;
        if (*n - used < sizeof r + msg) break;
        if (r.type == RECORD_ESTIMATE) {
            *estimate = r.value;
            if (lim->seconds_by_size && r.value > 0) lim->seconds += 200e-6 * r.value;
        } else if (r.type == RECORD_RESULT && !rep->got_result) {
            rep->got_result = 1;
            rep->status = r.status;
            rep->near_limit = r.value != 0;
            rep->blob_bytes = r.blob_bytes;
            rep->msg = strndup(buf + used + sizeof r, msg);
        }
        used += sizeof r + msg;
    }
    memmove(buf, buf + used, *n - used);
    *n -= used;
}

/* Reads reports until the child closes the pipe (1) or the deadline passes (0). */
static int wait_reports(int fd, double start, Limits *lim, ChildReport *rep, double *estimate) {
    size_t cap = sizeof(ChildRecord) + MESSAGE_MAX, n = 0;
    char *buf = malloc(cap);
    int closed = 0;
    while (buf && !closed) {
        double left = lim->seconds < 0 ? 1e9 : start + lim->seconds - now();
        if (left <= 0) break;
        struct pollfd p = {fd, POLLIN, 0};
        int ready = poll(&p, 1, (int)fmin(left * 1000.0 + 1.0, 3600e3));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            closed = 1;
        else
            n += (size_t)got;
        take_records(buf, &n, rep, lim, estimate);
        if (n == cap) closed = 1; /* a child that sends nonsense is as good as gone */
    }
    free(buf);
    return closed;
}

/* How a sentence names the signals a crashing library dies of; NULL for others. */
static const char *signal_name(int sig) {
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGSEGV, "segmentation fault"},
                 {SIGABRT, "abort"},
                 {SIGBUS, "bus error"},
                 {SIGFPE, "arithmetic error"},
                 {SIGILL, "illegal instruction"},
                 {SIGKILL, "killed"},
                 {SIGINT, "interrupt"},
                 {SIGTERM, "terminated"},
                 {SIGHUP, "hang-up"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    return NULL;
}

/* The one sentence for a child that failed, with `what` completing "the Gmsh library ...". */
static int child_fail(const char *path, int geo, const char *what, int memory) {
    if (geo)
        return fem_fail(FEM_ERR_INPUT,
                        "the Gmsh script '%s' could not be meshed: the Gmsh library %s while meshing it; %s",
                        path, what,
                        memory ? "use a larger mesh size"
                               : "check the script's geometry, or try another mesh size or 3D algorithm");
    return fem_fail(FEM_ERR_INPUT,
                    "mesh file '%s' could not be read: the Gmsh library %s while reading it; the file is "
                    "corrupt or not a Gmsh mesh",
                    path, what);
}

/* What became of a child that sent no result (or a failed one), as one sentence. */
static int judge(const char *path, const MeshFileInfo *file, const Limits *lim, int closed, int wstatus,
                 const ChildReport *rep) {
    char what[256];
    int memory = 0;
    if (!closed) {
        snprintf(what, sizeof what, "ran past its time limit of %.0f s%s", lim->seconds,
                 file->geo && lim->seconds_by_size ? " (--force lifts it)" : "");
    } else if (rep->got_result && rep->status && rep->near_limit) {
        snprintf(what, sizeof what, "ran out of its memory limit of %.2g GB", lim->budget / 1e9);
        memory = 1;
    } else if (rep->got_result && rep->status) {
        return fem_fail(rep->status, "%s", rep->msg && rep->msg[0] ? rep->msg : "the mesh could not be read");
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
            return fem_fail(FEM_ERR_INPUT, "reading mesh file '%s' was interrupted (%s)", path,
                            signal_name(sig));
        if (sig == SIGKILL)
            snprintf(what, sizeof what, "was killed (by the system: out of memory?)");
        else if (signal_name(sig))
            snprintf(what, sizeof what, "crashed (%s)", signal_name(sig));
        else
            snprintf(what, sizeof what, "crashed (signal %d)", sig);
    } else {
        snprintf(what, sizeof what, "stopped (exit code %d)", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    }
    return child_fail(path, file->geo, what, memory);
}

/* Reads the child's record from the memfd into m. */
static int take_mesh(const char *path, const MeshFileInfo *file, int data_fd, int64_t bytes, Mesh *m) {
    struct stat st;
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", path);
    int status = fstat(data_fd, &st) != 0 || st.st_size < bytes || lseek(data_fd, 0, SEEK_SET) != 0
                     ? fem_fail(FEM_ERR_INPUT, "its record is truncated")
                     : mesh_blob_read(data_fd, bytes, m);
    if (!status) return FEM_OK;
    char what[512];
    snprintf(what, sizeof what, "returned a mesh that does not hold together (%s)", fem_last_error());
    return child_fail(path, file->geo, what, 0);
}

int mesh_child_read(const char *path, const MeshFileInfo *file, const MeshReadOptions *opt, Mesh *m,
                    double *estimate) {
    Limits lim = default_limits(file, opt);
    int pipefd[2] = {-1, -1}, data_fd = memfd_create("femto-mesh", MFD_CLOEXEC);
    if (data_fd < 0 || pipe2(pipefd, O_CLOEXEC) != 0) {
        int err = errno;
        if (data_fd >= 0) close(data_fd);
        return fem_fail(FEM_ERR_INTERNAL, "cannot start the mesh reader process: %s", strerror(err));
    }
    double start = now();
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        child_main(parent, path, file, opt, lim.budget, pipefd[1], data_fd);
    }
    int err = errno;
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        close(data_fd);
        return fem_fail(FEM_ERR_INTERNAL, "cannot start the mesh reader process: %s", strerror(err));
    }
    ChildReport rep = {0, 0, 0, 0, NULL};
    int closed = wait_reports(pipefd[0], start, &lim, &rep, estimate), wstatus = 0, status;
    close(pipefd[0]);
    if (rep.got_result && rep.status == FEM_OK) {
        status = take_mesh(path, file, data_fd, rep.blob_bytes, m);
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
    } else {
        if (!closed) kill(pid, SIGKILL);
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
        status = judge(path, file, &lim, closed, wstatus, &rep);
    }
    close(data_fd);
    free(rep.msg);
    return status;
}
