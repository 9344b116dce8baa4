/* The ordering cache (see order_cache.h). */
#include "order_cache.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static const char magic[16] = "femtoOrdering1\n";

typedef struct {
    char magic[16];
    uint64_t key;
    int64_t n;
} Header;

/* FNV-1a, 64 bits, continued from h. */
static uint64_t fnv(uint64_t h, const void *data, size_t bytes) {
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

uint64_t order_cache_key(int64_t n, int64_t nnz, const char *tag, const void *ptr, size_t ptr_bytes,
                         const void *idx, size_t idx_bytes) {
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv(h, &n, sizeof n);
    h = fnv(h, &nnz, sizeof nnz);
    h = fnv(h, tag, strlen(tag));
    h = fnv(h, ptr, ptr_bytes);
    return fnv(h, idx, idx_bytes);
}

static void entry_name(char *path, size_t size, const char *dir, uint64_t key) {
    snprintf(path, size, "%s/order-%016llx.perm", dir, (unsigned long long)key);
}

/* Whether perm is a permutation of 0 .. n-1. */
static int is_permutation(int64_t n, const int *perm) {
    char *seen = calloc((size_t)n + 1, 1);
    int ok = seen != NULL;
    for (int64_t i = 0; i < n && ok; i++) {
        ok = perm[i] >= 0 && perm[i] < n && !seen[perm[i]];
        if (ok) seen[perm[i]] = 1;
    }
    free(seen);
    return ok;
}

typedef struct {
    char name[64];
    struct timespec mtime;
} Entry;

static int newest_first(const void *a, const void *b) {
    const struct timespec *x = &((const Entry *)a)->mtime, *y = &((const Entry *)b)->mtime;
    if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? 1 : -1;
    return (x->tv_nsec < y->tv_nsec) - (x->tv_nsec > y->tv_nsec);
}

/* Deletes all but the ORDER_CACHE_KEEP most recently used entries of dir (a load touches its entry). */
static void prune(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    Entry *e = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        unsigned long long k;
        char tail[8];
        if (strlen(de->d_name) >= sizeof e->name ||
            sscanf(de->d_name, "order-%16llx.%5s", &k, tail) != 2 || strcmp(tail, "perm") != 0)
            continue;
        if (n == cap) {
            Entry *m = realloc(e, sizeof *e * (cap = cap ? 2 * cap : 16));
            if (!m) break;
            e = m;
        }
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) != 0) continue;
        snprintf(e[n].name, sizeof e[n].name, "%s", de->d_name);
        e[n++].mtime = st.st_mtim;
    }
    closedir(d);
    if (n > ORDER_CACHE_KEEP) qsort(e, n, sizeof *e, newest_first);
    for (size_t i = ORDER_CACHE_KEEP; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e[i].name);
        unlink(path);
    }
    free(e);
}

int order_cache_load(const char *dir, uint64_t key, int64_t n, int *perm) {
    if (!dir || !dir[0] || n <= 0) return 0;
    char path[4096];
    entry_name(path, sizeof path, dir, key);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    Header h;
    int ok = fread(&h, sizeof h, 1, f) == 1 && memcmp(h.magic, magic, sizeof magic) == 0 && h.key == key &&
             h.n == n && fread(perm, sizeof(int), (size_t)n, f) == (size_t)n && fgetc(f) == EOF;
    fclose(f);
    ok = ok && is_permutation(n, perm);
    if (ok) utime(path, NULL); /* recently used: kept by prune */
    return ok;
}

int order_cache_store(const char *dir, uint64_t key, int64_t n, const int *perm) {
    if (!dir || !dir[0] || n <= 0) return -1;
    char path[4096], tmp[4200];
    entry_name(path, sizeof path, dir, key);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    Header h;
    memcpy(h.magic, magic, sizeof magic);
    h.key = key;
    h.n = n;
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(perm, sizeof(int), (size_t)n, f) == (size_t)n;
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) == 0) {
        prune(dir);
        return 0;
    }
    unlink(tmp);
    return -1;
}
