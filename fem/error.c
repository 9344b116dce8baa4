/* The recorded message is as long as what it has to say: a sentence that quotes a 4,000-character path is
 * kept whole, never cut at a fixed buffer size. Each thread keeps its last message in a heap buffer of its
 * own (one small allocation per failure, none on success). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The buffer used when the heap cannot give one: large enough for every sentence femto composes unless it
 * quotes very long paths. */
static _Thread_local char fallback[4096];
static _Thread_local char *message = NULL; /* NULL: fallback holds the message */

/* What a message that had to be shortened ends with, so that the reader knows why it stops. */
static const char shortened[] = " [message shortened: out of memory]";

/* Cuts a message that did not fit `cap` bytes at its last space and says so, so that no word is cut. */
static void shorten(char *buf, size_t cap) {
    size_t keep = cap - sizeof shortened;
    while (keep > 0 && buf[keep] != ' ') keep--;
    memcpy(buf + keep, shortened, sizeof shortened);
}

/* The new message is composed in a new buffer before the old one is released, so that an argument may
 * quote the previous message (fem_last_error()). */
int fem_fail(int code, const char *fmt, ...) {
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *fresh = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (fresh) {
        vsnprintf(fresh, (size_t)n + 1, fmt, again);
        free(message);
        message = fresh;
    } else {
        char local[sizeof fallback];
        if (vsnprintf(local, sizeof local, fmt, again) >= (int)sizeof local) shorten(local, sizeof local);
        memcpy(fallback, local, sizeof local);
        free(message);
        message = NULL;
    }
    va_end(again);
    va_end(ap);
    return code;
}

const char *fem_last_error(void) {
    return message ? message : fallback;
}

void fem_clear_error(void) {
    free(message);
    message = NULL;
    fallback[0] = '\0';
}

/* A warning is not cut either: composed on the heap, or shortened at a word when the heap has no room. */
void fem_warn(FemWarnings *w, const char *fmt, ...) {
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL, local[1024];
    if (text)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    else if (vsnprintf(local, sizeof local, fmt, again) >= (int)sizeof local)
        shorten(local, sizeof local);
    va_end(again);
    va_end(ap);
    w->count++;
    if (w->say) w->say(w->ctx, text ? text : local);
    free(text);
}

void *fem_malloc(size_t bytes, const char *what) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) fem_fail(FEM_ERR_INTERNAL, "out of host memory (%zu bytes for %s)", bytes, what);
    return p;
}

void *fem_calloc(size_t count, size_t size, const char *what) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) fem_fail(FEM_ERR_INTERNAL, "out of host memory (%zu bytes for %s)", count * size, what);
    return p;
}
