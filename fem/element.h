/* Reference elements: shapes, femto's one node order (the lattice order), node positions and Lagrange bases.
 *
 * Every element inside femto, of the mesh's geometry or of a solution space, orders its nodes the same way:
 * by a lattice multi-index (i, j, k), lexicographically with i fastest.
 *   - tensor shapes (line, quad, hex): 0 <= i, j, k <= p, index = i + (p+1) (j + (p+1) k);
 *   - simplices (tri, tet): i + j + k <= p, enumerated with i fastest, then j, then k.
 * Reference cells are [0,1]^d for tensor shapes and the unit simplex (vertices 0, e1, e2, e3) for simplices.
 * Node positions are the Gauss-Lobatto-Legendre (GLL) points along every edge, per axis on tensor shapes, and
 * the lattice point a/p elsewhere (faces and interiors of simplices, where p <= 3 leaves only centroids). So
 * a line shared by a triangle and a quadrilateral carries the same nodes on both: mixed meshes are
 * conforming.
 *
 * Gmsh's node orders are converted to this order on reading (mesh_gmsh_to_lattice); VTK's are produced from
 * it on writing (io/vtk_order). The mapping is a permutation that a test checks against both libraries.
 *
 * Corners ("vertices") of a cell are its lattice corner nodes, numbered in lattice order, which for tensor
 * shapes is lexicographic: quad corners (0,0) (1,0) (0,1) (1,1), hex corner c = x + 2y + 4z. */
#ifndef FEMTO_ELEMENT_H
#define FEMTO_ELEMENT_H

#include "hd.h"

FEM_EXTERN_C_BEGIN

typedef enum {
    SHAPE_NONE = 0,
    SHAPE_LINE = 1,
    SHAPE_TRI = 2,
    SHAPE_QUAD = 3,
    SHAPE_TET = 4,
    SHAPE_HEX = 5,
} Shape;

enum {
    SHAPE_MAX_VERTICES = 8,
    SHAPE_MAX_EDGES = 12,
    SHAPE_MAX_FACETS = 6,
    ELEMENT_MAX_ORDER_SIMPLEX = 3,
    ELEMENT_MAX_ORDER_TENSOR = 8,
};

const char *shape_name(Shape s); /* "line", "triangle", ... */
int shape_dim(Shape s);          /* 1, 2 or 3 */
int shape_is_tensor(Shape s);    /* line, quad, hex */
int shape_nvertices(Shape s);
Shape shape_facet(Shape s); /* shape of the facets of s: tri -> line, hex -> quad */
int shape_nfacets(Shape s);
int shape_nedges(Shape s);             /* edges of the reference cell (1 for a line) */
const int *shape_edge(Shape s, int e); /* the two corner numbers of edge e */
/* Corners of facet f, and how many (2, 3 or 4). Quad facets list corners in the facet's own lattice order. */
int shape_facet_vertices(Shape s, int f, int v[4]);
double shape_reference_volume(Shape s); /* 1, 1/2, 1, 1/6, 1 */
int element_max_order(Shape s);         /* 3 for simplices, 8 for tensor shapes */

/* ---- Lattice */
int lattice_count(Shape s, int p);                    /* number of nodes of order p */
void lattice_node(Shape s, int p, int n, int lat[3]); /* multi-index of node n (unused entries 0) */
int lattice_index(Shape s, int p, const int lat[3]);  /* inverse of lattice_node; -1 if not a node */
void lattice_position(Shape s, int p, const int lat[3], double xi[3]); /* reference coordinates */
/* Lattice index of corner v (vertex numbering above). */
int lattice_vertex(Shape s, int p, int v);
/* Equispaced reference position of a lattice node (lat / p): where VTK's Lagrange cells place their nodes. */
void lattice_position_equispaced(Shape s, int p, const int lat[3], double xi[3]);
/* Reference positions of all nodes of order p, pts[n][3] in lattice order: their own positions, or (equispaced)
 * the equispaced ones. */
void lattice_points(Shape s, int p, int equispaced, double *pts);
/* Number of nodes of order p strictly inside a shape (not on its boundary): (p-1)^d or C(p-1, d). */
int lattice_interior_count(Shape s, int p);

/* Where a lattice node sits: the smallest sub-entity that contains it, as the list of that entity's corners
 * (cell corner numbers), its dimension (0 vertex, 1 edge, 2 face, 3 cell) and, for nodes of that entity's
 * interior, the node's coordinates in the entity's own lattice measured from corner[0] (see element.c). */
typedef struct {
    int dim;       /* dimension of the entity */
    int ncorners;  /* 1, 2, 3, 4 (or 8 for a hex interior) */
    int corner[8]; /* cell corner numbers spanning the entity */
    int count[4];  /* simplex entities: barycentric counts at corner[0..ncorners-1] (sum p) */
    int axis[3];   /* tensor entities: lattice coordinate along each free axis, from corner[0] */
} LatticeSite;
void lattice_site(Shape s, int p, const int lat[3], LatticeSite *site);

/* ---- Bases. A basis of order p on shape s has lattice_count(s, p) functions, one per node, each 1 at its
 * node and 0 at the others. Tables are row-major: val[pt][i], grad[pt][i][d] with d < shape_dim(s). */
int basis_tabulate(Shape s, int p, int npts, const double *pts /* [npts][3] */, double *val, double *grad);
/* One-dimensional GLL Lagrange basis of order p on [0,1]: val[pt][i], grad[pt][i]. */
void basis_tabulate_1d(int p, int npts, const double *pts, double *val, double *grad);

/* Gauss-Lobatto-Legendre points of order p (p+1 points) on [0,1], ascending. */
void gll_points(int p, double *x);

FEM_EXTERN_C_END

#endif
