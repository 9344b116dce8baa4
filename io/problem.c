/* XML problem reader: see problem.h. */
#include "problem.h"

#include "fem/error.h"

#include <string.h>

extern const char femto_problem_xsd[];

const char *problem_schema_text(void) { return femto_problem_xsd; }

int problem_read(const char *path, Problem *pb)
{
    memset(pb, 0, sizeof *pb);
    return fem_fail(FEM_ERR_INPUT, "%s: problem files are not read yet", path);
}

void problem_destroy(Problem *pb) { (void)pb; }
