/* PNG line plots with PLplot, drawn in a child process (see plot.h). */
#include "plot.h"

#include "fem/error.h"
#include "io/child.h"
#include "io/fileutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifdef FEMTO_HAVE_PLPLOT
#include <plplot.h>

int plot_available(void) {
    return 1;
}

/* The range of the curves' finite values (positive ones on a log axis, as log10), widened when flat. */
static void y_range(const PlotSpec *p, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int c = 0; c < p->ncurves; c++)
        for (int i = 0; i < p->npoints; i++) {
            double v = p->y[c][i];
            if (p->logy) v = v > 0 ? log10(v) : NAN;
            if (isfinite(v)) *lo = fmin(*lo, v), *hi = fmax(*hi, v);
        }
    if (!(*lo <= *hi)) *lo = 0.0, *hi = 1.0;
    double pad = *hi > *lo ? 0.05 * (*hi - *lo) : fmax(0.05 * fabs(*hi), p->logy ? 0.5 : 1e-12);
    *lo -= pad;
    *hi += pad;
}

/* White background, black frame, then distinct colours for the curves (cmap0 entries 2 on). */
static void palette(void) {
    static const PLINT r[] = {255, 0, 31, 214, 44, 255, 148, 140, 227, 127, 188, 23, 0};
    static const PLINT g[] = {255, 0, 119, 39, 160, 127, 103, 86, 119, 127, 189, 190, 0};
    static const PLINT b[] = {255, 0, 180, 40, 44, 14, 189, 75, 194, 127, 34, 207, 128};
    plscmap0(r, g, b, (PLINT)(sizeof r / sizeof r[0]));
}

static void legend(const PlotSpec *p) {
    int n = p->ncurves < PLOT_MAX_CURVES ? p->ncurves : PLOT_MAX_CURVES;
    PLINT opt[PLOT_MAX_CURVES], col[PLOT_MAX_CURVES], style[PLOT_MAX_CURVES];
    PLFLT width[PLOT_MAX_CURVES], w, h;
    for (int c = 0; c < n; c++) opt[c] = PL_LEGEND_LINE, col[c] = 2 + c % 11, style[c] = 1, width[c] = 2.0;
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_RIGHT | PL_POSITION_TOP, 0.02,
             0.02, 0.08, 0, 1, 1, 0, 0, n, opt, 1.0, 0.8, 2.0, 0.0, col, p->legend, NULL, NULL, NULL, NULL,
             col, style, width, NULL, NULL, NULL, NULL);
}

/* In the child: the whole plot into file `tmp`. */
static int draw(const char *tmp, const PlotSpec *p) {
    plsdev("pngcairo");
    plsfnam(tmp);
    plspage(0.0, 0.0, p->width, p->height, 0, 0);
    palette();
    plinit();
    pladv(0);
    plvsta();
    double xlo = p->x[0], xhi = p->x[p->npoints - 1], ylo, yhi;
    if (!(xhi > xlo)) xlo -= 0.5, xhi += 0.5;
    y_range(p, &ylo, &yhi);
    plwind(xlo, xhi, ylo, yhi);
    plcol0(1);
    plbox("bcnstg", 0.0, 0, p->logy ? "bcnstvgl" : "bcnstvg", 0.0, 0);
    pllab(p->xlabel, p->ylabel, p->title);
    double *y = malloc(sizeof(double) * (size_t)p->npoints);
    if (!y) return 1;
    for (int c = 0; c < p->ncurves; c++) {
        for (int i = 0; i < p->npoints; i++)
            y[i] = p->logy ? (p->y[c][i] > 0 ? log10(p->y[c][i]) : ylo) : p->y[c][i];
        plcol0(2 + c % 11);
        plwidth(2.0);
        if (p->npoints > 1) plline(p->npoints, p->x, y);
        plstring(p->npoints, p->x, y, "#(728)"); /* a dot at every value: a single value shows too */
    }
    free(y);
    if (p->ncurves > 1 && p->legend) legend(p);
    plend();
    return 0;
}
#else
int plot_available(void) {
    return 0;
}

static int draw(const char *tmp, const PlotSpec *p) {
    (void)tmp;
    (void)p;
    return 1;
}
#endif

/* Waits for the child; 1 when it drew the plot. */
static int child_ok(pid_t pid) {
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return 0;
    return WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

/* ---------------------------------------------------------------- the drawing program (plot_use_helper) */

static char helper[FILEUTIL_PATH_MAX]; /* the program started to draw, or "" to fork */

void plot_use_helper(const char *exe) {
    snprintf(helper, sizeof helper, "%s", exe ? exe : "");
}

/* A request, as the helper reads it from its stdin: "FPL1", the image's temporary path and the spec, written
 * into a memory stream (open_memstream). */
static void put_int(FILE *f, int v) {
    int32_t w = v;
    fwrite(&w, sizeof w, 1, f);
}

static void put_str(FILE *f, const char *str) {
    int len = str ? (int)strlen(str) : -1;
    put_int(f, len);
    if (len > 0) fwrite(str, 1, (size_t)len, f);
}

static void request(FILE *f, const char *tmp, const PlotSpec *p) {
    fwrite("FPL1", 1, 4, f);
    put_str(f, tmp);
    int ints[] = {p->logy, p->width, p->height, p->npoints, p->ncurves, p->legend != NULL};
    for (int i = 0; i < 6; i++) put_int(f, ints[i]);
    const char *text[] = {p->title, p->xlabel, p->ylabel};
    for (int i = 0; i < 3; i++) put_str(f, text[i]);
    fwrite(p->x, sizeof(double), (size_t)p->npoints, f);
    for (int c = 0; c < p->ncurves; c++) fwrite(p->y[c], sizeof(double), (size_t)p->npoints, f);
    for (int c = 0; c < p->ncurves && p->legend; c++) put_str(f, p->legend[c]);
}

/* Reading a request back: each take fails (NULL) past its end. */
typedef struct {
    const char *p;
    size_t n, at;
} Reader;

static const void *take(Reader *r, size_t n) {
    if (r->at + n > r->n) return NULL;
    r->at += n;
    return r->p + r->at - n;
}

static int take_int(Reader *r, int *v) {
    const void *q = take(r, sizeof(int32_t));
    int32_t w = 0;
    if (q) memcpy(&w, q, sizeof w);
    *v = w;
    return q != NULL;
}

/* A string of the request, copied (NULL for a NULL string); 0 when the request ends first. */
static int take_str(Reader *r, char **out) {
    int len;
    *out = NULL;
    if (!take_int(r, &len)) return 0;
    if (len < 0) return 1;
    const char *q = take(r, (size_t)len);
    if (!q || !(*out = malloc((size_t)len + 1))) return 0;
    memcpy(*out, q, (size_t)len);
    (*out)[len] = 0;
    return 1;
}

/* The helper's side: the request from fd 0, then the plot drawn into its temporary path. Exit status 0 when
 * drawn. Whatever it allocates goes with the process. */
int plot_helper_main(int argc, char **argv) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    pid_t parent = argc > 2 ? (pid_t)atol(argv[2]) : 0;
    if (!parent || getppid() != parent) return 3;
    char *data = NULL, chunk[65536];
    size_t bytes = 0;
    FILE *in = open_memstream(&data, &bytes);
    while (in) {
        ssize_t k = read(0, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        fwrite(chunk, 1, (size_t)k, in);
    }
    int failed = !in || ferror(in);
    if (in) fclose(in); /* data and bytes are final now */
    child_begin(parent); /* from here as a forked child: default signals, /dev/null, no core */
    alarm(60);
    Reader r = {data, bytes, 0};
    PlotSpec p = {0};
    char *tmp = NULL, *text[3] = {NULL};
    int has_legend = 0;
    int *ints[] = {&p.logy, &p.width, &p.height, &p.npoints, &p.ncurves, &has_legend};
    int ok = !failed && bytes >= 4 && memcmp(data, "FPL1", 4) == 0 && take(&r, 4) && take_str(&r, &tmp) && tmp;
    for (int i = 0; i < 6 && ok; i++) ok = take_int(&r, ints[i]);
    for (int i = 0; i < 3 && ok; i++) ok = take_str(&r, &text[i]);
    ok = ok && p.npoints > 0 && p.ncurves >= 0 && p.ncurves <= 4096;
    double **y = ok ? calloc((size_t)p.ncurves + 1, sizeof *y) : NULL;
    char **legend = ok && has_legend ? calloc((size_t)p.ncurves + 1, sizeof *legend) : NULL;
    const double *x = ok ? take(&r, sizeof(double) * (size_t)p.npoints) : NULL;
    ok = ok && y && x && (legend || !has_legend);
    double *xs = ok ? malloc(sizeof(double) * (size_t)p.npoints) : NULL; /* aligned copies of the values */
    ok = ok && xs;
    if (ok) memcpy(xs, x, sizeof(double) * (size_t)p.npoints);
    for (int c = 0; c < p.ncurves && ok; c++) {
        const void *q = take(&r, sizeof(double) * (size_t)p.npoints);
        ok = q && (y[c] = malloc(sizeof(double) * (size_t)p.npoints));
        if (ok) memcpy(y[c], q, sizeof(double) * (size_t)p.npoints);
    }
    for (int c = 0; c < p.ncurves && ok && legend; c++) ok = take_str(&r, &legend[c]);
    if (!ok) return 4;
    p.title = text[0], p.xlabel = text[1], p.ylabel = text[2];
    p.x = xs;
    p.y = (const double *const *)y;
    p.legend = (const char *const *)legend;
    return draw(tmp, &p);
}

/* Starts the helper on a request for this plot; -1 when it cannot (the caller forks instead). */
static pid_t spawn_helper(const char *tmp, const PlotSpec *p) {
    char *req = NULL;
    size_t bytes = 0;
    FILE *f = open_memstream(&req, &bytes);
    if (f) request(f, tmp, p);
    int failed = !f || ferror(f);
    if (f) fclose(f); /* req and bytes are final now */
    int sv[2] = {-1, -1};
    pid_t pid = -1;
    if (failed || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        free(req);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    sigset_t all, none;
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    char parent[24], command[] = PLOT_HELPER_COMMAND;
    snprintf(parent, sizeof parent, "%ld", (long)getpid());
    char *args[] = {helper, command, parent, NULL};
    int rc = posix_spawn(&pid, helper, &fa, &at, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(sv[1]);
    for (size_t sent = 0; rc == 0 && sent < bytes;) { /* MSG_NOSIGNAL: a helper gone is an error, not SIGPIPE */
        ssize_t k = send(sv[0], req + sent, bytes - sent, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            kill(pid, SIGKILL);
            child_ok(pid);
            rc = -1;
        } else {
            sent += (size_t)k;
        }
    }
    close(sv[0]);
    free(req);
    return rc == 0 ? pid : -1;
}

int plot_png_start(const char *path, const PlotSpec *p, PlotJob *job) {
    char shown[FILEUTIL_PATH_MAX];
    memset(job, 0, sizeof *job);
    fileutil_shown_path(path, shown, sizeof shown);
    if (!plot_available() || p->npoints < 1)
        return fem_fail(FEM_ERR_INPUT, "cannot draw '%s': %s", shown,
                        plot_available() ? "there is nothing to plot" : "femto was built without PLplot");
    if (strlen(path) >= sizeof job->path) return fem_fail(FEM_ERR_INPUT, "cannot draw '%s': the path is too long", shown);
    FEM_TRY(fileutil_temp_name(path, job->tmp, sizeof job->tmp));
    strcpy(job->path, path);
    if (helper[0] && (job->pid = spawn_helper(job->tmp, p)) > 0) return job->helper = 1, FEM_OK;
    job->pid = 0;
    fflush(NULL); /* the child's copy of stdio buffers must not be written twice */
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) return fem_fail(FEM_ERR_INPUT, "cannot draw '%s': %s", shown, strerror(errno));
    if (pid == 0) {
        child_begin(parent);
        alarm(60); /* a plot takes milliseconds; a child that hangs must not hold the run */
        _exit(draw(job->tmp, p));
    }
    job->pid = pid;
    return FEM_OK;
}

int plot_png_finish(PlotJob *job) {
    if (job->pid <= 0) return FEM_OK;
    int ok = child_ok(job->pid);
    job->pid = 0;
    if (!ok || access(job->tmp, F_OK) != 0) {
        char shown[FILEUTIL_PATH_MAX];
        fileutil_shown_path(job->path, shown, sizeof shown);
        unlink(job->tmp);
        return fem_fail(FEM_ERR_INPUT,
                        "cannot draw '%s': PLplot failed (is its cairo driver, Debian's "
                        "plplot-driver-cairo, installed?)",
                        shown);
    }
    return fileutil_publish(job->tmp, job->path);
}

void plot_png_abandon(PlotJob *job) {
    if (job->pid <= 0) return;
    kill(job->pid, SIGKILL);
    child_ok(job->pid);
    unlink(job->tmp);
    job->pid = 0;
}
