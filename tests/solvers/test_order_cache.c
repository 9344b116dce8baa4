/* The ordering cache (fem/solvers/order_cache.h): an entry stored is read back exactly; the key follows the
 * pattern and the solver's tag; a missing, truncated, overlong, foreign or corrupt entry (not a permutation)
 * is never used; a folder that cannot be written is a failed store, not an error; a folder keeps the
 * ORDER_CACHE_KEEP most recently used entries.
 *
 *   test_order_cache WORKDIR */
#include "common/femto_test.h"
#include "fem/solvers/order_cache.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N = 1000 };

/* Overwrites bytes [at, at + n) of the entry file with `with`, or truncates it there (with NULL), or appends n
 * bytes (at < 0). */
static void damage(const char *dir, uint64_t key, long at, const void *with, size_t n) {
    char path[4200];
    snprintf(path, sizeof path, "%s/order-%016llx.perm", dir, (unsigned long long)key);
    if (at < 0) {
        FILE *f = fopen(path, "ab");
        for (size_t i = 0; i < n; i++) fputc(0, f);
        fclose(f);
    } else if (!with) {
        CHECK(truncate(path, at) == 0, "cannot truncate %s", path);
    } else {
        FILE *f = fopen(path, "r+b");
        fseek(f, at, SEEK_SET);
        fwrite(with, 1, n, f);
        fclose(f);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) return fprintf(stderr, "usage: test_order_cache WORKDIR\n"), 2;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/order-cache", argv[1]);
    mkdir(argv[1], 0777);
    mkdir(dir, 0777);
    DIR *old = opendir(dir); /* a previous run's entries */
    for (struct dirent *de; old && (de = readdir(old));) {
        char path[8200];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (strncmp(de->d_name, "order-", 6) == 0) unlink(path);
    }
    if (old) closedir(old);
    /* a tridiagonal pattern and a permutation of it */
    static int rowptr[N + 1], cols[3 * N], perm[N], got[N];
    int nnz = 0;
    for (int r = 0; r < N; r++) {
        rowptr[r] = nnz;
        for (int c = r - 1; c <= r + 1; c++)
            if (c >= 0 && c < N) cols[nnz++] = c;
        perm[r] = (r * 7919) % N; /* 7919 is prime to N: a permutation */
    }
    rowptr[N] = nnz;
    uint64_t key = order_cache_key(N, nnz, "solver A", rowptr, sizeof rowptr, cols, sizeof(int) * (size_t)nnz);
    CHECK(key != order_cache_key(N, nnz, "solver B", rowptr, sizeof rowptr, cols, sizeof(int) * (size_t)nnz), "the tag does not change the key");
    cols[5] ^= 1;
    CHECK(key != order_cache_key(N, nnz, "solver A", rowptr, sizeof rowptr, cols, sizeof(int) * (size_t)nnz), "a column does not change the key");
    cols[5] ^= 1;
    CHECK(key == order_cache_key(N, nnz, "solver A", rowptr, sizeof rowptr, cols, sizeof(int) * (size_t)nnz), "the key is not a function of its inputs");
    CHECK(!order_cache_load(dir, key, N, got), "an entry read before any was stored");
    CHECK(order_cache_store(dir, key, N, perm) == 0, "storing an entry failed");
    CHECK(order_cache_load(dir, key, N, got) && memcmp(got, perm, sizeof perm) == 0, "the entry read back differs");
    CHECK(!order_cache_load(dir, key ^ 1, N, got), "an entry read under another key");
    CHECK(!order_cache_load(dir, key, N - 1, got), "an entry read for another row count");
    CHECK(!order_cache_load(NULL, key, N, got) && order_cache_store(NULL, key, N, perm) == -1,
          "no folder is not 'nothing cached'");
    int twice[2] = {3, 3};
    damage(dir, key, 32 + 4 * 10, twice, sizeof twice); /* two rows mapped to 3: not a permutation */
    CHECK(!order_cache_load(dir, key, N, got), "a corrupt permutation was used");
    CHECK(order_cache_store(dir, key, N, perm) == 0 && order_cache_load(dir, key, N, got), "no fresh entry");
    damage(dir, key, 32 + 4 * (N - 1), NULL, 0); /* truncated */
    CHECK(!order_cache_load(dir, key, N, got), "a truncated entry was used");
    CHECK(order_cache_store(dir, key, N, perm) == 0, "no fresh entry");
    damage(dir, key, -1, NULL, 4); /* a trailing int */
    CHECK(!order_cache_load(dir, key, N, got), "an overlong entry was used");
    CHECK(order_cache_store(dir, key, N, perm) == 0, "no fresh entry");
    damage(dir, key, 0, "femtoMesh", 9); /* another file's magic */
    CHECK(!order_cache_load(dir, key, N, got), "an entry with a foreign magic was used");
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/no/such/folder", dir);
    CHECK(order_cache_store(missing, key, N, perm) == -1, "a store into a missing folder succeeded");
    /* a folder keeps the ORDER_CACHE_KEEP most recently used entries: the first one, read again, stays */
    CHECK(order_cache_store(dir, key, N, perm) == 0, "no fresh entry");
    for (int k = 1; k <= ORDER_CACHE_KEEP + 2; k++) {
        usleep(20000); /* file times advance by the kernel's clock tick: a few ms */
        CHECK(order_cache_store(dir, key + (uint64_t)k * 7919, N, perm) == 0, "storing entry %d failed", k);
        if (k == ORDER_CACHE_KEEP - 2) {
            usleep(20000);
            CHECK(order_cache_load(dir, key, N, got), "the first entry is gone early");
        }
    }
    int entries = 0;
    struct dirent *de;
    DIR *d = opendir(dir);
    while (d && (de = readdir(d))) entries += strncmp(de->d_name, "order-", 6) == 0;
    if (d) closedir(d);
    CHECK(entries == ORDER_CACHE_KEEP, "%d entries in the folder, not %d", entries, ORDER_CACHE_KEEP);
    CHECK(order_cache_load(dir, key, N, got), "the most recently read entry was pruned");
    CHECK(!order_cache_load(dir, key + 7919, N, got), "the least recently used entry was kept");
    return test_result("test_order_cache");
}
