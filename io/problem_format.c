/* femto's table of the problem file's elements and attributes, and the structural check built on it.
 *
 * The table is the one place in C that lists which names are allowed where; messages take their lists of
 * valid names from it, the typed reads take the type of each value from it, and tests/problem checks that
 * io/problem.xsd declares the same elements, attributes, types and enumerations. Names appear in the order
 * messages list them (and docs/problem-file.md describes them). */
#include "problem_internal.h"

#include "fem/error.h"

#include <stdio.h>
#include <string.h>

static const int elastic_models[] = {ELASTIC_LINEAR, ELASTIC_NEO_HOOKEAN};
static const int planes[] = {PLANE_STRAIN, PLANE_STRESS};
static const int temperature_fields[] = {1};
static const int time_schemes[] = {TIME_BACKWARD_EULER, TIME_BDF2, TIME_CRANK_NICOLSON};
static const int krylovs[] = {KRYLOV_AUTO, KRYLOV_CG, KRYLOV_GMRES, KRYLOV_BICGSTAB};
static const int coarse_solvers[] = {COARSE_SOLVER_AUTO, COARSE_SOLVER_BOOMERAMG, COARSE_SOLVER_CUDSS,
                                     COARSE_SOLVER_CHOLMOD};
static const int preconditioners[] = {PRECOND_MULTIGRID, PRECOND_JACOBI, PRECOND_CHEBYSHEV, PRECOND_NONE};
static const int devices[] = {DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA};
static const int assemblies[] = {ASSEMBLY_GATHER, ASSEMBLY_ATOMIC};

/* Bounds of physical quantities (see ProblemBound: far above every real value, far below overflow). */
static const ProblemBound modulus = {1e15, "Pa", "diamond, the stiffest solid, has E = 1.2e12 Pa"};
static const ProblemBound stress = {1e15, "Pa", "the strongest solids fail below about 1e11 Pa"};
static const ProblemBound displacement = {1e6, "m", "femto models bodies, not planets"};
static const ProblemBound acceleration = {1e9, "m/s^2", "the fastest ultracentrifuges reach about 1e7 m/s^2"};
static const ProblemBound density = {1e5, "kg/m^3", "osmium, the densest solid, has 22590 kg/m^3"};
static const ProblemBound expansion = {1e-2, "1/K", "solids expand by at most about 3e-4 per kelvin"};
static const ProblemBound temperature = {1e5, "K", "every solid has melted and boiled long before 1e5 K"};
static const ProblemBound conductivity = {1e5, "W/(m K)", "diamond, the best conductor, has 2.2e3 W/(m K)"};
static const ProblemBound ratio = {1e6, "",
                                   "the most anisotropic conductors (graphite) reach a ratio of about 1e3"};
static const ProblemBound specific_heat = {1e6, "J/(kg K)", "hydrogen's, the largest, is 1.4e4 J/(kg K)"};
static const ProblemBound source = {1e15, "W/m^3", "the core of a nuclear reactor produces about 1e9 W/m^3"};
static const ProblemBound flux = {1e12, "W/m^2", "the surface of the Sun emits 6.3e7 W/m^2"};
static const ProblemBound htc = {1e7, "W/(m^2 K)", "boiling and condensation reach about 1e5 W/(m^2 K)"};
static const ProblemBound seconds = {1e18, "s", "the universe is 4.4e17 s old"};

#define REQ(n, t)                                                                                            \
    { n, t, 1, NULL, NULL, NULL }
#define OPT(n, t)                                                                                            \
    { n, t, 0, NULL, NULL, NULL }
#define ENUM(n, words, values)                                                                               \
    { n, PF_ENUM, 0, words, values, NULL }
/* numbers with a bound */
#define REQN(n, b)                                                                                           \
    { n, PF_NUMBER, 1, NULL, NULL, &b }
#define OPTN(n, b)                                                                                           \
    { n, PF_NUMBER, 0, NULL, NULL, &b }

const ProblemElementSpec problem_format[] = {
    {"femto", "mesh! discretization? heat? elasticity? time? solver? output? device?", {{0}}},
    {"femto/mesh",
     "",
     {REQ("file", PF_STRING), OPT("size", PF_NUMBER), OPT("order", PF_INTEGER), OPT("refine", PF_INTEGER)}},
    {"femto/discretization", "", {OPT("order", PF_INTEGER), OPT("quadrature-degree", PF_INTEGER)}},

    {"femto/heat", "material+ temperature* flux* convection* radiation* initial?", {{0}}},
    {"femto/heat/material",
     "conductivity?",
     {REQ("region", PF_NAME), OPTN("conductivity", conductivity), OPTN("density", density),
      OPTN("specific-heat", specific_heat), OPTN("source", source)}},
    {"femto/heat/material/conductivity", "polynomial? table? constant? anisotropy?", {{0}}},
    {"femto/heat/material/conductivity/polynomial", "", {REQ("coefficients", PF_NUMBERS)}},
    {"femto/heat/material/conductivity/table", "point+", {{0}}},
    {"femto/heat/material/conductivity/table/point",
     "",
     {REQN("temperature", temperature), REQN("value", conductivity)}},
    {"femto/heat/material/conductivity/constant", "", {REQN("value", conductivity)}},
    {"femto/heat/material/conductivity/anisotropy",
     "",
     {OPTN("xx", ratio), OPTN("yy", ratio), OPTN("zz", ratio), OPTN("xy", ratio), OPTN("yz", ratio),
      OPTN("xz", ratio)}},
    {"femto/heat/temperature", "", {REQ("boundary", PF_NAME), REQN("value", temperature)}},
    {"femto/heat/flux", "", {REQ("boundary", PF_NAME), REQN("value", flux)}},
    {"femto/heat/convection", "", {REQ("boundary", PF_NAME), REQN("h", htc), REQN("ambient", temperature)}},
    {"femto/heat/radiation",
     "",
     {REQ("boundary", PF_NAME), REQ("emissivity", PF_NUMBER), REQN("ambient", temperature)}},
    {"femto/heat/initial", "", {REQN("temperature", temperature)}},

    {"femto/elasticity",
     "material+ fixed* displacement* traction* pressure* gravity? temperature?",
     {ENUM("model", "linear neo-hookean", elastic_models), ENUM("plane", "strain stress", planes)}},
    {"femto/elasticity/material",
     "",
     {REQ("region", PF_NAME), OPTN("young", modulus), OPT("poisson", PF_NUMBER), OPTN("lambda", modulus),
      OPTN("mu", modulus), OPTN("density", density), OPTN("expansion", expansion),
      OPTN("reference-temperature", temperature)}},
    {"femto/elasticity/fixed", "", {REQ("boundary", PF_NAME), OPT("components", PF_COMPONENTS)}},
    {"femto/elasticity/displacement",
     "",
     {REQ("boundary", PF_NAME), OPTN("x", displacement), OPTN("y", displacement), OPTN("z", displacement)}},
    {"femto/elasticity/traction",
     "",
     {REQ("boundary", PF_NAME), OPTN("x", stress), OPTN("y", stress), OPTN("z", stress)}},
    {"femto/elasticity/pressure", "", {REQ("boundary", PF_NAME), REQN("value", stress)}},
    {"femto/elasticity/gravity",
     "",
     {OPTN("x", acceleration), OPTN("y", acceleration), OPTN("z", acceleration)}},
    {"femto/elasticity/temperature",
     "",
     {OPTN("value", temperature), ENUM("field", "heat", temperature_fields)}},

    {"femto/time",
     "",
     {ENUM("scheme", "backward-euler bdf2 crank-nicolson", time_schemes), OPTN("start", seconds),
      REQN("end", seconds), REQN("step", seconds), OPT("output-every", PF_INTEGER)}},
    {"femto/solver", "newton? linear?", {{0}}},
    {"femto/solver/newton",
     "",
     {OPT("rtol", PF_NUMBER), OPT("atol", PF_NUMBER), OPT("stol", PF_NUMBER),
      OPT("max-iterations", PF_INTEGER), OPT("line-search", PF_BOOLEAN), OPT("load-steps", PF_INTEGER)}},
    {"femto/solver/linear",
     "",
     {ENUM("type", "auto cg gmres bicgstab", krylovs),
      ENUM("preconditioner", "multigrid jacobi chebyshev none", preconditioners), OPT("rtol", PF_NUMBER),
      OPT("max-iterations", PF_INTEGER), OPT("restart", PF_INTEGER), OPT("smoothing-degree", PF_INTEGER),
      OPT("levels", PF_INTEGER), ENUM("coarse-solver", "auto boomeramg cudss cholmod", coarse_solvers),
      OPT("coarse-cycles", PF_INTEGER)}},
    {"femto/output",
     "vtu? hdf5? fields? plots? probe*",
     {OPT("directory", PF_STRING), OPT("basename", PF_NAME)}},
    {"femto/output/vtu",
     "",
     {OPT("enabled", PF_BOOLEAN), OPT("compress", PF_BOOLEAN), OPT("subdivide", PF_BOOLEAN)}},
    {"femto/output/hdf5", "", {OPT("enabled", PF_BOOLEAN)}},
    {"femto/output/plots",
     "",
     {OPT("enabled", PF_BOOLEAN), OPT("width", PF_INTEGER), OPT("height", PF_INTEGER)}},
    {"femto/output/probe",
     "",
     {REQ("name", PF_NAME), REQ("x", PF_NUMBER), OPT("y", PF_NUMBER), OPT("z", PF_NUMBER)}},
    {"femto/output/fields",
     "",
     {OPT("flux", PF_BOOLEAN), OPT("stress", PF_BOOLEAN), OPT("strain-energy", PF_BOOLEAN)}},
    {"femto/device",
     "",
     {ENUM("type", "auto cpu cuda", devices), ENUM("assembly", "gather atomic", assemblies),
      OPT("threads", PF_INTEGER)}},
};

const int problem_format_count = (int)(sizeof problem_format / sizeof problem_format[0]);

const ProblemElementSpec *problem_format_find(const char *path) {
    for (int i = 0; i < problem_format_count; i++)
        if (strcmp(problem_format[i].path, path) == 0) return &problem_format[i];
    return NULL;
}

const ProblemAttrSpec *problem_format_attr(const ProblemElementSpec *spec, const char *name) {
    for (const ProblemAttrSpec *a = spec->attrs; a->name; a++)
        if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

/* Looks `name` up in a children rule; *min and *max (-1: unbounded) receive how often it may occur. */
int problem_format_child(const ProblemElementSpec *spec, const char *name, int *min, int *max) {
    size_t n = strlen(name);
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p == w) break;
        size_t wn = (size_t)(p - w) - 1;
        if (wn == n && memcmp(w, name, n) == 0) {
            char mult = w[wn];
            *min = mult == '!' || mult == '+';
            *max = mult == '!' || mult == '?' ? 1 : -1;
            return 1;
        }
    }
    return 0;
}

/* "material, temperature, flux": the children's names, separated by ", ". */
static void list_children(const ProblemElementSpec *spec, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p == w) break;
        n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%.*s", n ? ", " : "", (int)(p - w - 1), w);
    }
}

static void list_attrs(const ProblemElementSpec *spec, int required_only, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const ProblemAttrSpec *a = spec->attrs; a->name; a++)
        if (!required_only || a->required)
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", a->name);
}

/* "prefix:name" as written. */
static void element_name(const xmlNode *node, char *out, size_t cap) {
    if (node->ns && node->ns->prefix)
        snprintf(out, cap, "%s:%s", (const char *)node->ns->prefix, (const char *)node->name);
    else
        snprintf(out, cap, "%s", (const char *)node->name);
}

static int is_blank(const char *s) {
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

/* The first line of stray text, and the line it is on. libxml2 dates a text node by the line where it ends;
 * counting the newlines after its first visible character gives the line where that character is. */
static int stray_text(const ProblemDoc *d, xmlNode *parent, xmlNode *text) {
    const char *s = (const char *)text->content;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    long line = xmlGetLineNo(text);
    for (const char *p = s; *p; p++) line -= *p == '\n';
    char excerpt[40];
    size_t n = 0;
    for (; s[n] && n + 4 < sizeof excerpt && s[n] != '\n' && s[n] != '\r'; n++) excerpt[n] = s[n];
    while (n > 0 && (excerpt[n - 1] == ' ' || excerpt[n - 1] == '\t')) n--;
    if (!is_blank(s + n)) {
        while (n > 0 && (excerpt[n - 1] & 0xC0) == 0x80) n--; /* do not cut a UTF-8 sequence */
        if (n > 0 && (unsigned char)excerpt[n - 1] >= 0xC0) n--;
        memcpy(excerpt + n, "...", 4);
    } else {
        excerpt[n] = '\0';
    }
    return fem_fail(FEM_ERR_INPUT,
                    "%s:%ld: unexpected text '%s' in <%s>; values are given in attributes, not "
                    "between tags",
                    d->path, line > 0 ? line : (long)problem_line(d, parent), excerpt,
                    (const char *)parent->name);
}

static int check_children(const ProblemDoc *d, xmlNode *node, const ProblemElementSpec *spec, char *path,
                          size_t path_len, size_t path_cap);

/* xsi:noNamespaceSchemaLocation on the root tells an XML editor where the schema is, for completion and
 * checking while typing. femto always validates against its embedded schema, so the hint changes nothing. */
static int is_schema_hint(const xmlNode *node, const xmlAttr *a) {
    return node->parent && node->parent->type == XML_DOCUMENT_NODE && a->ns &&
           strcmp((const char *)a->ns->href, "http://www.w3.org/2001/XMLSchema-instance") == 0 &&
           strcmp((const char *)a->name, "noNamespaceSchemaLocation") == 0;
}

static int check_attributes(const ProblemDoc *d, xmlNode *node, const ProblemElementSpec *spec) {
    const char *elem = (const char *)node->name;
    for (xmlAttr *a = node->properties; a; a = a->next) {
        char name[256];
        if (a->ns && a->ns->prefix)
            snprintf(name, sizeof name, "%s:%s", (const char *)a->ns->prefix, (const char *)a->name);
        else
            snprintf(name, sizeof name, "%s", (const char *)a->name);
        if (is_schema_hint(node, a)) continue;
        const ProblemAttrSpec *as = a->ns ? NULL : problem_format_attr(spec, name);
        if (!as) {
            int line = problem_attr_line(d, node, name);
            if (!spec->attrs[0].name)
                return fem_fail(FEM_ERR_INPUT,
                                "%s:%d: unknown attribute '%s' on <%s>; <%s> takes no attributes", d->path,
                                line, name, elem, elem);
            char valid[512];
            list_attrs(spec, 0, valid, sizeof valid);
            return fem_fail(FEM_ERR_INPUT, "%s:%d: unknown attribute '%s' on <%s>; valid attributes are: %s",
                            d->path, line, name, elem, valid);
        }
        FEM_TRY(problem_check_value(d, node, as));
    }
    for (const ProblemAttrSpec *as = spec->attrs; as->name; as++) {
        if (!as->required || xmlHasNsProp(node, (const xmlChar *)as->name, NULL)) continue;
        char required[256];
        list_attrs(spec, 1, required, sizeof required);
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: missing required attribute '%s' on <%s>; required attributes are: %s",
                        d->path, problem_line(d, node), as->name, elem, required);
    }
    return FEM_OK;
}

/* Checks `node` (already known to be allowed where it is) and everything inside it. */
static int check_element(const ProblemDoc *d, xmlNode *node, char *path, size_t path_len, size_t path_cap) {
    const ProblemElementSpec *spec = problem_format_find(path);
    if (!spec) return fem_fail(FEM_ERR_INTERNAL, "femto bug: no format entry for %s", path);
    FEM_TRY(check_attributes(d, node, spec));
    return check_children(d, node, spec, path, path_len, path_cap);
}

static int check_children(const ProblemDoc *d, xmlNode *node, const ProblemElementSpec *spec, char *path,
                          size_t path_len, size_t path_cap) {
    const char *elem = (const char *)node->name;
    for (xmlNode *c = node->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (is_blank((const char *)c->content)) continue;
            return stray_text(d, node, c);
        }
        if (c->type != XML_ELEMENT_NODE) continue; /* comments and processing instructions */
        char name[256];
        element_name(c, name, sizeof name);
        int min, max;
        if (c->ns || !problem_format_child(spec, name, &min, &max)) {
            if (!spec->children[0])
                return fem_fail(FEM_ERR_INPUT,
                                "%s:%d: unknown element <%s> in <%s>; <%s> takes no child elements", d->path,
                                problem_line(d, c), name, elem, elem);
            char valid[512];
            list_children(spec, valid, sizeof valid);
            return fem_fail(FEM_ERR_INPUT, "%s:%d: unknown element <%s> in <%s>; expected one of: %s",
                            d->path, problem_line(d, c), name, elem, valid);
        }
        if (max == 1) {
            for (xmlNode *prev = node->children; prev != c; prev = prev->next) {
                if (prev->type != XML_ELEMENT_NODE || prev->ns || strcmp((const char *)prev->name, name) != 0)
                    continue;
                return fem_fail(FEM_ERR_INPUT,
                                "%s:%d: duplicate element <%s> in <%s> (the first is on line %d); "
                                "expected at most one <%s>",
                                d->path, problem_line(d, c), name, elem, problem_line(d, prev), name);
            }
        }
        size_t n = strlen(name);
        if (path_len + 1 + n + 1 > path_cap)
            return fem_fail(FEM_ERR_INTERNAL, "femto bug: element path too long");
        path[path_len] = '/';
        memcpy(path + path_len + 1, name, n + 1);
        FEM_TRY(check_element(d, c, path, path_len + 1 + n, path_cap));
        path[path_len] = '\0';
    }
    /* required children, in the table's order */
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p == w) break;
        if (p[-1] != '!' && p[-1] != '+') continue;
        int wn = (int)(p - w - 1), found = 0;
        for (xmlNode *c = node->children; c && !found; c = c->next)
            found = c->type == XML_ELEMENT_NODE && !c->ns && strlen((const char *)c->name) == (size_t)wn &&
                    memcmp(c->name, w, (size_t)wn) == 0;
        if (found) continue;
        return fem_fail(FEM_ERR_INPUT, "%s:%d: missing required element <%.*s> in <%s>; expected %s <%.*s>",
                        d->path, problem_line(d, node), wn, w, elem,
                        p[-1] == '!' ? "exactly one" : "at least one", wn, w);
    }
    return FEM_OK;
}

int problem_check_structure(const ProblemDoc *d) {
    xmlNode *root = xmlDocGetRootElement(d->doc);
    char name[256];
    element_name(root, name, sizeof name);
    if (strcmp((const char *)root->name, "femto") != 0 || (root->ns && root->ns->prefix))
        return fem_fail(FEM_ERR_INPUT, "%s:%d: the root element is <%s>; expected <femto>", d->path,
                        problem_line(d, root), name);
    if (root->ns)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: <femto> is in the namespace '%s'; expected <femto> without xmlns "
                        "(femto problem files use no namespace)",
                        d->path, problem_line(d, root), (const char *)root->ns->href);
    char path[256] = "femto";
    return check_element(d, root, path, strlen(path), sizeof path);
}
