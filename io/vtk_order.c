/* VTK's node order, as a permutation of femto's lattice order: the one place it lives (see output.h).
 *
 * VTK numbers the nodes of a cell by entity: corners, then the interior nodes of each edge, then of each
 * face, then of the cell. For p = 1 that is the linear cell (VTK_TRIANGLE, VTK_HEXAHEDRON, ...); for p >= 2
 * the Lagrange cell of VTK XML file version 2.2, with equispaced nodes. Facts of that format used here:
 *   - quadrilateral: corners (0,0) (1,0) (1,1) (0,1); edges y=0, x=1, y=1, x=0, each walked in the direction
 *     of increasing coordinate (not around the cell); then the face, x fastest;
 *   - hexahedron: the bottom corners as the quadrilateral's, then the top ones; the four edges of the bottom
 *     face as the quadrilateral's, the four of the top face, then the four vertical edges at (x,y) = (0,0)
 *     (1,0) (1,1) (0,1), as the corners (files older than 2.2 had the last two swapped, and VTK swaps them
 *     back when it reads such a file, so the version written must be 2.2); faces x=0, x=1, y=0, y=1, z=0,
 *     z=1, each with its first free axis fastest; then the interior, x fastest;
 *   - triangle: corners, edges 0-1, 1-2, 2-0 each walked from its first corner to its second, then the
 *     interior (for p <= 3 only the centroid);
 *   - tetrahedron: corners, edges 0-1, 1-2, 2-0, 0-3, 1-3, 2-3 walked from first to second corner, then the
 *     faces (0,1,3) (1,2,3) (2,0,3) (0,2,1) (for p <= 3 one centroid each); no interior node for p <= 3.
 * tests/io checks every shape and order with VTK's own interpolation of a curved cell. */
#include "output.h"

/* VTK index of tensor node `lat` of order p on a cell of dimension d (line, quadrilateral, hexahedron). */
static int vtk_tensor_index(int d, int p, const int lat[3])
{
    int i = lat[0], j = d > 1 ? lat[1] : 0, k = d > 2 ? lat[2] : 0;
    int ib = i == 0 || i == p, jb = d < 2 || j == 0 || j == p, kb = d < 3 || k == 0 || k == p;
    int q = p - 1; /* interior nodes per edge */
    if (d == 1) return ib ? (i ? 1 : 0) : 2 + (i - 1);
    int corner = (i ? (j ? 2 : 1) : (j ? 3 : 0)) + (k ? 4 : 0);
    if (ib && jb && kb) return corner;
    int base = d == 2 ? 4 : 8;
    int nbdy = ib + jb + kb;
    int ring = 4 * q; /* edge nodes of one horizontal face */
    if (nbdy == 2) {
        int top = k ? ring : 0;
        if (!ib) return base + top + (j ? 2 * q : 0) + (i - 1);
        if (!jb) return base + top + (i ? q : 3 * q) + (j - 1);
        return base + 2 * ring + q * (i ? (j ? 2 : 1) : (j ? 3 : 0)) + (k - 1);
    }
    base += d == 2 ? ring : 12 * q;
    if (d == 2) return base + (i - 1) + q * (j - 1);
    int face = q * q;
    if (nbdy == 1) {
        if (ib) return base + (i ? face : 0) + (j - 1) + q * (k - 1);
        if (jb) return base + 2 * face + (j ? face : 0) + (i - 1) + q * (k - 1);
        return base + 4 * face + (k ? face : 0) + (i - 1) + q * (j - 1);
    }
    return base + 6 * face + (i - 1) + q * ((j - 1) + q * (k - 1));
}

/* The lattice point sum_m weights[m] * (corner corners[m]) on a simplex: corner 0 is the origin, corner v >=
 * 1 is the unit vector e_v, and the weights (summing to p) are lattice counts. */
static void simplex_point(const int *corners, const int *weights, int n, int lat[3])
{
    lat[0] = lat[1] = lat[2] = 0;
    for (int m = 0; m < n; m++)
        if (corners[m] > 0) lat[corners[m] - 1] += weights[m];
}

/* out[k] = lattice index of simplex node k in VTK's order (p <= 3); returns the number of nodes. */
static int vtk_simplex_order(Shape s, int p, int *out)
{
    static const int tri_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
    static const int tet_edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
    static const int tet_faces[4][3] = {{0, 1, 3}, {1, 2, 3}, {2, 0, 3}, {0, 2, 1}};
    int d = shape_dim(s), n = 0, lat[3];
    for (int v = 0; v <= d; v++) {
        int w = p;
        simplex_point(&v, &w, 1, lat);
        out[n++] = lattice_index(s, p, lat);
    }
    int nedges = d == 2 ? 3 : 6;
    for (int e = 0; e < nedges; e++) {
        const int *ends = d == 2 ? tri_edges[e] : tet_edges[e];
        for (int t = 1; t < p; t++) {
            int w[2] = {p - t, t};
            simplex_point(ends, w, 2, lat);
            out[n++] = lattice_index(s, p, lat);
        }
    }
    if (p == 3) { /* one node inside each face (triangle: inside the cell), at its centroid */
        int nfaces = d == 2 ? 1 : 4;
        for (int f = 0; f < nfaces; f++) {
            static const int tri_face[3] = {0, 1, 2};
            int w[3] = {1, 1, 1};
            simplex_point(d == 2 ? tri_face : tet_faces[f], w, 3, lat);
            out[n++] = lattice_index(s, p, lat);
        }
    }
    return n;
}

int vtk_node_order(Shape s, int p, int *perm)
{
    if (s < SHAPE_LINE || s > SHAPE_HEX || p < 1 || p > element_max_order(s)) return -1;
    int n = lattice_count(s, p);
    if (!shape_is_tensor(s)) return vtk_simplex_order(s, p, perm);
    for (int node = 0; node < n; node++) {
        int lat[3];
        lattice_node(s, p, node, lat);
        perm[vtk_tensor_index(shape_dim(s), p, lat)] = node;
    }
    return n;
}

int vtk_cell_type(Shape s, int p)
{
    static const int linear[] = {0, VTK_LINE, VTK_TRIANGLE, VTK_QUAD, VTK_TETRA, VTK_HEXAHEDRON};
    static const int lagrange[] = {0,
                                   VTK_LAGRANGE_CURVE,
                                   VTK_LAGRANGE_TRIANGLE,
                                   VTK_LAGRANGE_QUADRILATERAL,
                                   VTK_LAGRANGE_TETRAHEDRON,
                                   VTK_LAGRANGE_HEXAHEDRON};
    if (s < SHAPE_LINE || s > SHAPE_HEX || p < 1) return 0;
    return p == 1 ? linear[s] : lagrange[s];
}
