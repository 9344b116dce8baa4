/* PNG line plots with PLplot, drawn in a child process (see plot.h). */
#include "plot.h"

#include "fem/error.h"
#include "io/child.h"
#include "io/fileutil.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
