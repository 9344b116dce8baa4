/* The <heat> section: materials (with constant, polynomial or tabulated conductivity, optionally
 * anisotropic), boundary conditions and the initial temperature. The format table reads and range-checks
 * every value; this reader adds the checks across values (one conductivity law, a table's increasing
 * temperatures, a positive definite anisotropy, conditions that clash on one boundary).
 *
 * Boundary conditions on the same boundary: flux, convection and radiation add up, so they may be combined,
 * but each at most once; a fixed temperature leaves no room for any other condition on its boundary. */
#include "problem_internal.h"

#include "fem/error.h"

#include <stdio.h>
#include <string.h>

static const char *law_names = "<polynomial>, <table> or <constant>";

static int read_table(const ProblemDoc *d, xmlNode *node, HeatMaterial *m) {
    xmlNode *prev = NULL;
    for (xmlNode *p = problem_first_child(node); p; p = problem_next_child(p)) {
        double T, k;
        FEM_TRY(problem_get_number(d, p, "temperature", 0.0, &T));
        FEM_TRY(problem_get_number(d, p, "value", 0.0, &k));
        if (prev && !(T > m->k_T[m->k_npoints - 1]))
            return problem_range_error(d, p, "temperature",
                                       "not above the previous point's %g K (line %d); expected "
                                       "strictly increasing temperatures in a conductivity table",
                                       m->k_T[m->k_npoints - 1], problem_line(d, prev));
        if (m->k_npoints == PROBLEM_TABLE_MAX)
            return problem_node_error(d, node,
                                      "<table> of material '%s' has more than %d points; expected at most %d",
                                      m->region, PROBLEM_TABLE_MAX, PROBLEM_TABLE_MAX);
        m->k_T[m->k_npoints] = T;
        m->k_val[m->k_npoints] = k;
        m->k_npoints++;
        prev = p;
    }
    if (m->k_npoints < 2)
        return problem_node_error(d, node,
                                  "<table> of material '%s' has 1 point; expected at least 2 points to "
                                  "interpolate between",
                                  m->region);
    return FEM_OK;
}

static int read_anisotropy(const ProblemDoc *d, xmlNode *node, HeatMaterial *m) {
    FEM_TRY(problem_read_values(d, node, m));
    const double *t = m->k_tensor;
    /* Sylvester's criterion on [[xx xy xz] [xy yy yz] [xz yz zz]] */
    double m1 = t[0], m2 = t[0] * t[1] - t[3] * t[3];
    double m3 = t[0] * (t[1] * t[2] - t[4] * t[4]) - t[3] * (t[3] * t[2] - t[4] * t[5]) +
                t[5] * (t[3] * t[4] - t[1] * t[5]);
    if (!(m1 > 0 && m2 > 0 && m3 > 0))
        return problem_node_error(
            d, node,
            "the anisotropy tensor of material '%s' is not positive definite, so heat "
            "could flow from cold to hot; expected a symmetric positive definite tensor",
            m->region);
    m->anisotropic = 1;
    return FEM_OK;
}

static int read_conductivity(const ProblemDoc *d, xmlNode *node, HeatMaterial *m) {
    xmlNode *law = NULL;
    for (xmlNode *c = problem_first_child(node); c; c = problem_next_child(c)) {
        if (problem_is(c, "anisotropy")) {
            FEM_TRY(read_anisotropy(d, c, m));
            continue;
        }
        if (law)
            return problem_node_error(
                d, c,
                "<%s> after <%s> (line %d) in the conductivity of material '%s'; expected "
                "exactly one of %s",
                (const char *)c->name, (const char *)law->name, problem_line(d, law), m->region, law_names);
        law = c;
        if (problem_is(c, "constant")) {
            m->k_kind = CONDUCTIVITY_CONSTANT;
            FEM_TRY(problem_read_values(d, c, m));
        } else if (problem_is(c, "polynomial")) {
            m->k_kind = CONDUCTIVITY_POLYNOMIAL;
            FEM_TRY(problem_get_numbers(d, c, "coefficients", m->k_coef, PROBLEM_TABLE_MAX, &m->k_ncoef));
        } else if (problem_is(c, "table")) {
            m->k_kind = CONDUCTIVITY_TABLE;
            FEM_TRY(read_table(d, c, m));
        }
    }
    if (!law)
        return problem_node_error(d, node, "<conductivity> of material '%s' gives no law; expected one of %s",
                                  m->region, law_names);
    return FEM_OK;
}

static int read_material(const ProblemDoc *d, xmlNode *node, HeatMaterial *m) {
    m->at.line = problem_line(d, node);
    FEM_TRY(problem_get_string(d, node, "region", "", m->region, sizeof m->region));
    FEM_TRY(problem_read_values(d, node, m));
    m->k_kind = CONDUCTIVITY_CONSTANT;
    xmlNode *element = problem_first_child(node); /* the table allows only <conductivity> here */
    if (element && problem_has(node, "conductivity"))
        return problem_node_error(d, element,
                                  "material '%s' gives its conductivity both as an attribute and as a "
                                  "<conductivity> element; expected one of the two",
                                  m->region);
    if (element) return read_conductivity(d, element, m);
    if (!problem_has(node, "conductivity"))
        return problem_node_error(d, node,
                                  "material '%s' has no conductivity; expected a conductivity attribute or a "
                                  "<conductivity> element",
                                  m->region);
    return FEM_OK;
}

/* The element of each HeatBcKind. */
static const char *const bc_elements[] = {"?", "temperature", "flux", "convection", "radiation"};

static int read_bc(const ProblemDoc *d, xmlNode *node, HeatBc *bc) {
    int kind = bc->kind;
    FEM_TRY(problem_read_bc_common(d, node, bc_elements, HEAT_BC_RADIATION + 1, &bc->at, bc->boundary,
                                   sizeof bc->boundary, &kind));
    bc->kind = (HeatBcKind)kind;
    return problem_read_values(d, node, bc);
}

/* The new condition bcs[n] against those before it. */
static int check_bc_clash(const ProblemDoc *d, xmlNode *node, const HeatBc *bcs, int n) {
    const HeatBc *b = &bcs[n];
    for (int i = 0; i < n; i++) {
        const HeatBc *a = &bcs[i];
        if (strcmp(a->boundary, b->boundary) != 0) continue;
        if (a->kind == b->kind)
            return problem_bc_repeated(d, node, bc_elements[b->kind], b->boundary, a->at.line);
        if (a->kind == HEAT_BC_TEMPERATURE || b->kind == HEAT_BC_TEMPERATURE)
            return problem_node_error(d, node,
                                      "<%s> on boundary '%s', which already has <%s> (line %d); expected no "
                                      "other heat condition on a boundary with a fixed temperature",
                                      bc_elements[b->kind], b->boundary, bc_elements[a->kind], a->at.line);
    }
    return FEM_OK;
}

int problem_read_heat(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    HeatProblem *h = &pb->heat;
    h->present = 1;
    h->at.line = problem_line(d, node);
    int nmat = 0, nbc = 0;
    for (xmlNode *c = node->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (problem_is(c, "material"))
            nmat++;
        else if (!problem_is(c, "initial"))
            nbc++;
    }
    FEM_ALLOC(h->materials, nmat, "heat materials");
    FEM_ALLOC(h->bcs, nbc, "heat boundary conditions");
    for (xmlNode *c = problem_first_child(node); c; c = problem_next_child(c)) {
        if (problem_is(c, "initial")) {
            h->initial_at.line = problem_line(d, c);
            FEM_TRY(problem_read_values(d, c, pb));
        } else if (problem_is(c, "material")) {
            HeatMaterial *m = &h->materials[h->nmaterials];
            FEM_TRY(read_material(d, c, m));
            for (int i = 0; i < h->nmaterials; i++)
                if (strcmp(h->materials[i].region, m->region) == 0)
                    return problem_node_error(
                        d, c,
                        "second heat material for region '%s' (the first is on line %d); "
                        "expected one material per region",
                        m->region, h->materials[i].at.line);
            h->nmaterials++;
        } else {
            FEM_TRY(read_bc(d, c, &h->bcs[h->nbcs]));
            FEM_TRY(check_bc_clash(d, c, h->bcs, h->nbcs));
            h->nbcs++;
        }
    }
    return FEM_OK;
}
