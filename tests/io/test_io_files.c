/* Writes every kind of result file the io module makes, for the readers in io_check_*.py to verify.
 *
 * Usage: test_io_files OUTDIR. For every shape and order (lines, quadrilaterals and hexahedra p = 1..8,
 * triangles and tetrahedra p = 1..3), for mixed frames (triangles + quadrilaterals, tetrahedra + hexahedra,
 * with orders up to 4) it writes a compressed VTU, an uncompressed one, a subdivided one and an HDF5 file
 * with its XDMF holding two steps; then a three-step series as VTUs in a subfolder with a PVD, and as HDF5 +
 * XDMF; and an HDF5 file without steps. OUTDIR/manifest.json lists what was written and what each file must
 * contain. */
#include "io_frames.h"

#include "fem/error.h"
#include "io/fileutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CASES = 64 };

typedef struct {
    char name[64];
    int dim, nblocks;
    IoBlockSpec blocks[4];
} IoCase;

static const double step_times[2] = {0.5, 1.5};
static const double series_times[3] = {0.1, 0.35, 1.0};

/* out = the formatted path; a path that does not fit stops the test. */
static void path_of(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path_of(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, FILEUTIL_PATH_MAX, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= FILEUTIL_PATH_MAX) {
        fprintf(stderr, "path too long\n");
        exit(1);
    }
}

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        if ((call) != FEM_OK) {                                                                              \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, fem_last_error());          \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static int list_cases(IoCase *cases)
{
    int n = 0;
    for (Shape s = SHAPE_LINE; s <= SHAPE_HEX; s++)
        for (int p = 1; p <= element_max_order(s); p++) {
            IoCase *c = &cases[n++];
            snprintf(c->name, sizeof c->name, "cell_%s_p%d", shape_name(s), p);
            c->dim = shape_dim(s) == 3 ? 3 : 2;
            c->nblocks = 1;
            c->blocks[0] = (IoBlockSpec){s, p, 2};
        }
    cases[n++] = (IoCase){"mixed_2d", 2, 3, {{SHAPE_TRI, 2, 2}, {SHAPE_QUAD, 2, 2}, {SHAPE_QUAD, 1, 1}}};
    cases[n++] = (IoCase){
        "mixed_3d", 3, 4, {{SHAPE_TET, 2, 2}, {SHAPE_HEX, 2, 2}, {SHAPE_HEX, 1, 1}, {SHAPE_TET, 1, 1}}};
    cases[n++] = (IoCase){"mixed_high_2d", 2, 2, {{SHAPE_TRI, 3, 2}, {SHAPE_QUAD, 4, 2}}};
    cases[n++] = (IoCase){"mixed_high_3d", 3, 3, {{SHAPE_TET, 3, 1}, {SHAPE_HEX, 3, 1}, {SHAPE_HEX, 2, 1}}};
    return n;
}

/* The step arrays of `f`: all but the mesh's "region", which h5out_open already has. */
static OutFrame step_view(const OutFrame *f)
{
    OutFrame v = *f;
    v.ncell_arrays = 0;
    for (int a = 0; a < f->ncell_arrays; a++)
        if (strcmp(f->cell[a].name, "region") != 0) v.cell[v.ncell_arrays++] = f->cell[a];
    return v;
}

static void write_h5(const char *dir, const char *name, const IoCase *c, int nsteps, const double *times)
{
    char h5[FILEUTIL_PATH_MAX], xdmf[FILEUTIL_PATH_MAX];
    path_of(h5, "%s/%s.h5", dir, name);
    path_of(xdmf, "%s/%s.xdmf", dir, name);
    OutFrame mesh, full;
    CHECK(io_test_frame(&mesh, c->dim, c->nblocks, c->blocks, 0.0, 1));
    CHECK(io_test_frame(&full, c->dim, c->nblocks, c->blocks, 0.0, 0));
    H5Out *h;
    CHECK(h5out_open(&h, h5, xdmf, &mesh, "<problem>\n  <!-- text of the problem file -->\n</problem>\n", 1));
    for (int s = 0; s < nsteps; s++) {
        io_test_fill(&full, times[s]);
        OutFrame view = step_view(&full);
        CHECK(h5out_write_step(h, times[s], &view));
    }
    CHECK(h5out_close(&h));
    outframe_destroy(&mesh);
    outframe_destroy(&full);
}

static void manifest_case(FILE *m, const IoCase *c, int first, int nsteps, const double *times)
{
    fprintf(m, "%s\n  {\"name\": \"%s\", \"dim\": %d, \"blocks\": [", first ? "" : ",", c->name, c->dim);
    for (int b = 0; b < c->nblocks; b++)
        fprintf(m, "%s{\"shape\": \"%s\", \"order\": %d, \"ncells\": %d}", b ? ", " : "",
                shape_name(c->blocks[b].shape), c->blocks[b].order, c->blocks[b].ncells);
    fprintf(m, "], \"times\": [");
    for (int s = 0; s < nsteps; s++) fprintf(m, "%s%.17g", s ? ", " : "", times[s]);
    fprintf(m, "]}");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    CHECK(fileutil_mkdir_p(dir));
    IoCase cases[MAX_CASES];
    int ncases = list_cases(cases);
    char path[FILEUTIL_PATH_MAX], manifest[FILEUTIL_PATH_MAX];
    path_of(manifest, "%s/manifest.json", dir);
    FILE *m = fopen(manifest, "w");
    if (!m) return 1;
    fprintf(m, "{\"version\": \"%s\",\n\"cases\": [", FEMTO_VERSION);
    for (int k = 0; k < ncases; k++) {
        const IoCase *c = &cases[k];
        OutFrame f, sub;
        CHECK(io_test_frame(&f, c->dim, c->nblocks, c->blocks, 0.0, 0));
        path_of(path, "%s/%s.vtu", dir, c->name);
        CHECK(vtu_write(path, &f, 1));
        path_of(path, "%s/%s_raw.vtu", dir, c->name);
        CHECK(vtu_write(path, &f, 0));
        CHECK(outframe_subdivide(&f, &sub));
        path_of(path, "%s/%s_sub.vtu", dir, c->name);
        CHECK(vtu_write(path, &sub, 1));
        outframe_destroy_shallow(&sub);
        outframe_destroy(&f);
        write_h5(dir, c->name, c, 2, step_times);
        manifest_case(m, c, k == 0, 2, step_times);
    }
    fprintf(m, "\n],\n");

    /* a series: VTUs in a subfolder, the PVD beside it naming them relative to itself */
    IoCase series = {"series", 3, 1, {{SHAPE_HEX, 2, 2}}};
    OutFrame f;
    CHECK(io_test_frame(&f, series.dim, series.nblocks, series.blocks, 0.0, 0));
    path_of(path, "%s/series", dir);
    CHECK(fileutil_mkdir_p(path));
    char *files[3];
    for (int s = 0; s < 3; s++) {
        io_test_fill(&f, series_times[s]);
        files[s] = malloc(64);
        snprintf(files[s], 64, "series/series_%04d.vtu", s);
        path_of(path, "%s/%s", dir, files[s]);
        CHECK(vtu_write(path, &f, 1));
    }
    path_of(path, "%s/series.pvd", dir);
    CHECK(pvd_write(path, 3, series_times, files));
    for (int s = 0; s < 3; s++) free(files[s]);
    outframe_destroy(&f);
    write_h5(dir, "series", &series, 3, series_times);
    fprintf(m, "\"series\": ");
    manifest_case(m, &series, 1, 3, series_times);

    IoCase still = {"nosteps", 2, 1, {{SHAPE_TRI, 1, 2}}};
    write_h5(dir, "nosteps", &still, 0, NULL);
    fprintf(m, ",\n\"nosteps\": ");
    manifest_case(m, &still, 1, 0, NULL);
    fprintf(m, "\n}\n");
    if (fclose(m) != 0) return 1;
    printf("wrote %d cases, a series and a mesh-only HDF5 file into %s\n", ncases, dir);
    return 0;
}
