/* A physics' time series (run.h): the probes at every output time and Newton's history of every solve,
 * written into the run's result set as NAME_probes.csv and NAME_convergence.csv (NAME_<physics>_... for a
 * coupled run's later physics), each with its PNG plot (io/plot.h) unless <output><plots enabled="false"/>.
 */
#include "run.h"

#include "fem/error.h"
#include "fem/probe.h"
#include "io/fileutil.h"
#include "io/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The convergence table's columns. */
enum {
    CONV_STEP,
    CONV_X,
    CONV_ITERATION,
    CONV_RESIDUAL,
    CONV_LINEAR,
    CONV_SECONDS,
    CONV_ACCEPTED,
    CONV_NCOLS
};

int run_series_open(RunSeries *rs, const Run *r, const PhysicsType *t, const Space *sp) {
    memset(rs, 0, sizeof *rs);
    rs->transient = t->transient(&r->pb);
    rs->field = t->field;
    rs->unit = t->unit;
    const char *xname = rs->transient ? "time" : "load_factor", *xunit = rs->transient ? "s" : "";
    FEM_TRY(series_add_column(&rs->probes, xname, xunit));
    const OutputSettings *o = &r->pb.output;
    for (int i = 0; i < o->nprobes; i++)
        for (int c = 0; c < sp->ncomp; c++) {
            char name[SERIES_LABEL_MAX];
            const char *const *comp = t->components;
            snprintf(name, sizeof name, "%s%s%s@%s", t->field, comp ? "_" : "", comp ? comp[c] : "",
                     o->probes[i].name);
            FEM_TRY(series_add_column(&rs->probes, name, t->unit));
        }
    static const char *const names[CONV_NCOLS] = {
        "step", "", "newton_iteration", "residual_norm", "linear_iterations", "seconds", "accepted"};
    for (int c = 0; c < CONV_NCOLS; c++)
        FEM_TRY(series_add_column(&rs->conv, c == CONV_X ? xname : names[c],
                                  c == CONV_X         ? xunit
                                  : c == CONV_SECONDS ? "s"
                                                      : ""));
    return FEM_OK;
}

void run_series_destroy(RunSeries *rs) {
    for (int k = 0; k < 2; k++) plot_png_abandon(&rs->plots[k]); /* a run that failed before writing them */
    series_destroy(&rs->probes);
    series_destroy(&rs->conv);
}

void run_series_iteration(RunSeries *rs, const NewtonStep *st) {
    double row[CONV_NCOLS] = {NAN, NAN, st->iteration, st->rnorm, st->linear_iterations, st->seconds, NAN};
    if (!rs->status) rs->status = series_add_row(&rs->conv, row);
}

void run_series_solve(RunSeries *rs, const StepReport *s, double x) {
    rs->solves++;
    Series *c = &rs->conv;
    for (int64_t i = rs->pending; i < c->nrows; i++) {
        double *row = &c->v[i * c->ncols];
        row[CONV_STEP] = rs->solves;
        row[CONV_X] = x;
        row[CONV_ACCEPTED] = !s->failed;
    }
    /* Newton reports its iterations, not the residual it started from: that row goes first */
    double first[CONV_NCOLS] = {rs->solves, x, 0, s->newton->rnorm0, 0, 0, !s->failed};
    if (!rs->status) rs->status = series_insert_row(c, rs->pending, first);
    rs->pending = c->nrows;
}

int run_series_probes(RunSeries *rs, const Run *r, const Space *sp, const double *u, double x) {
    double row[SERIES_MAX_COLUMNS] = {x};
    int k = 1, found = 0;
    for (int i = 0; i < r->pb.output.nprobes; i++, k += sp->ncomp) {
        FEM_TRY(probe_field_parts(sp, u, r->pb.output.probes[i].x, &row[k], NULL, &found));
        if (!found)
            return fem_fail(FEM_ERR_INTERNAL, "probe '%s' left the mesh", r->pb.output.probes[i].name);
    }
    return rs ? series_add_row(&rs->probes, row) : FEM_OK;
}

/* ---------------------------------------------------------------- files */

/* Starts drawing columns [first, first + n) of s against column xcol (NULL: against the row number) into the
 * set's file `file`; a failure is a note, not a failed run. */
static void plot(Run *r, const Series *s, const int *xcol, int first, int n, int logy,
                 const char *const *text, const char *file, PlotJob *job) {
    char path[FILEUTIL_PATH_MAX];
    double *v = malloc(sizeof(double) * (size_t)(s->nrows * (n + 1) + 1));
    const double *y[SERIES_MAX_COLUMNS];
    const char *legend[SERIES_MAX_COLUMNS];
    int status = v ? resultset_path(r->set, file, path, sizeof path)
                   : fem_fail(FEM_ERR_INTERNAL, "out of host memory");
    for (int64_t i = 0; v && i < s->nrows; i++) v[i] = xcol ? s->v[i * s->ncols + *xcol] : (double)i;
    for (int c = 0; v && c < n; c++) {
        series_column(s, first + c, v + (c + 1) * s->nrows);
        y[c] = v + (c + 1) * s->nrows;
        legend[c] = s->name[first + c];
    }
    PlotSpec spec = {
        text[0], text[1], text[2], logy,  r->pb.output.plot_width, r->pb.output.plot_height, (int)s->nrows,
        n,       v,       y,       legend};
    if (!status) status = plot_png_start(path, &spec, job);
    if (status) app_say(r->o, 1, "  plots: %s\n", fem_last_error());
    fem_clear_error();
    free(v);
}

/* The plot jobs' outcomes, once their children are done. */
static void plots_finish(Run *r, RunSeries *rs) {
    for (int k = 0; k < 2; k++) {
        int drawn = rs->plots[k].pid > 0;
        if (plot_png_finish(&rs->plots[k]))
            app_say(r->o, 1, "  plots: %s\n", fem_last_error());
        else if (drawn)
            r->plots++;
        fem_clear_error();
    }
    rs->plotting = 0;
}

void run_series_plot(RunSeries *rs, Run *r, const char *series) {
    if (rs->plotting || !r->pb.output.plots || !plot_available()) return;
    char base[PROBLEM_NAME_MAX + 32], file[PROBLEM_NAME_MAX + 64], title[PROBLEM_NAME_MAX + 96], ylabel[96];
    snprintf(base, sizeof base, "%s%s%s", r->base, series ? "_" : "", series ? series : "");
    const char *xlabel = rs->transient ? "time [s]" : "load factor";
    rs->plotting = 1;
    if (rs->probes.ncols > 1) {
        snprintf(file, sizeof file, "%s_probes.png", base);
        snprintf(title, sizeof title, "%s: %s at the probes", base, rs->field);
        snprintf(ylabel, sizeof ylabel, "%s [%s]", rs->field, rs->unit);
        int x = 0;
        plot(r, &rs->probes, &x, 1, rs->probes.ncols - 1, 0, (const char *const[]){title, xlabel, ylabel}, file,
             &rs->plots[0]);
    }
    snprintf(file, sizeof file, "%s_convergence.png", base);
    snprintf(title, sizeof title, "%s: Newton's residual, solve after solve", base);
    plot(r, &rs->conv, NULL, CONV_RESIDUAL, 1, 1,
         (const char *const[]){title, "Newton iterations of the run", "residual norm"}, file, &rs->plots[1]);
}

int run_series_write(RunSeries *rs, Run *r, const char *series) {
    FEM_TRY(rs->status);
    char base[PROBLEM_NAME_MAX + 32], file[PROBLEM_NAME_MAX + 64];
    snprintf(base, sizeof base, "%s%s%s", r->base, series ? "_" : "", series ? series : "");
    if (rs->probes.ncols > 1) {
        snprintf(file, sizeof file, "%s_probes.csv", base);
        FEM_TRY(series_write_csv(&rs->probes, r->set, file));
    }
    snprintf(file, sizeof file, "%s_convergence.csv", base);
    FEM_TRY(series_write_csv(&rs->conv, r->set, file));
    if (!r->pb.output.plots) return FEM_OK;
    if (!plot_available()) {
        if (!r->plots_noted) app_say(r->o, 1, "  plots: not drawn (femto was built without PLplot)\n");
        r->plots_noted = 1;
        return FEM_OK;
    }
    run_series_plot(rs, r, series);
    plots_finish(r, rs);
    return FEM_OK;
}
