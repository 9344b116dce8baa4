/* Writing result files safely: temporary names, atomic renames, one error sentence per failure.
 *
 * Every result file (VTU, PVD, XDMF, HDF5) is first written under a hidden temporary name in its final
 * directory (".beam_0003.vtu.tmp.PID") and renamed over the final name only once it is complete and synced,
 * so a reader never sees half a file and a failed run leaves nothing behind. FileOut is the buffered writer for text and
 * binary formats; HDF5, which opens files itself, uses fileutil_temp_name/fileutil_publish directly.
 *
 * Failures are FEM_ERR_INPUT with one sentence naming the final file and the system's reason:
 *   cannot write results file 'results/beam_0003.vtu': No space left on device */
#ifndef FEMTO_FILEUTIL_H
#define FEMTO_FILEUTIL_H

#include <stddef.h>
#include <stdio.h>

enum { FILEUTIL_PATH_MAX = 4096 };

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
/* Records "cannot write results file 'PATH': REASON" for errno value `errnum` and returns FEM_ERR_INPUT. */
int fileutil_fail(const char *path, int errnum);

/* Creates `dir` and its missing parents (like mkdir -p). */
int fileutil_mkdir_p(const char *dir);

/* An absolute form of `path` whose directory exists: the directory is resolved with realpath (so it has no
 * "." or ".." and does not depend on the working directory), the last component is kept as given. */
int fileutil_absolute(const char *path, char *out, size_t size);

#endif
