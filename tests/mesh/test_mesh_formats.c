/* One mesh, four files: the .geo script (meshed by the reader through the SDK) and the .msh files the gmsh
 * command line wrote from it in format 4.1 ASCII, 4.1 binary and 2.2 ASCII (write_formats.cmake, a CTest
 * fixture that runs before this test). femto must read the same mesh from each:
 *   - the same dimension, node count, element types and counts per block, physical groups (name, dimension,
 *     size) and topology counts (V, E, F, boundary facets);
 *   - per node tag the same coordinates: bitwise between the three .msh files (the binary file was converted
 *     from the ASCII 4.1 one, and Gmsh prints ASCII coordinates with the same 16 digits in both versions),
 *     and within 1e-15 of the .geo, which is never rounded to 16 digits (|x| <= 2 here);
 *   - the same elements: per block, the same rows of node tags in femto's lattice order (compared as sorted
 *     lists, since Gmsh's 2.2 writer renumbers the elements of a mixed mesh).
 * usage: test_mesh_formats GEO ORDER MSH41_ASCII MSH41_BINARY MSH22_ASCII */
#include "common/femto_test.h"
#include "fem/error.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static const PhysicalGroup *group_named(const Mesh *m, const PhysicalGroup *like) {
    for (int g = 0; g < m->ngroups; g++)
        if (m->groups[g].dim == like->dim && strcmp(m->groups[g].name, like->name) == 0) return &m->groups[g];
    return NULL;
}

/* Node index of each node tag (tags are compact in these meshes). */
static int64_t *tag_index(const Mesh *m, int64_t *max_tag) {
    *max_tag = 0;
    for (int64_t n = 0; n < m->nnodes; n++)
        if (m->node_tag[n] > *max_tag) *max_tag = m->node_tag[n];
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(*max_tag + 1));
    for (int64_t t = 0; t <= *max_tag; t++) idx[t] = -1;
    for (int64_t n = 0; n < m->nnodes; n++) idx[m->node_tag[n]] = n;
    return idx;
}

static int row_width;
static int cmp_row(const void *p, const void *q) {
    const int64_t *x = p, *y = q;
    for (int i = 0; i < row_width; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* The elements of a block as rows of node tags (lattice order), sorted: comparable across files whatever
 * their element tags (Gmsh's 2.2 writer renumbers the elements of a mixed mesh, triangles first). */
static int64_t *element_rows(const Mesh *m, const MeshBlock *b) {
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)(b->count * b->nnodes + 1));
    for (int64_t k = 0; k < b->count * b->nnodes; k++) rows[k] = m->node_tag[b->nodes[k]];
    row_width = b->nnodes;
    qsort(rows, (size_t)b->count, sizeof(int64_t) * (size_t)b->nnodes, cmp_row);
    return rows;
}

static void compare_blocks(const char *what, const Mesh *a, const MeshBlock *ba, int na, const Mesh *b,
                           const MeshBlock *bb, int nb) {
    CHECK(na == nb, "%s: %d %s blocks, reference %d", b->path, nb, what, na);
    for (int i = 0; i < na && i < nb; i++) {
        const MeshBlock *x = &ba[i], *y = NULL;
        for (int j = 0; j < nb; j++)
            if (bb[j].type == x->type) y = &bb[j];
        CHECK(y != NULL, "%s: no %s block, the reference has %lld", b->path, x->type->name,
              (long long)x->count);
        if (!y) continue;
        CHECK(y->count == x->count, "%s: %lld %s, reference %lld", b->path, (long long)y->count,
              x->type->name, (long long)x->count);
        if (y->count != x->count) continue;
        /* the same elements: the sorted lists of their node tags in lattice order */
        int64_t *ra = element_rows(a, x), *rb = element_rows(b, y), differ = 0;
        for (int64_t k = 0; k < x->count * x->nnodes; k++) differ += ra[k] != rb[k];
        CHECK(differ == 0, "%s: %lld %s element node tags differ from the reference", b->path,
              (long long)differ, x->type->name);
        free(ra);
        free(rb);
    }
}

static void compare(const Mesh *a, const Mesh *b, double tol) {
    CHECK(a->dim == b->dim, "%s: dimension %d, reference %d", b->path, b->dim, a->dim);
    CHECK(a->nnodes == b->nnodes, "%s: %lld nodes, reference %lld", b->path, (long long)b->nnodes,
          (long long)a->nnodes);
    compare_blocks("cell", a, a->cells, a->ncell_blocks, b, b->cells, b->ncell_blocks);
    compare_blocks("facet", a, a->facets, a->nfacet_blocks, b, b->facets, b->nfacet_blocks);
    CHECK(a->ngroups == b->ngroups, "%s: %d physical groups, reference %d", b->path, b->ngroups, a->ngroups);
    for (int g = 0; g < a->ngroups; g++) {
        const PhysicalGroup *x = &a->groups[g], *y = group_named(b, x);
        CHECK(y != NULL, "%s: no %dD group '%s'", b->path, x->dim, x->name);
        if (y)
            CHECK(y->nelements == x->nelements, "%s: group '%s' has %lld elements, reference %lld", b->path,
                  x->name, (long long)y->nelements, (long long)x->nelements);
    }
    const Topology *s = &a->topo, *t = &b->topo;
    CHECK(s->nvertices == t->nvertices && s->nedges == t->nedges && s->nfaces == t->nfaces &&
              s->nboundary_facets == t->nboundary_facets,
          "%s: topology V E F Fb = %lld %lld %lld %lld, reference %lld %lld %lld %lld", b->path,
          (long long)t->nvertices, (long long)t->nedges, (long long)t->nfaces, (long long)t->nboundary_facets,
          (long long)s->nvertices, (long long)s->nedges, (long long)s->nfaces,
          (long long)s->nboundary_facets);
    if (a->nnodes != b->nnodes) return;
    int64_t max_tag;
    int64_t *idx = tag_index(b, &max_tag);
    double worst = 0.0;
    int64_t missing = 0;
    for (int64_t n = 0; n < a->nnodes; n++) {
        int64_t k = a->node_tag[n] <= max_tag ? idx[a->node_tag[n]] : -1;
        if (k < 0) {
            missing++;
            continue;
        }
        for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(a->x[3 * n + c] - b->x[3 * k + c]));
    }
    free(idx);
    CHECK(missing == 0, "%s: %lld node tags of the reference are missing", b->path, (long long)missing);
    CHECK(worst <= tol, "%s: coordinates differ from the reference by %.3g (allowed %.3g)", b->path, worst,
          tol);
}

int main(int argc, char **argv) {
    if (argc < 6) return fprintf(stderr, "usage: %s GEO ORDER MSH41 MSH41BIN MSH22\n", argv[0]), 2;
    MeshReadOptions mo = {.order = atoi(argv[2])};
    Mesh geo, ref;
    CHECK_OK(mesh_read(argv[1], &mo, &geo));
    CHECK_OK(mesh_read(argv[3], NULL, &ref));
    CHECK(ref.cells[0].order == mo.order, "%s: cells of order %d, expected %d", ref.path, ref.cells[0].order,
          mo.order);
    compare(&ref, &geo, 1e-15);
    for (int i = 4; i < 6; i++) {
        Mesh m;
        CHECK_OK(mesh_read(argv[i], NULL, &m));
        compare(&ref, &m, 0.0);
        mesh_destroy(&m);
    }
    mesh_destroy(&geo);
    mesh_destroy(&ref);
    return test_result("test_mesh_formats");
}
