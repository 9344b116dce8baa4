/* mesh_read, the entry of io/mesh_*.c (see mesh_read.h and mesh_internal.h): checks the file, takes the
 * mesh from the cache, the reading child or (opt->in_process) Gmsh in this process, finishes it here, and
 * stores a fresh .geo mesh in the cache. */
#include "mesh_internal.h"

#include "fem/element_order.h"
#include "fem/error.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Gmsh reads a file it does not recognise as a script, and would report a .msh full of anything else as a
 * script syntax error: a .msh must begin with $MeshFormat. */
static int begins_like_msh(int fd) {
    char head[256];
    ssize_t n = read(fd, head, sizeof head - 1);
    if (n <= 0) return 0;
    head[n] = '\0';
    const char *s = head, *want = "$MeshFormat";
    while (isspace((unsigned char)*s)) s++;
    size_t k = strlen(want);
    return strncmp(s, want, k) == 0 && (s[k] == '\0' || isspace((unsigned char)s[k]));
}

int mesh_check_file(const char *path, MeshFileInfo *info) {
    /* non-blocking: opening a FIFO with no writer would otherwise wait forever */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return fem_fail(FEM_ERR_INPUT, "cannot open mesh file '%s': %s", path, strerror(errno));
    struct stat st;
    int geo = has_suffix(path, ".geo"), msh = has_suffix(path, ".msh"), status = FEM_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        status = fem_fail(FEM_ERR_INPUT,
                          "mesh file '%s' is not a regular file (a directory, FIFO or device); femto reads "
                          "meshes from regular files",
                          path);
    else if (!geo && !msh)
        status = fem_fail(FEM_ERR_INPUT,
                          "mesh file '%s' is neither a Gmsh mesh (.msh) nor a Gmsh script (.geo)", path);
    else if (msh && !begins_like_msh(fd))
        status = fem_fail(FEM_ERR_INPUT,
                          "mesh file '%s' is not a Gmsh mesh: it does not begin with $MeshFormat (was it "
                          "written by Gmsh, and is it complete?)",
                          path);
    close(fd);
    if (!status && info) *info = (MeshFileInfo){geo, (int64_t)st.st_size};
    return status;
}

double mesh_machine_memory(void) {
    double bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE), limit = 0;
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "r"); /* "max" when the group has no limit */
    if (f && fscanf(f, "%lf", &limit) == 1 && limit > 0 && limit < bytes) bytes = limit;
    if (f) fclose(f);
    return bytes > 0 ? bytes : 4294967296.0;
}

double mesh_cell_limit(void) {
    return mesh_machine_memory() / 2048.0;
}

static void note_estimate(double cells, void *ctx) {
    *(double *)ctx = cells;
}

/* The mesh from Gmsh: in the child, or here when the caller trusts the file. */
static int read_with_gmsh(const char *path, const MeshFileInfo *file, const MeshReadOptions *opt, Mesh *m,
                          MeshReadResult *res) {
    if (!opt->in_process) return mesh_child_read(path, file, opt, m, &res->estimated_cells);
    MeshGmshHooks hooks = {note_estimate, &res->estimated_cells, 0};
    return mesh_gmsh_read(path, file->geo, opt, &hooks, m);
}

int mesh_read(const char *path, const MeshReadOptions *opt, Mesh *m) {
    static const MeshReadOptions defaults;
    MeshReadResult local, *res = opt && opt->result ? opt->result : &local;
    if (!opt) opt = &defaults;
    memset(res, 0, sizeof *res);
    memset(m, 0, sizeof *m);
    MeshFileInfo file;
    FEM_TRY(mesh_check_file(path, &file));
    res->origin = file.geo ? MESH_FROM_GMSH : MESH_FROM_FILE;
    MeshCacheEntry cache = {NULL, 0, NULL};
    double t = now();
    int status = FEM_OK, hit = 0;
    if (file.geo && opt->cache_dir) {
        status = mesh_cache_prepare(path, opt, &cache, res->cache_note, sizeof res->cache_note);
        if (!status && cache.key) hit = mesh_cache_load(&cache, m, res->cache_note, sizeof res->cache_note);
    }
    if (hit) {
        res->origin = MESH_FROM_CACHE;
        snprintf(m->path, sizeof m->path, "%s", path);
    }
    if (!status && !hit) status = read_with_gmsh(path, &file, opt, m, res);
    /* a cached mesh was stored sorted and finished, with its topology */
    const int stored = hit && m->has_topology;
    if (!status && !stored) status = mesh_sort_cells(m);
    for (Mesh *p = m->parent; !status && !stored && p; p = p->parent) status = mesh_sort_cells(p);
    res->seconds_read = now() - t;
    t = now();
    if (!status) status = stored ? mesh_finish_stored(m) : mesh_finish(m);
    if (!status) mesh_finish_parents(m, stored, res->parent_note, sizeof res->parent_note);
    int want = opt->refine < MESH_MAX_PARENTS ? opt->refine : MESH_MAX_PARENTS, kept = mesh_parent_count(m);
    if (!status && file.geo && kept < want && !res->parent_note[0])
        snprintf(
            res->parent_note, sizeof res->parent_note,
            "%d of the %d meshes before refinement kept for multigrid (the others did not match the refined "
            "mesh's nodes: does the script change the mesh after meshing?)",
            kept, want);
    res->seconds_finish = now() - t;
    if (!status && !hit && cache.key) mesh_cache_store(&cache, m, res->cache_note, sizeof res->cache_note);
    mesh_cache_release(&cache);
    if (status) mesh_destroy(m);
    return status;
}
