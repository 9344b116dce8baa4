/* Errors are values.
 *
 * A function that can fail returns a FemStatus; on failure it has recorded one sentence for the user with
 * fem_fail(). FEM_TRY propagates a failure upward unchanged, so the message of the deepest cause is what the
 * user reads. Only app/main turns a status into an exit code; the codes are the documented exit codes. */
#ifndef FEMTO_ERROR_H
#define FEMTO_ERROR_H

#include <stddef.h>
#include "hd.h"

FEM_EXTERN_C_BEGIN

typedef enum {
    FEM_OK = 0,
    FEM_ERR_USAGE = 1,    /* wrong command line */
    FEM_ERR_INPUT = 2,    /* bad problem file, mesh, or an output path that cannot be written */
    FEM_ERR_SOLVER = 3,   /* a solver did not converge */
    FEM_ERR_DEVICE = 4,   /* no GPU, GPU out of memory, a failed CUDA call */
    FEM_ERR_INTERNAL = 5, /* out of host memory or a bug: a message says which */
} FemStatus;

/* Records a message (printf format, any length: it is never cut; an argument may quote fem_last_error()) and
 * returns `code`, so callers write `return fem_fail(...)`. */
int fem_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message of the last failure ("" when none); valid until the next fem_fail or fem_clear_error. */
const char *fem_last_error(void);

/* Clears the recorded message (tests that expect a failure call this first). */
void fem_clear_error(void);

/* Warnings are not failures: an input or a result that is valid but probably wrong (a units slip: 70 Pa for
 * 70 GPa, 20 K for 20 degrees Celsius). A check that finds one calls fem_warn on the caller's sink, which
 * counts it and hands the sentence to `say` (NULL: only counted); the app prints it and counts it in the
 * summary. */
typedef struct {
    void (*say)(void *ctx, const char *message);
    void *ctx;
    int count;
} FemWarnings;

void fem_warn(FemWarnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* malloc/calloc that record "out of memory (N bytes for WHAT)" on failure. */
void *fem_malloc(size_t bytes, const char *what);
void *fem_calloc(size_t count, size_t size, const char *what);

#define FEM_TRY(expr)                                                                                        \
    do {                                                                                                     \
        int fem_try_status_ = (expr);                                                                        \
        if (fem_try_status_ != FEM_OK) return fem_try_status_;                                               \
    } while (0)

/* Allocates `count` elements of *ptr's type, returning FEM_ERR_INTERNAL from the caller on failure. */
#define FEM_ALLOC(ptr, count, what)                                                                          \
    do {                                                                                                     \
        (ptr) = fem_calloc((size_t)(count), sizeof(*(ptr)), (what));                                         \
        if (!(ptr)) return FEM_ERR_INTERNAL;                                                                 \
    } while (0)

/* The clean-up idiom of a function that owns several resources: `int status = FEM_OK;` at the top, every call
 * that can fail in FEM_CHECK (on failure: status set, jump to `cleanup:`), and one exit path after the label
 * that frees what was acquired (free(NULL), *_destroy of a zeroed object: no-ops) and returns status. */
#define FEM_CHECK(expr)                                                                                      \
    do {                                                                                                     \
        status = (expr);                                                                                     \
        if (status != FEM_OK) goto cleanup;                                                                  \
    } while (0)
/* FEM_CHECK for allocations: ptr = calloc(count) or FEM_ERR_INTERNAL with "out of memory for WHAT". */
#define FEM_CHECK_ALLOC(ptr, count, what)                                                                    \
    do {                                                                                                     \
        (ptr) = fem_calloc((size_t)(count), sizeof(*(ptr)), (what));                                         \
        if (!(ptr)) {                                                                                        \
            status = FEM_ERR_INTERNAL;                                                                       \
            goto cleanup;                                                                                    \
        }                                                                                                    \
    } while (0)

FEM_EXTERN_C_END

#endif
