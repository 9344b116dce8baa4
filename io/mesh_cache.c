/* The mesh cache: a .geo meshed once is kept as one file, DIR/NAME-HASH.femesh, and reused while nothing it
 * depends on changed.
 *
 * The key is text: the cache format, the Gmsh library (header version, and the shared library's path, size
 * and time, so that any upgrade or rebuild invalidates), the options that shape the mesh (size, order,
 * refinements, femto's default 3D algorithm), the size and checksums of every file the script includes or
 * merges (found by scanning it for Include, Merge and ShapeFromFile), and the script's own text. HASH is a
 * checksum of the key; the entry holds the key itself, compared byte for byte, so that a hash collision or a
 * hand-edited entry is stale, never used. The mesh follows as a record with a CRC-32 (mesh_blob.c), so a
 * truncated or damaged entry is detected and rebuilt.
 *
 * Entries are written under a temporary name and renamed, so a reader sees a whole entry or none, and
 * concurrent runs never corrupt one (the last rename wins; both wrote the same mesh). Each script keeps its
 * MESH_CACHE_KEEP most recently used entries. A cache that cannot be written only costs the next run a
 * remeshing: its failures are notes, not errors. */
#include "mesh_internal.h"

#include "fem/error.h"
#include "io/gmsh_load.h"

#include <gmshc.h>
#include <zlib.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MESH_CACHE_KEEP = 4, INCLUDE_DEPTH_MAX = 8, SCRIPT_BYTES_MAX = 64 << 20 };
static const char entry_magic[16] = "femtoMeshCache1\n";

/* ---- the key as text */

typedef struct {
    char *text;
    size_t len, cap;
    int failed; /* out of memory */
} Text;

static void text_add(Text *t, const char *data, size_t n) {
    if (t->failed) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = 2 * (t->len + n + 1);
        char *bigger = realloc(t->text, cap);
        if (!bigger) {
            t->failed = 1;
            return;
        }
        t->text = bigger;
        t->cap = cap;
    }
    memcpy(t->text + t->len, data, n);
    t->len += n;
    t->text[t->len] = '\0';
}

static void text_printf(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(Text *t, const char *fmt, ...) {
    char line[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) text_add(t, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* 64 bits of checksum: CRC-32 and Adler-32 (zlib's, fast), enough to tell versions of one file apart. */
static uint64_t checksum64(const void *data, size_t n) {
    uLong crc = crc32_z(crc32_z(0L, Z_NULL, 0), data, n),
          adler = adler32_z(adler32_z(0L, Z_NULL, 0), data, n);
    return (uint64_t)crc << 32 | (uint64_t)adler;
}

/* A whole regular file (at most SCRIPT_BYTES_MAX bytes) into a new NUL-terminated buffer; NULL on failure. */
static char *slurp(const char *path, size_t *n) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    char *data = NULL;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= SCRIPT_BYTES_MAX)
        data = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (data && got < (size_t)st.st_size) {
        ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (data && got != (size_t)st.st_size) {
        free(data);
        data = NULL;
    }
    if (fd >= 0) close(fd);
    if (data) data[got] = '\0', *n = got;
    return data;
}

/* ---- the files a script depends on */

typedef struct {
    Text *key;
    char *note;
    size_t note_size;
    int cacheable;
} Scan;

static void uncacheable(Scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void uncacheable(Scan *s, const char *fmt, ...) {
    if (!s->cacheable) return;
    s->cacheable = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->note, s->note_size, fmt, ap);
    va_end(ap);
}

static void scan_script(Scan *s, const char *path, const char *text, int depth);

/* Adds the file `name` (relative to `dir`) that `keyword` loads to the key; an included script is scanned
 * in turn. */
static void depend_on(Scan *s, const char *dir, const char *name, const char *keyword, int depth) {
    char path[PATH_MAX];
    int n = name[0] == '/' ? snprintf(path, sizeof path, "%s", name)
                           : snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t bytes = 0;
    char *data = n > 0 && (size_t)n < sizeof path ? slurp(path, &bytes) : NULL;
    if (!data) {
        uncacheable(s, "not cached: the file '%s' that the script loads cannot be read", name);
        return;
    }
    text_printf(s->key, "depends: %s \"%s\" %zu bytes, checksum %016llx\n", keyword, name, bytes,
                (unsigned long long)checksum64(data, bytes));
    if (strcmp(keyword, "Include") == 0) {
        if (depth >= INCLUDE_DEPTH_MAX)
            uncacheable(s, "not cached: the script includes files more than %d deep", INCLUDE_DEPTH_MAX);
        else
            scan_script(s, path, data, depth + 1);
    }
    free(data);
}

/* After a comment or a string, where the scan goes on. */
static const char *skip_comment_or_string(const char *p) {
    if (p[0] == '/' && p[1] == '/') return p + strcspn(p, "\n");
    if (p[0] == '/' && p[1] == '*') {
        const char *end = strstr(p + 2, "*/");
        return end ? end + 2 : p + strlen(p);
    }
    if (p[0] == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        return *p ? p + 1 : p;
    }
    return NULL;
}

static int word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Finds Include "x", Merge "x" and ShapeFromFile("x") outside comments and strings. A file name that is an
 * expression (Sprintf, a variable) cannot be followed, and the script is not cached. */
static void scan_script(Scan *s, const char *path, const char *text, int depth) {
    static const char *keywords[] = {"Include", "Merge", "ShapeFromFile"};
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    for (const char *p = text; *p && s->cacheable;) {
        const char *after = skip_comment_or_string(p);
        if (after) {
            p = after;
            continue;
        }
        int k, n = 0;
        for (k = 0; k < 3; k++) {
            n = (int)strlen(keywords[k]);
            if ((p == text || !word_char(p[-1])) && strncmp(p, keywords[k], (size_t)n) == 0 &&
                !word_char(p[n]))
                break;
        }
        if (k == 3) {
            p++;
            continue;
        }
        const char *q = p + n;
        while (*q == ' ' || *q == '\t' || *q == '(') q++;
        const char *end = *q == '"' ? strchr(q + 1, '"') : NULL;
        if (!end) {
            uncacheable(s, "not cached: the script names a file for %s with an expression", keywords[k]);
            return;
        }
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(end - q - 1), q + 1);
        depend_on(s, dir, name, keywords[k], depth);
        p = end + 1;
    }
}

/* The Gmsh library a mesh would be made with: its file (path, size, time), which changes with any upgrade;
 * where the build's file is absent and the loader's search path picks the library, its soname. Nothing is
 * loaded to find out (io/gmsh_load.h). */
static void key_gmsh(Text *key) {
    char real[PATH_MAX] = "found by the loader's search path";
    struct stat st = {0};
    const char *file = gmsh_library_file();
    if (file && realpath(file, real)) stat(real, &st);
    text_printf(key, "gmsh: API %s, library %s (%lld bytes, modified %lld)\n", GMSH_API_VERSION, real,
                (long long)st.st_size, (long long)st.st_mtime);
}

/* ---- entries */

/* The entry's path: DIR/NAME-HASH.femesh, DIR made when missing (not its parents). */
static int entry_path(const char *geo, const MeshReadOptions *opt, const Text *key, char **entry, char *note,
                      size_t note_size) {
    char dir[PATH_MAX];
    const char *slash = strrchr(geo, '/'), *name = slash ? slash + 1 : geo;
    if (opt->cache_dir[0])
        snprintf(dir, sizeof dir, "%s", opt->cache_dir);
    else
        snprintf(dir, sizeof dir, "%.*s.femto-cache", slash ? (int)(slash - geo + 1) : 0, geo);
    struct stat st;
    int err = mkdir(dir, 0777) != 0 && errno != EEXIST ? errno : 0;
    if (!err && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) err = ENOTDIR;
    if (!err && access(dir, W_OK) != 0) err = errno;
    if (err) {
        snprintf(note, note_size, "not cached: the cache folder '%s' cannot be used: %s", dir, strerror(err));
        return FEM_OK;
    }
    size_t len = strlen(dir) + strlen(name) + 32;
    *entry = malloc(len);
    if (!*entry) return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh cache");
    snprintf(*entry, len, "%s/%.*s-%016llx.femesh", dir, (int)(strlen(name) - 4), name,
             (unsigned long long)checksum64(key->text, key->len));
    return FEM_OK;
}

int mesh_cache_prepare(const char *geo, const MeshReadOptions *opt, MeshCacheEntry *e, char *note,
                       size_t note_size) {
    memset(e, 0, sizeof *e);
    note[0] = '\0';
    Text key = {NULL, 0, 0, 0};
    text_printf(&key, "femto mesh cache 2\n"); /* 2: records carry the topology (mesh_blob.c) */
    key_gmsh(&key);
    text_printf(&key, "options: size %.17g, order %d, refine %d, 3D algorithm %s\n", opt->size, opt->order,
                opt->refine, opt->threads > 0 ? "HXT unless the script chooses" : "Gmsh's default");
    const char *order = getenv("FEMTO_CELL_ORDER"); /* entries hold the cells sorted, or in the file's order */
    if (order && strcmp(order, "mesh") == 0) text_printf(&key, "cells in the file's order\n");
    size_t bytes = 0;
    char *script = slurp(geo, &bytes);
    Scan scan = {&key, note, note_size, 1};
    if (!script)
        uncacheable(&scan, "not cached: the script cannot be read");
    else
        scan_script(&scan, geo, script, 0);
    text_printf(&key, "script: %zu bytes\n", bytes);
    if (script) text_add(&key, script, bytes);
    free(script);
    int status = key.failed ? fem_fail(FEM_ERR_INTERNAL, "out of host memory for the mesh cache") : FEM_OK;
    if (!status && scan.cacheable) status = entry_path(geo, opt, &key, &e->entry, note, note_size);
    if (!status && e->entry) {
        e->key = key.text;
        e->key_bytes = key.len;
    } else {
        free(key.text);
    }
    return status;
}

void mesh_cache_release(MeshCacheEntry *e) {
    free(e->key);
    free(e->entry);
    memset(e, 0, sizeof *e);
}

static int read_exact(int fd, void *data, size_t n) {
    return read(fd, data, n) == (ssize_t)n;
}

int mesh_cache_load(const MeshCacheEntry *e, Mesh *m, char *note, size_t note_size) {
    int fd = open(e->entry, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0; /* no entry yet */
    struct stat st;
    char magic[16];
    int64_t key_bytes = -1;
    char *key = NULL;
    const char *wrong = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !read_exact(fd, magic, sizeof magic) ||
        memcmp(magic, entry_magic, sizeof magic) != 0 || !read_exact(fd, &key_bytes, sizeof key_bytes))
        wrong = "it is not a femto mesh cache entry";
    else if (key_bytes != (int64_t)e->key_bytes || !(key = malloc(e->key_bytes + 8)) ||
             !read_exact(fd, key, (size_t)(key_bytes + 7) / 8 * 8) || memcmp(key, e->key, e->key_bytes) != 0)
        wrong = "its key does not match";
    free(key);
    int hit = 0;
    if (!wrong) {
        snprintf(m->path, sizeof m->path, "%s", e->entry);
        off_t at = lseek(fd, 0, SEEK_CUR);
        hit = mesh_blob_read(fd, (int64_t)(st.st_size - at), m) == FEM_OK;
        if (!hit) wrong = fem_last_error();
    }
    if (hit) futimens(fd, NULL); /* most recently used: kept longest */
    if (wrong) snprintf(note, note_size, "the cache entry was not used (%s) and is rebuilt", wrong);
    close(fd);
    return hit;
}

/* An entry of the script `name`: NAME-<16 hex digits>.femesh. */
static int is_entry_of(const char *file, const char *name, size_t name_len) {
    size_t n = strlen(file);
    if (n != name_len + 1 + 16 + 7 || strncmp(file, name, name_len) != 0 || file[name_len] != '-' ||
        strcmp(file + n - 7, ".femesh") != 0)
        return 0;
    return strspn(file + name_len + 1, "0123456789abcdef") == 16;
}

/* Keeps the script's MESH_CACHE_KEEP most recently used entries, and removes temporary files that a killed
 * run left more than an hour ago. */
static void prune(const char *entry) {
    char dir[PATH_MAX];
    const char *slash = strrchr(entry, '/'), *file = slash + 1;
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - entry), entry);
    size_t name_len = strlen(file) - 1 - 16 - 7;
    DIR *d = opendir(dir);
    int dfd = d ? dirfd(d) : -1;
    struct dirent *de;
    struct {
        time_t t;
        char name[256];
    } kept[MESH_CACHE_KEEP + 1];
    int nkept = 0;
    while (d && (de = readdir(d))) {
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode)) continue;
        if (strstr(de->d_name, ".femesh.tmp.") && st.st_mtime < time(NULL) - 3600)
            unlinkat(dfd, de->d_name, 0);
        if (!is_entry_of(de->d_name, file, name_len) || strlen(de->d_name) >= sizeof kept[0].name) continue;
        int i = nkept++; /* insertion by time, newest first; the oldest falls off the end */
        while (i > 0 && kept[i - 1].t < st.st_mtime) kept[i] = kept[i - 1], i--;
        kept[i].t = st.st_mtime;
        snprintf(kept[i].name, sizeof kept[i].name, "%s", de->d_name);
        if (nkept > MESH_CACHE_KEEP) {
            unlinkat(dfd, kept[MESH_CACHE_KEEP].name, 0);
            nkept = MESH_CACHE_KEEP;
        }
    }
    if (d) closedir(d);
}

void mesh_cache_store(const MeshCacheEntry *e, const Mesh *m, char *note, size_t note_size) {
    size_t len = strlen(e->entry) + 32;
    char *tmp = malloc(len);
    if (!tmp) return;
    snprintf(tmp, len, "%s.tmp.%ld", e->entry, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), err = fd < 0 ? errno : 0;
    int64_t key_bytes = (int64_t)e->key_bytes;
    static const char zeros[8] = {0};
    size_t pad = (size_t)(key_bytes + 7) / 8 * 8 - e->key_bytes;
    if (!err &&
        (write(fd, entry_magic, sizeof entry_magic) != (ssize_t)sizeof entry_magic ||
         write(fd, &key_bytes, sizeof key_bytes) != (ssize_t)sizeof key_bytes ||
         write(fd, e->key, e->key_bytes) != (ssize_t)e->key_bytes || write(fd, zeros, pad) != (ssize_t)pad))
        err = errno ? errno : EIO;
    if (!err && mesh_blob_write(fd, m, 1, 1) != FEM_OK) err = errno ? errno : EIO;
    if (fd >= 0 && close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, e->entry) != 0) err = errno;
    if (err) {
        unlink(tmp);
        snprintf(note, note_size, "not cached: the cache entry '%s' cannot be written: %s", e->entry,
                 strerror(err));
    } else {
        prune(e->entry);
    }
    free(tmp);
}
