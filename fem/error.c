#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char last_error[2048];

int fem_fail(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *fem_last_error(void) {
    return last_error;
}

void fem_clear_error(void) {
    last_error[0] = '\0';
}

void fem_warn(FemWarnings *w, const char *fmt, ...) {
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    w->count++;
    if (w->say) w->say(w->ctx, message);
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
