/* The mesh reader's child process, its limits, the .geo size estimate and the mesh cache (io/mesh_*.c).
 *
 * usage: test_mesh_isolation CASE [CRASH_DIR], one of
 *   same        the child hands back exactly what Gmsh gives in process (.msh and .geo, 2D and 3D, order 2)
 *   time        a .msh that makes Gmsh allocate without end is stopped at a 1 s time limit, in about 1 s
 *   memory      meshing under a 64 MB memory limit fails with one sentence, not a crash of the caller
 *   estimate    a tiny size is refused before meshing, with the estimate; force meshes past a cell limit
 *   fifo        a FIFO named like a mesh is refused at once, not read
 *   cache       a second read comes from the cache, identical; size, order, refine, the script and a file it
 *               includes each invalidate; four entries per script are kept
 *   corrupt     a truncated entry, a flipped byte and a changed key are detected and rebuilt
 *   forged      a record with the topology reads back whole (the same arrays, has_topology); one whose
 *               topology names an edge, a face or a cell that is not there is refused, its CRC-32 valid
 *   concurrent  four processes meshing one script into one cache at once all succeed, leave one whole entry
 *               and no temporary file */
#include "common/femto_test.h"

#include "fem/error.h"
#include "io/mesh_internal.h"
#include "io/mesh_read.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define SAME_ARRAY(a, b, n, what)                                                                            \
    CHECK(((a) == NULL && (b) == NULL) || memcmp((a), (b), sizeof(*(a)) * (size_t)(n)) == 0, "%s differs",   \
          what)

static void check_same_blocks(const MeshBlock *a, const MeshBlock *b, int n, const char *what) {
    for (int k = 0; k < n; k++) {
        CHECK(a[k].type == b[k].type && a[k].count == b[k].count, "%s block %d: type or count differs", what,
              k);
        if (a[k].type != b[k].type || a[k].count != b[k].count) continue;
        SAME_ARRAY(a[k].nodes, b[k].nodes, a[k].count * a[k].nnodes, "element nodes");
        SAME_ARRAY(a[k].entity, b[k].entity, a[k].count, "element entities");
        SAME_ARRAY(a[k].tag, b[k].tag, a[k].count, "element tags");
    }
}

/* Every array of two meshes, topology included, is the same to the bit. */
static void check_same_mesh(const Mesh *a, const Mesh *b, const char *what) {
    CHECK(a->dim == b->dim && a->nnodes == b->nnodes && a->ncell_blocks == b->ncell_blocks &&
              a->nfacet_blocks == b->nfacet_blocks && a->ngroups == b->ngroups,
          "%s: the counts differ", what);
    if (a->nnodes != b->nnodes || a->ncell_blocks != b->ncell_blocks ||
        a->nfacet_blocks != b->nfacet_blocks || a->ngroups != b->ngroups)
        return;
    SAME_ARRAY(a->x, b->x, 3 * a->nnodes, "coordinates");
    SAME_ARRAY(a->node_tag, b->node_tag, a->nnodes, "node tags");
    check_same_blocks(a->cells, b->cells, a->ncell_blocks, what);
    check_same_blocks(a->facets, b->facets, a->nfacet_blocks, what);
    for (int g = 0; g < a->ngroups; g++) {
        const PhysicalGroup *p = &a->groups[g], *q = &b->groups[g];
        CHECK(p->dim == q->dim && p->tag == q->tag && strcmp(p->name, q->name) == 0 &&
                  p->nentities == q->nentities && p->nelements == q->nelements,
              "%s: group %d differs", what, g);
        if (p->nentities == q->nentities)
            SAME_ARRAY(p->entities, q->entities, p->nentities, "group entities");
    }
    const Topology *s = &a->topo, *t = &b->topo;
    CHECK(s->nvertices == t->nvertices && s->nedges == t->nedges && s->nfaces == t->nfaces &&
              s->nboundary_facets == t->nboundary_facets,
          "%s: topology counts differ", what);
    if (s->nedges != t->nedges || s->nfaces != t->nfaces) return;
    SAME_ARRAY(s->vertex_of_node, t->vertex_of_node, a->nnodes, "vertex numbers");
    SAME_ARRAY(s->edges, t->edges, 2 * s->nedges, "edge vertices");
    for (int k = 0; k < a->ncell_blocks; k++) {
        SAME_ARRAY(s->cell_edges[k], t->cell_edges[k], a->cells[k].count * shape_nedges(a->cells[k].shape),
                   "cell edges");
        if (a->dim == 3)
            SAME_ARRAY(s->cell_faces[k], t->cell_faces[k],
                       a->cells[k].count * shape_nfacets(a->cells[k].shape), "cell faces");
    }
    for (int k = 0; k < a->nfacet_blocks; k++)
        SAME_ARRAY(s->facet_cell[k], t->facet_cell[k], a->facets[k].count, "facet cells");
}

static void case_same(const char *sample_msh) {
    struct {
        const char *path;
        int order;
    } cases[] = {{test_mesh("ball_tet.geo"), 2},
                 {test_mesh("square_mixed_cw.geo"), 2},
                 {test_mesh("block_hex.geo"), 1},
                 {sample_msh, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Mesh child, here;
        MeshReadResult res;
        MeshReadOptions mo = {.order = cases[i].order, .result = &res};
        CHECK_OK(mesh_read(cases[i].path, &mo, &child));
        CHECK(res.origin == (strstr(cases[i].path, ".geo") ? MESH_FROM_GMSH : MESH_FROM_FILE),
              "%s: origin %d", cases[i].path, res.origin);
        mo.in_process = 1;
        CHECK_OK(mesh_read(cases[i].path, &mo, &here));
        check_same_mesh(&child, &here, cases[i].path);
        printf("%s: %lld nodes, identical through the child and in process\n", cases[i].path,
               (long long)child.nnodes);
        mesh_destroy(&child);
        mesh_destroy(&here);
    }
}

/* Reads path expecting failure with a message holding `want` (and the path), within `seconds`. */
static void expect_refusal(const char *path, const MeshReadOptions *mo, const char *want, double seconds) {
    Mesh m;
    fem_clear_error();
    double t = now();
    int status = mesh_read(path, mo, &m);
    t = now() - t;
    const char *msg = fem_last_error();
    CHECK(status == FEM_ERR_INPUT, "%s: status %d, expected %d", path, status, FEM_ERR_INPUT);
    CHECK(strstr(msg, want) && strstr(msg, path) && !strchr(msg, '\n'), "%s: message '%s', expected '%s'",
          path, msg, want);
    CHECK(t < seconds, "%s: refused after %.2f s, expected under %.0f s", path, t, seconds);
    printf("%.2f s: %s\n", t, msg);
}

static void case_time(const char *crash_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/oom-std-vector-int-std-allocator-int-M-fill-.msh", crash_dir);
    /* memory enough for Gmsh to keep allocating for minutes: only the time limit can stop it */
    MeshReadOptions mo = {.time_limit = 1.0, .memory_limit = 64e9};
    expect_refusal(path, &mo, "the Gmsh library ran past its time limit of 1 s while reading it", 4.0);
}

static void case_memory(const char *unused) {
    (void)unused;
    /* a cube at size 0.02 needs some 300 MB in Gmsh; 64 MB of address space more than the caller's is not
     * enough. Gmsh either reports the failed allocation or crashes on it: either way one sentence. */
    MeshReadOptions mo = {.size = 0.02, .memory_limit = 64e6};
    Mesh m;
    fem_clear_error();
    int status = mesh_read(test_mesh("cube_tet.geo"), &mo, &m);
    const char *msg = fem_last_error();
    CHECK(status == FEM_ERR_INPUT, "status %d, expected %d", status, FEM_ERR_INPUT);
    CHECK(strstr(msg, "cube_tet.geo") &&
              (strstr(msg, "memory limit") || strstr(msg, "crashed") || strstr(msg, "not enough memory")),
          "message '%s' does not say that memory ran out", msg);
    printf("%s\n", msg);
}

static void case_estimate(const char *unused) {
    (void)unused;
    const char *geo = test_mesh("cube_tet.geo");
    MeshReadOptions tiny = {.size = 1e-5};
    /* 4.5 tetrahedra per h^3 in 1 m^3: 4.5e15 */
    expect_refusal(geo, &tiny, "would make about 4.5e+15 cells (its volume of 1 m^3 at mesh size 1e-05 m)",
                   5.0);
    MeshReadOptions refined = {.size = 1e-3, .refine = 3};
    expect_refusal(geo, &refined, "would make about 2.3e+12 cells", 5.0);
    MeshReadOptions limited = {.size = 0.1, .cell_limit = 10};
    expect_refusal(geo, &limited, "more than femto's limit of 10 cells; use a larger size, or --force", 5.0);
    MeshReadResult res;
    MeshReadOptions forced = {.size = 0.1, .cell_limit = 10, .force = 1, .result = &res};
    Mesh m;
    CHECK_OK(mesh_read(geo, &forced, &m));
    int64_t cells = m.cells[0].count;
    CHECK(res.estimated_cells > 0.5 * cells && res.estimated_cells < 2.0 * cells,
          "estimate %.3g for %lld cells", res.estimated_cells, (long long)cells);
    printf("forced: %lld cells, estimated %.3g\n", (long long)cells, res.estimated_cells);
    mesh_destroy(&m);
}

static char scratch[] = "/tmp/femto-mesh-test-XXXXXX";

static void remove_scratch(void) {
    DIR *d = opendir(scratch);
    struct dirent *e;
    char path[8192];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))) {
            snprintf(path, sizeof path, "%s/%s", scratch, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    rmdir(scratch);
}

static void case_fifo(const char *unused) {
    (void)unused;
    char path[256];
    snprintf(path, sizeof path, "%s/pipe.msh", scratch);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    MeshReadOptions mo = {0};
    expect_refusal(path, &mo, "is not a regular file", 2.0);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0, "cannot write %s", path);
    if (f) fclose(f);
}

/* A square of triangles whose size comes from an included file, so that editing either invalidates. */
static void write_square(const char *lc) {
    char path[256], text[512];
    snprintf(path, sizeof path, "%s/size.geo", scratch);
    snprintf(text, sizeof text, "lc = %s;\n", lc);
    write_text(path, text);
    snprintf(path, sizeof path, "%s/square.geo", scratch);
    write_text(path, "Include \"size.geo\"; // the size, in a file of its own\n"
                     "Point(1) = {0, 0, 0, lc}; Point(2) = {1, 0, 0, lc}; Point(3) = {1, 1, 0, lc};\n"
                     "Point(4) = {0, 1, 0, lc}; Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4};\n"
                     "Line(4) = {4, 1}; Curve Loop(1) = {1, 2, 3, 4}; Plane Surface(1) = {1};\n"
                     "Physical Surface(\"plate\") = {1}; Physical Curve(\"edge\") = {1, 2, 3, 4};\n");
}

static MeshOrigin read_square(MeshReadOptions mo, Mesh *m, MeshReadResult *res) {
    char path[256];
    snprintf(path, sizeof path, "%s/square.geo", scratch);
    mo.cache_dir = "";
    mo.result = res;
    CHECK_OK(mesh_read(path, &mo, m));
    return res->origin;
}

/* Reads the square with mo, expecting `origin`; keeps the mesh in *keep when given. */
static void expect_origin(MeshReadOptions mo, MeshOrigin origin, const char *what, Mesh *keep) {
    Mesh m;
    MeshReadResult res;
    MeshOrigin got = read_square(mo, &m, &res);
    CHECK(got == origin, "%s: origin %d, expected %d (note '%s')", what, got, origin, res.cache_note);
    printf("%s: %s in %.3f s%s%s\n", what, got == MESH_FROM_CACHE ? "cached" : "meshed", res.seconds_read,
           res.cache_note[0] ? ", " : "", res.cache_note);
    if (keep)
        *keep = m;
    else
        mesh_destroy(&m);
}

/* The cache entries of the square, and the number of temporary files beside them. */
static int count_entries(char *last, size_t len, int *temporaries) {
    char dir[256];
    snprintf(dir, sizeof dir, "%s/.femto-cache", scratch);
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    *temporaries = 0;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "square-", 7) == 0 && strstr(e->d_name, ".femesh") &&
            !strstr(e->d_name, ".tmp.")) {
            n++;
            snprintf(last, len, "%s/%s", dir, e->d_name);
        }
        *temporaries += strstr(e->d_name, ".tmp.") != NULL;
    }
    if (d) closedir(d);
    return n;
}

static void clear_cache(void) {
    char dir[256], path[512];
    snprintf(dir, sizeof dir, "%s/.femto-cache", scratch);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
}

static void case_cache(const char *unused) {
    (void)unused;
    MeshReadOptions base = {.order = 2};
    write_square("0.1");
    Mesh fresh, cached;
    expect_origin(base, MESH_FROM_GMSH, "first read", &fresh);
    expect_origin(base, MESH_FROM_CACHE, "second read", &cached);
    check_same_mesh(&fresh, &cached, "meshed and cached");
    CHECK(cached.has_topology, "the cached mesh comes with its topology");
    mesh_destroy(&fresh);
    mesh_destroy(&cached);
    MeshReadOptions sized = base, ordered = base, refined = base;
    sized.size = 0.05;
    ordered.order = 1;
    refined.refine = 1;
    expect_origin(sized, MESH_FROM_GMSH, "size 0.05", NULL);
    expect_origin(ordered, MESH_FROM_GMSH, "order 1", NULL);
    expect_origin(refined, MESH_FROM_GMSH, "refine 1", NULL);
    expect_origin(refined, MESH_FROM_CACHE, "refine 1 again", NULL);
    write_square("0.2"); /* only the included file changes */
    expect_origin(base, MESH_FROM_GMSH, "included file edited", NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/square.geo", scratch);
    FILE *f = fopen(path, "a");
    CHECK(f && fputs("// a comment changes the text\n", f) >= 0, "cannot append to %s", path);
    if (f) fclose(f);
    expect_origin(base, MESH_FROM_GMSH, "script edited", NULL);
    expect_origin(base, MESH_FROM_CACHE, "script edited, again", NULL);
    char last[512];
    int temporaries, n = count_entries(last, sizeof last, &temporaries);
    CHECK(n == 4 && temporaries == 0,
          "%d entries and %d temporary files, expected the 4 most recent and none", n, temporaries);
}

/* Damages the only cache entry of the square with `how` and expects a rebuilt mesh and then a hit. */
static void damage(const char *how, const char *note) {
    char entry[512];
    int temporaries;
    CHECK(count_entries(entry, sizeof entry, &temporaries) == 1, "one cache entry expected");
    struct stat st;
    stat(entry, &st);
    int fd = open(entry, O_RDWR);
    if (strcmp(how, "truncate") == 0) {
        CHECK(ftruncate(fd, st.st_size / 2) == 0, "truncate");
    } else {
        off_t at = strcmp(how, "flip") == 0 ? st.st_size - 100 : 200; /* a coordinate, or the key's text */
        char c;
        CHECK(pread(fd, &c, 1, at) == 1, "read");
        c ^= 0x20;
        CHECK(pwrite(fd, &c, 1, at) == 1, "write");
    }
    close(fd);
    MeshReadOptions mo = {.order = 2};
    Mesh m;
    MeshReadResult res;
    CHECK(read_square(mo, &m, &res) == MESH_FROM_GMSH && strstr(res.cache_note, note),
          "%s: origin %d, note '%s', expected a rebuild because '%s'", how, res.origin, res.cache_note, note);
    printf("%s: %s\n", how, res.cache_note);
    mesh_destroy(&m);
    expect_origin(mo, MESH_FROM_CACHE, "after the rebuild", NULL);
}

static void case_corrupt(const char *unused) {
    (void)unused;
    write_square("0.1");
    MeshReadOptions mo = {.order = 2};
    expect_origin(mo, MESH_FROM_GMSH, "first read", NULL);
    damage("truncate", "truncated");
    damage("flip", "its checksum does not match its contents");
    damage("key", "its key does not match");
}

static void case_concurrent(const char *unused) {
    (void)unused;
    write_square("0.02");
    pid_t pids[4];
    for (int i = 0; i < 4; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            MeshReadOptions mo = {.order = 2};
            Mesh m;
            MeshReadResult res;
            read_square(mo, &m, &res);
            _exit(test_failures ? 1 : 0);
        }
    }
    for (int i = 0; i < 4; i++) {
        int st = 0;
        waitpid(pids[i], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader %d: status %d", i, st);
    }
    char entry[512];
    int temporaries, n = count_entries(entry, sizeof entry, &temporaries);
    CHECK(n == 1 && temporaries == 0, "%d entries, %d temporary files; expected 1 and 0", n, temporaries);
    MeshReadOptions mo = {.order = 2};
    expect_origin(mo, MESH_FROM_CACHE, "after four concurrent readers", NULL);
}

/* m written with its topology and a CRC into a scratch file and read back into *back; the read's status. */
static int round_trip(const Mesh *m, Mesh *back) {
    char path[256];
    snprintf(path, sizeof path, "%s/record", scratch);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0, "cannot open %s", path);
    if (fd < 0) return FEM_ERR_INTERNAL;
    CHECK_OK(mesh_blob_write(fd, m, 1, 1));
    off_t bytes = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    snprintf(back->path, sizeof back->path, "%s", path);
    int status = mesh_blob_read(fd, (int64_t)bytes, back);
    close(fd);
    unlink(path);
    return status;
}

static void case_forged(const char *unused) {
    (void)unused;
    MeshReadOptions mo = {.order = 2, .cache_dir = ""};
    write_square("0.1");
    Mesh m, back;
    MeshReadResult res;
    read_square(mo, &m, &res);
    CHECK(m.has_topology && m.topo.nedges > 0, "the square has a topology");
    CHECK(round_trip(&m, &back) == FEM_OK && back.has_topology, "a record with the topology reads back: %s",
          fem_last_error());
    CHECK_OK(mesh_finish_stored(&back)); /* the groups' element counts, which records do not hold */
    check_same_mesh(&m, &back, "written and read back");
    mesh_destroy(&back);
    fem_idx *edge = &m.topo.cell_edges[0][0], keep = *edge;
    *edge = (fem_idx)m.topo.nedges; /* one past the last edge */
    CHECK(round_trip(&m, &back) == FEM_ERR_INPUT && strstr(fem_last_error(), "inconsistent"),
          "an edge that is not there: %s", fem_last_error());
    printf("an edge that is not there: %s\n", fem_last_error());
    *edge = keep;
    FacetCell *fc = &m.topo.facet_cell[0][0];
    fem_idx cell = fc->cell;
    fc->cell = (fem_idx)m.cells[fc->block].count;
    CHECK(round_trip(&m, &back) == FEM_ERR_INPUT, "a facet on a cell that is not there: %s", fem_last_error());
    fc->cell = cell;
    CHECK(round_trip(&m, &back) == FEM_OK, "restored: %s", fem_last_error());
    mesh_destroy(&back);
    mesh_destroy(&m);
}

int main(int argc, char **argv) {
    static const struct {
        const char *name;
        void (*run)(const char *arg); /* arg: argv[2] (a path) where the case needs one */
    } cases[] = {{"same", case_same},       {"time", case_time},
                 {"memory", case_memory},   {"estimate", case_estimate},
                 {"fifo", case_fifo},       {"cache", case_cache},
                 {"corrupt", case_corrupt}, {"concurrent", case_concurrent},
                 {"forged", case_forged}};
    if (argc < 2 || !mkdtemp(scratch)) return 2;
    size_t k = 0;
    while (k < sizeof cases / sizeof cases[0] && strcmp(cases[k].name, argv[1]) != 0) k++;
    if (k == sizeof cases / sizeof cases[0])
        test_failures++, fprintf(stderr, "unknown case %s\n", argv[1]);
    else
        cases[k].run(argc > 2 ? argv[2] : "");
    clear_cache();
    char dir[256];
    snprintf(dir, sizeof dir, "%s/.femto-cache", scratch);
    rmdir(dir);
    remove_scratch();
    return test_result(argv[1]);
}
