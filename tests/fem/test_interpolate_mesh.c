/* Polynomial reproduction through the CPU device's interpolate kernel on real meshes.
 *
 * usage: test_interpolate_mesh MESH.geo GEOMETRIC_ORDER affine|curved P...   (each order P in turn)
 *
 * What is exact, and why:
 *   affine: the cells are affine images of their reference cell (triangles, tetrahedra, parallelograms,
 *     parallelepipeds). For f a polynomial in x of total degree <= p, f o F_K is a polynomial of the same
 *     degree in the reference coordinates, which lies in P_p and in Q_p: the space holds f exactly, so the
 *     field with nodal values f(x_i) equals f everywhere. Checked for every monomial of degree <= p (in
 *     coordinates centred on and scaled by the bounding box, so that each is O(1)).
 *   curved: the mesh is read with second-order geometry (tet10, tri6, quad9, hex27) and its non-corner nodes
 *     are moved (test_curve_mesh, amplitude 0.015). F_K is quadratic, so a polynomial of x of degree k is
 *     one of degree 2k in the reference coordinates (in P_2k, or Q_2k on quads and hexes): the space holds
 *     it exactly when 2k <= p. Checked for every monomial of degree k <= p / 2.
 *   In both: the interpolated values at the q-points equal f(x_q) (x_q from geometry_cells) within 1e-12, and
 *   the reference gradients, turned physical with J^-1, equal grad f within 1e-10 (gradients of O(1)
 *   monomials on cells of size ~0.3 are O(10); rounding grows with p).
 *   Controls (the check can fail): one degree more is not reproduced: x^(p+1) on affine cells, and x^(k+1)
 *   (whose pull-back has degree 2k+2 > p) on curved cells, give errors above 1e-11, three orders above the
 *   rounding of the exact cases (< 1e-14); the smallest are 5e-9 (x^9, p = 8, hex block) and 2.7e-10 (x^5,
 *   p = 8, curved quadrilaterals, whose curvature is small).
 *   reference: on the same mesh, through the same kernel, with each of three cells given its own nodes (a
 *     broken dof map e * ndof + i), every monomial of the element's own space in the REFERENCE coordinates
 *     (total degree <= p on simplices, Q_p on quads and hexes) is interpolated exactly: values within 1e-12,
 *     reference gradients within 1e-10. This holds whatever the geometry, curved or not. */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/geometry.h"
#include "io/mesh_read.h"

#include <math.h>
#include <string.h>

static double centre[3], scale[3];

static double ipow(double x, int n) {
    double r = 1.0;
    for (int i = 0; i < n; i++) r *= x;
    return r;
}

/* Monomial of total degree |e| in centred, scaled coordinates, and its gradient in x. */
static double mono_x(const int e[3], const double *x, int d, double g[3]) {
    double t[3], pw[3], v = 1.0;
    for (int a = 0; a < d; a++) t[a] = (x[a] - centre[a]) / scale[a], pw[a] = ipow(t[a], e[a]), v *= pw[a];
    for (int b = 0; b < d; b++) {
        g[b] = e[b] == 0 ? 0.0 : e[b] * ipow(t[b], e[b] - 1) / scale[b];
        for (int a = 0; a < d; a++)
            if (a != b) g[b] *= pw[a];
    }
    return v;
}

/* What the q-points of one cell block need, computed once: tables, kernel view, geometry and positions. */
typedef struct {
    ElementTables t;
    ElemView v;
    double *geo, *xq, *uq, *duq;
} BlockData;

static void block_data(const Mesh *m, const Space *sp, int b, BlockData *bd) {
    int d = m->dim;
    CHECK_OK(tables_create(m->cells[b].shape, sp->order,
                           quadrature_default_degree(sp->order, m->cells[b].order), &bd->t));
    bd->v = test_elem_view(sp, b, &bd->t, 1);
    int64_t nqt = bd->v.nelem * bd->v.nq;
    bd->geo = malloc(sizeof(double) * nqt * GEO_STRIDE(d));
    bd->xq = malloc(sizeof(double) * nqt * 3);
    bd->uq = malloc(sizeof(double) * nqt);
    bd->duq = malloc(sizeof(double) * nqt * d);
    CHECK_OK(geometry_cells(m, b, &bd->t.quad, bd->v.nelem, NULL, bd->geo, bd->xq));
}

static void block_data_free(BlockData *bd) {
    free(bd->geo);
    free(bd->xq);
    free(bd->uq);
    free(bd->duq);
    tables_destroy(&bd->t);
}

/* Largest errors of values and physical gradients of the field with nodal values f(x_i) at the q-points. */
static void global_error(Device *dev, const Mesh *m, const Space *sp, BlockData *bds, const int e[3],
                         double *ev, double *eg) {
    int d = m->dim;
    double *u = malloc(sizeof(double) * (size_t)sp->nnodes), gdummy[3];
    for (int64_t n = 0; n < sp->nnodes; n++) u[n] = mono_x(e, &sp->node_x[3 * n], d, gdummy);
    *ev = *eg = 0.0;
    for (int b = 0; b < m->ncell_blocks; b++) {
        BlockData *bd = &bds[b];
        int64_t nqt = bd->v.nelem * bd->v.nq;
        CHECK_OK(dev->ops.interpolate(dev, &bd->v, u, bd->uq, bd->duq));
        for (int64_t k = 0; k < nqt; k++) {
            double g[3], f = mono_x(e, &bd->xq[3 * k], d, g);
            *ev = fmax(*ev, fabs(bd->uq[k] - f));
            const double *Jinv = &bd->geo[k * GEO_STRIDE(d) + 1];
            for (int bb = 0; bb < d; bb++) {
                double gp = 0.0;
                for (int r = 0; r < d; r++) gp += bd->duq[k * d + r] * Jinv[r * d + bb];
                *eg = fmax(*eg, fabs(gp - g[bb]));
            }
        }
    }
    free(u);
}

/* Every monomial of the element's space in reference coordinates, cell by cell (broken dof map). */
static void reference_check(Device *dev, const Mesh *m, const Space *sp) {
    int p = sp->order;
    for (int b = 0; b < m->ncell_blocks; b++) {
        Shape s = m->cells[b].shape;
        int d = shape_dim(s), nd = lattice_count(s, p);
        ElementTables t;
        CHECK_OK(tables_create(s, p, quadrature_default_degree(p, m->cells[b].order), &t));
        ElemView v = test_elem_view(sp, b, &t, 1);
        if (v.nelem > 3)
            v.nelem = 3; /* the kernel sees nothing of the geometry: three cells are as good as all */
        fem_idx *own = malloc(sizeof(fem_idx) * (size_t)(v.nelem * nd));
        for (int64_t k = 0; k < v.nelem * nd; k++) own[k] = (fem_idx)k;
        v.dofs = own;
        v.nnodes = v.nelem * nd;
        int64_t nqt = v.nelem * v.nq;
        double *u = malloc(sizeof(double) * (size_t)(v.nelem * nd)), *uq = malloc(sizeof(double) * nqt),
               *duq = malloc(sizeof(double) * nqt * d), *nodes = malloc(sizeof(double) * 3 * nd);
        for (int i = 0; i < nd; i++) {
            int lat[3];
            lattice_node(s, p, i, lat);
            lattice_position(s, p, lat, &nodes[3 * i]);
        }
        double ev = 0.0, eg = 0.0, *fq = malloc(sizeof(double) * v.nq),
               *gq = malloc(sizeof(double) * v.nq * 3);
        double saved_centre[3], saved_scale[3];
        memcpy(saved_centre, centre, sizeof centre);
        memcpy(saved_scale, scale, sizeof scale);
        centre[0] = centre[1] = centre[2] = 0.0; /* reference coordinates as they are */
        scale[0] = scale[1] = scale[2] = 1.0;
        for (int mth = 0; mth < nd; mth++) {
            int e[3];
            lattice_node(s, p, mth, e); /* the exponents of the space's monomials are its lattice */
            double g[3];
            for (int i = 0; i < nd; i++) u[i] = mono_x(e, &nodes[3 * i], d, g);
            for (int64_t c = 1; c < v.nelem; c++) memcpy(&u[c * nd], u, sizeof(double) * nd);
            for (int q = 0; q < v.nq; q++) fq[q] = mono_x(e, &t.quad.xi[3 * q], d, &gq[3 * q]);
            CHECK_OK(dev->ops.interpolate(dev, &v, u, uq, duq));
            for (int64_t k = 0; k < nqt; k++) {
                int q = (int)(k % v.nq);
                ev = fmax(ev, fabs(uq[k] - fq[q]));
                for (int a = 0; a < d; a++) eg = fmax(eg, fabs(duq[k * d + a] - gq[3 * q + a]));
            }
        }
        memcpy(centre, saved_centre, sizeof centre);
        memcpy(scale, saved_scale, sizeof scale);
        free(fq);
        free(gq);
        printf("  %s p=%d: %d reference monomials per cell: value error %.2g, gradient error %.2g\n",
               shape_name(s), p, nd, ev, eg);
        CHECK(ev < 1e-12, "%s p=%d: reference monomials interpolated with error %.3g", shape_name(s), p, ev);
        CHECK(eg < 1e-10, "%s p=%d: their reference gradients with error %.3g", shape_name(s), p, eg);
        free(own);
        free(u);
        free(uq);
        free(duq);
        free(nodes);
        tables_destroy(&t);
    }
}

static void check_order(Device *dev, Mesh *m, const char *name, int p, int curved) {
    Space sp;
    CHECK_OK(space_create(m, p, 1, &sp));
    int d = m->dim, k = curved ? p / 2 : p;
    const char *kind = curved ? "curved" : "affine";
    BlockData bds[MESH_MAX_BLOCKS];
    for (int b = 0; b < m->ncell_blocks; b++) block_data(m, &sp, b, &bds[b]);
    /* every monomial of total degree <= k */
    double ev = 0.0, eg = 0.0;
    int e[3], count = 0;
    for (e[2] = 0; e[2] <= (d == 3 ? k : 0); e[2]++)
        for (e[1] = 0; e[1] <= k - e[2]; e[1]++)
            for (e[0] = 0; e[0] <= k - e[1] - e[2]; e[0]++) {
                double v1, g1;
                global_error(dev, m, &sp, bds, e, &v1, &g1);
                ev = fmax(ev, v1);
                eg = fmax(eg, g1);
                count++;
            }
    CHECK(ev < 1e-12, "%s p=%d %s: %d monomials of degree <= %d in x interpolated with error %.3g", name, p,
          kind, count, k, ev);
    CHECK(eg < 1e-10, "%s p=%d %s: their gradients with error %.3g", name, p, kind, eg);
    /* control: one degree more */
    int e2[3] = {k + 1, 0, 0};
    double cv, cg;
    global_error(dev, m, &sp, bds, e2, &cv, &cg);
    CHECK(cv > 1e-11, "%s p=%d %s: x^%d is interpolated to %.3g, yet it is not in the space", name, p, kind,
          k + 1, cv);
    printf("%s p=%d %s: %d monomials of degree <= %d: value error %.2g, gradient error %.2g; x^%d: %.2g\n",
           name, p, kind, count, k, ev, eg, k + 1, cv);
    for (int b = 0; b < m->ncell_blocks; b++) block_data_free(&bds[b]);
    reference_check(dev, m, &sp);
    space_destroy(&sp);
}

int main(int argc, char **argv) {
    if (argc < 5)
        return fprintf(stderr, "usage: %s MESH.geo GEOMETRIC_ORDER affine|curved P...\n", argv[0]), 2;
    int g = atoi(argv[2]), curved = strcmp(argv[3], "curved") == 0;
    Device dev;
    CHECK_OK(cpu_device_create(&dev, 1, ASSEMBLE_ATOMIC));
    Mesh m;
    MeshReadOptions mo = {.order = g};
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    if (curved) test_curve_mesh(&m, 0.015);
    double lo[3], hi[3];
    mesh_bounding_box(&m, lo, hi);
    for (int a = 0; a < 3; a++)
        centre[a] = 0.5 * (lo[a] + hi[a]), scale[a] = fmax(0.5 * (hi[a] - lo[a]), 1e-300);
    for (int i = 4; i < argc; i++) check_order(&dev, &m, argv[1], atoi(argv[i]), curved);
    mesh_destroy(&m);
    device_destroy(&dev);
    return test_result("test_interpolate_mesh");
}
