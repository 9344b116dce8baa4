/* Turns the problem file's text into a libxml2 tree, safely and quietly, and validates it against the schema.
 *
 * Safety: the text is parsed with no network access, no entity substitution, no DTD loading and no XInclude,
 * and a DOCTYPE stops the parser the moment it is seen, before any entity declaration is read, so neither an
 * external entity (XXE) nor nested entities ("billion laughs") can do anything.
 *
 * Quiet: libxml2 reports problems through global handlers that print to stderr by default. For the duration
 * of a read, femto installs its own handlers, keeps the first complaint and turns it into one sentence in
 * femto's words; nothing reaches stdout or stderr. */
#include "problem_internal.h"

#include "fem/error.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char femto_problem_xsd[];

/* ---- Lines */

static int line_of_offset(const ProblemDoc *d, size_t offset) {
    int line = 1;
    for (size_t i = 0; i < offset && i < d->len; i++)
        if (d->text[i] == '\n') line++;
    return line;
}

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Skips a start tag's attributes from `p`; returns the position after '>' (or `end`). */
static const char *skip_start_tag(const char *p, const char *end) {
    while (p < end && *p != '>') {
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (p < end && *p != q) p++;
        }
        if (p < end) p++;
    }
    return p < end ? p + 1 : end;
}

static const char *find_str(const char *p, const char *end, const char *s) {
    size_t n = strlen(s);
    for (; p + n <= end; p++)
        if (memcmp(p, s, n) == 0) return p;
    return end;
}

/* The position just after the next `s`, or `end`. */
static const char *skip_past(const char *p, const char *end, const char *s) {
    const char *found = find_str(p, end, s);
    return found == end ? end : found + strlen(s);
}

/* Records where every start tag begins. Only called on a well-formed document without a DOCTYPE, in which the
 * start tags in the text are exactly the document's elements in document order. */
static size_t scan_start_tags(const char *text, size_t len, size_t *starts, size_t cap) {
    const char *p = text, *end = text + len;
    size_t n = 0;
    while (p < end) {
        if (*p != '<') {
            p++;
            continue;
        }
        if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
            p = skip_past(p + 4, end, "-->");
        } else if (end - p >= 9 && memcmp(p, "<![CDATA[", 9) == 0) {
            p = skip_past(p + 9, end, "]]>");
        } else if (end - p >= 2 && p[1] == '?') {
            p = skip_past(p + 2, end, "?>");
        } else if (end - p >= 2 && (p[1] == '/' || p[1] == '!')) {
            p = skip_start_tag(p + 2, end);
        } else {
            if (n < cap) starts[n] = (size_t)(p - text);
            n++;
            p = skip_start_tag(p + 1, end);
        }
    }
    return n;
}

/* The qualified name as written in the file ("prefix:name" or "name"). */
static void qualified_name(xmlNode *node, char *out, size_t cap) {
    if (node->ns && node->ns->prefix)
        snprintf(out, cap, "%s:%s", (const char *)node->ns->prefix, (const char *)node->name);
    else
        snprintf(out, cap, "%s", (const char *)node->name);
}

static int tag_matches(const ProblemDoc *d, size_t start, xmlNode *node) {
    char name[256];
    qualified_name(node, name, sizeof name);
    size_t n = strlen(name);
    if (start + 1 + n >= d->len || d->text[start] != '<' || memcmp(d->text + start + 1, name, n) != 0)
        return 0;
    char after = d->text[start + 1 + n];
    return is_space(after) || after == '/' || after == '>';
}

static void collect_elements(xmlNode *node, xmlNode **out, size_t cap, size_t *n) {
    for (; node; node = node->next) {
        if (node->type != XML_ELEMENT_NODE) continue;
        if (*n < cap) out[*n] = node;
        (*n)++;
        collect_elements(node->children, out, cap, n);
    }
}

/* Builds d->elements and d->starts; leaves them empty (messages fall back to libxml2's lines) when the text
 * and the tree do not line up, which should not happen. */
static int index_elements(ProblemDoc *d) {
    size_t ntags = scan_start_tags(d->text, d->len, NULL, 0);
    size_t nelem = 0;
    collect_elements(xmlDocGetRootElement(d->doc), NULL, 0, &nelem);
    if (ntags != nelem || nelem == 0) return FEM_OK;
    FEM_ALLOC(d->starts, nelem, "problem file element positions");
    FEM_ALLOC(d->elements, nelem, "problem file elements");
    scan_start_tags(d->text, d->len, d->starts, nelem);
    size_t k = 0;
    collect_elements(xmlDocGetRootElement(d->doc), d->elements, nelem, &k);
    for (size_t i = 0; i < nelem; i++)
        if (!tag_matches(d, d->starts[i], d->elements[i])) return FEM_OK;
    d->nelements = nelem;
    return FEM_OK;
}

static int element_start(const ProblemDoc *d, xmlNode *node, size_t *start) {
    for (size_t i = 0; i < d->nelements; i++)
        if (d->elements[i] == node) {
            *start = d->starts[i];
            return 1;
        }
    return 0;
}

int problem_line(const ProblemDoc *d, xmlNode *node) {
    size_t start;
    if (element_start(d, node, &start)) return line_of_offset(d, start);
    long line = xmlGetLineNo(node);
    return line > 0 ? (int)line : 1;
}

int problem_attr_line(const ProblemDoc *d, xmlNode *node, const char *attr) {
    size_t start;
    if (!element_start(d, node, &start)) return problem_line(d, node);
    const char *p = d->text + start + 1, *end = d->text + d->len;
    size_t n = strlen(attr);
    while (p < end && !is_space(*p) && *p != '/' && *p != '>') p++; /* the element's name */
    while (p < end && *p != '>' && *p != '/') {
        while (p < end && is_space(*p)) p++;
        const char *name = p;
        while (p < end && !is_space(*p) && *p != '=' && *p != '>' && *p != '/') p++;
        if ((size_t)(p - name) == n && memcmp(name, attr, n) == 0)
            return line_of_offset(d, (size_t)(name - d->text));
        while (p < end && *p != '"' && *p != '\'' && *p != '>') p++;
        if (p < end && (*p == '"' || *p == '\'')) {
            char q = *p++;
            while (p < end && *p != q) p++;
            if (p < end) p++;
        }
    }
    return problem_line(d, node);
}

/* ---- Text checks before parsing: libxml2's own messages for these are cryptic ("indicate encoding !"). */

/* The first byte at which the text stops being UTF-8, or `len`. *bad_char receives a character XML forbids
 * (a control character, U+FFFE, U+FFFF) found before that, if any, and *bad_char_at its offset. */
static size_t check_utf8(const unsigned char *s, size_t len, long *bad_char, size_t *bad_char_at) {
    *bad_char = -1;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        unsigned long cp;
        size_t n;
        if (c < 0x80) {
            cp = c, n = 1;
        } else if (c >= 0xC2 && c <= 0xDF) {
            cp = c & 0x1F, n = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            cp = c & 0x0F, n = 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            cp = c & 0x07, n = 4;
        } else {
            return i;
        }
        if (i + n > len) return i;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        /* overlong forms, UTF-16 surrogates and code points above U+10FFFF are not UTF-8 */
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        int allowed = cp >= 0x20 ? (cp != 0xFFFE && cp != 0xFFFF) : (cp == '\t' || cp == '\n' || cp == '\r');
        if (!allowed && *bad_char < 0) {
            *bad_char = (long)cp;
            *bad_char_at = i;
        }
        i += n;
    }
    return len;
}

/* The encoding named by the XML declaration ("" when none). femto parses as UTF-8 whatever it says, so a
 * declaration of anything else would be a lie about the text. */
static void declared_encoding(const char *text, size_t len, char *out, size_t cap) {
    out[0] = '\0';
    const char *p = text, *end = text + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
    if (end - p < 6 || memcmp(p, "<?xml", 5) != 0 || !is_space(p[5])) return;
    const char *decl_end = find_str(p, end, "?>");
    const char *e = find_str(p, decl_end, "encoding");
    if (e == decl_end) return;
    e += 8;
    while (e < decl_end && is_space(*e)) e++;
    if (e >= decl_end || *e++ != '=') return;
    while (e < decl_end && is_space(*e)) e++;
    if (e >= decl_end || (*e != '"' && *e != '\'')) return;
    char q = *e++;
    size_t n = 0;
    while (e < decl_end && *e != q && n + 1 < cap) out[n++] = *e++;
    out[n] = '\0';
}

/* ---- libxml2's complaints */

typedef struct {
    int count;
    int code, line, int1;
    char str1[128], str2[128], message[512];
    xmlNode *node; /* schema complaints: the element or attribute */
    /* "premature end of data": the file was cut off; reported in preference to what came before it */
    int truncated, truncated_line, truncated_open_line;
    char truncated_name[128];
} XmlComplaint;

static void copy_str(char *out, size_t cap, const char *s) {
    snprintf(out, cap, "%s", s ? s : "");
}

/* libxml2's messages end with a newline and sometimes a second line of detail; keep the first line. */
static void first_line(char *s) {
    char *nl = strchr(s, '\n');
    if (nl) *nl = '\0';
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '!' || s[n - 1] == '.')) s[--n] = '\0';
}

static void on_xml_error(void *user, xmlErrorPtr e) {
    XmlComplaint *c = user;
    if (!c || !e || e->level < XML_ERR_ERROR) return;
    if (e->code == XML_ERR_TAG_NOT_FINISHED && !c->truncated) {
        c->truncated = 1;
        c->truncated_line = e->line;
        c->truncated_open_line = e->int1;
        copy_str(c->truncated_name, sizeof c->truncated_name, e->str1);
    }
    if (c->count++ > 0) return;
    c->code = e->code;
    c->line = e->line;
    c->int1 = e->int1;
    copy_str(c->str1, sizeof c->str1, e->str1);
    copy_str(c->str2, sizeof c->str2, e->str2);
    copy_str(c->message, sizeof c->message, e->message);
    first_line(c->message);
    if (e->domain == XML_FROM_SCHEMASV) c->node = e->node;
}

static void on_generic_error(void *user, const char *fmt, ...) {
    (void)user, (void)fmt; /* unstructured libxml2 output: never printed */
}

/* Installs femto's handlers for the duration of a read and restores the caller's afterwards. */
typedef struct {
    xmlStructuredErrorFunc structured;
    void *structured_ctx;
    xmlGenericErrorFunc generic;
    void *generic_ctx;
} XmlHandlers;

static void quiet_begin(XmlHandlers *saved, XmlComplaint *c) {
    saved->structured = xmlStructuredError;
    saved->structured_ctx = xmlStructuredErrorContext;
    saved->generic = xmlGenericError;
    saved->generic_ctx = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(c, on_xml_error);
    xmlSetGenericErrorFunc(NULL, on_generic_error);
}

static void quiet_end(const XmlHandlers *saved) {
    xmlSetStructuredErrorFunc(saved->structured_ctx, saved->structured);
    xmlSetGenericErrorFunc(saved->generic_ctx, saved->generic);
}

/* The last line with text on it: where a problem "at the end of the file" is, rather than the empty line
 * after the last newline. */
static int last_text_line(const ProblemDoc *d) {
    size_t last = d->len;
    while (last > 0 && is_space(d->text[last - 1])) last--;
    return last > 0 ? line_of_offset(d, last - 1) : 1;
}

/* One sentence for a document that is not well-formed. */
static int malformed(const ProblemDoc *d, const XmlComplaint *c) {
    const char *f = d->path;
    /* A file cut off mid-way makes libxml2 complain first about whatever was open at the end (a start tag, a
     * comment) and then about the end itself, on the same line; a real error earlier in the file comes first
     * and is followed by the same complaint about the end, which is then only a consequence. */
    if (c->truncated && c->truncated_line == c->line && c->code != XML_ERR_TAG_NAME_MISMATCH) {
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: the file ends inside <%s> (opened on line %d); expected </%s> "
                        "(is the file truncated?)",
                        f, last_text_line(d), c->truncated_name, c->truncated_open_line, c->truncated_name);
    }
    switch (c->code) {
    case XML_ERR_TAG_NAME_MISMATCH:
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: closing tag </%s> does not match <%s> opened on line %d; expected </%s>", f,
                        c->line, c->str2, c->str1, c->int1, c->str1);
    case XML_ERR_DOCUMENT_EMPTY:
        return fem_fail(FEM_ERR_INPUT, "%s:%d: the file has no root element; expected a <femto> element", f,
                        last_text_line(d));
    case XML_ERR_DOCUMENT_END:
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: content after the end of the root element; expected a single "
                        "<femto> element holding everything",
                        f, c->line);
    case XML_ERR_UNDECLARED_ENTITY:
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: undefined entity '&%s;'; expected only &lt; &gt; &amp; &quot; &apos; "
                        "or a character reference such as &#176;",
                        f, c->line, c->str1);
    case XML_ERR_ATTRIBUTE_REDEFINED:
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: attribute '%s' is given twice on one element; expected each "
                        "attribute at most once",
                        f, c->line, c->str1);
    case XML_ERR_ATTRIBUTE_NOT_STARTED:
        return fem_fail(FEM_ERR_INPUT, "%s:%d: an attribute value is not in quotes; expected name=\"value\"",
                        f, c->line);
    case XML_ERR_ATTRIBUTE_WITHOUT_VALUE:
        return fem_fail(FEM_ERR_INPUT, "%s:%d: attribute '%s' has no value; expected %s=\"value\"", f,
                        c->line, c->str1, c->str1);
    default: {
        char reason[512];
        copy_str(reason, sizeof reason, c->count ? c->message : "libxml2 gave no reason");
        if (reason[0] >= 'A' && reason[0] <= 'Z') reason[0] = (char)(reason[0] - 'A' + 'a');
        return fem_fail(FEM_ERR_INPUT, "%s:%d: malformed XML: %s; expected well-formed XML", f, c->line,
                        reason);
    }
    }
}

/* ---- DOCTYPE: stop the parser at the declaration, before any of its contents are read. */

typedef struct {
    int seen;
    int line;
} DoctypeWatch;

static void on_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id, const xmlChar *system_id) {
    (void)name, (void)external_id, (void)system_id;
    xmlParserCtxtPtr p = ctx;
    DoctypeWatch *w = p->_private;
    w->seen = 1;
    w->line = p->input ? p->input->line : 1;
    xmlStopParser(p);
}

/* ---- The schema, compiled once per process from the embedded text */

static pthread_once_t schema_once = PTHREAD_ONCE_INIT;
static xmlSchemaPtr schema;
static char schema_error[600];

static void compile_schema(void) {
    XmlComplaint c = {0};
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewMemParserCtxt(femto_problem_xsd, (int)strlen(femto_problem_xsd));
    if (!pc) {
        copy_str(schema_error, sizeof schema_error, "no memory for the schema parser");
        return;
    }
    xmlSchemaSetParserStructuredErrors(pc, on_xml_error, &c);
    schema = xmlSchemaParse(pc);
    xmlSchemaFreeParserCtxt(pc);
    if (!schema)
        snprintf(schema_error, sizeof schema_error, "line %d: %s", c.line, c.count ? c.message : "?");
}

static int validate(const ProblemDoc *d, int *valid, char *message, size_t cap) {
    pthread_once(&schema_once, compile_schema);
    if (!schema)
        return fem_fail(FEM_ERR_INTERNAL, "femto's embedded schema does not compile (%s)", schema_error);
    xmlSchemaValidCtxtPtr vc = xmlSchemaNewValidCtxt(schema);
    if (!vc) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (schema validation of %s)", d->path);
    XmlComplaint c = {0};
    xmlSchemaSetValidStructuredErrors(vc, on_xml_error, &c);
    int rc = xmlSchemaValidateDoc(vc, d->doc);
    xmlSchemaFreeValidCtxt(vc);
    *valid = rc == 0;
    xmlNode *n = c.node;
    if (n && n->type == XML_ATTRIBUTE_NODE && n->parent)
        c.line = problem_attr_line(d, n->parent, (const char *)n->name);
    else if (n && n->type == XML_ELEMENT_NODE)
        c.line = problem_line(d, n);
    if (!*valid)
        snprintf(message, cap,
                 "%s:%d: the file does not follow femto's schema (%s); expected a file valid against "
                 "io/problem.xsd (femto-app schema prints it)",
                 d->path, c.line > 0 ? c.line : 1, c.count ? c.message : "libxml2 gave no reason");
    return FEM_OK;
}

/* ---- Parsing */

static int parse(ProblemDoc *d, XmlComplaint *c) {
    if (d->len == 0)
        return fem_fail(FEM_ERR_INPUT, "%s:1: the file is empty; expected a <femto> document", d->path);
    long bad_char;
    size_t bad_char_at = 0;
    size_t bad = check_utf8((const unsigned char *)d->text, d->len, &bad_char, &bad_char_at);
    if (bad_char >= 0 && bad_char_at < bad)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: the file contains the character U+%04lX, which XML does not allow; "
                        "expected text without control characters",
                        d->path, line_of_offset(d, bad_char_at), (unsigned long)bad_char);
    if (bad < d->len)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: the file is not valid UTF-8 (byte 0x%02X); expected UTF-8 text", d->path,
                        line_of_offset(d, bad), (unsigned)(unsigned char)d->text[bad]);
    char enc[64];
    declared_encoding(d->text, d->len, enc, sizeof enc);
    if (enc[0] && strcasecmp(enc, "UTF-8") != 0 && strcasecmp(enc, "UTF8") != 0)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:1: the file declares encoding '%s'; expected encoding=\"UTF-8\" (femto "
                        "reads problem files as UTF-8)",
                        d->path, enc);

    xmlParserCtxtPtr p = xmlCreateMemoryParserCtxt(d->text, (int)d->len);
    if (!p) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (parser for %s)", d->path);
    /* No NOENT, DTDLOAD, DTDATTR, DTDVALID, XINCLUDE or HUGE: entities stay unexpanded, nothing is fetched,
     * libxml2's size limits hold. The text is known to be UTF-8, so the declaration's encoding is not used.
     */
    xmlCtxtUseOptions(p, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES |
                             XML_PARSE_NOCDATA | XML_PARSE_IGNORE_ENC);
    p->replaceEntities = 0; /* in case someone changed libxml2's global defaults */
    p->loadsubset = 0;
    p->validate = 0;
    DoctypeWatch watch = {0};
    p->_private = &watch;
    p->sax->internalSubset = on_doctype;
    p->sax->externalSubset = NULL;
    p->sax->entityDecl = NULL;
    xmlParseDocument(p);
    int well_formed = p->wellFormed && c->count == 0;
    d->doc = p->myDoc;
    p->myDoc = NULL;
    xmlFreeParserCtxt(p);
    if (watch.seen)
        return fem_fail(FEM_ERR_INPUT, "%s:%d: DOCTYPE declarations are not allowed in femto problem files",
                        d->path, watch.line);
    if (!well_formed || !d->doc) return malformed(d, c);
    if (!xmlDocGetRootElement(d->doc))
        return fem_fail(FEM_ERR_INPUT, "%s:1: the file has no root element; expected a <femto> element",
                        d->path);
    return index_elements(d);
}

int problem_xml_parse(ProblemDoc *d, int *schema_valid, char *schema_message, size_t cap) {
    *schema_valid = 0;
    schema_message[0] = '\0';
    xmlInitParser();
    XmlHandlers saved;
    XmlComplaint c = {0};
    quiet_begin(&saved, &c);
    int status = parse(d, &c);
    if (status == FEM_OK) status = validate(d, schema_valid, schema_message, cap);
    quiet_end(&saved);
    return status;
}

void problem_xml_free(ProblemDoc *d) {
    if (d->doc) xmlFreeDoc(d->doc);
    free(d->elements);
    free(d->starts);
    d->doc = NULL;
    d->elements = NULL;
    d->starts = NULL;
    d->nelements = 0;
}
