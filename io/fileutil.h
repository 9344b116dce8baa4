/* Writing result files safely: temporary names, atomic renames, one error sentence per failure.
 *
 * Every result file (VTU, PVD, XDMF, HDF5) is first written under a hidden temporary name in its final
 * directory (".beam_0003.vtu.tmp.PID") and renamed over the final name only once it is complete and synced,
 * so a reader never sees half a file. FileOut is the buffered writer for text and binary formats; HDF5, which
 * opens files itself, uses fileutil_temp_name/fileutil_publish directly. A run's files as a whole are made one
 * set by io/resultset.h, which has them written into a staging folder ("results/.femto-stage.beam.PID/").
 *
 * Failures are FEM_ERR_INPUT with one sentence naming the final file and the system's reason (a file in a
 * staging folder is named by the path it will have in the results folder, the one the user knows):
 *   cannot write results file 'results/beam_0003.vtu': No space left on device */
#ifndef FEMTO_FILEUTIL_H
#define FEMTO_FILEUTIL_H

#include <stddef.h>
#include <stdio.h>

enum { FILEUTIL_PATH_MAX = 4096 };

/* How the hidden folders of io/resultset.c begin: a set being written, and a set being moved into place. */
#define FILEUTIL_STAGE_PREFIX ".femto-stage."
#define FILEUTIL_COMMIT_PREFIX ".femto-commit."

typedef struct {
    FILE *fp;
    int err; /* errno of the first failed write; later writes are skipped */
    char path[FILEUTIL_PATH_MAX];
    char tmp[FILEUTIL_PATH_MAX];
} FileOut;

/* Creates the temporary file for `path`. On failure nothing is left open or on disk. */
int fileout_open(FileOut *fo, const char *path);
/* Buffered writes; a failure is remembered and reported by fileout_commit. */
void fileout_write(FileOut *fo, const void *data, size_t bytes);
void fileout_printf(FileOut *fo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes `text` with XML's five special characters escaped (attribute values and names). */
void fileout_xml_text(FileOut *fo, const char *text);
/* Flushes, syncs, closes and renames to the final name; on any failure removes the temporary file. */
int fileout_commit(FileOut *fo);

/* The temporary name for `path`: same directory, ".NAME.tmp.PID". Fails if the result would not fit. */
int fileutil_temp_name(const char *path, char *tmp, size_t size);
/* Syncs `tmp` to disk and renames it to `path`; on failure removes `tmp`. */
int fileutil_publish(const char *tmp, const char *path);
/* Records "cannot write results file 'PATH': REASON" for errno value `errnum` and returns FEM_ERR_INPUT;
 * a staging folder in PATH is left out of the sentence. */
int fileutil_fail(const char *path, int errnum);
/* `path` without a staging folder component ("out/.femto-stage.beam.12/beam.h5" -> "out/beam.h5"). */
void fileutil_shown_path(const char *path, char *out, size_t size);

/* Creates `dir` and its missing parents (like mkdir -p). */
int fileutil_mkdir_p(const char *dir);

/* An absolute form of `path` whose directory exists: the directory is resolved with realpath (so it has no
 * "." or ".." and does not depend on the working directory), the last component is kept as given. */
int fileutil_absolute(const char *path, char *out, size_t size);
/* The path of `to` relative to the directory of `from` ("beam.h5" when both share a directory), so that a
 * file naming another survives the folder being moved or copied. Both directories must exist. */
int fileutil_relative(const char *from, const char *to, char *out, size_t size);

/* Removes the directory `path` and the files in it (no subdirectories). `fd` is the directory opened
 * read-only, or -1 to open it here. Only async-signal-safe calls (a signal handler uses it), and it tries
 * again while entries keep appearing. 0 when the directory is gone, else an errno value. */
int fileutil_remove_flat_dir(const char *path, int fd);

#endif
