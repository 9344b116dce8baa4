/* The ordering cache (see order_cache.h). */
#include "order_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    return ok && is_permutation(n, perm);
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
    if (ok && rename(tmp, path) == 0) return 0;
    unlink(tmp);
    return -1;
}
