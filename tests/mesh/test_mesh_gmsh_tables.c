/* The Gmsh -> lattice node tables of fem/mesh.c against Gmsh itself.
 *
 * For every element type femto reads, Gmsh's own reference coordinates of its nodes
 * (gmshModelMeshGetElementProperties) must be the femto lattice position (fem/element.h) of the lattice node
 * the table sends that Gmsh node to. Gmsh's reference line, quadrangle and hexahedron are [-1,1]^d and
 * femto's [0,1]^d (xi = (g + 1) / 2); both use the unit simplex for triangles and tetrahedra. The tables must
 * also be permutations, and Gmsh's dimension, order and node count must match femto's. A wrong entry puts a
 * node at another place of the cell, so the check is exact up to rounding (1e-14). */
#include "common/femto_test.h"
#include "fem/mesh.h"

#include <gmshc.h>
#include <math.h>
#include <string.h>

static const int gmsh_types[] = {1, 8, 2, 9, 3, 10, 4, 11, 5, 12};

static void check_type(int gmsh_type) {
    const MeshElementType *t = mesh_gmsh_type(gmsh_type);
    CHECK(t != NULL, "Gmsh type %d: femto should read it", gmsh_type);
    if (!t) return;
    int ierr = 0, dim = 0, order = 0, nnodes = 0, nprimary = 0;
    char *name = NULL;
    double *coord = NULL;
    size_t ncoord = 0;
    gmshModelMeshGetElementProperties(gmsh_type, &name, &dim, &order, &nnodes, &coord, &ncoord, &nprimary,
                                      &ierr);
    CHECK(ierr == 0, "Gmsh type %d: gmshModelMeshGetElementProperties failed", gmsh_type);
    if (ierr) return;
    CHECK(dim == shape_dim(t->shape), "%s: Gmsh dimension %d, femto %d", t->name, dim, shape_dim(t->shape));
    CHECK(order == t->order, "%s: Gmsh order %d, femto %d", t->name, order, t->order);
    CHECK(nnodes == t->nnodes, "%s: Gmsh has %d nodes, femto %d", t->name, nnodes, t->nnodes);
    CHECK(nnodes == lattice_count(t->shape, t->order), "%s: %d nodes but the lattice of order %d has %d",
          t->name, nnodes, t->order, lattice_count(t->shape, t->order));
    CHECK(nprimary == shape_nvertices(t->shape), "%s: Gmsh has %d corners, femto %d", t->name, nprimary,
          shape_nvertices(t->shape));
    CHECK(ncoord == (size_t)(nnodes * dim), "%s: %zu coordinates for %d nodes in %dD", t->name, ncoord,
          nnodes, dim);
    int seen[64] = {0};
    for (int k = 0; k < nnodes && k < t->nnodes; k++) {
        int L = t->lattice_from_gmsh[k];
        CHECK(L >= 0 && L < nnodes, "%s: Gmsh node %d goes to lattice index %d of %d", t->name, k, L, nnodes);
        if (L < 0 || L >= nnodes) continue;
        CHECK(!seen[L], "%s: lattice index %d is the image of two Gmsh nodes", t->name, L);
        seen[L] = 1;
        int lat[3];
        double xi[3];
        lattice_node(t->shape, t->order, L, lat);
        lattice_position(t->shape, t->order, lat, xi);
        for (int a = 0; a < dim; a++) {
            double g = coord[k * dim + a];
            double expect = shape_is_tensor(t->shape) ? 0.5 * (g + 1.0) : g;
            CHECK(fabs(xi[a] - expect) < 1e-14,
                  "%s (%s): Gmsh node %d has reference coordinate %d = %.17g, its lattice node %d "
                  "(%d,%d,%d) sits at %.17g",
                  t->name, name, k, a, expect, L, lat[0], lat[1], lat[2], xi[a]);
        }
    }
    /* corners first in both libraries: Gmsh's primary nodes are femto's vertices in some order */
    for (int k = 0; k < nprimary && k < t->nnodes; k++) {
        int is_vertex = 0;
        for (int v = 0; v < shape_nvertices(t->shape); v++)
            is_vertex |= lattice_vertex(t->shape, t->order, v) == t->lattice_from_gmsh[k];
        CHECK(is_vertex, "%s: Gmsh primary node %d is not a corner of the lattice", t->name, k);
    }
    gmshFree(name);
    gmshFree(coord);
}

int main(void) {
    int ierr = 0;
    gmshInitialize(0, NULL, 0, &ierr);
    gmshOptionSetNumber("General.Terminal", 0, &ierr);
    int n = (int)(sizeof gmsh_types / sizeof gmsh_types[0]);
    for (int i = 0; i < n; i++) check_type(gmsh_types[i]);
    /* and nothing else: femto must refuse types it has no table for (hex20, prisms, tet20, quad8) */
    const int refused[] = {6, 7, 16, 17, 29};
    for (int i = 0; i < 5; i++)
        CHECK(mesh_gmsh_type(refused[i]) == NULL, "Gmsh type %d has no table and must be refused",
              refused[i]);
    gmshFinalize(&ierr);
    return test_result("test_mesh_gmsh_tables");
}
