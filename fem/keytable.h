/* A hash table from a sorted tuple of up to four vertex ids (an edge or a face) to a 32-bit number.
 * Open addressing with linear probing; the table never shrinks. Used by topology to number unique edges and
 * faces in first-touch order. */
#ifndef FEMTO_KEYTABLE_H
#define FEMTO_KEYTABLE_H

#include "hd.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    int64_t cap; /* power of two */
    int64_t count;
    int32_t *keys; /* [cap][4]; slot empty when keys[4 s] == -1 */
    fem_idx *vals;
} KeyTable;

/* Sorts key[0..n-1] ascending and pads it with -1 to four entries. */
void keytable_make_key(const fem_idx *ids, int n, int32_t key[4]);

int keytable_init(KeyTable *t, int64_t expected);
void keytable_free(KeyTable *t);
/* The value stored under key; when absent, stores `value` and returns it with *added = 1. */
int keytable_get_or_add(KeyTable *t, const int32_t key[4], fem_idx value, fem_idx *out, int *added);
/* The value under key, or -1. */
fem_idx keytable_find(const KeyTable *t, const int32_t key[4]);

FEM_EXTERN_C_END

#endif
