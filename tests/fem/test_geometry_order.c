/* The order of a mesh block's geometric map (mesh_block_geometry_order) and the quadrature it chooses.
 *
 * Expected:
 *   - a box read with second-order cells has straight sides: its tetrahedra and boundary triangles are affine
 *     (order 1); the same cells with their edge nodes moved (test_curve_mesh) are curved (order 2), and so are
 *     a ball's, whose boundary nodes lie on the sphere; hexahedra keep their order (not affine);
 *   - the meshes before a refinement (Mesh.parent: order-2 cells that hold the refined mesh's corners) are
 *     affine, at every level of the chain;
 *   - linear elasticity of order 1 on such a parent (multigrid's coarser levels) runs the exact rule for
 *     affine cells (one point), and its Jacobian action equals the one of the rule a curved order-2 map
 *     needs (degree 2p + g - 1 = 3) to 1e-12: the cheaper rule changes nothing but the time. */
#include "common/femto_test.h"
#include "elasticity/elas_test.h"

#include <math.h>

static void check_blocks(const Mesh *m, int want, const char *what) {
    for (int b = 0; b < m->ncell_blocks; b++) {
        int g = mesh_block_geometry_order(m, &m->cells[b]);
        printf("%s: cell block %d (%s, order %d, %lld cells): geometric order %d\n", what, b,
               shape_name(m->cells[b].shape), m->cells[b].order, (long long)m->cells[b].count, g);
        CHECK(g == want, "%s: cell block %d has geometric order %d, expected %d", what, b, g, want);
    }
    for (int b = 0; b < m->nfacet_blocks; b++) {
        int g = mesh_block_geometry_order(m, &m->facets[b]);
        CHECK(m->facets[b].count == 0 || g == want, "%s: facet block %d has geometric order %d, expected %d",
              what, b, g, want);
    }
}

static Mesh read(const char *geo, int order, int refine) {
    Mesh m;
    MeshReadOptions mo = {.order = order, .refine = refine};
    CHECK_OK(mesh_read(test_mesh(geo), &mo, &m));
    return m;
}

/* J v of linear elasticity of order 1 on mesh m with quadrature degree qdegree (0: the operator's choice);
 * nq: the points of cell block 0's rule. */
static double *jacobian_action(Device *d, const Space *sp, Model *md, const double *v, int qdegree, int *nq) {
    Operator op;
    CHECK_OK(op_create(&op, d, sp, &md->phys, qdegree, md->cell_tags, md->facet_tags));
    CHECK_OK(op_set_dirichlet(&op, md->ndir, md->dir_dofs));
    *nq = op.cells[0].basis.tables.nq;
    double *Jv = malloc(sizeof(double) * (size_t)sp->ndofs);
    CHECK_OK(op_jacobian(&op, TEST_VEC(d, sp->ndofs, (double *)v), TEST_VEC(d, sp->ndofs, Jv)));
    op_destroy(&op);
    return Jv;
}

int main(void) {
    Mesh m = read("cube_tet_coarse.geo", 2, 1);
    check_blocks(&m, 1, "box, order-2 cells");
    test_curve_mesh(&m, 0.015);
    check_blocks(&m, 2, "box, order-2 cells moved off the straight sides");
    mesh_destroy(&m);
    m = read("ball_tet.geo", 2, 0);
    CHECK(mesh_block_geometry_order(&m, &m.cells[0]) == 2, "the ball's cells are not curved");
    mesh_destroy(&m);
    m = read("cube_hex.geo", 2, 0);
    check_blocks(&m, 2, "box of hexahedra, order-2 cells");
    mesh_destroy(&m);

    m = read("cube_tet_coarse.geo", 1, 2);
    check_blocks(&m, 1, "box refined twice");
    CHECK(mesh_parent_count(&m) == 2, "%d meshes before the refinements, expected 2", mesh_parent_count(&m));
    for (Mesh *p = m.parent; p; p = p->parent) {
        CHECK(p->cells[0].order == 2, "a parent mesh's cells are of order %d, expected 2", p->cells[0].order);
        check_blocks(p, 1, "the mesh before a refinement");
    }

    /* the operator on the parent: one point against degree 3's, the same action */
    const Mesh *parent = m.parent;
    Device d;
    CHECK_OK(test_device(&d, DEV_CPU, 1, ASSEMBLE_GATHER));
    Space sp;
    CHECK_OK(space_create(parent, 1, 3, &sp));
    ElasticMaterial mat = elas_material(2e5, 0.3, 1000, 0, 0);
    ElasticBc bcs[2] = {elas_bc(ELASTIC_BC_FIXED, "left", 7, 0, 0, 0),
                        elas_bc(ELASTIC_BC_TRACTION, "right", 0, 10.0, -20.0, 30.0)};
    Model md;
    CHECK_OK(elasticity_model_create(elas_problem(ELASTIC_LINEAR, &mat, 2, bcs), &sp, &md));
    double *v = malloc(sizeof(double) * (size_t)sp.ndofs);
    uint64_t seed = 11;
    for (int64_t i = 0; i < sp.ndofs; i++) v[i] = test_rand(&seed) - 0.5;
    int nq_auto, nq_3;
    double *a = jacobian_action(&d, &sp, &md, v, 0, &nq_auto), *b = jacobian_action(&d, &sp, &md, v, 3, &nq_3);
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < sp.ndofs; i++) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
    double rel = sqrt(num / den);
    printf("p = 1 on the mesh before the refinement (%lld cells): %d point(s) a cell against %d at degree 3, "
           "J v differs by %.2e\n",
           (long long)parent->cells[0].count, nq_auto, nq_3, rel);
    CHECK(nq_auto == 1, "the operator on affine order-2 cells takes %d points a cell, expected 1", nq_auto);
    CHECK(nq_3 > 1, "degree 3 has %d point(s)", nq_3);
    CHECK(rel <= 1e-12, "J v with the affine rule differs from degree 3's by %.3e", rel);
    free(a), free(b), free(v);
    model_destroy(&md);
    space_destroy(&sp);
    device_destroy(&d);
    mesh_destroy(&m);
    return test_result("test_geometry_order");
}
