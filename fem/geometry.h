/* Geometry at quadrature points, from the mesh's own nodes (iso- or sub-parametric: tet10 and hex27 cells are
 * curved). Computed once on the host when an operator is set up.
 *
 * Cells, GEO_STRIDE(dim) doubles per q-point: w det J, then J^{-1} row-major (J^{-1}[a][b] = d xi_a / d x_b).
 * Facets, FGEO_STRIDE doubles per q-point: w dA, the unit outward normal n[3], the reference tangents
 * T1 = dX/dxi_1 and T2 = dX/dxi_2 (T2 = 0 on lines), and w * s where s = +-1 orients the tangents so that
 * T1 x T2 (3D) or (T1y, -T1x) (2D) points out of the body: the follower-load formulas need that. */
#ifndef FEMTO_GEOMETRY_H
#define FEMTO_GEOMETRY_H

#include "mesh.h"
#include "quadrature.h"

FEM_EXTERN_C_BEGIN

#define GEO_STRIDE(dim) (1 + (dim) * (dim))
enum { FGEO_STRIDE = 11, FGEO_WDA = 0, FGEO_N = 1, FGEO_T1 = 4, FGEO_T2 = 7, FGEO_WS = 10 };

/* geo[count][nq][GEO_STRIDE], xq[count][nq][3] (xq may be NULL) for the cells `list` of a block (NULL: all).
 * A non-positive det J at a q-point is an error naming the element. */
int geometry_cells(const Mesh *m, int block, const Quadrature *q, int64_t count, const fem_idx *list,
                   double *geo, double *xq);
/* fgeo[count][nq][FGEO_STRIDE], xq[count][nq][3] for the facets `list` of facet block fb (NULL: all). */
int geometry_facets(const Mesh *m, int fb, const Quadrature *q, int64_t count, const fem_idx *list,
                    double *fgeo, double *xq);

/* Inverse and determinant of a d x d matrix (d = 1, 2, 3), row-major. */
FEM_HD static inline double geometry_invert(int d, const double *J, double *Jinv) {
    if (d == 1) {
        Jinv[0] = 1.0 / J[0];
        return J[0];
    }
    if (d == 2) {
        double det = J[0] * J[3] - J[1] * J[2];
        Jinv[0] = J[3] / det;
        Jinv[1] = -J[1] / det;
        Jinv[2] = -J[2] / det;
        Jinv[3] = J[0] / det;
        return det;
    }
    double c00 = J[4] * J[8] - J[5] * J[7], c01 = J[5] * J[6] - J[3] * J[8], c02 = J[3] * J[7] - J[4] * J[6];
    double det = J[0] * c00 + J[1] * c01 + J[2] * c02;
    Jinv[0] = c00 / det;
    Jinv[1] = (J[2] * J[7] - J[1] * J[8]) / det;
    Jinv[2] = (J[1] * J[5] - J[2] * J[4]) / det;
    Jinv[3] = c01 / det;
    Jinv[4] = (J[0] * J[8] - J[2] * J[6]) / det;
    Jinv[5] = (J[2] * J[3] - J[0] * J[5]) / det;
    Jinv[6] = c02 / det;
    Jinv[7] = (J[1] * J[6] - J[0] * J[7]) / det;
    Jinv[8] = (J[0] * J[4] - J[1] * J[3]) / det;
    return det;
}

FEM_EXTERN_C_END

#endif
