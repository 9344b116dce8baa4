/* Unit tests of the io writers that need no reader: node-order tables, subdivision, and every way writing a
 * result file can fail (missing directory, a file where a directory should be, no permission, a write that
 * fails half way, a rename onto a directory). Each failure must be one sentence naming the file, and must
 * leave neither the file nor its temporary behind.
 *
 * Usage: test_io_unit SCRATCHDIR. A full disk (ENOSPC) is test_io_enospc's, which needs a file system of its
 * own; here a write that fails half way comes from RLIMIT_FSIZE (EFBIG), which takes the same path through
 * the writers. */
#include "io_frames.h"

#include "fem/error.h"
#include "io/fileutil.h"
#include "io/plot.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *scratch;


static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of temporary files (".NAME.tmp.PID") left in `dir`. */
static int temporaries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static void scratch_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", scratch, name);
}

/* ---------------------------------------------------------------- node order */

/* Every shape and order: a permutation of the lattice, corners first in the linear VTK cell's order. */
static void test_vtk_order_is_a_permutation_with_corners_first(void)
{
    for (Shape s = SHAPE_LINE; s <= SHAPE_HEX; s++)
        for (int p = 1; p <= element_max_order(s); p++) {
            int perm[729], seen[729] = {0}, n = lattice_count(s, p);
            EXPECT(vtk_node_order(s, p, perm) == n, "%s p%d: %d nodes", shape_name(s), p, n);
            for (int k = 0; k < n; k++) seen[perm[k]]++;
            for (int k = 0; k < n; k++)
                EXPECT(seen[k] == 1, "%s p%d: lattice node %d used once", shape_name(s), p, k);
            /* corner v of the linear VTK cell, as lattice counts / p */
            static const int vtk_corners[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                                  {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
            static const int simplex_corners[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
            for (int v = 0; v < shape_nvertices(s); v++) {
                int lat[3];
                lattice_node(s, p, perm[v], lat);
                const int *want = shape_is_tensor(s) ? vtk_corners[v] : simplex_corners[v];
                for (int a = 0; a < shape_dim(s); a++)
                    EXPECT(lat[a] == p * want[a], "%s p%d corner %d axis %d", shape_name(s), p, v, a);
            }
            EXPECT(vtk_cell_type(s, p) == (p == 1 ? (int[]){0, 3, 5, 9, 10, 12}[s] : 67 + (int)s),
                   "%s p%d: VTK type", shape_name(s), p);
        }
    EXPECT(vtk_node_order(SHAPE_TET, 4, (int[35]){0}) == -1, "tetrahedra stop at order 3");
}

/* File version 2.2 lists the hexahedron's vertical edges at (x,y) = (0,0), (1,0), (1,1), (0,1), as the
 * corners (VTK's vtkLagrangeHexahedron::PointIndexFromIJK; files older than 2.2 had the last two swapped). */
static void test_vtk_order_hex_p2_vertical_edges_version_2_2(void)
{
    int perm[27], lat[3];
    vtk_node_order(SHAPE_HEX, 2, perm);
    static const int want[4][3] = {{0, 0, 1}, {2, 0, 1}, {2, 2, 1}, {0, 2, 1}};
    for (int e = 0; e < 4; e++) {
        lattice_node(SHAPE_HEX, 2, perm[16 + e], lat);
        EXPECT(lat[0] == want[e][0] && lat[1] == want[e][1] && lat[2] == want[e][2],
               "VTK node %d at lattice (%d,%d,%d)", 16 + e, want[e][0], want[e][1], want[e][2]);
    }
}

/* ---------------------------------------------------------------- subdivision */

/* Signed length, area or volume of a linear subcell with corners x[v]. */
static double signed_measure(Shape s, const double (*x)[3])
{
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; k++) {
        a[k] = x[1][k] - x[0][k];
        b[k] = x[s == SHAPE_QUAD || s == SHAPE_HEX ? 3 : 2][k] - x[0][k];
        c[k] = x[s == SHAPE_HEX ? 4 : 3][k] - x[0][k];
    }
    switch (s) {
    case SHAPE_LINE: return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    case SHAPE_TRI: return 0.5 * (a[0] * b[1] - a[1] * b[0]);
    case SHAPE_QUAD: return a[0] * b[1] - a[1] * b[0]; /* affine: a parallelogram */
    case SHAPE_TET:
        return (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) /
               6.0;
    default: /* affine: a parallelepiped */
        return a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
               a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
}

/* Under an affine map of determinant J, p^d subcells each of measure J |ref| / p^d, all positive. */
static void test_subcells_tile_the_cell_with_positive_measure(void)
{
    static const double A[3][3] = {{1.0, 0.3, 0.1}, {-0.2, 0.9, 0.2}, {0.1, 0.1, 1.1}};
    for (Shape s = SHAPE_LINE; s <= SHAPE_HEX; s++)
        for (int p = 1; p <= element_max_order(s); p++) {
            int d = shape_dim(s), nv = shape_nvertices(s), perm[729], local[4096];
            vtk_node_order(s, p, perm);
            int nsub = outframe_subcells(s, p, local), want = 1;
            for (int a = 0; a < d; a++) want *= p;
            EXPECT(nsub == want, "%s p%d: %d subcells, want p^d = %d", shape_name(s), p, nsub, want);
            double J = d == 1   ? sqrt(A[0][0] * A[0][0] + A[1][0] * A[1][0])
                       : d == 2 ? A[0][0] * A[1][1] - A[0][1] * A[1][0]
                                : A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) -
                                      A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) +
                                      A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
            double each = J * shape_reference_volume(s) / want, total = 0.0, smallest = INFINITY;
            for (int sc = 0; sc < nsub; sc++) {
                double x[8][3] = {{0}};
                for (int v = 0; v < nv; v++) {
                    int lat[3];
                    lattice_node(s, p, perm[local[sc * nv + v]], lat);
                    for (int r = 0; r < 3; r++)
                        for (int a = 0; a < d; a++)
                            x[v][r] += (r < (d == 1 ? 2 : d) ? A[r][a] : 0.0) * lat[a] / p;
                }
                double m = signed_measure(s, (const double(*)[3])x);
                total += m;
                if (m < smallest) smallest = m;
            }
            EXPECT(fabs(smallest - each) < 1e-12, "%s p%d: smallest subcell %.17g, want %.17g", shape_name(s),
                   p, smallest, each);
            EXPECT(fabs(total - J * shape_reference_volume(s)) < 1e-12, "%s p%d: subcells sum to %.17g",
                   shape_name(s), p, total);
        }
}

/* Cell arrays repeat on the subcells (parent by parent), point arrays and points are shared. */
static void test_subdivide_repeats_cell_arrays_and_shares_points(void)
{
    IoBlockSpec blocks[2] = {{SHAPE_TRI, 3, 2}, {SHAPE_QUAD, 2, 3}};
    OutFrame f, sub;
    io_test_frame(&f, 2, 2, blocks, 0.0, 0);
    EXPECT(outframe_subdivide(&f, &sub) == FEM_OK, "%s", fem_last_error());
    EXPECT(sub.blocks[0].ncells == 2 * 9 && sub.blocks[1].ncells == 3 * 4,
           "18 triangles and 12 quadrilaterals");
    EXPECT(sub.blocks[0].vtk_type == VTK_TRIANGLE && sub.blocks[1].vtk_type == VTK_QUAD, "linear types");
    EXPECT(sub.x == f.x && sub.point[0].data == f.point[0].data, "points and point data shared");
    const double *region = sub.cell[0].data;
    EXPECT(region[0] == 1 && region[17] == 1 && region[18] == 2 && region[29] == 2, "region repeated");
    EXPECT(sub.cell[1].data[9] == f.cell[1].data[1] && sub.cell[1].data[18 + 4] == f.cell[1].data[3],
           "cell_value of cell 1 on subcells 9..17, of cell 3 on 22..25");
    EXPECT(outframe_check(&sub) == FEM_OK, "%s", fem_last_error());
    outframe_destroy_shallow(&sub);
    outframe_destroy(&f);
}

/* ---------------------------------------------------------------- io_test_failures */

static OutFrame small_frame(void)
{
    OutFrame f;
    IoBlockSpec b = {SHAPE_HEX, 3, 40};
    io_test_frame(&f, 3, 1, &b, 0.0, 0);
    return f;
}

/* The one sentence for `path`, with the system's reason for errno value `err`. */
static void expect_sentence(int status, const char *path, int err, const char *what)
{
    char want[2048];
    snprintf(want, sizeof want, "cannot write results file '%s': %s", path, strerror(err));
    EXPECT(status == FEM_ERR_INPUT, "%s: status %d", what, status);
    EXPECT(strcmp(fem_last_error(), want) == 0, "%s: message '%s', want '%s'", what, fem_last_error(), want);
    printf("%s: %s\n", what, fem_last_error());
}

static void test_missing_directory_and_file_as_directory(void)
{
    OutFrame f = small_frame();
    char path[1024], file[1024], under[1100];
    double t = 0.0;
    char *names[1] = {"a.vtu"};
    scratch_path(path, sizeof path, "no/such/folder/beam_0003.vtu");
    expect_sentence(vtu_write(path, &f, 1), path, ENOENT, "vtu in a missing folder");
    scratch_path(path, sizeof path, "no/such/folder/beam.pvd");
    expect_sentence(pvd_write(path, 1, &t, names), path, ENOENT, "pvd in a missing folder");
    scratch_path(path, sizeof path, "no/such/folder/beam.h5");
    H5Out *h;
    expect_sentence(h5out_open(&h, path, "unused.xdmf", &f, NULL, 1), path, ENOENT, "h5 in a missing folder");
    EXPECT(h == NULL, "no handle after a failed open");

    /* a regular file where the folder should be: ENOTDIR, also for root, for whom permissions do not count */
    scratch_path(file, sizeof file, "plain_file");
    FILE *fp = fopen(file, "w");
    fclose(fp);
    snprintf(under, sizeof under, "%s/beam.vtu", file);
    expect_sentence(vtu_write(under, &f, 0), under, ENOTDIR, "vtu under a regular file");
    snprintf(under, sizeof under, "%s/beam.h5", file);
    expect_sentence(h5out_open(&h, under, "unused.xdmf", &f, NULL, 1), under, ENOTDIR,
                    "h5 under a regular file");

    /* a folder where the file should be: the rename fails, the temporary goes */
    scratch_path(path, sizeof path, "a_folder.vtu");
    fileutil_mkdir_p(path);
    expect_sentence(vtu_write(path, &f, 1), path, EISDIR, "vtu onto a folder");
    EXPECT(temporaries_in(scratch) == 0, "no temporary left after a failed rename");
    rmdir(path);
    outframe_destroy(&f);
}

/* /sys refuses new files even to root (EACCES; EROFS where it is mounted read-only). */
static void test_permission_denied(void)
{
    OutFrame f = small_frame();
    const char *path = "/sys/femto_io_test.vtu";
    fem_clear_error();
    int status = vtu_write(path, &f, 1);
    const char *msg = fem_last_error();
    const char *want = "cannot write results file '/sys/femto_io_test.vtu': ";
    EXPECT(status == FEM_ERR_INPUT && strncmp(msg, want, strlen(want)) == 0, "'%s'", msg);
    printf("vtu in /sys: %s\n", msg);
    EXPECT(strstr(msg, strerror(EACCES)) || strstr(msg, strerror(EROFS)) || strstr(msg, strerror(EPERM)),
           "a permission reason: '%s'", msg);
    EXPECT(!exists(path), "nothing created in /sys");
    outframe_destroy(&f);
}

/* A write that fails half way (the file-size limit stands in for a full disk): one sentence, no file, no
 * temporary. Runs in a child so that the limit does not outlive the test. */
static void test_write_failing_half_way_leaves_nothing(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        io_test_failures = 0;
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {64 * 1024, 64 * 1024};
        setrlimit(RLIMIT_FSIZE, &lim);
        OutFrame f = small_frame(); /* ~ 0.5 MB of data, uncompressed */
        char path[1024], xdmf[1024];
        scratch_path(path, sizeof path, "too_big.vtu");
        expect_sentence(vtu_write(path, &f, 0), path, EFBIG, "vtu past the size limit");
        EXPECT(!exists(path), "no %s", path);
        scratch_path(path, sizeof path, "too_big.h5");
        scratch_path(xdmf, sizeof xdmf, "too_big.xdmf");
        H5Out *h = NULL;
        int status = h5out_open(&h, path, xdmf, &f, NULL, 1);
        for (int s = 0; status == FEM_OK && s < 20; s++) status = h5out_write_step(h, s, &f);
        if (status == FEM_OK) status = h5out_close(&h);
        else h5out_abort(&h);
        EXPECT(status == FEM_ERR_INPUT, "HDF5 past the size limit fails (status %d)", status);
        printf("HDF5 past the size limit: %s\n", fem_last_error());
        EXPECT(strstr(fem_last_error(), "cannot write results file") &&
                   strstr(fem_last_error(), "too_big.h5"),
               "'%s'", fem_last_error());
        EXPECT(!exists(path) && !exists(xdmf), "no HDF5 or XDMF file");
        EXPECT(temporaries_in(scratch) == 0, "no temporary left");
        outframe_destroy(&f);
        fflush(stdout);
        fflush(stderr);
        _exit(io_test_failures ? 1 : 0);
    }
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    EXPECT(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "the size-limited child passed");
}

static void test_mkdir_p(void)
{
    char path[1100], file[1024];
    scratch_path(path, sizeof path, "made/by/mkdir_p/");
    EXPECT(fileutil_mkdir_p(path) == FEM_OK && exists(path), "%s", fem_last_error());
    EXPECT(fileutil_mkdir_p(path) == FEM_OK, "an existing folder is fine");
    scratch_path(file, sizeof file, "plain_file");
    snprintf(path, sizeof path, "%s/sub", file);
    EXPECT(fileutil_mkdir_p(path) == FEM_ERR_INPUT, "a folder under a regular file fails");
    char want[2048];
    snprintf(want, sizeof want, "cannot create output directory '%s': %s", path, strerror(ENOTDIR));
    EXPECT(strcmp(fem_last_error(), want) == 0, "'%s'", fem_last_error());
    EXPECT(fileutil_mkdir_p(file) == FEM_ERR_INPUT, "a regular file is not a folder");
    EXPECT(fileutil_mkdir_p("/sys/femto_io_test/x") == FEM_ERR_INPUT, "no folders in /sys");
}

/* Times with 17 digits (they read back exactly), names relative and escaped, overwriting allowed. */
static void test_pvd_text(void)
{
    char path[1024], text[4096] = {0};
    scratch_path(path, sizeof path, "t.pvd");
    double times[2] = {0.1, 2.5};
    char *files[2] = {"t/t_0000.vtu", "t/a&b.vtu"};
    EXPECT(pvd_write(path, 2, times, files) == FEM_OK, "%s", fem_last_error());
    EXPECT(pvd_write(path, 2, times, files) == FEM_OK, "overwrites: %s", fem_last_error());
    FILE *fp = fopen(path, "r");
    size_t n = fp ? fread(text, 1, sizeof text - 1, fp) : 0;
    if (fp) fclose(fp);
    EXPECT(n > 0 && strstr(text, "<VTKFile type=\"Collection\" version=\"1.0\">"), "header");
    EXPECT(strstr(text, "timestep=\"0.10000000000000001\"") && strstr(text, "file=\"t/t_0000.vtu\""), "%s",
           text);
    EXPECT(strstr(text, "file=\"t/a&amp;b.vtu\""), "escaped '&'");
    EXPECT(temporaries_in(scratch) == 0, "no temporary left");
}

/* A plot drawn in two halves (the run's summary goes on meanwhile): the image is in place only once finish
 * returns, and is a PNG; an abandoned job (a run that failed meanwhile) leaves no file, no temporary and no
 * child; finishing a job twice, or one never started, is nothing. */
/* helper: a program to draw through (plot_use_helper), or NULL to fork */
static void test_plot_jobs(const char *helper)
{
    if (!plot_available()) {
        printf("plots: femto was built without PLplot, not checked\n");
        return;
    }
    printf("plots: drawn by %s\n", helper ? helper : "a forked child");
    plot_use_helper(helper);
    char path[1024], gone[1024];
    scratch_path(path, sizeof path, "plot.png");
    scratch_path(gone, sizeof gone, "abandoned.png");
    unlink(path);
    unlink(gone);
    double x[3] = {0, 1, 2}, y0[3] = {1, 0.1, 0.01}, y1[3] = {0.5, 0.02, 1e-4};
    const double *y[2] = {y0, y1};
    const char *legend[2] = {"residual", "increment"};
    PlotSpec spec = {"title", "iteration", "residual", 1, 320, 240, 3, 2, x, y, legend};
    PlotJob a, b, none;
    memset(&none, 0, sizeof none);
    EXPECT(plot_png_start(path, &spec, &a) == FEM_OK && a.pid > 0, "start: %s", fem_last_error());
    EXPECT(plot_png_start(gone, &spec, &b) == FEM_OK && b.pid > 0, "start: %s", fem_last_error());
    EXPECT(a.helper == (helper != NULL) && b.helper == (helper != NULL), "drawn by %s",
           helper ? "the helper" : "a fork");
    EXPECT(!exists(path), "no image before finish");
    plot_png_abandon(&b);
    EXPECT(plot_png_finish(&a) == FEM_OK, "finish: %s", fem_last_error());
    unsigned char magic[8] = {0};
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(magic, 1, sizeof magic, fp) : 0;
    if (fp) fclose(fp);
    EXPECT(n == 8 && memcmp(magic, "\x89PNG\r\n\x1a\n", 8) == 0, "a PNG at %s", path);
    EXPECT(!exists(gone) && temporaries_in(scratch) == 0, "the abandoned plot left nothing");
    errno = 0;
    EXPECT(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "no child left");
    EXPECT(plot_png_finish(&a) == FEM_OK && plot_png_finish(&none) == FEM_OK, "finishing nothing is nothing");
    plot_png_abandon(&none);
    unlink(path);
    plot_use_helper(NULL);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s SCRATCHDIR [FEMTO-APP]\n", argv[0]);
        return 2;
    }
    scratch = argv[1];
    if (fileutil_mkdir_p(scratch) != FEM_OK) {
        fprintf(stderr, "%s\n", fem_last_error());
        return 1;
    }
    test_vtk_order_is_a_permutation_with_corners_first();
    test_vtk_order_hex_p2_vertical_edges_version_2_2();
    test_subcells_tile_the_cell_with_positive_measure();
    test_subdivide_repeats_cell_arrays_and_shares_points();
    test_missing_directory_and_file_as_directory();
    test_permission_denied();
    test_write_failing_half_way_leaves_nothing();
    test_mkdir_p();
    test_pvd_text();
    test_plot_jobs(NULL);
    if (argc == 3) test_plot_jobs(argv[2]);
    if (io_test_failures) fprintf(stderr, "%d failure(s)\n", io_test_failures);
    else printf("all io unit tests passed\n");
    return io_test_failures ? 1 : 0;
}
