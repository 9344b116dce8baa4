/* A cache of fill-reducing orderings: the permutation a sparse direct solver computed for a matrix pattern,
 * kept in a file so that the next run on the same mesh skips the reordering (cuDSS spends most of its
 * analysis there: 0.7 s for the 747k-dof cantilever's order-1 level, 11 s for an 11.5M-dof one).
 *
 * An entry is keyed by a 64-bit hash of the pattern (rows, row pointers, column indices) and of a tag naming
 * the solver and its settings; the file NAME is DIR/order-KEY.perm. It holds a header (a magic string, the key,
 * the row count) and the permutation. A missing, truncated, foreign or corrupt entry (one that is not a
 * permutation of 0 .. n-1) is ignored, and the solver reorders and stores a fresh one: the cache can never
 * change an answer, only skip work. Writes go to a temporary file renamed into place, so concurrent runs
 * never read half an entry. Errors writing are ignored (the cache is an optimisation). A folder keeps the
 * ORDER_CACHE_KEEP most recently used entries, so that a parameter study over many meshes does not fill it. */
#ifndef FEMTO_SOLVERS_ORDER_CACHE_H
#define FEMTO_SOLVERS_ORDER_CACHE_H

#include "fem/hd.h"

#include <stddef.h>
#include <stdint.h>

FEM_EXTERN_C_BEGIN

/* The key of an n-row pattern with nnz entries, given as its two index arrays (row or column pointers, then
 * indices, in whatever integer width the solver uses: ptr_bytes and idx_bytes bytes), for the solver settings
 * named by tag. */
uint64_t order_cache_key(int64_t n, int64_t nnz, const char *tag, const void *ptr, size_t ptr_bytes,
                         const void *idx, size_t idx_bytes);

/* 1 and perm[0..n) filled when DIR holds a valid entry for key and n; 0 otherwise (perm then undefined). */
int order_cache_load(const char *dir, uint64_t key, int64_t n, int *perm);

/* A folder keeps the orderings of this many patterns, the most recently used (stored or loaded). */
enum { ORDER_CACHE_KEEP = 8 };

/* Writes the entry (best effort: 0 when written, -1 when it could not be), then deletes all but the
 * ORDER_CACHE_KEEP most recently used entries. */
int order_cache_store(const char *dir, uint64_t key, int64_t n, const int *perm);

FEM_EXTERN_C_END

#endif
