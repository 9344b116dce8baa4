/* The problem file's settings sections: <mesh>, <discretization>, <time>, <solver>, <output>, <device>.
 *
 * The format table (problem_format.c) reads, defaults and range-checks every value; these readers add what a
 * table row cannot say: paths, names, and checks that involve more than one value. */
#include "problem_internal.h"

#include "fem/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int problem_resolve_path(const ProblemDoc *d, xmlNode *node, const char *attr, const char *dir,
                         const char *rel, char *out, size_t cap) {
    int n;
    if (rel[0] == '/') {
        n = snprintf(out, cap, "%s", rel);
    } else {
        while (rel[0] == '.' && rel[1] == '/') {
            rel += 2;
            while (rel[0] == '/') rel++;
        }
        n = snprintf(out, cap, "%s/%s", dir, rel);
    }
    if (n < 0 || (size_t)n >= cap)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: the path in attribute '%s' on <%s> is %d bytes long once resolved; "
                        "expected at most %zu",
                        d->path, problem_attr_line(d, node, attr), attr, (const char *)node->name, n,
                        cap - 1);
    return FEM_OK;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

int problem_read_mesh(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    char file[PROBLEM_PATH_MAX];
    FEM_TRY(problem_get_string(d, node, "file", "", file, sizeof file));
    pb->mesh_at.line = problem_line(d, node);
    int line = problem_attr_line(d, node, "file");

    int geo = ends_with(file, ".geo");
    if (!geo && !ends_with(file, ".msh"))
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: mesh file '%s' is neither .msh nor .geo; expected a Gmsh mesh (.msh) or "
                        "geometry (.geo)",
                        d->path, line, file);
    static const char *geo_only[] = {"size", "order", "refine"};
    for (int i = 0; i < 3 && !geo; i++)
        if (problem_has(node, geo_only[i]))
            return problem_range_error(d, node, geo_only[i],
                                       "'%s' is already a mesh; expected size, order and refine "
                                       "only with a .geo geometry",
                                       file);
    FEM_TRY(problem_read_values(d, node, pb));
    FEM_TRY(problem_resolve_path(d, node, "file", pb->dir, file, pb->mesh_file, sizeof pb->mesh_file));
    struct stat st;
    if (stat(pb->mesh_file, &st) != 0) {
        if (errno == ENOENT)
            return fem_fail(FEM_ERR_INPUT, "%s:%d: mesh file '%s' not found (looked in %s)", d->path, line,
                            file, pb->mesh_file);
        return fem_fail(FEM_ERR_INPUT, "%s:%d: mesh file '%s' cannot be read (%s: %s)", d->path, line, file,
                        pb->mesh_file, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: mesh file '%s' is not a regular file (%s is a %s); expected a .msh or "
                        ".geo file",
                        d->path, line, file, pb->mesh_file,
                        S_ISDIR(st.st_mode) ? "directory" : "special file");
    if (access(pb->mesh_file, R_OK) != 0)
        return fem_fail(FEM_ERR_INPUT, "%s:%d: mesh file '%s' cannot be read (%s: %s)", d->path, line, file,
                        pb->mesh_file, strerror(errno));
    return FEM_OK;
}

int problem_read_discretization(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    return problem_read_values(d, node, pb);
}

int problem_read_time(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    TimeSettings *t = &pb->time;
    FEM_TRY(problem_read_values(d, node, t));
    t->at.line = problem_line(d, node);
    if (!(t->end > t->start))
        return problem_range_error(
            d, node, "end", "the run would end before it starts at %g s; expected end > start", t->start);
    /* a plausibility limit beyond the schema's step > 0 */
    if (t->step < 1e-12)
        return problem_range_error(d, node, "step",
                                   "heat conduction follows Fourier's law only on time scales above "
                                   "picoseconds; expected step >= 1e-12 [s]");
    if ((t->end - t->start) / t->step > 1e9)
        return problem_range_error(d, node, "step",
                                   "from %g s to %g s that is %.3g steps; expected at most 1e9 steps",
                                   t->start, t->end, (t->end - t->start) / t->step);
    return FEM_OK;
}

static int read_newton(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    FEM_TRY(problem_read_values(d, node, pb));
    if (pb->solver.rtol == 0 && pb->solver.atol == 0)
        return problem_node_error(d, node,
                                  "<newton> has rtol 0 and atol 0, so Newton could never stop; expected a "
                                  "positive rtol or atol");
    return FEM_OK;
}

int problem_read_solver(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    for (xmlNode *c = problem_first_child(node); c; c = problem_next_child(c)) {
        if (problem_is(c, "newton"))
            FEM_TRY(read_newton(d, c, pb));
        else if (problem_is(c, "linear"))
            FEM_TRY(problem_read_values(d, c, pb));
    }
    return FEM_OK;
}

int problem_read_output(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    OutputSettings *o = &pb->output;
    char directory[PROBLEM_PATH_MAX];
    FEM_TRY(problem_get_string(d, node, "directory", "results", directory, sizeof directory));
    FEM_TRY(
        problem_resolve_path(d, node, "directory", pb->dir, directory, o->directory, sizeof o->directory));
    FEM_TRY(problem_get_string(d, node, "basename", o->basename, o->basename, sizeof o->basename));
    if (strchr(o->basename, '/'))
        return problem_range_error(d, node, "basename",
                                   "the basename names files inside the output directory; "
                                   "expected a name without '/'");
    for (xmlNode *c = problem_first_child(node); c; c = problem_next_child(c)) {
        if (!problem_is(c, "probe")) {
            FEM_TRY(problem_read_values(d, c, pb));
        } else if (problem_is(c, "probe")) {
            if (o->nprobes == PROBLEM_PROBES_MAX)
                return problem_range_error(d, c, "name", "too many probes; expected at most 32");
            char name[PROBLEM_NAME_MAX];
            FEM_TRY(problem_get_string(d, c, "name", "", name, sizeof name));
            for (int i = 0; i < o->nprobes; i++)
                if (strcmp(o->probes[i].name, name) == 0)
                    return problem_range_error(d, c, "name", "another probe has this name; expected unique names");
            OutputProbe *probe = &o->probes[o->nprobes];
            FEM_TRY(problem_read_values(d, c, probe));
            snprintf(probe->name, sizeof probe->name, "%s", name);
            probe->at.line = (int)xmlGetLineNo(c);
            o->nprobes++;
        }
    }
    return FEM_OK;
}

int problem_read_device(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    return problem_read_values(d, node, pb);
}
