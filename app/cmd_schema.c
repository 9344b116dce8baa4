/* `femto-app schema [FILE]`: the problem-file schema femto validates against (io/problem.xsd, embedded in the
 * binary), for XML editors. Printed on stdout, or written to FILE. */
#include "app.h"

#include "fem/error.h"
#include "io/problem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int app_schema(const AppOptions *o) {
    const char *text = problem_schema_text();
    const char *where = o->file && strcmp(o->file, "-") != 0 ? o->file : NULL;
    FILE *f = where ? fopen(where, "w") : stdout;
    if (!f) return fem_fail(FEM_ERR_INPUT, "cannot write the schema to '%s': %s", where, strerror(errno));
    int failed = fputs(text, f) < 0;
    failed |= where ? fclose(f) != 0 : fflush(f) != 0;
    if (failed)
        return fem_fail(FEM_ERR_INPUT, "cannot write the schema to %s%s%s: %s", where ? "'" : "",
                        where ? where : "standard output", where ? "'" : "", strerror(errno));
    return FEM_OK;
}
