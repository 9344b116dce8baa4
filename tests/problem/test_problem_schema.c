/* io/problem.xsd and femto's format table (io/problem_format.c) must describe the same file: the same
 * elements at the same places, the same attributes in the same order with the same required flags, types and
 * enumerations, and child multiplicities where the table is at least as strict as the schema (femto checks
 * counts the schema cannot express). A difference would mean messages listing the wrong names, or files the
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
} XsdType;

static int classify(const char *qname, XsdType *t) {
    t->choices[0] = '\0';
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
