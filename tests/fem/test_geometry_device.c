/* The cells' geometry computed on a device (eval_geometry_cells: the mesh's coordinates interpolated by the
 * device's kernel, then the point function geometry_out) against the host's geometry_cells.
 *
 * usage: test_geometry_device MESH.geo ORDER cpu|cuda
 * The mesh is read with cells of geometric order ORDER (2: curved, boundary nodes on the curve). For every cell
 * block, at a quadrature rule of degree 4 and at the cells' own nodes, on every cell, on every third one (a
 * subset list) and on the middle third (a range), expected:
 *   - w det J and J^-1 equal the host's to 1e-12 relative to their largest entry, x to 1e-13 of the mesh's size;
 *   - no point is counted as having a non-positive det J.
 * Then the first cell of block 0 is turned inside out (its first vertex reflected through the centroid of the
 * others); expected: the host's geometry_cells fails with a message naming element 0's tag, and the device
 * counts at least one point with a non-positive det J. A cuda run without a GPU is skipped (exit 77). */
#include "common/femto_test.h"
#include "fem/basis.h"
#include "fem/error.h"
#include "fem/evaluate.h"
#include "fem/geometry.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

/* The largest |a - b| over n entries, and the largest |b| in *scale. */
static double max_diff(int64_t n, const double *a, const double *b, double *scale) {
    double d = 0.0;
    *scale = 0.0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), *scale = fmax(*scale, fabs(b[i]));
    return d;
}

/* Host and device geometry of n cells (list, or the first n) of block bi at the points of q; returns the
 * device's count of non-positive det J; *host_status: geometry_cells' result. */
static double compare(Device *d, const Mesh *m, int bi, const Quadrature *q, int64_t first, int64_t n,
                      const fem_idx *list, const double *xnodes, double size, int *host_status, const char *what) {
    int stride = GEO_STRIDE(m->dim);
    int64_t np = n * q->npts;
    size_t gbytes = sizeof(double) * (size_t)(np * stride + 1), xbytes = sizeof(double) * (size_t)(np * 3 + 1);
    double *hg = malloc(gbytes), *hx = malloc(xbytes), *dg = malloc(gbytes), *dx = malloc(xbytes);
    double *geo = NULL, *x = NULL, bad = -1.0;
    CHECK_OK(device_alloc(d, (void **)&geo, sizeof(double) * (size_t)(np * stride + 1)));
    CHECK_OK(device_alloc(d, (void **)&x, sizeof(double) * (size_t)(np * 3 + 1)));
    fem_idx *range = list ? NULL : malloc(sizeof(fem_idx) * (size_t)(n + 1)); /* the host takes a list */
    for (int64_t k = 0; range && k < n; k++) range[k] = (fem_idx)(first + k);
    *host_status = geometry_cells(m, bi, q, n, list ? list : range, hg, hx);
    free(range);
    CHECK_OK(eval_geometry_cells(d, m, bi, q, first, n, list, xnodes, geo, x, &bad));
    CHECK_OK(d->ops.download(d, dg, geo, sizeof(double) * (size_t)(np * stride)));
    CHECK_OK(d->ops.download(d, dx, x, sizeof(double) * (size_t)(np * 3)));
    if (!*host_status) {
        double gs, xs, eg = max_diff(np * stride, dg, hg, &gs), ex = max_diff(np * 3, dx, hx, &xs);
        printf("  %s: %lld points, geometry differs by %.2e of %.3g, coordinates by %.2e of the size %.3g\n", what,
               (long long)np, eg, gs, ex, size);
        CHECK(eg <= 1e-12 * gs, "%s: the device's geometry differs from the host's by %.3e (largest entry %.3e)",
              what, eg, gs);
        CHECK(ex <= 1e-13 * size, "%s: the device's coordinates differ from the host's by %.3e", what, ex);
    }
    device_free(d, geo);
    device_free(d, x);
    free(hg), free(hx), free(dg), free(dx);
    return bad;
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: %s MESH.geo ORDER cpu|cuda\n", argv[0]), 2;
    Device d;
    int rc = test_device(&d, strcmp(argv[3], "cuda") == 0 ? DEV_CUDA : DEV_CPU, 2, ASSEMBLE_ATOMIC);
    if (rc) return rc;
    Mesh m;
    MeshReadOptions mo = {.order = atoi(argv[2])};
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    double lo[3], hi[3], size = 0.0;
    mesh_bounding_box(&m, lo, hi);
    for (int a = 0; a < 3; a++) size = fmax(size, hi[a] - lo[a]);
    double *xnodes = NULL;
    CHECK_OK(device_alloc_copy(&d, (void **)&xnodes, m.x, sizeof(double) * 3 * (size_t)m.nnodes));
    for (int bi = 0; bi < m.ncell_blocks; bi++) {
        const MeshBlock *mb = &m.cells[bi];
        printf("%s block %d: %lld %s cells of order %d on %s\n", argv[1], bi, (long long)mb->count, mb->type->name,
               mb->order, d.name);
        Quadrature rule, nodes;
        CHECK_OK(quadrature_create(mb->shape, 4, &rule));
        int nn = lattice_count(mb->shape, mb->order); /* the cells' own nodes, weight 1 */
        double *pts = malloc(sizeof(double) * 3 * (size_t)nn), *w = malloc(sizeof(double) * (size_t)nn);
        lattice_points(mb->shape, mb->order, 0, pts);
        for (int i = 0; i < nn; i++) w[i] = 1.0;
        nodes = (Quadrature){.shape = mb->shape, .npts = nn, .xi = pts, .w = w};
        fem_idx *third = malloc(sizeof(fem_idx) * (size_t)(mb->count / 3 + 1));
        int64_t nthird = 0;
        for (int64_t c = 0; c < mb->count; c += 3) third[nthird++] = (fem_idx)c;
        const Quadrature *qs[2] = {&rule, &nodes};
        const char *names[2] = {"degree-4 rule", "the cells' nodes"};
        for (int k = 0; k < 2; k++) {
            int hs;
            char what[96];
            snprintf(what, sizeof what, "%s, every cell", names[k]);
            double bad = compare(&d, &m, bi, qs[k], 0, mb->count, NULL, xnodes, size, &hs, what);
            CHECK(hs == FEM_OK, "%s: the host's geometry failed: %s", what, fem_last_error());
            CHECK(bad == 0.0, "%s: the device counts %g points with det J <= 0 on a valid mesh", what, bad);
            snprintf(what, sizeof what, "%s, every third cell", names[k]);
            bad = compare(&d, &m, bi, qs[k], 0, nthird, third, xnodes, size, &hs, what);
            CHECK(hs == FEM_OK && bad == 0.0, "%s: host status %d, %g points with det J <= 0", what, hs, bad);
            snprintf(what, sizeof what, "%s, the middle third of the cells", names[k]);
            bad = compare(&d, &m, bi, qs[k], mb->count / 3, mb->count / 3, NULL, xnodes, size, &hs, what);
            CHECK(hs == FEM_OK && bad == 0.0, "%s: host status %d, %g points with det J <= 0", what, hs, bad);
        }
        free(third);
        free(pts);
        free(w);
        quadrature_destroy(&rule);
    }
    /* turn cell 0 of block 0 inside out: its first vertex reflected through the centroid of the other vertices */
    const MeshBlock *mb = &m.cells[0];
    int nv = shape_nvertices(mb->shape);
    double c[3] = {0, 0, 0};
    int64_t v0 = mb->nodes[lattice_vertex(mb->shape, mb->order, 0)];
    for (int v = 1; v < nv; v++)
        for (int a = 0; a < 3; a++)
            c[a] += m.x[3 * (int64_t)mb->nodes[lattice_vertex(mb->shape, mb->order, v)] + a] / (nv - 1);
    for (int a = 0; a < 3; a++) m.x[3 * v0 + a] = 2.0 * c[a] - m.x[3 * v0 + a];
    CHECK_OK(d.ops.upload(&d, xnodes, m.x, sizeof(double) * 3 * (size_t)m.nnodes));
    Quadrature rule;
    CHECK_OK(quadrature_create(mb->shape, 4, &rule));
    int hs;
    double bad = compare(&d, &m, 0, &rule, 0, mb->count, NULL, xnodes, size, &hs, "inverted cell");
    char tag[32];
    snprintf(tag, sizeof tag, "element %lld ", (long long)mb->tag[0]);
    printf("  cell 0 inverted: the device counts %g points with det J <= 0; the host says: %s\n", bad,
           hs ? fem_last_error() : "(nothing)");
    CHECK(hs == FEM_ERR_INPUT && strstr(fem_last_error(), tag), "the host's geometry should name %s(status %d: %s)",
          tag, hs, fem_last_error());
    CHECK(bad >= 1.0, "the device counts %g points with det J <= 0 in an inverted cell", bad);
    quadrature_destroy(&rule);
    device_free(&d, xnodes);
    mesh_destroy(&m);
    device_destroy(&d);
    return test_result(argv[0]);
}
