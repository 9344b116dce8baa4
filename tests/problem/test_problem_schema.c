/* io/problem.xsd and femto's format table (io/problem_format.c) must describe the same file: the same
 * elements at the same places, the same attributes in the same order with the same required flags, types,
 * enumerations and ranges (minInclusive/minExclusive/maxInclusive/maxExclusive against the row's range), and
 * child multiplicities where the table is at least as strict as the schema (femto checks counts the schema
 * cannot express). A difference would mean messages listing the wrong names, or files the
 * schema accepts and femto does not (or the reverse). This walks the schema text the library embeds. */
#include "test_problem.h"

#include "io/problem.h"
#include "io/problem_internal.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        test_failures++;                                                                                     \
    } while (0)

static const char *XS = "http://www.w3.org/2001/XMLSchema";
static xmlNode *schema_root;
static int *visited;

static int is_xs(const xmlNode *n, const char *local) {
    return n->type == XML_ELEMENT_NODE && n->ns && strcmp((const char *)n->ns->href, XS) == 0 &&
           strcmp((const char *)n->name, local) == 0;
}

static xmlNode *xs_child(xmlNode *n, const char *local) {
    for (xmlNode *c = n->children; c; c = c->next)
        if (is_xs(c, local)) return c;
    return NULL;
}

/* An attribute of a schema node into `out` (256 bytes), or `dflt`. */
static const char *attr(xmlNode *n, const char *name, const char *dflt, char *out) {
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    snprintf(out, 256, "%s", v ? (const char *)v : dflt);
    xmlFree(v);
    return out;
}

static xmlNode *global(const char *kind, const char *name) {
    char b[256];
    for (xmlNode *c = schema_root->children; c; c = c->next)
        if (is_xs(c, kind) && strcmp(attr(c, "name", "", b), name) == 0) return c;
    return NULL;
}

typedef struct {
    ProblemAttrType type;
    char choices[256];
    ProblemEnd lo, hi; /* the facets of the type and of the types it restricts */
    double min, max;
} XsdType;

static void range_facet(xmlNode *f, XsdType *t) {
    char v[256];
    int is_min = is_xs(f, "minInclusive") || is_xs(f, "minExclusive");
    int is_max = is_xs(f, "maxInclusive") || is_xs(f, "maxExclusive");
    if (!is_min && !is_max) return;
    ProblemEnd end = is_xs(f, "minInclusive") || is_xs(f, "maxInclusive") ? PF_INCLUSIVE : PF_EXCLUSIVE;
    double x = atof(attr(f, "value", "0", v));
    if (is_min) t->lo = end, t->min = x;
    if (is_max) t->hi = end, t->max = x;
}

static int classify(const char *qname, XsdType *t) {
    t->choices[0] = '\0';
    t->lo = t->hi = PF_OPEN;
    t->min = t->max = 0.0;
    if (strcmp(qname, "xs:double") == 0) return t->type = PF_NUMBER, 1;
    if (strcmp(qname, "xs:int") == 0 || strcmp(qname, "xs:integer") == 0) return t->type = PF_INTEGER, 1;
    if (strcmp(qname, "xs:boolean") == 0) return t->type = PF_BOOLEAN, 1;
    if (strcmp(qname, "xs:string") == 0) return t->type = PF_STRING, 1;
    xmlNode *st = global("simpleType", qname);
    if (!st) return 0;
    char base[256], v[256];
    xmlNode *list = xs_child(st, "list");
    if (list) return t->type = PF_NUMBERS, strcmp(attr(list, "itemType", "", v), "xs:double") == 0;
    xmlNode *r = xs_child(st, "restriction");
    if (!r || !classify(attr(r, "base", "", base), t)) return 0;
    size_t n = 0;
    for (xmlNode *f = r->children; f; f = f->next) {
        range_facet(f, t);
        if (is_xs(f, "enumeration")) {
            t->type = PF_ENUM;
            n += (size_t)snprintf(t->choices + n, sizeof t->choices - n, "%s%s", n ? " " : "",
                                  attr(f, "value", "", v));
        } else if (is_xs(f, "pattern")) {
            t->type = PF_COMPONENTS;
        } else if (is_xs(f, "maxLength") && t->type == PF_STRING) {
            t->type = PF_NAME;
            if (atoi(attr(f, "value", "0", v)) != PROBLEM_NAME_MAX - 1)
                FAIL("schema: type %s has maxLength %s, femto's names hold %d bytes", qname, v,
                     PROBLEM_NAME_MAX - 1);
        }
    }
    return 1;
}

static int occurs(const char *v) {
    return strcmp(v, "unbounded") == 0 ? -1 : atoi(v);
}

static int times(int a, int b) {
    return a < 0 || b < 0 ? -1 : a * b;
}

static xmlNode *element_type(xmlNode *decl) {
    xmlNode *inline_type = xs_child(decl, "complexType");
    if (inline_type) return inline_type;
    char b[256];
    return global("complexType", attr(decl, "type", "", b));
}

static void compare_element(const char *path, xmlNode *ct);

static const char *end_name(ProblemEnd e, int lower) {
    return e == PF_OPEN        ? "none"
           : e == PF_INCLUSIVE ? (lower ? "minInclusive" : "maxInclusive")
                               : (lower ? "minExclusive" : "maxExclusive");
}

/* The row's range is the schema type's: the same ends, inclusive or exclusive alike, at the same values. */
static void compare_range(const char *path, const ProblemAttrSpec *as, const XsdType *t) {
    const ProblemRange *r = as->range;
    ProblemEnd lo = r ? r->lo : PF_OPEN, hi = r ? r->hi : PF_OPEN;
    if (r && as->type != PF_NUMBER && as->type != PF_INTEGER)
        FAIL("%s@%s: the table gives a range to a value that is not a number", path, as->name);
    if (lo != t->lo || (lo != PF_OPEN && r->min != t->min))
        FAIL("%s@%s: lower bound %s %g in the schema, %s %g in the table", path, as->name, end_name(t->lo, 1),
             t->min, end_name(lo, 1), r ? r->min : 0.0);
    if (hi != t->hi || (hi != PF_OPEN && r->max != t->max))
        FAIL("%s@%s: upper bound %s %g in the schema, %s %g in the table", path, as->name, end_name(t->hi, 0),
             t->max, end_name(hi, 0), r ? r->max : 0.0);
}

static void compare_attributes(const char *path, const ProblemElementSpec *spec, xmlNode *ct) {
    int i = 0;
    for (xmlNode *a = ct->children; a; a = a->next) {
        if (!is_xs(a, "attribute")) continue;
        char name[256], use[256], type[256];
        attr(a, "name", "?", name);
        const ProblemAttrSpec *as = &spec->attrs[i];
        if (i >= PROBLEM_MAX_ATTRS || !as->name) {
            FAIL("%s: the schema declares attribute '%s', which the table lacks", path, name);
            return;
        }
        i++;
        if (strcmp(as->name, name) != 0) {
            FAIL("%s: attribute %d is '%s' in the schema and '%s' in the table", path, i, name, as->name);
            continue;
        }
        int required = strcmp(attr(a, "use", "optional", use), "required") == 0;
        if (required != as->required)
            FAIL("%s@%s: required in the %s only", path, name, required ? "schema" : "table");
        XsdType t;
        if (!classify(attr(a, "type", "?", type), &t)) {
            FAIL("%s@%s: the schema's type '%s' is not understood by this test", path, name, type);
            continue;
        }
        if (t.type != as->type)
            FAIL("%s@%s: the types differ (schema %d, table %d)", path, name, t.type, as->type);
        if (t.type == PF_ENUM && strcmp(t.choices, as->choices) != 0)
            FAIL("%s@%s: values '%s' in the schema, '%s' in the table", path, name, t.choices, as->choices);
        compare_range(path, as, &t);
    }
    if (i < PROBLEM_MAX_ATTRS && spec->attrs[i].name)
        FAIL("%s: the table has attribute '%s', which the schema lacks", path, spec->attrs[i].name);
}

static void compare_children(const char *path, const ProblemElementSpec *spec, xmlNode *ct) {
    xmlNode *group = NULL;
    for (xmlNode *c = ct->children; c && !group; c = c->next)
        if (is_xs(c, "all") || is_xs(c, "choice") || is_xs(c, "sequence")) group = c;
    char names[512] = "";
    size_t n = 0;
    if (group) {
        char b[256];
        int gmin = occurs(attr(group, "minOccurs", "1", b)), gmax = occurs(attr(group, "maxOccurs", "1", b));
        int alternatives = 0;
        for (xmlNode *e = group->children; e; e = e->next) alternatives += is_xs(e, "element");
        for (xmlNode *e = group->children; e; e = e->next) {
            if (!is_xs(e, "element")) {
                if (e->type == XML_ELEMENT_NODE && !is_xs(e, "annotation"))
                    FAIL("%s: the schema nests <xs:%s>, which this test does not follow", path,
                         (const char *)e->name);
                continue;
            }
            char name[256];
            attr(e, "name", "?", name);
            int min = times(gmin, occurs(attr(e, "minOccurs", "1", b)));
            int max = times(gmax, occurs(attr(e, "maxOccurs", "1", b)));
            if (is_xs(group, "choice") && alternatives > 1) min = 0;
            int tmin, tmax;
            if (!problem_format_child(spec, name, &tmin, &tmax)) {
                FAIL("%s: the schema allows <%s>, which the table lacks", path, name);
                continue;
            }
            if (tmin < min || (max >= 0 && (tmax < 0 || tmax > max)))
                FAIL("%s/%s: the table allows %d..%d, looser than the schema's %d..%d", path, name, tmin,
                     tmax, min, max);
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? " " : "", name);
            char child[600];
            snprintf(child, sizeof child, "%s/%s", path, name);
            xmlNode *type = element_type(e);
            if (!type)
                FAIL("%s: no complex type for <%s>", path, name);
            else
                compare_element(child, type);
        }
    }
    /* the table's children, names only, in order */
    char table[512] = "";
    size_t k = 0;
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p > w)
            k += (size_t)snprintf(table + k, sizeof table - k, "%s%.*s", k ? " " : "", (int)(p - w - 1), w);
    }
    if (strcmp(names, table) != 0)
        FAIL("%s: children '%s' in the schema, '%s' in the table", path, names, table);
}

static void compare_element(const char *path, xmlNode *ct) {
    const ProblemElementSpec *spec = problem_format_find(path);
    if (!spec) {
        FAIL("%s: declared by the schema, missing from the table", path);
        return;
    }
    visited[spec - problem_format]++;
    compare_attributes(path, spec, ct);
    compare_children(path, spec, ct);
}

int test_schema(void) {
    const char *text = problem_schema_text();
    xmlDocPtr doc = xmlReadMemory(text, (int)strlen(text), "problem.xsd", NULL, XML_PARSE_NONET);
    if (!doc) {
        FAIL("the embedded schema is not well-formed XML");
        return test_failures;
    }
    schema_root = xmlDocGetRootElement(doc);
    visited = calloc((size_t)problem_format_count, sizeof *visited);
    xmlNode *femto = NULL;
    for (xmlNode *c = schema_root->children; c; c = c->next)
        if (is_xs(c, "element")) {
            if (femto) FAIL("the schema has more than one global element");
            femto = c;
        }
    char b[256];
    if (!femto || strcmp(attr(femto, "name", "", b), "femto") != 0)
        FAIL("the schema's global element is not <femto>");
    else
        compare_element("femto", element_type(femto));
    for (int i = 0; i < problem_format_count; i++)
        if (visited[i] != 1)
            FAIL("%s: the table describes it, the schema declares it %d times", problem_format[i].path,
                 visited[i]);
    free(visited);
    xmlFreeDoc(doc);
    return test_failures;
}

/* ---- The table on its own */

static int structural(const char *path, const char *name) {
    char key[600];
    snprintf(key, sizeof key, "%s@%s", path, name);
    for (const char *const *p = problem_format_structural; *p; p++)
        if (strcmp(*p, key) == 0) return 1;
    return 0;
}

static size_t stored_size(ProblemAttrType t) {
    return t == PF_NUMBER ? sizeof(double) : t == PF_NAME ? (size_t)PROBLEM_NAME_MAX : sizeof(int);
}

/* Words replacing a range's inequality ("1 to 10") must name its bounds, so that they cannot drift apart. */
static void check_words(const char *path, const ProblemAttrSpec *a) {
    const ProblemRange *r = a->range;
    if (!r || !r->expect) return;
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%g", r->min);
    snprintf(hi, sizeof hi, "%g", r->max);
    if ((r->lo && !strstr(r->expect, lo)) || (r->hi && !strstr(r->expect, hi)))
        FAIL("%s@%s: the words '%s' do not name the range's bounds %s and %s", path, a->name, r->expect, lo,
             hi);
}

/* Every attribute is either stored through the table (into an element that has a destination, inside the
 * record's size where the table knows it) or on the documented list of attributes read by hand; the list
 * names only attributes that exist and are not stored. */
int test_table(void) {
    int nstored = 0, nlisted = 0;
    for (int i = 0; i < problem_format_count; i++) {
        const ProblemElementSpec *e = &problem_format[i];
        for (const ProblemAttrSpec *a = e->attrs; a->name; a++) {
            check_words(e->path, a);
            int listed = structural(e->path, a->name);
            nlisted += listed;
            if (!a->stored) {
                if (!listed)
                    FAIL("%s@%s: neither stored through the table nor listed as read by hand", e->path,
                         a->name);
                continue;
            }
            nstored++;
            if (listed) FAIL("%s@%s: stored through the table, yet listed as read by hand", e->path, a->name);
            if (e->dest == PF_DEST_NONE)
                FAIL("%s@%s: stored, but <%s> has no destination", e->path, a->name, e->path);
            if (a->type == PF_STRING || a->type == PF_NUMBERS)
                FAIL("%s@%s: the table cannot store a value of this type", e->path, a->name);
            int sized = e->dest == PF_DEST_RECORD || e->dest == PF_DEST_SECTION;
            if (sized && a->offset + stored_size(a->type) > e->size)
                FAIL("%s@%s: stored at byte %zu, beyond the record's %zu bytes", e->path, a->name, a->offset,
                     e->size);
        }
    }
    int n = 0;
    while (problem_format_structural[n]) n++;
    if (n != nlisted)
        FAIL("%d entries of the list of attributes read by hand name no attribute of the table", n - nlisted);
    printf("%d attributes stored through the table, %d read by hand\n", nstored, nlisted);
    CHECK(nstored >= 60); /* every number, integer, boolean and enumeration of today's format */
    return test_failures;
}
