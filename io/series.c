/* Tables of a run's time series and their CSV files (see series.h). */
#include "series.h"

#include "fem/error.h"
#include "io/fileutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void series_init(Series *s) {
    memset(s, 0, sizeof *s);
}

int series_add_column(Series *s, const char *name, const char *unit) {
    if (s->ncols >= SERIES_MAX_COLUMNS || s->nrows > 0)
        return fem_fail(FEM_ERR_INTERNAL, "a series table takes at most %d columns, all before its rows",
                        SERIES_MAX_COLUMNS);
    snprintf(s->name[s->ncols], sizeof s->name[0], "%s", name);
    snprintf(s->unit[s->ncols], sizeof s->unit[0], "%s", unit);
    s->ncols++;
    return FEM_OK;
}

static int grow(Series *s) {
    if (s->nrows < s->cap) return FEM_OK;
    int64_t cap = s->cap ? 2 * s->cap : 64;
    double *v = realloc(s->v, sizeof(double) * (size_t)(cap * (s->ncols ? s->ncols : 1)));
    if (!v) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for a time series");
    s->v = v;
    s->cap = cap;
    return FEM_OK;
}

int series_add_row(Series *s, const double *row) {
    return series_insert_row(s, s->nrows, row);
}

int series_insert_row(Series *s, int64_t at, const double *row) {
    FEM_TRY(grow(s));
    size_t w = (size_t)s->ncols;
    memmove(s->v + (size_t)(at + 1) * w, s->v + (size_t)at * w, sizeof(double) * w * (size_t)(s->nrows - at));
    memcpy(s->v + (size_t)at * w, row, sizeof(double) * w);
    s->nrows++;
    return FEM_OK;
}

void series_column(const Series *s, int c, double *out) {
    for (int64_t r = 0; r < s->nrows; r++) out[r] = s->v[r * s->ncols + c];
}

void series_destroy(Series *s) {
    free(s->v);
    series_init(s);
}

/* A header field: quoted (with doubled quotes) when it holds a comma, a quote or a line break. */
static void write_label(FileOut *fo, const char *name, const char *unit) {
    char label[SERIES_LABEL_MAX + 24];
    snprintf(label, sizeof label, unit[0] ? "%s [%s]" : "%s", name, unit);
    if (!strpbrk(label, ",\"\r\n")) {
        fileout_printf(fo, "%s", label);
        return;
    }
    fileout_printf(fo, "\"");
    for (const char *c = label; *c; c++) fileout_printf(fo, *c == '"' ? "\"\"" : "%c", *c);
    fileout_printf(fo, "\"");
}

int series_write_csv(const Series *s, ResultSet *set, const char *file) {
    char path[FILEUTIL_PATH_MAX];
    FEM_TRY(resultset_path(set, file, path, sizeof path));
    FileOut fo;
    FEM_TRY(fileout_open(&fo, path));
    for (int c = 0; c < s->ncols; c++) {
        if (c) fileout_printf(&fo, ",");
        write_label(&fo, s->name[c], s->unit[c]);
    }
    fileout_printf(&fo, "\n");
    for (int64_t r = 0; r < s->nrows; r++)
        for (int c = 0; c < s->ncols; c++)
            fileout_printf(&fo, "%.15g%s", s->v[r * s->ncols + c], c + 1 < s->ncols ? "," : "\n");
    return fileout_commit(&fo);
}
