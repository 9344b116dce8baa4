/* Dof counts of H1 spaces (fem/space.h) against the formulas of conforming Lagrange elements.
 *
 * usage: test_space_dofs MESH.geo P [CLOSED_FORM]
 * A space of order p has one node per vertex, p - 1 per edge, and per face and cell the nodes strictly inside
 * them: (p-1)(p-2)/2 per triangle, (p-1)^2 per quadrilateral, (p-1)(p-2)(p-3)/6 per tetrahedron, (p-1)^3 per
 * hexahedron. So, with V, E, F, C the topology's counts:
 *   tetrahedra: V + (p-1) E + (p-1)(p-2)/2 F + (p-1)(p-2)(p-3)/6 C   (p = 3: V + 2E + F)
 *   hexahedra:  V + (p-1) E + (p-1)^2 F + (p-1)^3 C
 *   2D:         V + (p-1) E + (p-1)(p-2)/2 T + (p-1)^2 Q              (T triangles, Q quadrilaterals)
 * The formulas are evaluated here from V, E, F and the cell counts, not from femto's lattice functions.
 * CLOSED_FORM, where given, is the count again from the structure of the mesh alone (e.g. (2p+1)(3p+1)(4p+1)
 * for the 2 x 3 x 4 hex block), passed in by CMake.
 * Also: ndofs = 3 nnodes for three components; every node number is used and in range; no two nodes share
 * their coordinates (a duplicated edge or face would), compared on a 1e-9 grid. */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/space.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static int64_t interior(Shape s, int p) {
    int64_t q = p - 1;
    switch (s) {
    case SHAPE_LINE:
        return q;
    case SHAPE_TRI:
        return q * (q - 1) / 2;
    case SHAPE_QUAD:
        return q * q;
    case SHAPE_TET:
        return q * (q - 1) * (q - 2) / 6;
    case SHAPE_HEX:
        return q * q * q;
    default:
        return 0;
    }
}

static int cmp_triple(const void *a, const void *b) {
    const long long *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return fprintf(stderr, "usage: %s MESH.geo P [CLOSED_FORM]\n", argv[0]), 2;
    int p = atoi(argv[2]);
    Mesh m;
    MeshReadOptions mo = {0};
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    const Topology *t = &m.topo;
    int64_t expect = t->nvertices + (p - 1) * t->nedges;
    if (m.dim == 3) {
        Shape face = shape_facet(m.cells[0].shape); /* one cell shape per 3D mesh here */
        expect += interior(face, p) * t->nfaces;
    }
    for (int b = 0; b < m.ncell_blocks; b++) expect += interior(m.cells[b].shape, p) * m.cells[b].count;
    Space sp;
    CHECK_OK(space_create(&m, p, 1, &sp));
    CHECK(sp.nnodes == expect, "%s p=%d: %lld nodes, the formula gives %lld (V %lld, E %lld, F %lld)",
          argv[1], p, (long long)sp.nnodes, (long long)expect, (long long)t->nvertices, (long long)t->nedges,
          (long long)t->nfaces);
    if (argc > 3)
        CHECK(sp.nnodes == atoll(argv[3]), "%s p=%d: %lld nodes, the closed form gives %s", argv[1], p,
              (long long)sp.nnodes, argv[3]);

    /* every number used, none out of range */
    char *used = calloc((size_t)sp.nnodes + 1, 1);
    int64_t out_of_range = 0, unused = 0;
    for (int b = 0; b < sp.ncell_blocks; b++)
        for (int64_t k = 0; k < sp.cells[b].count * sp.cells[b].ndof; k++) {
            fem_idx n = sp.cells[b].dofs[k];
            if (n < 0 || n >= sp.nnodes)
                out_of_range++;
            else
                used[n] = 1;
        }
    for (int64_t n = 0; n < sp.nnodes; n++) unused += !used[n];
    free(used);
    CHECK(out_of_range == 0 && unused == 0, "p=%d: %lld node numbers out of range, %lld never used", p,
          (long long)out_of_range, (long long)unused);

    /* distinct coordinates */
    long long *key = malloc(sizeof(long long) * 3 * (size_t)sp.nnodes);
    for (int64_t n = 0; n < 3 * sp.nnodes; n++) key[n] = llround(sp.node_x[n] * 1e9);
    qsort(key, (size_t)sp.nnodes, 3 * sizeof(long long), cmp_triple);
    int64_t dup = 0;
    for (int64_t n = 1; n < sp.nnodes; n++) dup += cmp_triple(&key[3 * n], &key[3 * (n - 1)]) == 0;
    free(key);
    CHECK(dup == 0, "p=%d: %lld nodes share their coordinates with another", p, (long long)dup);
    space_destroy(&sp);

    Space vec;
    CHECK_OK(space_create(&m, p, 3, &vec));
    CHECK(vec.ndofs == 3 * expect && vec.nnodes == expect,
          "3 components: %lld dofs on %lld nodes, expected %lld", (long long)vec.ndofs, (long long)vec.nnodes,
          (long long)(3 * expect));
    space_destroy(&vec);
    mesh_destroy(&m);
    return test_result("test_space_dofs");
}
