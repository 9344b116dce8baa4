/* The problem-file reader's test program. One mode per CTest test (see CMakeLists.txt):
 *   good FILE        parses FILE and checks its values (test_problem_good.c)
 *   bad FILE.xml     expects FEM_ERR_INPUT and exactly the one-line message in FILE.expected, where @DIR@
 *                    stands for the absolute folder of FILE; stdout and stderr must stay silent meanwhile
 *   corpus DIR       every DIR/NAME.xml has a one-line NAME.expected and the reverse; at least 30 of them
 *   schema           io/problem.xsd agrees with femto's format table (test_problem_schema.c)
 *   table            every attribute of the table is stored through it or listed as read by hand
 *   misc SCRATCH     missing and odd problem files, paths, libxml2 handlers restored, repeated reads
 *   docs MD OUTDIR   every complete example in docs/problem-file.md parses */
#include "test_problem.h"

#include "fem/error.h"
#include "io/problem.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int test_failures;

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf && (n += fread(buf + n, 1, cap - n, f)) == cap) {
        cap *= 2;
        buf = realloc(buf, cap + 1);
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

static int spill(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

/* ---- Reading with stdout and stderr captured: libxml2 must never print. */

typedef struct {
    int fd, saved;
    FILE *tmp;
} Capture;

static void capture_begin(Capture *c, int fd) {
    fflush(stdout);
    fflush(stderr);
    c->fd = fd;
    c->tmp = tmpfile();
    c->saved = dup(fd);
    dup2(fileno(c->tmp), fd);
}

static long capture_end(Capture *c, char *out, size_t cap) {
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved, c->fd);
    close(c->saved);
    long n = ftell(c->tmp);
    fseek(c->tmp, 0, SEEK_END);
    n = ftell(c->tmp);
    rewind(c->tmp);
    size_t k = fread(out, 1, cap - 1, c->tmp);
    out[k] = '\0';
    fclose(c->tmp);
    return n;
}

static int read_quietly(const char *path, Problem *pb, char *noise, size_t cap) {
    Capture out, err;
    capture_begin(&out, STDOUT_FILENO);
    capture_begin(&err, STDERR_FILENO);
    fem_clear_error();
    int rc = problem_read(path, pb);
    char o[512], e[512];
    long no = capture_end(&err, e, sizeof e);
    no += capture_end(&out, o, sizeof o);
    snprintf(noise, cap, "%s%s", o, e);
    return no > 0 ? -1000 - rc : rc;
}

/* ---- bad */

static void expected_message(const char *xml, char *out, size_t cap) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.*s.expected", (int)(strlen(xml) - 4), xml);
    char *text = slurp(path, NULL);
    out[0] = '\0';
    if (!text) return;
    text[strcspn(text, "\n")] = '\0';
    char dir[PATH_MAX], abs[PATH_MAX] = "";
    snprintf(dir, sizeof dir, "%s", xml);
    char *slash = strrchr(dir, '/');
    snprintf(slash ? slash : dir, sizeof dir - (size_t)(slash ? slash - dir : 0), "%s", slash ? "" : ".");
    if (!realpath(dir, abs)) abs[0] = '\0';
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < cap;) {
        if (strncmp(p, "@DIR@", 5) == 0) {
            n += (size_t)snprintf(out + n, cap - n, "%s", abs);
            p += 5;
        } else {
            out[n++] = *p++;
        }
    }
    out[n < cap ? n : cap - 1] = '\0';
    free(text);
}

static int test_bad(const char *xml) {
    char expected[4096], noise[1024];
    expected_message(xml, expected, sizeof expected);
    if (!expected[0]) {
        fprintf(stderr, "%s: no .expected file next to it\n", xml);
        return 1;
    }
    Problem pb;
    int rc = read_quietly(xml, &pb, noise, sizeof noise);
    if (rc <= -1000) {
        fprintf(stderr, "%s: problem_read printed to stdout/stderr:\n%s\n", xml, noise);
        test_failures++;
        rc = -1000 - rc;
    }
    if (rc != FEM_ERR_INPUT) {
        fprintf(stderr, "%s: returned %d, expected %d (FEM_ERR_INPUT)\n", xml, rc, FEM_ERR_INPUT);
        test_failures++;
    }
    if (strcmp(fem_last_error(), expected) != 0) {
        fprintf(stderr, "%s: message differs\n  expected: %s\n  got:      %s\n", xml, expected,
                fem_last_error());
        test_failures++;
    }
    CHECK(pb.text == NULL && pb.heat.materials == NULL && pb.elasticity.materials == NULL);
    problem_destroy(&pb);
    return test_failures;
}

static int test_corpus(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: %s\n", dir, strerror(errno));
        return 1;
    }
    int nxml = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char other[PATH_MAX];
        if (n > 4 && strcmp(e->d_name + n - 4, ".xml") == 0) {
            nxml++;
            snprintf(other, sizeof other, "%s/%.*s.expected", dir, (int)(n - 4), e->d_name);
        } else if (n > 9 && strcmp(e->d_name + n - 9, ".expected") == 0) {
            snprintf(other, sizeof other, "%s/%.*s.xml", dir, (int)(n - 9), e->d_name);
        } else {
            continue;
        }
        if (access(other, R_OK) != 0) {
            fprintf(stderr, "%s/%s has no partner %s\n", dir, e->d_name, other);
            test_failures++;
        }
        if (n > 9 && strcmp(e->d_name + n - 9, ".expected") == 0) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            size_t len;
            char *text = slurp(path, &len);
            char *nl = text ? strchr(text, '\n') : NULL;
            if (!text || len == 0 || (nl && nl + 1 != text + len)) {
                fprintf(stderr, "%s: expected exactly one line\n", path);
                test_failures++;
            }
            free(text);
        }
    }
    closedir(d);
    if (nxml < 30) {
        fprintf(stderr, "%s: only %d bad files, expected at least 30\n", dir, nxml);
        test_failures++;
    }
    return test_failures;
}

/* ---- misc */

static int generic_calls;
static void my_generic(void *ctx, const char *msg, ...) {
    (void)ctx, (void)msg, generic_calls++;
}
static void my_structured(void *ctx, xmlErrorPtr e) {
    (void)ctx, (void)e;
}

static void expect_failure(const char *path, const char *message) {
    Problem pb;
    char noise[512];
    int rc = read_quietly(path, &pb, noise, sizeof noise);
    if (rc != FEM_ERR_INPUT || strcmp(fem_last_error(), message) != 0) {
        fprintf(stderr, "%s: rc %d, message\n  expected: %s\n  got:      %s\n", path, rc, message,
                fem_last_error());
        test_failures++;
    }
}

static int test_misc(const char *scratch) {
    mkdir(scratch, 0777);
    char abs[PATH_MAX], sub[PATH_MAX + 16], path[PATH_MAX + 64], mesh[PATH_MAX + 64];
    char text[2 * PATH_MAX + 512], msg[2 * PATH_MAX];
    if (!realpath(scratch, abs)) return 1;
    snprintf(sub, sizeof sub, "%s/sub", abs);
    mkdir(sub, 0777);

    expect_failure("bad/does-not-exist.xml",
                   "bad/does-not-exist.xml: cannot open the problem file: No such file "
                   "or directory");
    expect_failure("good", "good: cannot open the problem file: it is a directory");

    /* absolute paths stay, relative ones resolve from the problem file's folder, wherever we run from */
    snprintf(mesh, sizeof mesh, "%s/m.msh", abs);
    spill(mesh, "");
    snprintf(text, sizeof text,
             "<femto><mesh file=\"%s\"/><heat><material region=\"a\" conductivity=\"1\"/></heat>"
             "<output directory=\"/tmp/out\"/></femto>",
             mesh);
    snprintf(path, sizeof path, "%s/abs.xml", abs);
    spill(path, text);
    Problem pb;
    CHECK(problem_read(path, &pb) == FEM_OK);
    CHECK(strcmp(pb.mesh_file, mesh) == 0);
    CHECK(strcmp(pb.output.directory, "/tmp/out") == 0);
    CHECK(strcmp(pb.output.basename, "abs") == 0);
    CHECK(pb.text && strcmp(pb.text, text) == 0);
    problem_destroy(&pb);
    problem_destroy(&pb); /* harmless twice */

    snprintf(path, sizeof path, "%s/rel.XML", sub);
    spill(path,
          "<femto><mesh file=\"../m.msh\"/><elasticity><material region=\"a\" young=\"1\" poisson=\"0\"/>"
          "</elasticity><output directory=\"out/put\"/></femto>");
    CHECK(problem_read(path, &pb) == FEM_OK);
    snprintf(msg, sizeof msg, "%s/../m.msh", sub);
    CHECK(strcmp(pb.mesh_file, msg) == 0);
    snprintf(msg, sizeof msg, "%s/out/put", sub);
    CHECK(strcmp(pb.output.directory, msg) == 0);
    CHECK(strcmp(pb.output.basename, "rel") == 0);
    CHECK(pb.elasticity.materials[0].lambda == 0 && pb.elasticity.materials[0].mu == 0.5);
    problem_destroy(&pb);

    /* the caller's libxml2 handlers are restored, and never called for our errors */
    int marker;
    xmlSetGenericErrorFunc(&marker, my_generic);
    xmlSetStructuredErrorFunc(&marker, my_structured);
    expect_failure("bad/mismatched-tag.xml", "bad/mismatched-tag.xml:6: closing tag </heat> does not match "
                                             "<material> opened on line 5; expected </material>");
    CHECK(xmlGenericError == my_generic && xmlGenericErrorContext == &marker);
    CHECK(xmlStructuredError == my_structured && xmlStructuredErrorContext == &marker);
    CHECK(generic_calls == 0);
    xmlSetGenericErrorFunc(NULL, NULL);
    xmlSetStructuredErrorFunc(NULL, NULL);

    /* the schema is compiled once and reading twice gives the same result */
    Problem a, b;
    CHECK(problem_read("good/full.xml", &a) == FEM_OK);
    CHECK(problem_read("good/full.xml", &b) == FEM_OK);
    CHECK(a.elasticity.materials[1].young == b.elasticity.materials[1].young);
    CHECK(a.heat.nbcs == b.heat.nbcs && strcmp(a.text, b.text) == 0);
    problem_destroy(&a);
    problem_destroy(&b);

    /* numbers mean the same under a locale whose decimal separator is a comma */
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
        CHECK(problem_read("good/cantilever.xml", &a) == FEM_OK);
        CHECK(a.elasticity.materials[0].poisson == 0.3);
        problem_destroy(&a);
        setlocale(LC_NUMERIC, "C");
    }

    /* something that is not a problem file at all is refused before it is read whole */
    snprintf(path, sizeof path, "%s/huge.xml", abs);
    FILE *f = fopen(path, "wb");
    if (f) {
        static char block[1 << 16];
        memset(block, ' ', sizeof block);
        for (int i = 0; i < 17 * 16; i++) fwrite(block, 1, sizeof block, f);
        fclose(f);
        snprintf(msg, sizeof msg,
                 "%s: the problem file is larger than 16 MiB; expected a small XML file (is this the "
                 "right file?)",
                 path);
        expect_failure(path, msg);
        remove(path);
    }

    CHECK(strncmp(problem_schema_text(), "<?xml", 5) == 0);
    return test_failures;
}

/* ---- docs */

static int test_docs(const char *md, const char *outdir) {
    char *text = slurp(md, NULL);
    if (!text) {
        fprintf(stderr, "%s: %s\n", md, strerror(errno));
        return 1;
    }
    mkdir(outdir, 0777);
    int examples = 0;
    for (char *p = strstr(text, "```xml\n"); p; p = strstr(p, "```xml\n")) {
        p += 7;
        char *end = strstr(p, "```");
        if (!end) break;
        *end = '\0';
        if (strncmp(p, "<?xml", 5) == 0) {
            char path[PATH_MAX], mesh[PATH_MAX];
            snprintf(path, sizeof path, "%s/example-%d.xml", outdir, ++examples);
            spill(path, p);
            const char *m = strstr(p, "<mesh file=\"");
            if (m) {
                m += 12;
                snprintf(mesh, sizeof mesh, "%s/%.*s", outdir, (int)strcspn(m, "\""), m);
                spill(mesh, "");
            }
            Problem pb;
            char noise[512];
            int rc = read_quietly(path, &pb, noise, sizeof noise);
            if (rc != FEM_OK) {
                fprintf(stderr, "docs example %d (%s) does not parse: %s\n", examples, path,
                        fem_last_error());
                test_failures++;
            }
            problem_destroy(&pb);
        }
        p = end + 3;
    }
    free(text);
    if (examples < 5) {
        fprintf(stderr, "%s: %d complete examples, expected at least 5 (one per physics)\n", md, examples);
        test_failures++;
    }
    return test_failures;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int failures;
    if (strcmp(mode, "good") == 0 && argc == 3)
        failures = test_good(argv[2]);
    else if (strcmp(mode, "bad") == 0 && argc == 3)
        failures = test_bad(argv[2]);
    else if (strcmp(mode, "corpus") == 0 && argc == 3)
        failures = test_corpus(argv[2]);
    else if (strcmp(mode, "schema") == 0)
        failures = test_schema();
    else if (strcmp(mode, "table") == 0)
        failures = test_table();
    else if (strcmp(mode, "misc") == 0 && argc == 3)
        failures = test_misc(argv[2]);
    else if (strcmp(mode, "docs") == 0 && argc == 4)
        failures = test_docs(argv[2], argv[3]);
    else {
        fprintf(
            stderr,
            "usage: test_problem good FILE | bad FILE | corpus DIR | schema | table | misc SCRATCH | docs MD DIR\n");
        return 2;
    }
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
