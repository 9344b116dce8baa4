/* The <elasticity> section: model, materials (Young's modulus and Poisson's ratio, or the Lame parameters),
 * boundary conditions, gravity and the temperature for thermal strain.
 *
 * Both pairs of elastic constants are always filled, so the physics never converts. The admissible range is
 * that of a stable isotropic material: shear modulus mu > 0 and bulk modulus lambda + 2 mu / 3 > 0, which is
 * E > 0 and -1 < nu < 0.5 in the other pair. The format table checks the ranges of single values; this reader
 * checks the pairs and the bulk modulus, which involve two. */
#include "problem_internal.h"

#include "fem/error.h"

#include <stdio.h>
#include <string.h>

static int read_constants(const ProblemDoc *d, xmlNode *node, ElasticMaterial *m) {
    int has_e = problem_has(node, "young"), has_nu = problem_has(node, "poisson");
    int has_l = problem_has(node, "lambda"), has_mu = problem_has(node, "mu");
    if ((has_e || has_nu) && (has_l || has_mu))
        return problem_node_error(d, node,
                                  "material '%s' gives both young/poisson and lambda/mu; expected exactly "
                                  "one pair",
                                  m->region);
    if (!has_e && !has_nu && !has_l && !has_mu)
        return problem_node_error(d, node,
                                  "material '%s' has no elastic constants; expected young and poisson, or "
                                  "lambda and mu",
                                  m->region);
    if (has_e != has_nu)
        return problem_node_error(d, node,
                                  "material '%s' gives %s but not %s; expected both young and poisson (or "
                                  "lambda and mu instead)",
                                  m->region, has_e ? "young" : "poisson", has_e ? "poisson" : "young");
    if (has_l != has_mu)
        return problem_node_error(d, node,
                                  "material '%s' gives %s but not %s; expected both lambda and mu (or "
                                  "young and poisson instead)",
                                  m->region, has_l ? "lambda" : "mu", has_l ? "mu" : "lambda");
    if (has_e) {
        double E = m->young, nu = m->poisson;
        m->lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
        m->mu = E / (2 * (1 + nu));
    } else {
        double l = m->lambda, mu = m->mu;
        if (!(3 * l + 2 * mu > 0))
            return problem_range_error(d, node, "lambda",
                                       "the bulk modulus lambda + 2 mu / 3 = %g Pa is not positive, "
                                       "so the material would not resist compression; expected "
                                       "lambda > -2 mu / 3",
                                       l + 2 * mu / 3);
        m->young = mu * (3 * l + 2 * mu) / (l + mu);
        m->poisson = l / (2 * (l + mu));
    }
    return FEM_OK;
}

static int read_material(const ProblemDoc *d, xmlNode *node, ElasticMaterial *m) {
    m->at.line = problem_line(d, node);
    FEM_TRY(problem_get_string(d, node, "region", "", m->region, sizeof m->region));
    FEM_TRY(problem_read_values(d, node, m));
    return read_constants(d, node, m);
}

/* Reads an element whose x, y, z attributes the table stores into `dest`; *mask says which are present. */
static int read_vector(const ProblemDoc *d, xmlNode *node, void *dest, int *mask) {
    static const char *names[3] = {"x", "y", "z"};
    *mask = 0;
    for (int i = 0; i < 3; i++)
        if (problem_has(node, names[i])) *mask |= 1 << i;
    FEM_TRY(problem_read_values(d, node, dest));
    if (!*mask)
        return problem_node_error(d, node, "<%s> gives no component; expected at least one of x, y, z",
                                  (const char *)node->name);
    return FEM_OK;
}

/* The element of each ElasticBcKind. */
static const char *const bc_elements[] = {"?", "fixed", "displacement", "traction", "pressure"};

static int read_bc(const ProblemDoc *d, xmlNode *node, ElasticBc *bc) {
    int kind = bc->kind;
    FEM_TRY(problem_read_bc_common(d, node, bc_elements, ELASTIC_BC_PRESSURE + 1, &bc->at, bc->boundary,
                                   sizeof bc->boundary, &kind));
    bc->kind = (ElasticBcKind)kind;
    if (bc->kind == ELASTIC_BC_DISPLACEMENT || bc->kind == ELASTIC_BC_TRACTION)
        return read_vector(d, node, bc, &bc->components);
    return problem_read_values(d, node, bc);
}

static int is_dirichlet(ElasticBcKind k) {
    return k == ELASTIC_BC_FIXED || k == ELASTIC_BC_DISPLACEMENT;
}

static int check_bc_clash(const ProblemDoc *d, xmlNode *node, const ElasticBc *bcs, int n) {
    const ElasticBc *b = &bcs[n];
    for (int i = 0; i < n; i++) {
        const ElasticBc *a = &bcs[i];
        if (strcmp(a->boundary, b->boundary) != 0) continue;
        if (a->kind == b->kind)
            return problem_bc_repeated(d, node, bc_elements[b->kind], b->boundary, a->at.line);
        int both = a->components & b->components;
        if (is_dirichlet(a->kind) && is_dirichlet(b->kind) && both)
            return problem_node_error(
                d, node,
                "<%s> on boundary '%s' prescribes %s%s%s, which <%s> on line %d already "
                "prescribes; expected each component prescribed once",
                bc_elements[b->kind], b->boundary, both & 1 ? "x" : "", both & 2 ? "y" : "",
                both & 4 ? "z" : "", bc_elements[a->kind], a->at.line);
    }
    return FEM_OK;
}

static int read_temperature(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    ElasticProblem *e = &pb->elasticity;
    e->temperature_at.line = problem_line(d, node);
    FEM_TRY(problem_read_values(d, node, pb));
    int has_value = problem_has(node, "value"), field = e->coupled_temperature;
    if (has_value && field)
        return problem_node_error(d, node, "<temperature> gives both value and field; expected one of them");
    if (!has_value && !field)
        return problem_node_error(d, node,
                                  "<temperature> gives neither value nor field; expected value=\"...\" (a "
                                  "uniform temperature in K) or field=\"heat\"");
    e->has_temperature = has_value;
    return FEM_OK;
}

int problem_read_elasticity(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    ElasticProblem *e = &pb->elasticity;
    e->present = 1;
    e->at.line = problem_line(d, node);
    FEM_TRY(problem_read_values(d, node, pb));
    if (problem_has(node, "plane")) e->plane_at.line = problem_attr_line(d, node, "plane");
    int nmat = 0, nbc = 0;
    for (xmlNode *c = node->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (problem_is(c, "material"))
            nmat++;
        else if (!problem_is(c, "gravity") && !problem_is(c, "temperature"))
            nbc++;
    }
    FEM_ALLOC(e->materials, nmat, "elastic materials");
    FEM_ALLOC(e->bcs, nbc, "elastic boundary conditions");
    for (xmlNode *c = problem_first_child(node); c; c = problem_next_child(c)) {
        if (problem_is(c, "material")) {
            ElasticMaterial *m = &e->materials[e->nmaterials];
            FEM_TRY(read_material(d, c, m));
            for (int i = 0; i < e->nmaterials; i++)
                if (strcmp(e->materials[i].region, m->region) == 0)
                    return problem_node_error(d, c,
                                              "second elastic material for region '%s' (the first is on line "
                                              "%d); expected one material per region",
                                              m->region, e->materials[i].at.line);
            e->nmaterials++;
        } else if (problem_is(c, "gravity")) {
            int mask;
            e->gravity_at.line = problem_line(d, c);
            FEM_TRY(read_vector(d, c, pb, &mask));
        } else if (problem_is(c, "temperature")) {
            FEM_TRY(read_temperature(d, c, pb));
        } else {
            FEM_TRY(read_bc(d, c, &e->bcs[e->nbcs]));
            FEM_TRY(check_bc_clash(d, c, e->bcs, e->nbcs));
            e->nbcs++;
        }
    }
    return FEM_OK;
}
