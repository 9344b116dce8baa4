/* Typed reads of attribute values, with femto's messages for malformed ones.
 *
 * Every read goes through the format table: reading an attribute the table does not declare, or as a type the
 * table does not give it, is a bug in femto and says so. Every read also marks the attribute as consumed, so
 * that problem_check_consumed() can prove no allowed attribute is silently ignored by the reader.
 *
 * Numbers are parsed in the "C" locale: a problem file means the same on every machine. */
#include "problem_internal.h"

#include "fem/error.h"

#include <libxml/tree.h>

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char consumed_mark = 1;
#define CONSUMED ((void *)&consumed_mark)

/* ---- Lexical forms */

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The value without the white space XML Schema collapses around numbers and booleans. */
static void trimmed(const char *s, const char **begin, size_t *n) {
    while (is_space(*s)) s++;
    size_t len = strlen(s);
    while (len > 0 && is_space(s[len - 1])) len--;
    *begin = s;
    *n = len;
}

static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* XML Schema's decimal/double form without INF and NaN: [+-]? (d+ (. d*)? | . d+) ([eE] [+-]? d+)? */
static int decimal_form(const char *s, size_t n) {
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && is_digit(s[i])) i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) i++, digits++;
    }
    if (digits == 0) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t exp_digits = 0;
        while (i < n && is_digit(s[i])) i++, exp_digits++;
        if (exp_digits == 0) return 0;
    }
    return i == n;
}

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;
static void make_c_locale(void) {
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* 0: fine; 1: not a number; 2: too large for a double. */
static int parse_number(const char *s, size_t n, double *out) {
    char buf[128];
    if (n == 0 || n >= sizeof buf || !decimal_form(s, n)) return 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    pthread_once(&c_locale_once, make_c_locale);
    locale_t previous = c_locale ? uselocale(c_locale) : (locale_t)0;
    double v = strtod(buf, NULL);
    if (c_locale) uselocale(previous);
    if (!isfinite(v)) return 2;
    *out = v;
    return 0;
}

/* 0: fine; 1: not an integer; 2: does not fit an int. */
static int parse_integer(const char *s, size_t n, int *out) {
    char buf[64];
    size_t i = 0;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) i++;
    if (i == n) return 1;
    for (; i < n; i++)
        if (!is_digit(s[i])) return 1;
    if (n >= sizeof buf) return 2;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    long v = strtol(buf, NULL, 10);
    if (errno == ERANGE || v > INT_MAX || v < INT_MIN) return 2;
    *out = (int)v;
    return 0;
}

static int parse_boolean(const char *s, size_t n, int *out) {
    if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 1 && s[0] == '1')) return *out = 1, 0;
    if ((n == 5 && memcmp(s, "false", 5) == 0) || (n == 1 && s[0] == '0')) return *out = 0, 0;
    return 1;
}

/* The index of `s` among the space-separated words of `choices`, or -1. */
static int parse_enum(const char *choices, const char *s) {
    size_t n = strlen(s);
    int index = 0;
    for (const char *p = choices; *p; index++) {
        const char *w = p;
        while (*p && *p != ' ') p++;
        if ((size_t)(p - w) == n && memcmp(w, s, n) == 0) return index;
        while (*p == ' ') p++;
    }
    return -1;
}

static int parse_components(const char *s, int *mask) {
    *mask = 0;
    if (!*s) return 1;
    for (; *s; s++) {
        int bit = *s == 'x' ? 1 : *s == 'y' ? 2 : *s == 'z' ? 4 : 0;
        if (!bit || (*mask & bit)) return 1;
        *mask |= bit;
    }
    return 0;
}

/* ---- Messages */

/* A value as shown in a message: at most 40 bytes, control characters as '?'. */
static void shown(const char *v, char *out, size_t cap) {
    size_t n = 0, limit = cap < 45 ? cap - 5 : 40;
    for (; v[n] && n < limit; n++) out[n] = (unsigned char)v[n] < 0x20 ? '?' : v[n];
    if (v[n]) {
        while (n > 0 && ((unsigned char)out[n - 1] & 0xC0) == 0x80) n--; /* keep UTF-8 sequences whole */
        if (n > 0 && (unsigned char)out[n - 1] >= 0xC0) n--;
        memcpy(out + n, "...", 4);
    } else {
        out[n] = '\0';
    }
}

int problem_node_error(const ProblemDoc *d, xmlNode *node, const char *fmt, ...) {
    char what[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fem_fail(FEM_ERR_INPUT, "%s:%d: %s", d->path, problem_line(d, node), what);
}

int problem_range_error(const ProblemDoc *d, xmlNode *node, const char *attr, const char *fmt, ...) {
    char what[1536], value[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    xmlChar *raw = xmlGetNoNsProp(node, (const xmlChar *)attr);
    shown(raw ? (const char *)raw : "", value, sizeof value);
    xmlFree(raw);
    return fem_fail(FEM_ERR_INPUT, "%s:%d: %s=\"%s\" on <%s>: %s", d->path, problem_attr_line(d, node, attr),
                    attr, value, (const char *)node->name, what);
}

/* ---- Checking one value */

/* Where a value stands, for its messages: file, line, attribute, element and the value as shown. */
typedef struct {
    const char *file, *attr, *elem;
    int line;
    char shown[64];
} ValueSite;

/* "FILE:LINE: bad KIND 'VALUE' for attribute 'A' on <E>; expected EXPECTED" */
static int bad_value(const ValueSite *at, const char *kind, const char *expected) {
    return fem_fail(FEM_ERR_INPUT, "%s:%d: bad %s '%s' for attribute '%s' on <%s>; expected %s", at->file,
                    at->line, kind, at->shown, at->attr, at->elem, expected);
}

/* A parse_number / parse_integer result (0 fine, 1 malformed, 2 too large) as a status. */
static int scalar_status(const ValueSite *at, int rc, const char *kind, const char *form, const char *limit) {
    if (rc == 1) return bad_value(at, kind, form);
    if (rc == 2)
        return fem_fail(FEM_ERR_INPUT, "%s:%d: %s '%s' for attribute '%s' on <%s> is too large; expected %s",
                        at->file, at->line, kind, at->shown, at->attr, at->elem, limit);
    return FEM_OK;
}

static int check_text(const ValueSite *at, ProblemAttrType type, const char *value, size_t trimmed_len) {
    size_t len = strlen(value), max = type == PF_NAME ? PROBLEM_NAME_MAX - 1 : PROBLEM_PATH_MAX - 1;
    if (trimmed_len == 0)
        return fem_fail(FEM_ERR_INPUT, "%s:%d: attribute '%s' on <%s> is empty; expected %s", at->file,
                        at->line, at->attr, at->elem, type == PF_NAME ? "a name" : "a path");
    if (len > max)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: attribute '%s' on <%s> is %zu bytes long; expected at most %zu", at->file,
                        at->line, at->attr, at->elem, len, max);
    return FEM_OK;
}

static int check_numbers(const ValueSite *at, const char *value) {
    int count = 0;
    for (const char *p = value;;) {
        while (is_space(*p)) p++;
        if (!*p) break;
        const char *w = p;
        while (*p && !is_space(*p)) p++;
        double x;
        int rc = parse_number(w, (size_t)(p - w), &x);
        if (rc) {
            char token[64], word[128];
            snprintf(word, sizeof word, "%.*s", (int)((size_t)(p - w) < 100 ? p - w : 100), w);
            shown(word, token, sizeof token);
            return fem_fail(FEM_ERR_INPUT,
                            "%s:%d: %s '%s' in attribute '%s' on <%s>; expected numbers separated "
                            "by spaces such as \"0.02 1e-4\"",
                            at->file, at->line, rc == 1 ? "bad number" : "too large a number", token,
                            at->attr, at->elem);
        }
        count++;
    }
    if (count == 0)
        return fem_fail(FEM_ERR_INPUT, "%s:%d: attribute '%s' on <%s> is empty; expected at least one number",
                        at->file, at->line, at->attr, at->elem);
    return FEM_OK;
}

static int check_enum(const ValueSite *at, const char *choices, const char *value) {
    if (parse_enum(choices, value) >= 0) return FEM_OK;
    char words[256], expected[272];
    size_t k = 0;
    for (const char *p = choices; *p && k + 3 < sizeof words; p++) {
        if (*p == ' ') {
            words[k++] = ',';
            words[k++] = ' ';
        } else {
            words[k++] = *p;
        }
    }
    words[k] = '\0';
    snprintf(expected, sizeof expected, "one of: %s", words);
    return bad_value(at, "value", expected);
}

static int check_value(const ProblemDoc *d, xmlNode *node, const ProblemAttrSpec *spec, const char *value) {
    ValueSite at = {d->path, spec->name, (const char *)node->name, problem_attr_line(d, node, spec->name),
                    ""};
    shown(value, at.shown, sizeof at.shown);
    const char *s;
    size_t n;
    trimmed(value, &s, &n);
    double number;
    int flag;
    switch (spec->type) {
    case PF_STRING:
    case PF_NAME:
        return check_text(&at, spec->type, value, n);
    case PF_NUMBER:
        return scalar_status(&at, parse_number(s, n, &number), "number",
                             "a decimal number such as 210e9 or 0.3", "a magnitude below 1.7e308");
    case PF_NUMBERS:
        return check_numbers(&at, value);
    case PF_INTEGER: {
        char limit[48];
        snprintf(limit, sizeof limit, "at most %d in magnitude", INT_MAX);
        return scalar_status(&at, parse_integer(s, n, &flag), "integer", "a whole number such as 2", limit);
    }
    case PF_BOOLEAN:
        return parse_boolean(s, n, &flag) ? bad_value(&at, "boolean", "true or false") : FEM_OK;
    case PF_ENUM:
        return check_enum(&at, spec->choices, value);
    case PF_COMPONENTS:
        return parse_components(value, &flag)
                   ? bad_value(&at, "components", "x, y and z each at most once, such as xz or xyz")
                   : FEM_OK;
    }
    return fem_fail(FEM_ERR_INTERNAL, "femto bug: attribute '%s' on <%s> has no type", at.attr, at.elem);
}

int problem_check_value(const ProblemDoc *d, xmlNode *node, const ProblemAttrSpec *spec) {
    xmlChar *value = xmlGetNoNsProp(node, (const xmlChar *)spec->name);
    if (!value) return FEM_OK;
    int status = check_value(d, node, spec, (const char *)value);
    xmlFree(value);
    return status;
}

/* ---- Typed reads */

static void node_path(const xmlNode *node, char *out, size_t cap) {
    const xmlNode *chain[16];
    int depth = 0;
    for (; node && node->type == XML_ELEMENT_NODE && depth < 16; node = node->parent) chain[depth++] = node;
    size_t n = 0;
    out[0] = '\0';
    while (depth-- > 0)
        n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? "/" : "",
                              (const char *)chain[depth]->name);
}

static const char *type_name(ProblemAttrType t) {
    static const char *names[] = {"string",  "name",    "number", "numbers",
                                  "integer", "boolean", "enum",   "components"};
    return names[t];
}

/* Finds the spec, marks the attribute consumed and fetches its value (NULL when absent; xmlFree it). */
static int fetch(const ProblemDoc *d, xmlNode *node, const char *attr, ProblemAttrType type,
                 const ProblemAttrSpec **spec, xmlChar **value) {
    char path[256];
    node_path(node, path, sizeof path);
    const ProblemElementSpec *es = problem_format_find(path);
    *spec = es ? problem_format_attr(es, attr) : NULL;
    int matches = *spec && ((*spec)->type == type || (type == PF_STRING && (*spec)->type == PF_NAME));
    if (!matches)
        return fem_fail(FEM_ERR_INTERNAL,
                        "femto bug: %s reads attribute '%s' of <%s> as a %s, which the format "
                        "table does not declare",
                        d->path, attr, path, type_name(type));
    xmlAttr *a = xmlHasNsProp(node, (const xmlChar *)attr, NULL);
    *value = NULL;
    if (!a) return FEM_OK;
    a->_private = CONSUMED;
    *value = xmlGetNoNsProp(node, (const xmlChar *)attr);
    if (!*value) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (attribute '%s')", attr);
    int status = check_value(d, node, *spec, (const char *)*value);
    if (status != FEM_OK) {
        xmlFree(*value);
        *value = NULL;
    }
    return status;
}

int problem_has(xmlNode *node, const char *attr) {
    return xmlHasNsProp(node, (const xmlChar *)attr, NULL) != NULL;
}

/* "1e+05" as "1e5", "1e-02" as "1e-2". */
static void short_exponent(double v, char *out, size_t cap) {
    snprintf(out, cap, "%.0e", v);
    char *e = strchr(out, 'e') + 1, *digits = e + (*e == '-');
    if (*e == '+') memmove(e, e + 1, strlen(e)), digits = e;
    while (digits[0] == '0' && digits[1]) memmove(digits, digits + 1, strlen(digits));
}

/* The values a range allows, in words: its own, or "lo <= name < hi [unit] (hint)". */
static void expected_values(const ProblemAttrSpec *spec, char *out, size_t cap) {
    const ProblemRange *r = spec->range;
    if (r->expect) {
        snprintf(out, cap, "%s", r->expect);
        return;
    }
    const char *lo = r->lo == PF_INCLUSIVE ? "<=" : "<", *hi = r->hi == PF_INCLUSIVE ? "<=" : "<";
    const char *unit = spec->quantity ? spec->quantity->unit : "";
    size_t n;
    if (r->lo && r->hi)
        n = (size_t)snprintf(out, cap, "%g %s %s %s %g", r->min, lo, spec->name, hi, r->max);
    else if (r->lo)
        n = (size_t)snprintf(out, cap, "%s %s %g", spec->name, r->lo == PF_INCLUSIVE ? ">=" : ">", r->min);
    else
        n = (size_t)snprintf(out, cap, "%s %s %g", spec->name, hi, r->max);
    if (unit[0]) n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, " [%s]", unit);
    if (r->hint) snprintf(out + n, n < cap ? cap - n : 0, " (%s)", r->hint);
}

/* A given value against its quantity's largest magnitude and its range, with the table's reason. */
static int check_range(const ProblemDoc *d, xmlNode *node, const ProblemAttrSpec *spec, double v) {
    const ProblemQuantity *q = spec->quantity;
    if (q && q->max > 0 && !(fabs(v) <= q->max)) {
        char max[32];
        short_exponent(q->max, max, sizeof max);
        return problem_range_error(d, node, spec->name,
                                   "beyond any real value (%s); expected |%s| <= %s%s%s%s", q->why,
                                   spec->name, max, q->unit[0] ? " [" : "", q->unit, q->unit[0] ? "]" : "");
    }
    const ProblemRange *r = spec->range;
    if (!r) return FEM_OK;
    int below = (r->lo == PF_INCLUSIVE && !(v >= r->min)) || (r->lo == PF_EXCLUSIVE && !(v > r->min));
    int above = (r->hi == PF_INCLUSIVE && !(v <= r->max)) || (r->hi == PF_EXCLUSIVE && !(v < r->max));
    if (!below && !above) return FEM_OK;
    char expected[512];
    expected_values(spec, expected, sizeof expected);
    const char *why = above && r->why_above ? r->why_above : r->why;
    if (!why) return problem_range_error(d, node, spec->name, "expected %s", expected);
    return problem_range_error(d, node, spec->name, "%s; expected %s", why, expected);
}

int problem_get_number(const ProblemDoc *d, xmlNode *node, const char *attr, double dflt, double *out) {
    const ProblemAttrSpec *spec;
    xmlChar *v;
    FEM_TRY(fetch(d, node, attr, PF_NUMBER, &spec, &v));
    *out = dflt;
    if (!v) return FEM_OK;
    const char *s;
    size_t n;
    trimmed((const char *)v, &s, &n);
    parse_number(s, n, out);
    xmlFree(v);
    return check_range(d, node, spec, *out);
}

int problem_get_numbers(const ProblemDoc *d, xmlNode *node, const char *attr, double *out, int cap,
                        int *count) {
    const ProblemAttrSpec *spec;
    xmlChar *v;
    FEM_TRY(fetch(d, node, attr, PF_NUMBERS, &spec, &v));
    *count = 0;
    for (const char *p = (const char *)v; p;) {
        while (is_space(*p)) p++;
        if (!*p) break;
        const char *w = p;
        while (*p && !is_space(*p)) p++;
        if (*count < cap) parse_number(w, (size_t)(p - w), &out[*count]);
        (*count)++;
    }
    xmlFree(v);
    if (*count > cap)
        return fem_fail(FEM_ERR_INPUT, "%s:%d: attribute '%s' on <%s> has %d numbers; expected at most %d",
                        d->path, problem_attr_line(d, node, attr), attr, (const char *)node->name, *count,
                        cap);
    return FEM_OK;
}

int problem_get_integer(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out) {
    const ProblemAttrSpec *spec;
    xmlChar *v;
    FEM_TRY(fetch(d, node, attr, PF_INTEGER, &spec, &v));
    *out = dflt;
    if (!v) return FEM_OK;
    const char *s;
    size_t n;
    trimmed((const char *)v, &s, &n);
    parse_integer(s, n, out);
    xmlFree(v);
    return check_range(d, node, spec, *out);
}

int problem_get_boolean(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out) {
    const ProblemAttrSpec *spec;
    xmlChar *v;
    FEM_TRY(fetch(d, node, attr, PF_BOOLEAN, &spec, &v));
    *out = dflt;
    if (v) {
        const char *s;
        size_t n;
        trimmed((const char *)v, &s, &n);
        parse_boolean(s, n, out);
    }
    xmlFree(v);
    return FEM_OK;
}

int problem_get_enum(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out) {
    const ProblemAttrSpec *spec;
    xmlChar *v;
    FEM_TRY(fetch(d, node, attr, PF_ENUM, &spec, &v));
    *out = dflt;
    if (v) *out = spec->choice_values[parse_enum(spec->choices, (const char *)v)];
    xmlFree(v);
    return FEM_OK;
}

int problem_get_components(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out) {
    const ProblemAttrSpec *spec;
    xmlChar *v;
    FEM_TRY(fetch(d, node, attr, PF_COMPONENTS, &spec, &v));
    *out = dflt;
    if (v) parse_components((const char *)v, out);
    xmlFree(v);
    return FEM_OK;
}

int problem_get_string(const ProblemDoc *d, xmlNode *node, const char *attr, const char *dflt, char *out,
                       size_t cap) {
    const ProblemAttrSpec *spec;
    xmlChar *v;
    FEM_TRY(fetch(d, node, attr, PF_STRING, &spec, &v)); /* names too */
    if (v)
        snprintf(out, cap, "%s", (const char *)v);
    else if (out != dflt) /* the caller may pass the current value as the default */
        snprintf(out, cap, "%s", dflt);
    xmlFree(v);
    return FEM_OK;
}

/* One stored attribute into its place in `base`. */
static int read_stored(const ProblemDoc *d, xmlNode *node, const ProblemAttrSpec *a, char *base) {
    void *p = base + a->offset;
    switch (a->type) {
    case PF_NUMBER:
        return problem_get_number(d, node, a->name, a->dflt, p);
    case PF_INTEGER:
        return problem_get_integer(d, node, a->name, (int)a->dflt, p);
    case PF_BOOLEAN:
        return problem_get_boolean(d, node, a->name, (int)a->dflt, p);
    case PF_ENUM:
        return problem_get_enum(d, node, a->name, (int)a->dflt, p);
    case PF_COMPONENTS:
        return problem_get_components(d, node, a->name, (int)a->dflt, p);
    case PF_NAME:
        return problem_get_string(d, node, a->name, "", p, PROBLEM_NAME_MAX);
    case PF_STRING:
    case PF_NUMBERS:
        break;
    }
    return fem_fail(FEM_ERR_INTERNAL,
                    "femto bug: attribute '%s' of <%s> is a %s, which the table cannot store", a->name,
                    (const char *)node->name, type_name(a->type));
}

int problem_read_values(const ProblemDoc *d, xmlNode *node, void *dest) {
    char path[256];
    node_path(node, path, sizeof path);
    const ProblemElementSpec *spec = problem_format_find(path);
    if (!spec || spec->dest == PF_DEST_NONE)
        return fem_fail(FEM_ERR_INTERNAL, "femto bug: the format table stores nothing of <%s>", path);
    char *base = (char *)dest + (spec->dest == PF_DEST_PROBLEM ? spec->offset : 0);
    problem_format_store_defaults(spec, base);
    for (const ProblemAttrSpec *a = spec->attrs; a->name; a++)
        if (a->stored) FEM_TRY(read_stored(d, node, a, base));
    return FEM_OK;
}

/* ---- Walking the tree */

int problem_is(xmlNode *node, const char *name) {
    return strcmp((const char *)node->name, name) == 0;
}

static xmlNode *visit_from(xmlNode *c) {
    while (c && c->type != XML_ELEMENT_NODE) c = c->next;
    if (c) c->_private = CONSUMED;
    return c;
}

xmlNode *problem_first_child(xmlNode *node) {
    return visit_from(node->children);
}

xmlNode *problem_next_child(xmlNode *node) {
    return visit_from(node->next);
}

static int check_consumed(const ProblemDoc *d, xmlNode *node) {
    for (; node; node = node->next) {
        if (node->type != XML_ELEMENT_NODE) continue;
        if (node->_private != CONSUMED)
            return fem_fail(FEM_ERR_INTERNAL,
                            "femto bug: %s:%d: the reader skipped <%s>, which the format allows", d->path,
                            problem_line(d, node), (const char *)node->name);
        for (xmlAttr *a = node->properties; a; a = a->next)
            if (a->_private != CONSUMED)
                return fem_fail(FEM_ERR_INTERNAL,
                                "femto bug: %s:%d: the reader skipped attribute '%s' on <%s>, "
                                "which the format allows",
                                d->path, problem_attr_line(d, node, (const char *)a->name),
                                (const char *)a->name, (const char *)node->name);
        FEM_TRY(check_consumed(d, node->children));
    }
    return FEM_OK;
}

/* The root is read by definition (problem_read dispatches on its children) and takes no attributes. */
int problem_check_consumed(const ProblemDoc *d) {
    return check_consumed(d, xmlDocGetRootElement(d->doc)->children);
}
