/* The Gmsh reader and the topology on meshes made from .geo files in tests/meshes.
 *
 * usage: test_mesh_reader CASE, one of
 *   ball1 ball2     unit ball of tetrahedra (tet4, tet10), unstructured
 *   disk1 disk2     unit disk of triangles (tri3, tri6), unstructured
 *   dquad1 dquad2   unit disk of quadrilaterals (quad4, quad9), unstructured
 *   block1 block2   structured 2 x 3 x 4 hexahedra (hex8, hex27)
 *   mixed1 mixed2   unit square, 2 x 4 quadrilaterals beside 16 triangles (quad4 + tri3, quad9 + tri6)
 *   cw1 cw2         the same square meshed clockwise by Gmsh: the reader must reorient every cell
 *   order           the reader's order option: 1 or 2 wins over the script's Mesh.ElementOrder, 0 keeps it
 *   refine          MeshReadOptions.refine: the meshes before each refinement kept as the mesh's parents
 *
 * What every case checks, and why the expected numbers are what they are:
 *   - element counts per type equal Gmsh's own counts of the same meshing (asked from the SDK directly), and
 *     for the structured meshes the closed formulas in nx, ny, nz;
 *   - physical groups: names, dimensions and sizes;
 *   - topology: V - E + F - C = 1 in 3D and V - E + F = 1 in 2D (Euler characteristic of a ball and of a
 *     disk), every interior face/edge is shared by two cells so F = (faces per cell * C + boundary) / 2
 *     (3D, and E likewise in 2D), the closed boundary surface of the ball has Vb - Eb + Fb = 2 with
 *     Eb = 3 Fb / 2, the boundary circle of the disk has as many vertices as edges;
 *   - every edge of every cell is the topology edge with the same two vertices, edges are unique;
 *   - every facet element is matched to a cell whose local facet holds exactly the facet's nodes (all of
 *     them, mid-edge nodes included), with shared == 0 on the outer boundary and 1 on an interface;
 *   - second-order meshes have the nodes of their first-order counterpart plus one per edge (tet10, tri6),
 *     plus one per quadrilateral face and per cell (quad9, hex27), and their curved boundary nodes lie on the
 *     circle or sphere (|x| = 1 within 1e-12). */
#include "common/femto_test.h"
#include "fem/error.h"
#include "io/mesh_read.h"

#include <gmshc.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Elements of each Gmsh type in Gmsh's own meshing of `geo` (the same options femto's reader uses). */
static void gmsh_counts(const char *geo, int order, int64_t count[32]) {
    int ierr = 0;
    memset(count, 0, sizeof(int64_t) * 32);
    gmshInitialize(0, NULL, 0, &ierr);
    gmshOptionSetNumber("General.Terminal", 0, &ierr);
    gmshOptionSetNumber("Mesh.SecondOrderIncomplete", 0, &ierr);
    gmshOpen(geo, &ierr);
    int dim = gmshModelGetDimension(&ierr);
    gmshModelMeshGenerate(dim, &ierr);
    if (order > 1) gmshModelMeshSetOrder(order, &ierr);
    CHECK(ierr == 0, "Gmsh itself could not mesh %s", geo);
    for (int type = 1; type < 32; type++) {
        size_t *tags = NULL, ntags = 0, *nodes = NULL, nnodes = 0;
        gmshModelMeshGetElementsByType(type, &tags, &ntags, &nodes, &nnodes, -1, 0, 1, &ierr);
        if (!ierr) count[type] = (int64_t)ntags;
        ierr = 0;
        if (tags) gmshFree(tags);
        if (nodes) gmshFree(nodes);
    }
    gmshFinalize(&ierr);
}

/* Gmsh's own 2D cells of `geo` (first order): how many are clockwise (negative signed area of the first three
 * corners), out of *total. */
static int64_t gmsh_clockwise(const char *geo, int64_t *total) {
    int ierr = 0;
    int64_t cw = 0;
    *total = 0;
    gmshInitialize(0, NULL, 0, &ierr);
    gmshOptionSetNumber("General.Terminal", 0, &ierr);
    gmshOpen(geo, &ierr);
    gmshModelMeshGenerate(2, &ierr);
    for (int type = 2; type <= 3; type++) {
        size_t *tags = NULL, ntags = 0, *nodes = NULL, nnodes = 0;
        gmshModelMeshGetElementsByType(type, &tags, &ntags, &nodes, &nnodes, -1, 0, 1, &ierr);
        int nv = type == 2 ? 3 : 4;
        for (size_t e = 0; e < ntags; e++) {
            double x[3][3];
            for (int k = 0; k < 3; k++) {
                double *c = NULL, *pc = NULL;
                size_t nc = 0, npc = 0;
                gmshModelMeshGetNode(nodes[e * nv + k], &c, &nc, &pc, &npc, &ierr);
                for (int a = 0; a < 3; a++) x[k][a] = c[a];
                gmshFree(c);
                if (pc) gmshFree(pc);
            }
            double area =
                (x[1][0] - x[0][0]) * (x[2][1] - x[0][1]) - (x[1][1] - x[0][1]) * (x[2][0] - x[0][0]);
            cw += area < 0;
            (*total)++;
        }
        if (tags) gmshFree(tags);
        if (nodes) gmshFree(nodes);
    }
    gmshFinalize(&ierr);
    return cw;
}

static int64_t block_count(const MeshBlock *blocks, int n, const char *name) {
    for (int b = 0; b < n; b++)
        if (strcmp(blocks[b].type->name, name) == 0) return blocks[b].count;
    return 0;
}

static int64_t ncells(const Mesh *m) {
    int64_t n = 0;
    for (int b = 0; b < m->ncell_blocks; b++) n += m->cells[b].count;
    return n;
}

static int64_t nfacets(const Mesh *m) {
    int64_t n = 0;
    for (int b = 0; b < m->nfacet_blocks; b++) n += m->facets[b].count;
    return n;
}

static void check_group(const Mesh *m, const char *name, int dim, int64_t size) {
    const PhysicalGroup *g = mesh_find_group(m, name, dim);
    CHECK(g != NULL, "%s: no physical group '%s' of dimension %d", m->path, name, dim);
    if (g)
        CHECK(g->nelements == size, "group '%s': %lld elements, expected %lld", name, (long long)g->nelements,
              (long long)size);
}

/* Every block type femto read must be one Gmsh reports with the same count, and Gmsh must report no other
 * elements of the cell and facet dimensions. */
static void check_counts_against_gmsh(const Mesh *m, const int64_t gcount[32]) {
    int64_t seen[32] = {0};
    for (int b = 0; b < m->ncell_blocks; b++) seen[m->cells[b].type->gmsh_type] += m->cells[b].count;
    for (int b = 0; b < m->nfacet_blocks; b++) seen[m->facets[b].type->gmsh_type] += m->facets[b].count;
    for (int t = 1; t < 32; t++) {
        const MeshElementType *type = mesh_gmsh_type(t);
        if (!type || shape_dim(type->shape) < m->dim - 1) continue;
        CHECK(seen[t] == gcount[t], "%s: %lld elements of Gmsh type %d (%s), Gmsh made %lld", m->path,
              (long long)seen[t], t, type->name, (long long)gcount[t]);
    }
}

static int cmp_pair(const void *a, const void *b) {
    const fem_idx *x = a, *y = b;
    if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Edges are unique pairs of distinct vertices, and each cell's local edges are the topology's. */
static void check_edges(const Mesh *m) {
    const Topology *t = &m->topo;
    fem_idx *pairs = malloc(sizeof(fem_idx) * 2 * (size_t)(t->nedges + 1));
    for (int64_t e = 0; e < t->nedges; e++) {
        fem_idx a = t->edges[2 * e], b = t->edges[2 * e + 1];
        CHECK(a >= 0 && b >= 0 && a < t->nvertices && b < t->nvertices && a != b, "edge %lld: vertices %d %d",
              (long long)e, a, b);
        pairs[2 * e] = a < b ? a : b;
        pairs[2 * e + 1] = a < b ? b : a;
    }
    qsort(pairs, (size_t)t->nedges, 2 * sizeof(fem_idx), cmp_pair);
    int dup = 0;
    for (int64_t e = 1; e < t->nedges; e++)
        dup += pairs[2 * e] == pairs[2 * e - 2] && pairs[2 * e + 1] == pairs[2 * e - 1];
    CHECK(dup == 0, "%d duplicate edges", dup);
    free(pairs);
    int bad = 0;
    for (int bi = 0; bi < m->ncell_blocks; bi++) {
        const MeshBlock *b = &m->cells[bi];
        int ne = shape_nedges(b->shape);
        for (int64_t c = 0; c < b->count; c++)
            for (int e = 0; e < ne; e++) {
                const int *lv = shape_edge(b->shape, e);
                fem_idx v0 =
                    t->vertex_of_node[b->nodes[c * b->nnodes + lattice_vertex(b->shape, b->order, lv[0])]];
                fem_idx v1 =
                    t->vertex_of_node[b->nodes[c * b->nnodes + lattice_vertex(b->shape, b->order, lv[1])]];
                fem_idx id = t->cell_edges[bi][c * ne + e];
                fem_idx a = t->edges[2 * id], bb = t->edges[2 * id + 1];
                bad += !((a == v0 && bb == v1) || (a == v1 && bb == v0));
            }
    }
    CHECK(bad == 0, "%d cell edges are not the topology edge of their two vertices", bad);
}

/* Every facet element is a facet of the cell it is matched to: the nodes of that cell on its local facet
 * (the lattice nodes whose site lies on the facet's corners) are exactly the facet element's nodes. */
static void check_facets(const Mesh *m, const char *interface_group) {
    const PhysicalGroup *ig = interface_group ? mesh_find_group(m, interface_group, m->dim - 1) : NULL;
    int64_t mismatched = 0, wrong_shared = 0, nshared = 0;
    for (int fb = 0; fb < m->nfacet_blocks; fb++) {
        const MeshBlock *f = &m->facets[fb];
        for (int64_t k = 0; k < f->count; k++) {
            const FacetCell *fc = &m->topo.facet_cell[fb][k];
            CHECK(fc->block >= 0 && fc->block < m->ncell_blocks, "facet %lld: cell block %d", (long long)k,
                  fc->block);
            if (fc->block < 0 || fc->block >= m->ncell_blocks) continue;
            const MeshBlock *cb = &m->cells[fc->block];
            CHECK(fc->cell >= 0 && fc->cell < cb->count && fc->facet >= 0 &&
                      fc->facet < shape_nfacets(cb->shape),
                  "facet %lld: cell %d facet %d", (long long)k, fc->cell, fc->facet);
            int fv[4], nfv = shape_facet_vertices(cb->shape, fc->facet, fv);
            fem_idx on_facet[64];
            int non = 0;
            for (int n = 0; n < cb->nnodes; n++) {
                int lat[3];
                LatticeSite site;
                lattice_node(cb->shape, cb->order, n, lat);
                lattice_site(cb->shape, cb->order, lat, &site);
                int inside = 1;
                for (int i = 0; i < site.ncorners; i++) {
                    int hit = 0;
                    for (int j = 0; j < nfv; j++) hit |= site.corner[i] == fv[j];
                    inside &= hit;
                }
                if (inside) on_facet[non++] = cb->nodes[(int64_t)fc->cell * cb->nnodes + n];
            }
            int ok = non == f->nnodes;
            for (int i = 0; ok && i < f->nnodes; i++) {
                int hit = 0;
                for (int j = 0; j < non; j++) hit |= f->nodes[k * f->nnodes + i] == on_facet[j];
                ok &= hit;
            }
            mismatched += !ok;
            int is_interface = ig && mesh_group_has_entity(ig, f->entity[k]);
            nshared += fc->shared;
            wrong_shared += fc->shared != is_interface;
        }
    }
    CHECK(mismatched == 0, "%s: %lld facet elements are not a facet of the cell they were matched to",
          m->path, (long long)mismatched);
    CHECK(wrong_shared == 0, "%s: %lld facets have shared = 1 off the interface or 0 on it (%lld shared)",
          m->path, (long long)wrong_shared, (long long)nshared);
}

/* Euler characteristic of the closed boundary surface made of the tri3/tri6 facets: Vb - Eb + Fb = 2. */
static void check_sphere_surface(const Mesh *m) {
    int64_t Fb = nfacets(m);
    char *mark = calloc((size_t)m->topo.nvertices + 1, 1);
    int64_t Vb = 0;
    for (int fb = 0; fb < m->nfacet_blocks; fb++) {
        const MeshBlock *f = &m->facets[fb];
        for (int64_t k = 0; k < f->count; k++)
            for (int v = 0; v < 3; v++) {
                fem_idx vid =
                    m->topo.vertex_of_node[f->nodes[k * f->nnodes + lattice_vertex(f->shape, f->order, v)]];
                if (!mark[vid]) mark[vid] = 1, Vb++;
            }
    }
    free(mark);
    CHECK(Fb % 2 == 0, "a closed triangulated surface has an even number of triangles, not %lld",
          (long long)Fb);
    int64_t Eb = 3 * Fb / 2;
    CHECK(Vb - Eb + Fb == 2, "sphere surface: Vb - Eb + Fb = %lld - %lld + %lld = %lld, expected 2",
          (long long)Vb, (long long)Eb, (long long)Fb, (long long)(Vb - Eb + Fb));
}

/* Nodes of the boundary facets lie on the unit circle/sphere; all nodes inside it. */
static void check_on_unit_sphere(const Mesh *m) {
    double worst = 0.0, outside = 0.0;
    for (int fb = 0; fb < m->nfacet_blocks; fb++) {
        const MeshBlock *f = &m->facets[fb];
        for (int64_t k = 0; k < f->count * f->nnodes; k++) {
            const double *x = &m->x[3 * (int64_t)f->nodes[k]];
            worst = fmax(worst, fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - 1.0));
        }
    }
    for (int64_t n = 0; n < m->nnodes; n++) {
        const double *x = &m->x[3 * n];
        outside = fmax(outside, sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - 1.0);
    }
    CHECK(worst < 1e-12, "%s: boundary nodes are up to %.3g off the unit sphere", m->path, worst);
    CHECK(outside < 1e-12, "%s: a node lies %.3g outside the unit sphere", m->path, outside);
}

/* Checks shared by every case; returns C. */
static int64_t check_common(const Mesh *m, int order, const int64_t gcount[32], const char *interface_group,
                            int64_t n_interface) {
    const Topology *t = &m->topo;
    int64_t C = ncells(m), V = t->nvertices, E = t->nedges, F = m->dim == 3 ? t->nfaces : C;
    CHECK(m->has_topology, "%s: no topology", m->path);
    check_counts_against_gmsh(m, gcount);
    for (int b = 0; b < m->ncell_blocks; b++)
        CHECK(m->cells[b].order == order, "cell block %d has order %d, expected %d", b, m->cells[b].order,
              order);
    for (int b = 0; b < m->nfacet_blocks; b++)
        CHECK(m->facets[b].order == order, "facet block %d has order %d, expected %d", b, m->facets[b].order,
              order);
    if (m->dim == 3)
        CHECK(V - E + F - C == 1, "%s: V - E + F - C = %lld - %lld + %lld - %lld = %lld, expected 1 (a ball)",
              m->path, (long long)V, (long long)E, (long long)F, (long long)C, (long long)(V - E + F - C));
    else
        CHECK(V - E + F == 1, "%s: V - E + F = %lld - %lld + %lld = %lld, expected 1 (a disk)", m->path,
              (long long)V, (long long)E, (long long)F, (long long)(V - E + F));
    /* every interior facet is counted twice by its cells, boundary facets once; an interface facet element
     * sits on an interior facet, so the boundary facets are the elements minus the interface */
    int64_t Fb = nfacets(m) - n_interface, sum = 0;
    for (int b = 0; b < m->ncell_blocks; b++) sum += shape_nfacets(m->cells[b].shape) * m->cells[b].count;
    int64_t nfacet_entities = m->dim == 3 ? F : E;
    CHECK(t->nboundary_facets == Fb, "%lld boundary facets in the topology, %lld boundary facet elements",
          (long long)t->nboundary_facets, (long long)Fb);
    CHECK(2 * nfacet_entities == sum + Fb, "2 x %lld facets != %lld cell facets + %lld boundary facets",
          (long long)nfacet_entities, (long long)sum, (long long)Fb);
    int64_t corner_nodes = 0;
    for (int64_t n = 0; n < m->nnodes; n++) corner_nodes += t->vertex_of_node[n] >= 0;
    CHECK(corner_nodes == V, "%lld nodes carry a vertex number, %lld vertices", (long long)corner_nodes,
          (long long)V);
    check_edges(m);
    check_facets(m, interface_group);
    return C;
}

static void read_mesh(const char *name, int order, Mesh *m, int64_t gcount[32]) {
    MeshReadOptions mo = {.order = order};
    CHECK_OK(mesh_read(test_mesh(name), &mo, m));
    gmsh_counts(test_mesh(name), order, gcount);
}

static void case_ball(int order) {
    Mesh m, m1;
    int64_t g[32];
    read_mesh("ball_tet.geo", order, &m, g);
    const char *cell = order == 1 ? "tet4" : "tet10", *facet = order == 1 ? "tri3" : "tri6";
    CHECK(m.dim == 3 && m.ncell_blocks == 1 && m.nfacet_blocks == 1,
          "ball: dim %d, %d cell and %d facet blocks, "
          "expected 3, 1, 1",
          m.dim, m.ncell_blocks, m.nfacet_blocks);
    int64_t C = block_count(m.cells, m.ncell_blocks, cell),
            Fb = block_count(m.facets, m.nfacet_blocks, facet);
    CHECK(C > 200 && Fb > 100, "ball: %lld %s and %lld %s, expected hundreds at element size 0.5",
          (long long)C, cell, (long long)Fb, facet);
    check_common(&m, order, g, NULL, 0);
    check_group(&m, "ball", 3, C);
    check_group(&m, "sphere", 2, Fb);
    CHECK(m.ngroups == 2, "ball: %d groups, expected 2", m.ngroups);
    check_sphere_surface(&m);
    check_on_unit_sphere(&m);
    /* the first-order mesh of the same script: same cells, same topology, nodes = its vertices */
    int64_t g1[32];
    read_mesh("ball_tet.geo", 1, &m1, g1);
    CHECK(m1.nnodes == m1.topo.nvertices, "tet4 ball: %lld nodes != %lld vertices", (long long)m1.nnodes,
          (long long)m1.topo.nvertices);
    CHECK(m1.topo.nvertices == m.topo.nvertices && m1.topo.nedges == m.topo.nedges &&
              m1.topo.nfaces == m.topo.nfaces && ncells(&m1) == C,
          "order %d ball has topology (%lld, %lld, %lld, %lld), the tet4 one (%lld, %lld, %lld, %lld)", order,
          (long long)m.topo.nvertices, (long long)m.topo.nedges, (long long)m.topo.nfaces, (long long)C,
          (long long)m1.topo.nvertices, (long long)m1.topo.nedges, (long long)m1.topo.nfaces,
          (long long)ncells(&m1));
    if (order == 2)
        CHECK(m.nnodes == m.topo.nvertices + m.topo.nedges,
              "tet10 ball: %lld nodes, expected V + E = %lld + %lld", (long long)m.nnodes,
              (long long)m.topo.nvertices, (long long)m.topo.nedges);
    mesh_destroy(&m1);
    mesh_destroy(&m);
}

static void case_disk(const char *geo, Shape shape, int order) {
    Mesh m;
    int64_t g[32];
    read_mesh(geo, order, &m, g);
    const char *cell = shape == SHAPE_TRI ? (order == 1 ? "tri3" : "tri6") : (order == 1 ? "quad4" : "quad9");
    const char *facet = order == 1 ? "line2" : "line3";
    CHECK(m.dim == 2 && m.ncell_blocks == 1 && m.nfacet_blocks == 1,
          "disk: dim %d, %d cell and %d facet blocks", m.dim, m.ncell_blocks, m.nfacet_blocks);
    int64_t C = block_count(m.cells, m.ncell_blocks, cell),
            Eb = block_count(m.facets, m.nfacet_blocks, facet);
    CHECK(C > 40 && Eb > 15, "disk: %lld %s and %lld %s, expected dozens at element size 0.3", (long long)C,
          cell, (long long)Eb, facet);
    check_common(&m, order, g, NULL, 0);
    check_group(&m, "disk", 2, C);
    check_group(&m, "circle", 1, Eb);
    /* a closed polygon: as many boundary vertices as boundary edges */
    char *mark = calloc((size_t)m.topo.nvertices + 1, 1);
    int64_t Vb = 0;
    for (int64_t k = 0; k < m.facets[0].count; k++)
        for (int v = 0; v < 2; v++) {
            fem_idx vid = m.topo.vertex_of_node[m.facets[0].nodes[k * m.facets[0].nnodes +
                                                                  lattice_vertex(SHAPE_LINE, order, v)]];
            if (!mark[vid]) mark[vid] = 1, Vb++;
        }
    free(mark);
    CHECK(Vb == Eb, "circle: %lld vertices on %lld boundary edges, expected equal", (long long)Vb,
          (long long)Eb);
    check_on_unit_sphere(&m);
    int64_t expect =
        m.topo.nvertices + (order == 2 ? m.topo.nedges : 0) + (order == 2 && shape == SHAPE_QUAD ? C : 0);
    CHECK(m.nnodes == expect, "%s disk: %lld nodes, expected %lld (V%s)", cell, (long long)m.nnodes,
          (long long)expect,
          order == 1            ? ""
          : shape == SHAPE_QUAD ? " + E + C"
                                : " + E");
    /* every cell counter-clockwise after reading (positive Jacobian at every node) */
    int bad = 0;
    for (int64_t c = 0; c < C; c++) {
        double lo, hi;
        mesh_cell_jacobian_range(&m, 0, c, &lo, &hi);
        bad += !(lo > 0);
    }
    CHECK(bad == 0, "%d disk cells are not counter-clockwise", bad);
    mesh_destroy(&m);
}

static void case_block(int order) {
    enum { nx = 2, ny = 3, nz = 4 };
    Mesh m;
    int64_t g[32];
    read_mesh("block_hex.geo", order, &m, g);
    const char *cell = order == 1 ? "hex8" : "hex27", *facet = order == 1 ? "quad4" : "quad9";
    int64_t V = (nx + 1) * (ny + 1) * (nz + 1);                                                 /* 60 */
    int64_t E = nx * (ny + 1) * (nz + 1) + (nx + 1) * ny * (nz + 1) + (nx + 1) * (ny + 1) * nz; /* 133 */
    int64_t F = nx * ny * (nz + 1) + nx * (ny + 1) * nz + (nx + 1) * ny * nz;                   /* 98 */
    int64_t C = nx * ny * nz;                                                                   /* 24 */
    int64_t Fb = 2 * (nx * ny + ny * nz + nx * nz);                                             /* 52 */
    CHECK(block_count(m.cells, m.ncell_blocks, cell) == C, "block: %lld %s, expected nx ny nz = %lld",
          (long long)block_count(m.cells, m.ncell_blocks, cell), cell, (long long)C);
    CHECK(block_count(m.facets, m.nfacet_blocks, facet) == Fb,
          "block: %lld %s, expected 2 (nx ny + ny nz + nz nx) = %lld",
          (long long)block_count(m.facets, m.nfacet_blocks, facet), facet, (long long)Fb);
    check_common(&m, order, g, NULL, 0);
    CHECK(m.topo.nvertices == V && m.topo.nedges == E && m.topo.nfaces == F,
          "block: V, E, F = %lld, %lld, %lld; expected %lld, %lld, %lld", (long long)m.topo.nvertices,
          (long long)m.topo.nedges, (long long)m.topo.nfaces, (long long)V, (long long)E, (long long)F);
    int64_t nodes = order == 1 ? V : (2 * nx + 1) * (2 * ny + 1) * (2 * nz + 1); /* 315 = V + E + F + C */
    CHECK(m.nnodes == nodes, "block %s: %lld nodes, expected %lld", cell, (long long)m.nnodes,
          (long long)nodes);
    if (order == 2) CHECK(nodes == V + E + F + C, "hex27 nodes: %lld != V + E + F + C", (long long)nodes);
    check_group(&m, "block", 3, C);
    check_group(&m, "bottom", 2, nx * ny);
    check_group(&m, "top", 2, nx * ny);
    check_group(&m, "sides", 2, 2 * (nx * nz + ny * nz));
    /* every cell is a box of 1 x 1/3 x 3/8: det J = 1/8 everywhere (Gmsh spaces transfinite nodes by a
     * numerical arc length, which puts them up to ~4e-12 off the exact fractions: hence 1e-11, not 1e-15) */
    double worst = 0.0;
    for (int64_t c = 0; c < C; c++) {
        double lo, hi;
        mesh_cell_jacobian_range(&m, 0, c, &lo, &hi);
        worst = fmax(worst, fmax(fabs(lo - 0.125), fabs(hi - 0.125)));
    }
    CHECK(worst < 1e-11, "block: det J differs from 1/8 by %.3g", worst);
    mesh_destroy(&m);
}

/* square_mixed.geo, or its clockwise twin: Gmsh writes every cell of square_mixed_cw.geo clockwise, and the
 * reader must have turned them all counter-clockwise with their nodes in place. */
static void case_mixed(const char *geo, int order, int clockwise) {
    Mesh m;
    int64_t g[32], total;
    int64_t cw = gmsh_clockwise(test_mesh(geo), &total);
    CHECK(total == 24 && cw == (clockwise ? 24 : 0),
          "%s: Gmsh writes %lld of its %lld cells clockwise, expected %d", geo, (long long)cw,
          (long long)total, clockwise ? 24 : 0);
    read_mesh(geo, order, &m, g);
    const char *q = order == 1 ? "quad4" : "quad9", *t = order == 1 ? "tri3" : "tri6";
    int64_t Q = block_count(m.cells, m.ncell_blocks, q), T = block_count(m.cells, m.ncell_blocks, t);
    CHECK(m.ncell_blocks == 2, "mixed square: %d cell blocks, expected 2", m.ncell_blocks);
    CHECK(Q == 8, "mixed square: %lld %s, expected 2 x 4 = 8", (long long)Q, q);
    CHECK(T == 16, "mixed square: %lld %s, expected 2 x 2 x 4 = 16", (long long)T, t);
    check_common(&m, order, g, "interface", 4);
    /* V: 5 x 5 lattice; E: 4 x 5 horizontal + 5 x 4 vertical + 8 diagonals */
    CHECK(m.topo.nvertices == 25 && m.topo.nedges == 48, "mixed square: V = %lld, E = %lld; expected 25, 48",
          (long long)m.topo.nvertices, (long long)m.topo.nedges);
    int64_t nodes = order == 1 ? 25 : 81; /* order 2: the 9 x 9 lattice = V + E + Q */
    CHECK(m.nnodes == nodes, "mixed square: %lld nodes, expected %lld", (long long)m.nnodes,
          (long long)nodes);
    check_group(&m, "quads", 2, 8);
    check_group(&m, "tris", 2, 16);
    check_group(&m, "boundary", 1, 16);
    check_group(&m, "interface", 1, 4);
    /* every cell counter-clockwise with det J = 1/16 at every node: 1/4 x 1/4 squares, and triangles of area
     * 1/32 (det J = twice the area); a node of a second-order cell left out of place would change det J there
     * (1e-11: Gmsh's transfinite nodes are ~1e-12 off the exact fractions) */
    double worst = 0.0;
    for (int b = 0; b < m.ncell_blocks; b++)
        for (int64_t c = 0; c < m.cells[b].count; c++) {
            double lo, hi;
            mesh_cell_jacobian_range(&m, b, c, &lo, &hi);
            worst = fmax(worst, fmax(fabs(lo - 0.0625), fabs(hi - 0.0625)));
        }
    CHECK(worst < 1e-11, "%s: det J differs from 1/16 by %.3g at a node", geo, worst);
    mesh_destroy(&m);
}

/* MeshReadOptions.order: 1 or 2 is the geometric order whatever the script sets, 0 keeps the script's. The
 * structured 4 x 4 squares of tests/mesh/info: 25 nodes at order 1, 81 = 9 x 9 at order 2. */
static void case_order(void) {
    const struct {
        const char *geo;
        int asked, order, nnodes;
        const char *type;
    } cases[] = {{"../mesh/info/tri6.geo", 0, 2, 81, "tri6"},  {"../mesh/info/tri6.geo", 1, 1, 25, "tri3"},
                 {"../mesh/info/tri6.geo", 2, 2, 81, "tri6"},  {"../mesh/info/tri3.geo", 0, 1, 25, "tri3"},
                 {"../mesh/info/tri3.geo", 1, 1, 25, "tri3"},  {"../mesh/info/tri3.geo", 2, 2, 81, "tri6"},
                 {"../mesh/info/hex27.geo", 1, 1, 27, "hex8"}, {"../mesh/info/hex8.geo", 2, 2, 125, "hex27"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Mesh m;
        MeshReadOptions mo = {.order = cases[i].asked};
        CHECK_OK(mesh_read(test_mesh(cases[i].geo), &mo, &m));
        CHECK(m.cells[0].order == cases[i].order && strcmp(m.cells[0].type->name, cases[i].type) == 0 &&
                  m.nnodes == cases[i].nnodes,
              "%s read with order %d: %lld %s cells (order %d) on %lld nodes, expected %s on %d nodes",
              cases[i].geo, cases[i].asked, (long long)m.cells[0].count, m.cells[0].type->name,
              m.cells[0].order, (long long)m.nnodes, cases[i].type, cases[i].nnodes);
        for (int b = 0; b < m.nfacet_blocks; b++)
            CHECK(m.facets[b].order == cases[i].order, "%s read with order %d: facets of order %d",
                  cases[i].geo, cases[i].asked, m.facets[b].order);
        mesh_destroy(&m);
    }
}

/* One link of the chain: `fine` refined once from `p`, whose cells are of order 2 on fine's nodes. */
static void check_parent(const char *geo, const Mesh *fine, const Mesh *p) {
    CHECK(p->dim == fine->dim && p->nnodes == fine->nnodes && p->has_topology &&
              p->ncell_blocks == fine->ncell_blocks,
          "%s: the parent has dim %d, %lld nodes and %d cell blocks; expected %d, %lld, %d", geo, p->dim,
          (long long)p->nnodes, p->ncell_blocks, fine->dim, (long long)fine->nnodes, fine->ncell_blocks);
    /* Gmsh splits a cell into 2^dim, of the parent's shape */
    for (int b = 0; b < p->ncell_blocks; b++) {
        const MeshBlock *pb = &p->cells[b];
        int64_t n = 0;
        for (int f = 0; f < fine->ncell_blocks; f++)
            n += fine->cells[f].shape == pb->shape ? fine->cells[f].count : 0;
        CHECK(pb->order == 2 && n == pb->count << fine->dim,
              "%s: parent block %d is %s (%lld cells); expected order 2 and %lld / %d cells", geo, b,
              pb->type->name, (long long)pb->count, (long long)n, 1 << fine->dim);
    }
    /* multigrid's transfer needs this: the parent's order-2 nodes are exactly the fine mesh's corners */
    char *used = calloc((size_t)fine->nnodes + 1, 1);
    for (int b = 0; b < p->ncell_blocks; b++)
        for (int64_t i = 0; i < p->cells[b].count * p->cells[b].nnodes; i++) used[p->cells[b].nodes[i]] = 1;
    int64_t differ = 0, corners = 0;
    for (int64_t n = 0; n < fine->nnodes; n++) {
        int corner = fine->topo.vertex_of_node[n] >= 0;
        corners += corner;
        differ += corner != used[n];
    }
    free(used);
    CHECK(differ == 0 && corners == fine->topo.nvertices,
          "%s: %lld nodes are a corner of the fine mesh but no order-2 node of its parent, or the reverse",
          geo, (long long)differ);
    /* every cell lies in one parent cell, and each parent cell holds 2^dim of them */
    int64_t nchild = 0, nparent = 0;
    for (int b = 0; b < fine->ncell_blocks; b++) nchild += fine->cells[b].count;
    for (int b = 0; b < p->ncell_blocks; b++) nparent += p->cells[b].count;
    int64_t *of = malloc(sizeof(int64_t) * (size_t)nchild),
            *children = calloc((size_t)nparent, sizeof(int64_t));
    CHECK_OK(mesh_parent_cells(fine, of));
    int64_t wrong = 0;
    for (int64_t c = 0; c < nchild; c++) children[of[c]]++;
    for (int64_t c = 0; c < nparent; c++) wrong += children[c] != 1 << fine->dim;
    CHECK(wrong == 0, "%s: %lld parent cells do not hold %d cells each", geo, (long long)wrong,
          1 << fine->dim);
    free(of);
    free(children);
    /* the parent's facets are the whole boundary's, of order 2 too */
    CHECK(p->nfacet_blocks == fine->nfacet_blocks &&
              p->topo.nboundary_facets << (fine->dim - 1) == fine->topo.nboundary_facets,
          "%s: the parent has %lld boundary facets, the fine mesh %lld", geo,
          (long long)p->topo.nboundary_facets, (long long)fine->topo.nboundary_facets);
    for (int g = 0; g < fine->ngroups; g++)
        CHECK(p->ngroups == fine->ngroups && strcmp(p->groups[g].name, fine->groups[g].name) == 0 &&
                  p->groups[g].nelements << (fine->dim == p->groups[g].dim ? fine->dim : fine->dim - 1) ==
                      fine->groups[g].nelements,
              "%s: group '%s' has %lld elements in the parent, %lld in the fine mesh", geo,
              fine->groups[g].name, (long long)p->groups[g].nelements, (long long)fine->groups[g].nelements);
}

/* <mesh refine="2">: two parents, each of order 2 on its child's nodes, on straight and curved (the ball:
 * its boundary nodes lie on the sphere at every level), simplex, tensor and mixed meshes; the same chain
 * read back from the mesh cache. */
static void case_refine(void) {
    const char *geos[] = {"ball_tet.geo", "block_hex.geo", "square_mixed.geo", "disk_quad.geo"};
    char dir[] = "/tmp/femto-refine-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "cannot make a cache folder");
    for (size_t i = 0; i < sizeof geos / sizeof geos[0]; i++)
        for (int pass = 0; pass < 2; pass++) {
            Mesh m;
            MeshReadResult res;
            MeshReadOptions mo = {.refine = 2, .cache_dir = dir, .result = &res};
            CHECK_OK(mesh_read(test_mesh(geos[i]), &mo, &m));
            CHECK(res.origin == (pass ? MESH_FROM_CACHE : MESH_FROM_GMSH) && res.parent_note[0] == 0,
                  "%s, read %d: origin %d (%s)", geos[i], pass + 1, (int)res.origin, res.parent_note);
            CHECK(mesh_parent_count(&m) == 2, "%s: %d parents, expected 2", geos[i], mesh_parent_count(&m));
            if (mesh_parent_count(&m) == 2) {
                check_parent(geos[i], &m, m.parent);
                check_parent(geos[i], m.parent, m.parent->parent);
            }
            if (i == 0 && m.parent) {
                double worst = 0;
                for (const Mesh *p = m.parent; p; p = p->parent)
                    for (int64_t f = 0; f < p->facets[0].count * p->facets[0].nnodes; f++) {
                        const double *x = &p->x[3 * (int64_t)p->facets[0].nodes[f]];
                        worst = fmax(worst, fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - 1));
                    }
                CHECK(worst < 1e-12, "ball: a parent's boundary node is %.3g off the sphere", worst);
            }
            mesh_destroy(&m);
        }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cannot remove %s", dir);
}

int main(int argc, char **argv) {
    if (argc < 2) return fprintf(stderr, "usage: %s CASE\n", argv[0]), 2;
    const char *c = argv[1];
    int order = c[strlen(c) - 1] == '2' ? 2 : 1;
    if (strncmp(c, "ball", 4) == 0)
        case_ball(order);
    else if (strncmp(c, "disk", 4) == 0)
        case_disk("disk_tri.geo", SHAPE_TRI, order);
    else if (strncmp(c, "dquad", 5) == 0)
        case_disk("disk_quad.geo", SHAPE_QUAD, order);
    else if (strncmp(c, "block", 5) == 0)
        case_block(order);
    else if (strncmp(c, "mixed", 5) == 0)
        case_mixed("square_mixed.geo", order, 0);
    else if (strcmp(c, "order") == 0)
        case_order();
    else if (strcmp(c, "refine") == 0)
        case_refine();
    else if (strncmp(c, "cw", 2) == 0)
        case_mixed("square_mixed_cw.geo", order, 1);
    else
        return fprintf(stderr, "unknown case '%s'\n", c), 2;
    return test_result(c);
}
