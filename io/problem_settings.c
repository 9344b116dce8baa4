/* The problem file's settings sections: <mesh>, <discretization>, <time>, <solver>, <output>, <device>.
 *
 * Defaults are filled by problem_read before these run; each reader only overrides what the file gives, and
 * checks the range of every value it reads, naming the physical or numerical reason in the message. */
#include "problem_internal.h"

#include "fem/error.h"
#include "fem/quadrature.h"

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
    FEM_TRY(problem_get_number(d, node, "size", 0.0, &pb->mesh_size));
    FEM_TRY(problem_get_integer(d, node, "order", 1, &pb->mesh_order));
    FEM_TRY(problem_get_integer(d, node, "refine", 0, &pb->mesh_refine));
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
    if (pb->mesh_size < 0)
        return problem_range_error(d, node, "size",
                                   "a cell size is a length; expected size >= 0 [m] (0 keeps the "
                                   ".geo's own sizes)");
    if (pb->mesh_order < 1 || pb->mesh_order > 2)
        return problem_range_error(d, node, "order",
                                   "Gmsh meshes a .geo with straight or quadratic cells; expected "
                                   "order 1 or 2");
    if (pb->mesh_refine < 0)
        return problem_range_error(d, node, "refine",
                                   "a number of refinements cannot be negative; expected "
                                   "refine >= 0");

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
    FEM_TRY(problem_get_integer(d, node, "order", 1, &pb->order));
    FEM_TRY(problem_get_integer(d, node, "quadrature-degree", 0, &pb->quadrature_degree));
    if (pb->order < 1 || pb->order > 8)
        return problem_range_error(d, node, "order",
                                   "femto's elements have orders 1 to 8; expected 1 <= order <= 8");
    if (pb->quadrature_degree < 0 || pb->quadrature_degree > QUADRATURE_MAX_DEGREE)
        return problem_range_error(
            d, node, "quadrature-degree",
            "femto's quadrature rules go up to degree %d; expected 0 (femto's default) to %d",
            QUADRATURE_MAX_DEGREE, QUADRATURE_MAX_DEGREE);
    return FEM_OK;
}

int problem_read_time(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    TimeSettings *t = &pb->time;
    int scheme;
    FEM_TRY(problem_get_enum(d, node, "scheme", TIME_BACKWARD_EULER, &scheme));
    t->scheme = (TimeScheme)scheme;
    FEM_TRY(problem_get_number(d, node, "start", 0.0, &t->start));
    FEM_TRY(problem_get_number(d, node, "end", 0.0, &t->end));
    FEM_TRY(problem_get_number(d, node, "step", 0.0, &t->step));
    FEM_TRY(problem_get_integer(d, node, "output-every", 1, &t->output_every));
    t->at.line = problem_line(d, node);
    if (!(t->step > 0))
        return problem_range_error(d, node, "step", "time only moves forward; expected step > 0 [s]");
    if (!(t->end > t->start))
        return problem_range_error(
            d, node, "end", "the run would end before it starts at %g s; expected end > start", t->start);
    if (t->step < 1e-12)
        return problem_range_error(d, node, "step",
                                   "heat conduction follows Fourier's law only on time scales above "
                                   "picoseconds; expected step >= 1e-12 [s]");
    if ((t->end - t->start) / t->step > 1e9)
        return problem_range_error(d, node, "step",
                                   "from %g s to %g s that is %.3g steps; expected at most 1e9 steps",
                                   t->start, t->end, (t->end - t->start) / t->step);
    if (t->output_every < 1)
        return problem_range_error(d, node, "output-every",
                                   "results are written every N steps; expected "
                                   "output-every >= 1");
    return FEM_OK;
}

static int read_newton(const ProblemDoc *d, xmlNode *node, SolverSettings *s) {
    FEM_TRY(problem_get_number(d, node, "rtol", s->rtol, &s->rtol));
    FEM_TRY(problem_get_number(d, node, "atol", s->atol, &s->atol));
    FEM_TRY(problem_get_number(d, node, "stol", s->stol, &s->stol));
    FEM_TRY(problem_get_integer(d, node, "max-iterations", s->max_iterations, &s->max_iterations));
    FEM_TRY(problem_get_boolean(d, node, "line-search", s->line_search, &s->line_search));
    FEM_TRY(problem_get_integer(d, node, "load-steps", s->load_steps, &s->load_steps));
    if (!(s->rtol >= 0 && s->rtol < 1))
        return problem_range_error(d, node, "rtol",
                                   "Newton stops when the residual falls to this fraction of its "
                                   "scale; expected 0 <= rtol < 1");
    if (!(s->stol >= 0 && s->stol < 1))
        return problem_range_error(d, node, "stol",
                                   "Newton stops when a correction is this fraction of the solution; "
                                   "expected 0 <= stol < 1");
    if (!(s->atol >= 0))
        return problem_range_error(d, node, "atol", "a residual norm is never negative; expected atol >= 0");
    if (s->rtol == 0 && s->atol == 0)
        return problem_node_error(d, node,
                                  "<newton> has rtol 0 and atol 0, so Newton could never stop; expected a "
                                  "positive rtol or atol");
    if (s->max_iterations < 1)
        return problem_range_error(d, node, "max-iterations",
                                   "Newton needs at least one iteration; expected "
                                   "max-iterations >= 1");
    if (s->load_steps < 1)
        return problem_range_error(d, node, "load-steps",
                                   "the load is applied in this many increments; expected "
                                   "load-steps >= 1");
    return FEM_OK;
}

static int read_linear(const ProblemDoc *d, xmlNode *node, SolverSettings *s) {
    int krylov, precond;
    FEM_TRY(problem_get_enum(d, node, "type", s->krylov, &krylov));
    FEM_TRY(problem_get_enum(d, node, "preconditioner", s->precond, &precond));
    s->krylov = (KrylovKind)krylov;
    s->precond = (PrecondKind)precond;
    FEM_TRY(problem_get_number(d, node, "rtol", s->linear_rtol, &s->linear_rtol));
    FEM_TRY(
        problem_get_integer(d, node, "max-iterations", s->linear_max_iterations, &s->linear_max_iterations));
    FEM_TRY(problem_get_integer(d, node, "restart", s->restart, &s->restart));
    FEM_TRY(problem_get_integer(d, node, "smoothing-degree", s->smoothing_degree, &s->smoothing_degree));
    FEM_TRY(problem_get_integer(d, node, "levels", s->mg_levels, &s->mg_levels));
    FEM_TRY(problem_get_integer(d, node, "coarse-cycles", s->coarse_cycles, &s->coarse_cycles));
    int coarse;
    FEM_TRY(problem_get_enum(d, node, "coarse-solver", s->coarse, &coarse));
    s->coarse = (CoarseKind)coarse;
    if (s->smoothing_degree < 1 || s->smoothing_degree > 10)
        return problem_range_error(d, node, "smoothing-degree",
                                   "the degree of multigrid's Chebyshev smoother; expected 1 to 10");
    if (s->mg_levels < 0 || s->mg_levels > 8)
        return problem_range_error(d, node, "levels",
                                   "multigrid uses at most this many levels (0: down to order 1); expected 0 to 8");
    if (s->coarse_cycles < 1 || s->coarse_cycles > 20)
        return problem_range_error(d, node, "coarse-cycles",
                                   "BoomerAMG V-cycles per coarse solve; expected 1 to 20");
    if (!(s->linear_rtol > 0 && s->linear_rtol < 1))
        return problem_range_error(d, node, "rtol",
                                   "the Krylov solver stops when the residual falls to this "
                                   "fraction of the first; expected 0 < rtol < 1");
    if (s->linear_max_iterations < 1)
        return problem_range_error(d, node, "max-iterations", "expected max-iterations >= 1");
    if (s->restart < 1)
        return problem_range_error(d, node, "restart",
                                   "GMRES keeps this many basis vectors; expected restart >= 1");
    return FEM_OK;
}

int problem_read_solver(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    for (xmlNode *c = problem_first_child(node); c; c = problem_next_child(c)) {
        if (problem_is(c, "newton"))
            FEM_TRY(read_newton(d, c, &pb->solver));
        else if (problem_is(c, "linear"))
            FEM_TRY(read_linear(d, c, &pb->solver));
    }
    return FEM_OK;
}

/* <plots>: whether to draw the PNG plots, and their size (a plot smaller than its labels is unreadable; a
 * larger one than a 4K screen is a slip). */
static int read_plots(const ProblemDoc *d, xmlNode *c, OutputSettings *o) {
    FEM_TRY(problem_get_boolean(d, c, "enabled", o->plots, &o->plots));
    FEM_TRY(problem_get_integer(d, c, "width", o->plot_width, &o->plot_width));
    FEM_TRY(problem_get_integer(d, c, "height", o->plot_height, &o->plot_height));
    if (o->plot_width < 200 || o->plot_width > 4000)
        return problem_range_error(d, c, "width",
                                   "the plots' width in pixels; expected 200 <= width <= 4000");
    if (o->plot_height < 150 || o->plot_height > 4000)
        return problem_range_error(d, c, "height",
                                   "the plots' height in pixels; expected 150 <= height <= 4000");
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
        if (problem_is(c, "vtu")) {
            FEM_TRY(problem_get_boolean(d, c, "enabled", o->vtu, &o->vtu));
            FEM_TRY(problem_get_boolean(d, c, "compress", o->vtu_compress, &o->vtu_compress));
            FEM_TRY(problem_get_boolean(d, c, "subdivide", o->vtu_subdivide, &o->vtu_subdivide));
        } else if (problem_is(c, "hdf5")) {
            FEM_TRY(problem_get_boolean(d, c, "enabled", o->hdf5, &o->hdf5));
        } else if (problem_is(c, "plots")) {
            FEM_TRY(read_plots(d, c, o));
        } else if (problem_is(c, "fields")) {
            FEM_TRY(problem_get_boolean(d, c, "flux", o->flux, &o->flux));
            FEM_TRY(problem_get_boolean(d, c, "stress", o->stress, &o->stress));
            FEM_TRY(problem_get_boolean(d, c, "strain-energy", o->strain_energy, &o->strain_energy));
        } else if (problem_is(c, "probe")) {
            if (o->nprobes == PROBLEM_PROBES_MAX)
                return problem_range_error(d, c, "name", "too many probes; expected at most 32");
            char name[PROBLEM_NAME_MAX];
            FEM_TRY(problem_get_string(d, c, "name", "", name, sizeof name));
            for (int i = 0; i < o->nprobes; i++)
                if (strcmp(o->probes[i].name, name) == 0)
                    return problem_range_error(d, c, "name", "another probe has this name; expected unique names");
            snprintf(o->probes[o->nprobes].name, sizeof o->probes[0].name, "%s", name);
            double *x = o->probes[o->nprobes].x;
            FEM_TRY(problem_get_number(d, c, "x", 0.0, &x[0]));
            FEM_TRY(problem_get_number(d, c, "y", 0.0, &x[1]));
            FEM_TRY(problem_get_number(d, c, "z", 0.0, &x[2]));
            o->probes[o->nprobes].at.line = (int)xmlGetLineNo(c);
            o->nprobes++;
        }
    }
    return FEM_OK;
}

int problem_read_device(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    DeviceSettings *s = &pb->device;
    int kind, assembly;
    FEM_TRY(problem_get_enum(d, node, "type", s->kind, &kind));
    FEM_TRY(problem_get_enum(d, node, "assembly", s->assembly, &assembly));
    s->kind = (DeviceKind)kind;
    s->assembly = (AssemblyKind)assembly;
    FEM_TRY(problem_get_integer(d, node, "threads", s->threads, &s->threads));
    if (s->threads < 0)
        return problem_range_error(d, node, "threads",
                                   "a thread count cannot be negative; expected threads >= 0 "
                                   "(0 lets OpenMP choose)");
    return FEM_OK;
}
