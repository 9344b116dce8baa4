/* Physics sections read by the format table alone (PF_DEST_SECTION): the section's own attributes into one
 * struct, and each child element into a record of an array per element name, each record defaulted, checked
 * and stored through the table. A physics whose input fits this shape needs no reader of its own: its XSD
 * lines and table rows are the whole of its input format (see Problem.sections). */
#include "problem_internal.h"

#include "fem/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spec of the child element `name` of the element at `path`. */
static const ProblemElementSpec *child_spec(const char *path, const char *name) {
    char child[256];
    snprintf(child, sizeof child, "%s/%s", path, name);
    return problem_format_find(child);
}

/* One array of records per child element name, in the order of the table's children rule. */
static int allocate_records(const ProblemDoc *d, xmlNode *node, const ProblemElementSpec *spec,
                            ProblemSection *s) {
    for (const char *p = spec->children; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p == w) break;
        if (s->nkinds == PROBLEM_MAX_RECORD_KINDS)
            return fem_fail(FEM_ERR_INTERNAL, "femto bug: <%s> has too many kinds of children", s->name);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(p - w - 1), w);
        const ProblemElementSpec *cs = child_spec(spec->path, name);
        if (!cs || cs->dest != PF_DEST_RECORD || cs->children[0])
            return fem_fail(FEM_ERR_INTERNAL, "femto bug: <%s> in <%s> is not a record of the table", name,
                            s->name);
        ProblemRecords *r = &s->kinds[s->nkinds++];
        r->element = strrchr(cs->path, '/') + 1;
        int n = 0;
        for (xmlNode *c = node->children; c; c = c->next)
            n += c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0;
        r->items = calloc((size_t)n + 1, cs->size);
        r->at = calloc((size_t)n + 1, sizeof *r->at);
        if (!r->items || !r->at) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (%s records)", name);
        (void)d;
    }
    return FEM_OK;
}

static ProblemRecords *records_of(ProblemSection *s, const char *element) {
    for (int k = 0; k < s->nkinds; k++)
        if (strcmp(s->kinds[k].element, element) == 0) return &s->kinds[k];
    return NULL;
}

int problem_read_section(const ProblemDoc *d, xmlNode *node, Problem *pb) {
    char path[256];
    snprintf(path, sizeof path, "femto/%s", (const char *)node->name);
    const ProblemElementSpec *spec = problem_format_find(path);
    if (!spec || spec->dest != PF_DEST_SECTION)
        return fem_fail(FEM_ERR_INTERNAL, "femto bug: no reader for <%s>", (const char *)node->name);
    if (pb->nsections == PROBLEM_MAX_SECTIONS)
        return fem_fail(FEM_ERR_INTERNAL, "femto bug: more than %d table-read sections",
                        PROBLEM_MAX_SECTIONS);
    ProblemSection *s = &pb->sections[pb->nsections++];
    s->name = strrchr(spec->path, '/') + 1;
    s->at.line = problem_line(d, node);
    if (spec->size) {
        s->data = calloc(1, spec->size);
        if (!s->data) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (<%s>)", s->name);
        FEM_TRY(problem_read_values(d, node, s->data));
    }
    FEM_TRY(allocate_records(d, node, spec, s));
    for (xmlNode *c = problem_first_child(node); c; c = problem_next_child(c)) {
        ProblemRecords *r = records_of(s, (const char *)c->name);
        size_t size = child_spec(spec->path, (const char *)c->name)->size;
        r->at[r->count].line = problem_line(d, c);
        FEM_TRY(problem_read_values(d, c, (char *)r->items + size * (size_t)r->count));
        r->count++;
    }
    return FEM_OK;
}

const ProblemSection *problem_section(const Problem *pb, const char *name) {
    for (int i = 0; i < pb->nsections; i++)
        if (strcmp(pb->sections[i].name, name) == 0) return &pb->sections[i];
    return NULL;
}

const void *problem_records(const ProblemSection *s, const char *element, int *count, const SourceLine **at) {
    *count = 0;
    if (at) *at = NULL;
    for (int k = 0; s && k < s->nkinds; k++) {
        if (strcmp(s->kinds[k].element, element) != 0) continue;
        *count = s->kinds[k].count;
        if (at) *at = s->kinds[k].at;
        return s->kinds[k].items;
    }
    return NULL;
}
