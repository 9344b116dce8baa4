/* Volumes of curved second-order geometry.
 *
 * usage: test_curved_volume MESH.geo EXACT LEVELS
 * The mesh of a disk (area pi) or a ball (volume 4 pi / 3) is read LEVELS times, refined 0, 1, ... times by
 * Gmsh (each refinement halves h exactly and puts the new boundary nodes on the circle or sphere), once with
 * straight cells (order 1) and once with second-order cells whose boundary nodes lie on the curve (order 2).
 * The volume is the sum of w det J over the q-points of geometry_cells (degree 8, far above what det J of a
 * quadratic map needs). Expected:
 *   - order 1: the polygon or polyhedron misses a sliver of depth O(h^2) along the boundary: error O(h^2),
 *     falling by 2^2 per refinement: measured rate within 0.2 of 2;
 *   - order 2: the boundary is the quadratic interpolant of the curve, whose distance to it is O(h^3) but
 *     changes sign along each boundary edge, so the area between them cancels to O(h^4) per unit length:
 *     error O(h^4), measured rate within 0.3 of 4;
 *   - on every mesh the second-order volume is at least 100 times more accurate than the first-order one
 *     (measured: about 230 times on the coarsest ball, 1000 on the coarsest disk). */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/geometry.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static double mesh_volume(const char *geo, int order, int refine, int64_t *ncells) {
    Mesh m;
    MeshReadOptions mo = {.order = order, .refine = refine};
    CHECK_OK(mesh_read(test_mesh(geo), &mo, &m));
    double vol = 0.0;
    *ncells = 0;
    for (int b = 0; b < m.ncell_blocks; b++) {
        CHECK(m.cells[b].order == order, "%s: cells of order %d, asked for %d", geo, m.cells[b].order, order);
        Quadrature q;
        CHECK_OK(quadrature_create(m.cells[b].shape, 8, &q));
        int stride = GEO_STRIDE(m.dim);
        double *g = malloc(sizeof(double) * (size_t)(m.cells[b].count * q.npts * stride));
        CHECK_OK(geometry_cells(&m, b, &q, m.cells[b].count, NULL, g, NULL));
        for (int64_t k = 0; k < m.cells[b].count * q.npts; k++) vol += g[k * stride];
        *ncells += m.cells[b].count;
        free(g);
        quadrature_destroy(&q);
    }
    mesh_destroy(&m);
    return vol;
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: %s MESH.geo EXACT LEVELS\n", argv[0]), 2;
    const char *geo = argv[1];
    double exact = strcmp(argv[2], "pi") == 0      ? M_PI
                   : strcmp(argv[2], "4pi/3") == 0 ? 4 * M_PI / 3
                                                   : atof(argv[2]);
    int levels = atoi(argv[3]);
    double err[2][8];
    for (int l = 0; l < levels && l < 8; l++) {
        for (int order = 1; order <= 2; order++) {
            int64_t n;
            double v = mesh_volume(geo, order, l, &n);
            err[order - 1][l] = fabs(v - exact);
            printf("%s refined %d times, %lld cells of order %d: volume %.15f, error %.3e", geo, l,
                   (long long)n, order, v, err[order - 1][l]);
            if (l > 0) printf(", rate %.3f", log2(err[order - 1][l - 1] / err[order - 1][l]));
            printf("\n");
        }
        CHECK(err[1][l] * 100 < err[0][l],
              "%s refined %d times: second-order error %.3g is not 100 times below the "
              "first-order error %.3g",
              geo, l, err[1][l], err[0][l]);
        if (l > 0) {
            double r1 = log2(err[0][l - 1] / err[0][l]), r2 = log2(err[1][l - 1] / err[1][l]);
            CHECK(fabs(r1 - 2.0) < 0.2, "%s: first-order volume error converges at rate %.3f, expected 2",
                  geo, r1);
            CHECK(fabs(r2 - 4.0) < 0.3, "%s: second-order volume error converges at rate %.3f, expected 4",
                  geo, r2);
        }
    }
    return test_result("test_curved_volume");
}
