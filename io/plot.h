/* Line plots as PNG images, drawn by PLplot's cairo driver: a run's probe values against time and Newton's
 * residual against the iterations (app/run_series.c). PLplot is optional: built without it, plot_available()
 * is 0 and femto writes no images (the summary says so).
 *
 * PLplot draws in a child process (io/child.h): the library keeps global state, prints to the terminal and
 * ends the process on some errors (plexit), none of which may reach femto. The image is written under a
 * temporary name and renamed into place when complete, as every result file. */
#ifndef FEMTO_PLOT_H
#define FEMTO_PLOT_H

#include "io/fileutil.h"

#include <sys/types.h>

enum { PLOT_MAX_CURVES = 12 }; /* curves past this many are drawn without a legend entry */

typedef struct {
    const char *title, *xlabel, *ylabel;
    int logy;          /* logarithmic y axis (values <= 0 are left out) */
    int width, height; /* pixels */
    int npoints, ncurves;
    const double *x;           /* [npoints] */
    const double *const *y;    /* [ncurves][npoints] */
    const char *const *legend; /* [ncurves] */
} PlotSpec;

/* 1 when femto was built with PLplot. */
int plot_available(void);

/* A large process draws through a helper program instead of a forked copy of itself: fork copies the page
 * tables of every gigabyte the process holds, and until the child ends each page the process writes is
 * copied. plot_use_helper(exe) (femto-app: "/proc/self/exe") makes plot_png_start start `exe
 * PLOT_HELPER_COMMAND PID` with posix_spawn and send it the plot on its stdin; the program's main hands that
 * command to plot_helper_main (exit status 0: drawn). Without a helper, or when it cannot be started,
 * plot_png_start forks. The choice is process-wide, set once by a program's main. */
#define PLOT_HELPER_COMMAND "__plot-helper"
void plot_use_helper(const char *exe);
int plot_helper_main(int argc, char **argv);

/* Draws the plot into the PNG file `path`, in two halves so that the caller works while the child draws:
 * start starts the child (p and what it points to may go as soon as start returns); finish waits for it and
 * puts the image in place; abandon (for a run that failed meanwhile) stops the child and leaves nothing. A
 * failure of start or finish (PLplot or its cairo driver missing at run time, a file that cannot be written)
 * is FEM_ERR_INPUT with one sentence naming the file, and nothing is left at path. A job that start did not
 * begin (an error, or a job still zeroed) has pid 0: finish returns FEM_OK for it, abandon does nothing. */
typedef struct {
    pid_t pid;
    int helper; /* the child is the helper program (plot_use_helper), not a fork */
    char path[FILEUTIL_PATH_MAX], tmp[FILEUTIL_PATH_MAX];
} PlotJob;
int plot_png_start(const char *path, const PlotSpec *p, PlotJob *job);
int plot_png_finish(PlotJob *job);
void plot_png_abandon(PlotJob *job);

#endif
