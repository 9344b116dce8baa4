#include "keytable.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

void keytable_make_key(const fem_idx *ids, int n, int32_t key[4]) {
    for (int i = 0; i < 4; i++) key[i] = i < n ? ids[i] : -1;
    for (int i = 1; i < n; i++) /* insertion sort of at most four */
        for (int j = i; j > 0 && key[j - 1] > key[j]; j--) {
            int32_t t = key[j];
            key[j] = key[j - 1];
            key[j - 1] = t;
        }
}

static uint64_t hash_key(const int32_t key[4]) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 4; i++) {
        h ^= (uint32_t)key[i];
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

int keytable_init(KeyTable *t, int64_t expected) {
    memset(t, 0, sizeof *t);
    t->cap = 64;
    while (t->cap < 2 * expected) t->cap *= 2;
    t->keys = malloc(sizeof(int32_t) * 4 * t->cap);
    t->vals = malloc(sizeof(fem_idx) * t->cap);
    if (!t->keys || !t->vals) {
        keytable_free(t);
        return fem_fail(FEM_ERR_INTERNAL, "out of host memory for the edge/face table");
    }
    memset(t->keys, 0xff, sizeof(int32_t) * 4 * t->cap);
    return FEM_OK;
}

void keytable_free(KeyTable *t) {
    free(t->keys);
    free(t->vals);
    memset(t, 0, sizeof *t);
}

static int grow(KeyTable *t) {
    KeyTable bigger;
    FEM_TRY(keytable_init(&bigger, t->cap));
    for (int64_t s = 0; s < t->cap; s++) {
        if (t->keys[4 * s] == -1) continue;
        fem_idx out;
        int added;
        keytable_get_or_add(&bigger, &t->keys[4 * s], t->vals[s], &out, &added);
    }
    keytable_free(t);
    *t = bigger;
    return FEM_OK;
}

int keytable_get_or_add(KeyTable *t, const int32_t key[4], fem_idx value, fem_idx *out, int *added) {
    if (2 * (t->count + 1) > t->cap) FEM_TRY(grow(t));
    uint64_t mask = (uint64_t)t->cap - 1, s = hash_key(key) & mask;
    for (;; s = (s + 1) & mask) {
        int32_t *k = &t->keys[4 * s];
        if (k[0] == -1) {
            memcpy(k, key, sizeof(int32_t) * 4);
            t->vals[s] = value;
            t->count++;
            *out = value;
            *added = 1;
            return FEM_OK;
        }
        if (k[0] == key[0] && k[1] == key[1] && k[2] == key[2] && k[3] == key[3]) {
            *out = t->vals[s];
            *added = 0;
            return FEM_OK;
        }
    }
}

fem_idx keytable_find(const KeyTable *t, const int32_t key[4]) {
    uint64_t mask = (uint64_t)t->cap - 1, s = hash_key(key) & mask;
    for (;; s = (s + 1) & mask) {
        const int32_t *k = &t->keys[4 * s];
        if (k[0] == -1) return -1;
        if (k[0] == key[0] && k[1] == key[1] && k[2] == key[2] && k[3] == key[3]) return t->vals[s];
    }
}
