/* Manifest, moves and recovery of a result set: see resultset_journal.h.
 *
 * Moving data files (VTU, HDF5) before the files that name them (XDMF, PVD) keeps every file that either the
 * old or the new .pvd/.xdmf names present at every instant of the move; the previous set's extra files go
 * last, once nothing names them. */
#include "resultset_journal.h"

#include "fem/error.h"
#include "fileutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char manifest_name[] = ".manifest";
static const char manifest_magic[] = "femto result set 1";

void journal_names_free(JournalNames *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int names_add(JournalNames *l, const char *name, size_t len) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (file list)");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = fem_malloc(len + 1, "file list");
    if (!l->v[l->n]) return FEM_ERR_INTERNAL;
    memcpy(l->v[l->n], name, len);
    l->v[l->n++][len] = '\0';
    return FEM_OK;
}

int journal_list(int fd, const char *dir, JournalNames *out) {
    memset(out, 0, sizeof *out);
    int copy = dup(fd);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    if (!d) {
        int err = errno;
        if (copy >= 0) close(copy);
        return fem_fail(FEM_ERR_INPUT, "cannot read the results folder '%s': %s", dir, strerror(err));
    }
    rewinddir(d);
    int status = FEM_OK;
    for (struct dirent *e; !status && (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            status = names_add(out, e->d_name, strlen(e->d_name));
    closedir(d);
    if (status) journal_names_free(out);
    return status;
}

/* ---------------------------------------------------------------- manifest */

/* The order of the moves: what is named (VTU pieces, HDF5) before what names it (PVTU, XDMF, PVD), then the
 * rest (time series), the summary last. */
static int move_rank(const char *name) {
    static const char *const ends[] = {".pvtu", ".vtu", ".h5", ".xdmf", ".pvd"};
    static const int rank[] = {2, 0, 1, 3, 4}; /* ".pvtu" ends in ".vtu": tested first, moved after */
    size_t n = strlen(name), k = strlen("_summary.txt");
    for (int r = 0; r < 5; r++) {
        size_t e = strlen(ends[r]);
        if (n > e && strcmp(name + n - e, ends[r]) == 0) return rank[r];
    }
    return n > k && strcmp(name + n - k, "_summary.txt") == 0 ? 6 : 5;
}

static int by_move_order(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rx = move_rank(x), ry = move_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

/* The manifest's text (malloc'ed) for the set's files, in move order. */
static char *manifest_text(const JournalNames *files, int nseries, const char (*series)[JOURNAL_NAME_MAX],
                           size_t *len) {
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    if (!mem) return NULL;
    fprintf(mem, "%s\n", manifest_magic);
    for (int i = 0; i < nseries; i++) fprintf(mem, "series %s\n", series[i]);
    for (int i = 0; i < files->n; i++) fprintf(mem, "file %s\n", files->v[i]);
    if (fclose(mem) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The manifest needs no temporary name: until the staging folder is renamed to a commit folder nobody reads
 * it, and a staging folder is removed whole. A failure names the results folder, not the hidden file. */
int journal_write_manifest(const char *dir, int fd, int nseries, const char (*series)[JOURNAL_NAME_MAX]) {
    JournalNames files;
    FEM_TRY(journal_list(fd, dir, &files));
    int kept = 0; /* hidden names (the manifest, temporary files) are not part of the set */
    for (int i = 0; i < files.n; i++) {
        if (files.v[i][0] == '.')
            free(files.v[i]);
        else
            files.v[kept++] = files.v[i];
    }
    files.n = kept;
    qsort(files.v, (size_t)files.n, sizeof *files.v, by_move_order);
    size_t len = 0;
    char *text = manifest_text(&files, nseries, series, &len);
    journal_names_free(&files);
    if (!text) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (result set manifest)");
    int err = 0, mf = openat(fd, manifest_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (mf < 0) err = errno;
    for (size_t done = 0; !err && done < len;) {
        ssize_t n = write(mf, text + done, len - done);
        if (n < 0 && errno != EINTR) err = errno;
        if (n > 0) done += (size_t)n;
    }
    if (!err && fsync(mf) != 0) err = errno;
    if (mf >= 0 && close(mf) != 0 && !err) err = errno;
    if (!err && fsync(fd) != 0) err = errno;
    free(text);
    if (err)
        return fem_fail(FEM_ERR_INPUT, "cannot write results into the folder '%s': %s", dir, strerror(err));
    return FEM_OK;
}

typedef struct {
    JournalNames series, files;
    char **sorted; /* files in strcmp order, for lookups */
} Manifest;

static void manifest_free(Manifest *m) {
    journal_names_free(&m->series);
    journal_names_free(&m->files);
    free(m->sorted);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Parses the manifest text; FEM_ERR_INPUT (without a message) when it is not one. */
static int parse_manifest(char *text, Manifest *m) {
    char *line = strtok(text, "\n");
    if (!line || strcmp(line, manifest_magic) != 0) return FEM_ERR_INPUT;
    int status = FEM_OK;
    while (!status && (line = strtok(NULL, "\n"))) {
        if (strncmp(line, "series ", 7) == 0)
            status = names_add(&m->series, line + 7, strlen(line + 7));
        else if (strncmp(line, "file ", 5) == 0 && !strchr(line + 5, '/'))
            status = names_add(&m->files, line + 5, strlen(line + 5));
        else
            status = FEM_ERR_INPUT;
    }
    if (status) return status;
    m->sorted = fem_malloc(sizeof(char *) * (size_t)(m->files.n + 1), "file list");
    if (!m->sorted) return FEM_ERR_INTERNAL;
    if (m->files.n) memcpy(m->sorted, m->files.v, sizeof(char *) * (size_t)m->files.n);
    qsort(m->sorted, (size_t)m->files.n, sizeof *m->sorted, by_name);
    return FEM_OK;
}

static int read_manifest(int fd, Manifest *m) {
    memset(m, 0, sizeof *m);
    int mf = openat(fd, manifest_name, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (mf < 0) return FEM_ERR_INPUT;
    char *text = fstat(mf, &st) == 0 ? malloc((size_t)st.st_size + 1) : NULL;
    ssize_t got = text ? read(mf, text, (size_t)st.st_size) : -1;
    close(mf);
    int status = got == st.st_size ? FEM_OK : FEM_ERR_INPUT;
    if (!status) {
        text[got] = '\0';
        status = parse_manifest(text, m);
    }
    free(text);
    if (status) manifest_free(m);
    return status;
}

/* ---------------------------------------------------------------- moves */

/* `name` is a file of series `base`: BASE.pvd, BASE.h5, BASE.xdmf, BASE_summary.txt, the time series
 * BASE_probes.csv and BASE_convergence.csv and their .png plots, or BASE_NNNN.vtu (four digits or more, as
 * femto numbers them), and over MPI ranks BASE_NNNN.pvtu and its pieces BASE_NNNN_pRRRR.vtu. */
static int series_file(const char *name, const char *base) {
    static const char *const ends[] = {".pvd",        ".h5",
                                       ".xdmf",       "_summary.txt",
                                       "_probes.csv", "_convergence.csv",
                                       "_probes.png", "_convergence.png"};
    size_t n = strlen(base);
    if (strncmp(name, base, n) != 0) return 0;
    const char *t = name + n;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (!strcmp(t, ends[i])) return 1;
    if (*t++ != '_') return 0;
    int digits = 0, rank_digits = 0;
    for (; isdigit((unsigned char)*t); t++) digits++;
    if (digits < 4) return 0;
    if (!strcmp(t, ".vtu") || !strcmp(t, ".pvtu")) return 1;
    if (strncmp(t, "_p", 2) != 0) return 0;
    for (t += 2; isdigit((unsigned char)*t); t++) rank_digits++;
    return rank_digits >= 4 && strcmp(t, ".vtu") == 0;
}

/* Files of the set's series in the folder that the set does not have: the previous set's leftovers. */
static void remove_stale(int dir_fd, const char *dir, const Manifest *m) {
    JournalNames entries;
    if (journal_list(dir_fd, dir, &entries) != FEM_OK) return;
    for (int i = 0; i < entries.n; i++) {
        const char *e = entries.v[i];
        int owned = 0;
        for (int s = 0; s < m->series.n && !owned; s++) owned = series_file(e, m->series.v[s]);
        if (owned && !bsearch(&e, m->sorted, (size_t)m->files.n, sizeof *m->sorted, by_name))
            unlinkat(dir_fd, e, 0);
    }
    journal_names_free(&entries);
}

int journal_roll_forward(int dir_fd, const char *dir, int fd, const char *name) {
    Manifest m;
    if (read_manifest(fd, &m) != FEM_OK) return FEM_OK; /* not a commit of ours: left alone */
    int status = FEM_OK;
    for (int i = 0; i < m.files.n && !status; i++) {
        int err = renameat(fd, m.files.v[i], dir_fd, m.files.v[i]) == 0 ? 0 : errno;
        if (err && err != ENOENT) /* ENOENT: moved before a kill */
            status =
                fem_fail(FEM_ERR_INPUT,
                         "cannot write results file '%s/%s': %s; the complete results wait in '%s/%s', and "
                         "the next run into that folder puts them in place",
                         dir, m.files.v[i], strerror(err), dir, name);
    }
    if (!status) {
        (void)fsync(dir_fd);
        remove_stale(dir_fd, dir, &m);
        unlinkat(fd, manifest_name, 0);
        char path[FILEUTIL_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        fileutil_remove_flat_dir(path, fd);
        (void)fsync(dir_fd);
    }
    manifest_free(&m);
    return status;
}

void journal_remove_dead_temporary(int dir_fd, const char *name) {
    const char *tmp = strstr(name, ".tmp.");
    if (name[0] != '.' || !tmp) return;
    char *end;
    long pid = strtol(tmp + 5, &end, 10);
    if (*end || pid <= 0 || end == tmp + 5) return;
    int result_file = 0; /* only femto's result files, by their endings */
    static const char *const ends[] = {".vtu", ".pvtu", ".pvd", ".h5", ".xdmf", "_summary.txt"};
    for (int i = 0; i < 6 && !result_file; i++) {
        size_t k = strlen(ends[i]);
        result_file = tmp - name > (long)k && strncmp(tmp - k, ends[i], k) == 0;
    }
    if (result_file && kill((pid_t)pid, 0) != 0 && errno == ESRCH) unlinkat(dir_fd, name, 0);
}
