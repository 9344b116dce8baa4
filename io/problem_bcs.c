/* What the boundary conditions of every physics section share: each names its boundary, its element name says
 * its kind, and a second condition of the same kind on one boundary is an error in the same words for every
 * physics. The sections (problem_heat.c, problem_elasticity.c) add their own values and clashes. */
#include "problem_internal.h"

#include "fem/error.h"

int problem_read_bc_common(const ProblemDoc *d, xmlNode *node, const char *const *kinds, int nkinds,
                           SourceLine *at, char *boundary, size_t cap, int *kind) {
    at->line = problem_line(d, node);
    FEM_TRY(problem_get_string(d, node, "boundary", "", boundary, cap));
    for (int k = 1; k < nkinds; k++)
        if (problem_is(node, kinds[k])) *kind = k;
    return FEM_OK;
}

int problem_bc_repeated(const ProblemDoc *d, xmlNode *node, const char *element, const char *boundary,
                        int first_line) {
    return problem_node_error(d, node,
                              "second <%s> on boundary '%s' (the first is on line %d); expected one <%s> per "
                              "boundary",
                              element, boundary, first_line, element);
}
