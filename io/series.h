/* Time series of a run as CSV tables: the value at every probe at every output time, Newton's convergence
 * history. A Series is a table of columns (a name and a unit each) filled one row at a time while the run
 * computes; it is written into the run's result set (io/resultset.h) at the end, so that it appears with the
 * rest of the run's files or not at all. io/plot.h draws the same tables as PNG images. */
#ifndef FEMTO_SERIES_H
#define FEMTO_SERIES_H

#include "io/resultset.h"

#include <stdint.h>

enum { SERIES_MAX_COLUMNS = 100, SERIES_LABEL_MAX = 160 };

typedef struct {
    int ncols;
    char name[SERIES_MAX_COLUMNS][SERIES_LABEL_MAX];
    char unit[SERIES_MAX_COLUMNS][16];
    int64_t nrows, cap;
    double *v; /* [nrows][ncols] */
} Series;

/* An empty table without columns (series_destroy is harmless on it). */
void series_init(Series *s);
/* Appends a column (only before the first row); unit "" for a pure number. */
int series_add_column(Series *s, const char *name, const char *unit);
/* Appends a row of ncols values. */
int series_add_row(Series *s, const double *row);
/* Inserts a row before row `at` (the rows from `at` on move down by one). */
int series_insert_row(Series *s, int64_t at, const double *row);
/* Column c into out[nrows]. */
void series_column(const Series *s, int c, double *out);
void series_destroy(Series *s);

/* Writes the table as the set's file `file` (a name without directory): a header of "name [unit]" labels,
 * then one line per row, comma-separated (RFC 4180 quoting where a label needs it), numbers with 15
 * significant digits. */
int series_write_csv(const Series *s, ResultSet *set, const char *file);

#endif
