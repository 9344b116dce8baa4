/* problem_read: from a path to a checked Problem (see problem.h for the contract, io/problem_internal.h for
 * how the work is split across io/problem_*.c).
 *
 * Every check runs on every file, in this order: well-formedness and safety, femto's structural table, the
 * section readers with their range checks, the checks across sections, and last the schema's verdict. The
 * schema is enforced, but its complaint is reported only when femto's own checks found nothing, because
 * femto's messages say what would have been valid and libxml2's do not. */
#include "problem_internal.h"

#include "fem/error.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

extern const char femto_problem_xsd[];

const char *problem_schema_text(void) {
    return femto_problem_xsd;
}

/* A problem file is a few kilobytes; this only keeps a wrong path (a mesh, a device) from being slurped. */
enum { PROBLEM_FILE_MAX = 16 << 20 };

/* What a path that is not a regular file is, for the sentence that refuses it. */
static const char *file_kind(mode_t mode) {
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO (named pipe)"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

/* Opens without blocking (opening a FIFO with no writer would wait forever) and accepts only a regular
 * file, whose reads end. */
static FILE *open_regular(const char *path) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fem_fail(FEM_ERR_INPUT, "%s: cannot open the problem file: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    FILE *f = NULL;
    if (fstat(fd, &st) != 0)
        fem_fail(FEM_ERR_INPUT, "%s: cannot open the problem file: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        fem_fail(FEM_ERR_INPUT, "%s: cannot open the problem file: it is %s%s", path, file_kind(st.st_mode),
                 S_ISDIR(st.st_mode) ? "" : ", not a regular file");
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb")))
        fem_fail(FEM_ERR_INPUT, "%s: cannot open the problem file: %s", path, strerror(errno));
    if (!f) close(fd);
    return f;
}

static int read_file(const char *path, char **text, size_t *len) {
    FILE *f = open_regular(path);
    if (!f) return FEM_ERR_INPUT;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || n > PROBLEM_FILE_MAX) break;
        char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f);
    int saved_errno = errno;
    fclose(f);
    if (!buf) return fem_fail(FEM_ERR_INTERNAL, "out of host memory (reading %s)", path);
    if (failed) {
        free(buf);
        return fem_fail(FEM_ERR_INPUT, "%s: cannot read the problem file: %s", path, strerror(saved_errno));
    }
    if (n > PROBLEM_FILE_MAX) {
        free(buf);
        return fem_fail(FEM_ERR_INPUT,
                        "%s: the problem file is larger than %d MiB; expected a small XML file (is "
                        "this the right file?)",
                        path, PROBLEM_FILE_MAX >> 20);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return FEM_OK;
}

/* The absolute directory of `path`, and the file's name without ".xml" (the default output basename). */
static int locate(const char *path, Problem *pb) {
    char dir[PROBLEM_PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char resolved[PATH_MAX];
    if (realpath(dir, resolved))
        snprintf(pb->dir, sizeof pb->dir, "%s", resolved);
    else
        snprintf(pb->dir, sizeof pb->dir, "%s", dir);
    if (strcmp(pb->dir, "/") == 0) pb->dir[0] = '\0'; /* joined paths become "/name", not "//name" */

    const char *name = slash ? slash + 1 : path;
    size_t n = strlen(name);
    if (n > 4 && strcasecmp(name + n - 4, ".xml") == 0) n -= 4;
    if (n >= sizeof pb->output.basename) n = sizeof pb->output.basename - 1;
    memcpy(pb->output.basename, name, n);
    pb->output.basename[n] = '\0';

    int k = snprintf(pb->output.directory, sizeof pb->output.directory, "%s/results", pb->dir);
    if (k < 0 || (size_t)k >= sizeof pb->output.directory)
        return fem_fail(FEM_ERR_INPUT, "%s: the directory of the problem file is too long a path (%zu bytes)",
                        path, strlen(pb->dir));
    return FEM_OK;
}

static int read_sections(const ProblemDoc *d, Problem *pb) {
    xmlNode *root = xmlDocGetRootElement(d->doc);
    for (xmlNode *c = problem_first_child(root); c; c = problem_next_child(c)) {
        if (problem_is(c, "mesh"))
            FEM_TRY(problem_read_mesh(d, c, pb));
        else if (problem_is(c, "discretization"))
            FEM_TRY(problem_read_discretization(d, c, pb));
        else if (problem_is(c, "heat"))
            FEM_TRY(problem_read_heat(d, c, pb));
        else if (problem_is(c, "elasticity"))
            FEM_TRY(problem_read_elasticity(d, c, pb));
        else if (problem_is(c, "time"))
            FEM_TRY(problem_read_time(d, c, pb));
        else if (problem_is(c, "solver"))
            FEM_TRY(problem_read_solver(d, c, pb));
        else if (problem_is(c, "output"))
            FEM_TRY(problem_read_output(d, c, pb));
        else if (problem_is(c, "device"))
            FEM_TRY(problem_read_device(d, c, pb));
        else
            FEM_TRY(problem_read_section(d, c, pb));
        char path[PROBLEM_NAME_MAX + 8];
        snprintf(path, sizeof path, "femto/%s", (const char *)c->name);
        pb->physics |= problem_format_physics_bit(problem_format_find(path));
    }
    return FEM_OK;
}

/* Checks that need more than one section. */
static int check_across(const ProblemDoc *d, const Problem *pb) {
    const char *f = d->path;
    if (!pb->physics) {
        char sections[256];
        problem_format_physics_names(sections, sizeof sections);
        return fem_fail(FEM_ERR_INPUT, "%s:%d: <femto> has %s; expected at least one physics section", f,
                        problem_line(d, xmlDocGetRootElement(d->doc)), sections);
    }
    if (pb->elasticity.coupled_temperature && !pb->heat.present)
        return fem_fail(FEM_ERR_INPUT,
                        "%s:%d: <temperature field=\"heat\"> takes the temperature from the heat "
                        "solution, but there is no <heat> section; expected a <heat> section or a "
                        "uniform value=\"...\"",
                        f, pb->elasticity.temperature_at.line);
    if (pb->time.scheme != TIME_STEADY && pb->heat.present) {
        for (int i = 0; i < pb->heat.nmaterials; i++) {
            const HeatMaterial *m = &pb->heat.materials[i];
            const char *missing = !(m->density > 0)         ? "density"
                                  : !(m->specific_heat > 0) ? "specific-heat"
                                                            : NULL;
            if (missing)
                return fem_fail(FEM_ERR_INPUT,
                                "%s:%d: heat material '%s' has no positive %s, but the run is "
                                "transient (<time> on line %d); expected density > 0 and "
                                "specific-heat > 0 on every heat material",
                                f, m->at.line, m->region, missing, pb->time.at.line);
        }
    }
    return FEM_OK;
}

static int read_problem(const char *path, Problem *pb) {
    if (strlen(path) >= sizeof pb->path)
        return fem_fail(FEM_ERR_INPUT, "%.200s...: the path of the problem file is longer than %zu bytes",
                        path, sizeof pb->path - 1);
    snprintf(pb->path, sizeof pb->path, "%s", path);
    size_t len = 0;
    FEM_TRY(read_file(path, &pb->text, &len));
    problem_format_defaults(pb); /* the section readers override what the file gives */
    FEM_TRY(locate(path, pb));

    ProblemDoc d = {.path = path, .text = pb->text, .len = len};
    int schema_valid;
    char schema_message[1024];
    int status = problem_xml_parse(&d, &schema_valid, schema_message, sizeof schema_message);
    if (status == FEM_OK) status = problem_check_structure(&d);
    if (status == FEM_OK) status = read_sections(&d, pb);
    if (status == FEM_OK) status = check_across(&d, pb);
    if (status == FEM_OK) status = problem_check_consumed(&d);
    if (status == FEM_OK && !schema_valid) status = fem_fail(FEM_ERR_INPUT, "%s", schema_message);
    problem_xml_free(&d);
    return status;
}

int problem_read(const char *path, Problem *pb) {
    memset(pb, 0, sizeof *pb);
    int status = read_problem(path, pb);
    if (status != FEM_OK) problem_destroy(pb);
    return status;
}

void problem_destroy(Problem *pb) {
    if (!pb) return;
    free(pb->text);
    free(pb->heat.materials);
    free(pb->heat.bcs);
    free(pb->elasticity.materials);
    free(pb->elasticity.bcs);
    for (int i = 0; i < pb->nsections; i++) {
        ProblemSection *s = &pb->sections[i];
        free(s->data);
        for (int k = 0; k < s->nkinds; k++) free(s->kinds[k].items), free(s->kinds[k].at);
    }
    memset(pb, 0, sizeof *pb);
}
