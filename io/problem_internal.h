/* Shared between the files of the problem-file reader (io/problem*.c), not part of femto's API.
 *
 * The reader works in four stages: problem_xml.c parses the text safely and validates it against the embedded
 * schema; problem_format.c checks the document against femto's table of elements and attributes (which names
 * are allowed where, which are required, what type each value has); problem_read_values() then reads, checks
 * (largest magnitude, range), defaults and stores every number, integer, boolean and enumeration through the
 * table's rows; the section files (problem_heat.c, problem_elasticity.c, problem_settings.c) add names, paths
 * and the checks that involve more than one value, and problem_sections.c reads whole physics sections that
 * the table describes alone.
 *
 * The table exists because a schema validator can say that something is wrong but not what would have been
 * right: the table lets every message list the valid names and give the reason for a range. tests/problem
 * proves that the table and io/problem.xsd describe the same elements, attributes, types and ranges. */
#ifndef FEMTO_PROBLEM_INTERNAL_H
#define FEMTO_PROBLEM_INTERNAL_H

#include "problem.h"

#include <libxml/tree.h>

#include <stddef.h>

/* ---- The format table (problem_format.c) */
typedef enum {
    PF_STRING,     /* any non-empty text (paths) */
    PF_NAME,       /* a region, boundary or file name: non-empty, shorter than PROBLEM_NAME_MAX bytes */
    PF_NUMBER,     /* a finite decimal number: 1, -2.5, 2.1e11 */
    PF_NUMBERS,    /* one or more numbers separated by white space */
    PF_INTEGER,    /* a whole number that fits an int */
    PF_BOOLEAN,    /* true, false, 1, 0 */
    PF_ENUM,       /* one of the words in `choices` */
    PF_COMPONENTS, /* a non-empty set of x, y, z: "x", "xz", "xyz" */
} ProblemAttrType;

enum { PROBLEM_MAX_ATTRS = 12 };

/* A physical quantity: its unit, and the largest magnitude a value may have. A value beyond every real
 * material and load is a units slip or a typo (young="2.1e21" for 2.1e11), and values far beyond them
 * overflow: the solver's norms square the residual, which passes the largest double (1.8e308) once its
 * entries pass 1.3e154, and products such as E times a strain or rho c / dt get there sooner. Each bound sits
 * orders of magnitude above the largest real value (named in `why`) and as far below overflow, so a
 * legitimate problem never meets one. */
typedef struct {
    double max;       /* the largest magnitude accepted; 0: no bound beyond the value's range */
    const char *unit; /* "Pa"; "" for a ratio */
    const char *why;  /* the real-world extreme, for the message: "diamond, the stiffest solid, ..." */
} ProblemQuantity;

/* One end of a range. */
typedef enum { PF_OPEN = 0, PF_INCLUSIVE, PF_EXCLUSIVE } ProblemEnd;

/* The values a number or integer may take, and the sentence that refuses any other: "WHY; expected EXPECT",
 * where EXPECT is "lo <= name < hi [unit]" (or the one-sided form) built from the bounds, unless the range
 * words it itself. The bounds are those of the attribute's type in io/problem.xsd (tests/problem checks). */
typedef struct {
    ProblemEnd lo, hi;
    double min, max;
    const char *why; /* the physical or numerical reason; NULL: the message says only what is expected */
    const char *why_above; /* the reason for a value above max, when it differs from why */
    const char *expect;    /* the expected values in words, replacing the inequality ("order 1 or 2") */
    const char *hint;      /* appended in parentheses after the inequality ("0 keeps the .geo's own sizes") */
} ProblemRange;

typedef struct {
    const char *name;
    ProblemAttrType type;
    int required;
    const char *choices;      /* PF_ENUM: the allowed words, separated by spaces, in documentation order */
    const int *choice_values; /* PF_ENUM: the C enum value of each word */
    const ProblemQuantity *quantity; /* PF_NUMBER: unit and largest magnitude, or NULL */
    const ProblemRange *range;       /* PF_NUMBER, PF_INTEGER: the values allowed, or NULL for any */
    double dflt;                     /* the value when the attribute is absent (enums: the C value) */
    int stored;                      /* 1: read into its element's destination at `offset` */
    size_t offset;                   /* double (numbers), int (integers, booleans, enums, components) or
                                      * char[PROBLEM_NAME_MAX] (names) */
} ProblemAttrSpec;

/* Where an element's stored attributes go. */
typedef enum {
    PF_DEST_NONE = 0, /* nothing stored: the section reader reads it by hand */
    PF_DEST_PROBLEM, /* a struct at `offset` in Problem (settings: defaults apply even without the element) */
    PF_DEST_RECORD,  /* a struct the reader provides (a material, a boundary condition); `size` bytes */
    PF_DEST_PARENT,  /* the struct of its parent element */
    PF_DEST_SECTION, /* a physics section read by the table alone (Problem.sections): `size` bytes of its own
                      * attributes, and its children as arrays of records */
} ProblemDest;

typedef struct {
    const char *path;     /* "femto/heat/material": element names from the root */
    const char *children; /* "material+ temperature* initial?": a name and how often: ! one, ? at most one,
                           * * any number, + at least one; in the order messages list them */
    ProblemAttrSpec attrs[PROBLEM_MAX_ATTRS]; /* in the order messages list them; ends at name == NULL */
    ProblemDest dest;
    size_t offset; /* PF_DEST_PROBLEM: where the struct is in Problem */
    size_t size;   /* PF_DEST_RECORD, PF_DEST_SECTION: the struct's size */
    int physics;   /* 1: a physics section; its bit in Problem.physics follows the table's order */
} ProblemElementSpec;

extern const ProblemElementSpec problem_format[];
extern const int problem_format_count;

/* Attributes the table declares but stores nowhere, because a section reader reads them by hand (names that
 * refer to the mesh, paths, lists); "element-path@attribute", NULL-terminated. Every other attribute is
 * stored through the table. */
extern const char *const problem_format_structural[];

/* The spec of the element at `path`, or NULL; the spec of one of its attributes, or NULL. */
const ProblemElementSpec *problem_format_find(const char *path);
const ProblemAttrSpec *problem_format_attr(const ProblemElementSpec *spec, const char *name);

/* Whether `name` may be a child of `spec`'s element; *min and *max (-1: unbounded) say how often. */
int problem_format_child(const ProblemElementSpec *spec, const char *name, int *min, int *max);

/* ---- The parsed document */
typedef struct {
    const char *path; /* the problem file as given to problem_read: every message starts with it */
    const char *text; /* the file's bytes (NUL-terminated) */
    size_t len;
    xmlDocPtr doc;
    /* Where each element's start tag begins in `text`, in document order, so that messages can name the line
     * of an element's `<` and of an attribute even when a start tag spans several lines (libxml2 only knows
     * the line where a start tag ends). */
    size_t nelements;
    xmlNode **elements;
    size_t *starts;
} ProblemDoc;

/* Reads `text` into d->doc. Fails (FEM_ERR_INPUT) on malformed XML, bad UTF-8, a DOCTYPE, or an encoding
 * other than UTF-8. *schema_valid is set to whether the document passes io/problem.xsd; *schema_message holds
 * the first schema complaint in femto's words, used only when femto's own checks find nothing. */
int problem_xml_parse(ProblemDoc *d, int *schema_valid, char *schema_message, size_t cap);
void problem_xml_free(ProblemDoc *d);

/* The line of an element's start tag, and of one of its attributes (the element's line when not found). */
int problem_line(const ProblemDoc *d, xmlNode *node);
int problem_attr_line(const ProblemDoc *d, xmlNode *node, const char *attr);

/* ---- Checks and typed reads (problem_format.c) */

/* Checks every element and attribute against the table, in document order: names, namespaces, how often a
 * child occurs, required attributes, the form of every value, and that there is no stray text. */
int problem_check_structure(const ProblemDoc *d);

/* Checks the form of one attribute's value against its spec (a number, a word from a list...). */
int problem_check_value(const ProblemDoc *d, xmlNode *node, const ProblemAttrSpec *spec);

/* Typed attribute reads. Each returns FEM_OK, or FEM_ERR_INPUT for a malformed value. An absent attribute
 * gives the default. Every read marks the attribute as consumed; problem_check_consumed() then proves that
 * the reader looked at everything the table allows (a bug otherwise, never the user's fault). */
int problem_has(xmlNode *node, const char *attr);
int problem_get_number(const ProblemDoc *d, xmlNode *node, const char *attr, double dflt, double *out);
int problem_get_numbers(const ProblemDoc *d, xmlNode *node, const char *attr, double *out, int cap,
                        int *count);
int problem_get_integer(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out);
int problem_get_boolean(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out);
int problem_get_enum(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out);
int problem_get_components(const ProblemDoc *d, xmlNode *node, const char *attr, int dflt, int *out);
int problem_get_string(const ProblemDoc *d, xmlNode *node, const char *attr, const char *dflt, char *out,
                       size_t cap);

/* Element children in document order, marking each as visited. */
xmlNode *problem_first_child(xmlNode *node);
xmlNode *problem_next_child(xmlNode *node);
int problem_is(xmlNode *node, const char *name);

/* Reads every stored attribute of `node` into `dest` through the table: each given value is checked (form,
 * largest magnitude, range) and stored, each absent one gets its default. Before that, the defaults of the
 * element's PF_DEST_PARENT descendants are stored too, so a record is complete whichever children it has.
 * dest: the Problem for a PF_DEST_PROBLEM element, else the record (its parent's for PF_DEST_PARENT). */
int problem_read_values(const ProblemDoc *d, xmlNode *node, void *dest);

/* Stores the defaults of spec's stored attributes, and of its PF_DEST_PARENT descendants', into `base`. */
void problem_format_store_defaults(const ProblemElementSpec *spec, void *base);

/* The bit of a physics section in Problem.physics (0 for any other element). */
unsigned problem_format_physics_bit(const ProblemElementSpec *spec);

/* Stores the default of every attribute of every PF_DEST_PROBLEM element (and its PF_DEST_PARENT
 * descendants): the settings a file that omits an element gets. */
void problem_format_defaults(Problem *pb);

/* Reads a PF_DEST_SECTION element and its records into pb->sections (problem_sections.c). */
int problem_read_section(const ProblemDoc *d, xmlNode *node, Problem *pb);

/* "neither <heat> nor <elasticity>" (two), "none of <a>, <b> or <c>" (more): the physics sections. */
void problem_format_physics_names(char *out, size_t cap);

/* FEM_ERR_INTERNAL when an element or attribute was never read: the table and the reader disagree. */
int problem_check_consumed(const ProblemDoc *d);

/* "FILE:LINE: ATTR=\"VALUE\" on <ELEM>: " followed by fmt, for values out of range; always FEM_ERR_INPUT. */
int problem_range_error(const ProblemDoc *d, xmlNode *node, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "FILE:LINE: " followed by fmt, with the line of `node`; always FEM_ERR_INPUT. */
int problem_node_error(const ProblemDoc *d, xmlNode *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- Sections (problem_heat.c, problem_elasticity.c, problem_settings.c) */
/* The part every boundary condition shares (problem_bcs.c): records its line in *at, reads boundary="..."
 * and sets *kind to the index of the element's name in kinds[1..nkinds) (kinds[0] names no element; *kind is
 * left as it was when none matches). */
int problem_read_bc_common(const ProblemDoc *d, xmlNode *node, const char *const *kinds, int nkinds,
                           SourceLine *at, char *boundary, size_t cap, int *kind);
/* "second <ELEMENT> on boundary 'B' (the first is on line L); expected one <ELEMENT> per boundary" */
int problem_bc_repeated(const ProblemDoc *d, xmlNode *node, const char *element, const char *boundary,
                        int first_line);
int problem_read_heat(const ProblemDoc *d, xmlNode *node, Problem *pb);
int problem_read_elasticity(const ProblemDoc *d, xmlNode *node, Problem *pb);
int problem_read_mesh(const ProblemDoc *d, xmlNode *node, Problem *pb);
int problem_read_discretization(const ProblemDoc *d, xmlNode *node, Problem *pb);
int problem_read_time(const ProblemDoc *d, xmlNode *node, Problem *pb);
int problem_read_solver(const ProblemDoc *d, xmlNode *node, Problem *pb);
int problem_read_output(const ProblemDoc *d, xmlNode *node, Problem *pb);
int problem_read_device(const ProblemDoc *d, xmlNode *node, Problem *pb);

/* Joins `dir` and a path from the file: absolute paths stay as they are. FEM_ERR_INPUT when too long. */
int problem_resolve_path(const ProblemDoc *d, xmlNode *node, const char *attr, const char *dir,
                         const char *rel, char *out, size_t cap);

#endif
