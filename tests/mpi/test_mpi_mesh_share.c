/* Rank 0's mesh in outline on the other ranks (io/mesh_read.h mesh_share), run under mpiexec with 2 or 3
 * ranks: rank 0 alone reads the mesh (MESH, refined REFINE times, so that it has parents), the others receive
 * its outline, which must
 *   - say it is one, and hold no node, no cell's nodes, no topology;
 *   - have rank 0's path, dimension, node count, cell and facet blocks (element type, shape, order, nodes
 *     per element, count) and physical groups (dimension, tag, name, entities), and as many parents, each
 *     the same of rank 0's parent;
 *   - give the outline of a space (space_outline) with rank 0's space's blocks and, with rank 0's node count,
 *     its size;
 * and a mesh rank 0 cannot read ends every rank with rank 0's code and sentence.
 *
 *   mpiexec -n N test_mpi_mesh_share MESH REFINE */
#include "common/femto_test.h"
#include "fem/comm.h"
#include "fem/error.h"
#include "io/mesh_read.h"

#include <string.h>

/* What rank 0 says about one mesh of the chain (as doubles, for comm_sum), against this rank's. */
static void check_mesh(const Mesh *m, int level) {
    int rank = comm_rank();
    enum { N = 6 + 5 * 2 * MESH_MAX_BLOCKS };
    double mine[N] = {0}, root[N] = {0};
    int k = 0;
    mine[k++] = m->dim, mine[k++] = (double)m->nnodes, mine[k++] = m->ncell_blocks,
    mine[k++] = m->nfacet_blocks;
    mine[k++] = m->ngroups, mine[k++] = strlen(m->path);
    for (int b = 0; b < m->ncell_blocks + m->nfacet_blocks; b++) {
        const MeshBlock *mb = b < m->ncell_blocks ? &m->cells[b] : &m->facets[b - m->ncell_blocks];
        mine[k++] = mb->type ? mb->type->gmsh_type : -1, mine[k++] = mb->shape, mine[k++] = mb->order;
        mine[k++] = mb->nnodes, mine[k++] = (double)mb->count;
    }
    if (rank == 0) memcpy(root, mine, sizeof mine);
    CHECK_OK(comm_sum(root, N));
    CHECK(memcmp(root, mine, sizeof mine) == 0,
          "rank %d: mesh %d of the chain: counts or blocks differ from rank 0's", rank, level);
    /* the groups, one by one, as rank 0 has them */
    for (int g = 0; g < m->ngroups && g < (int)root[4]; g++) {
        const PhysicalGroup *pg = &m->groups[g];
        double h[4] = {pg->dim, pg->tag, pg->nentities, 0}, h0[4] = {0};
        for (int e = 0; e < pg->nentities; e++) h[3] += (e + 1.0) * pg->entities[e];
        if (rank == 0) memcpy(h0, h, sizeof h);
        CHECK_OK(comm_sum(h0, 4));
        char name[MESH_NAME_MAX];
        memcpy(name, pg->name, sizeof name);
        CHECK_OK(comm_bcast(name, sizeof name, 0));
        CHECK(memcmp(h, h0, sizeof h) == 0 && strcmp(name, pg->name) == 0,
              "rank %d: group %d ('%s') differs from rank 0's ('%s')", rank, g, pg->name, name);
    }
    char path[sizeof m->path];
    memcpy(path, m->path, sizeof path);
    CHECK_OK(comm_bcast(path, sizeof path, 0));
    CHECK(strcmp(path, m->path) == 0, "rank %d: path '%s', rank 0's '%s'", rank, m->path, path);
    if (rank == 0) {
        CHECK(!m->outline && m->x && m->has_topology, "rank 0 does not hold its whole mesh");
    } else {
        int empty = m->outline && !m->x && !m->node_tag && !m->has_topology;
        for (int b = 0; b < m->ncell_blocks; b++) empty &= !m->cells[b].nodes && !m->cells[b].entity;
        CHECK(empty, "rank %d: mesh %d of the chain is not an outline (flag %d, nodes %p)", rank, level,
              m->outline, (void *)m->x);
    }
}

static void check_space(const Mesh *m, int order) {
    int rank = comm_rank();
    Space sp;
    CHECK_OK(rank == 0 ? space_create(m, order, 2, &sp) : space_outline(m, order, 2, 0, &sp));
    int64_t n = sp.nnodes;
    CHECK_OK(comm_bcast(&n, sizeof n, 0));
    Space o;
    CHECK_OK(space_outline(m, order, 2, n, &o));
    int same = o.nnodes == sp.nnodes || rank != 0;
    same &= o.ndofs == 2 * n && o.ncell_blocks == sp.ncell_blocks && o.nfacet_blocks == sp.nfacet_blocks;
    for (int b = 0; b < sp.ncell_blocks; b++)
        same &= o.cells[b].shape == sp.cells[b].shape && o.cells[b].ndof == sp.cells[b].ndof &&
                o.cells[b].count == sp.cells[b].count && !o.cells[b].dofs;
    for (int b = 0; b < sp.nfacet_blocks; b++)
        same &= o.facets[b].ndof == sp.facets[b].ndof && o.facets[b].count == sp.facets[b].count;
    CHECK(same, "rank %d: the space's outline (order %d) differs from rank 0's space", rank, order);
    if (rank != 0) {
        Space s;
        CHECK(space_create(m, order, 1, &s) == FEM_ERR_INTERNAL, "rank %d: a space made on an outline", rank);
        fem_clear_error();
    }
    space_destroy(&o);
    space_destroy(&sp);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: mpiexec -n N test_mpi_mesh_share MESH REFINE\n");
        return 2;
    }
    const char *path = strchr(argv[1], '/') ? argv[1] : test_mesh(argv[1]);
    Mesh m = {0}, bad = {0};
    MeshReadOptions mo = {.refine = atoi(argv[2])};
    int root = comm_launch_rank() == 0;
    int status = root ? mesh_read(path, &mo, &m) : FEM_OK; /* before MPI: the reader forks */
    int bad_status = root ? mesh_read("/nonexistent/mesh.msh", NULL, &bad) : FEM_OK;
    char bad_message[1024];
    snprintf(bad_message, sizeof bad_message, "%s", root ? fem_last_error() : "");
    fem_clear_error();
    CHECK_OK(comm_ensure_init());
    CHECK_OK(mesh_share(&m, status));
    int nlevels = 0;
    for (const Mesh *l = &m; l; l = l->parent, nlevels++) check_mesh(l, nlevels);
    double levels = nlevels, levels0 = comm_rank() == 0 ? nlevels : 0;
    CHECK_OK(comm_sum(&levels0, 1));
    CHECK(levels == levels0 && (mo.refine == 0 || nlevels > 1), "rank %d: %d meshes in the chain, rank 0 %g",
          comm_rank(), nlevels, levels0);
    check_space(&m, 1);
    check_space(&m, 2);
    /* rank 0's failure reaches every rank: its code and sentence (rank 0's, as mesh_read left it) */
    if (comm_rank() == 0) fem_fail(bad_status, "%s", bad_message);
    int got = mesh_share(&bad, bad_status);
    CHECK_OK(comm_bcast(bad_message, sizeof bad_message, 0));
    CHECK(got == FEM_ERR_INPUT && bad_status == (comm_rank() == 0 ? got : FEM_OK) &&
              strcmp(fem_last_error(), bad_message) == 0,
          "rank %d: rank 0's failed read gave %d: %s (rank 0: %s)", comm_rank(), got, fem_last_error(),
          bad_message);
    fem_clear_error();
    if (comm_rank() == 0)
        printf("%s refined %s: %d meshes in outline on the other ranks, %lld nodes the finest\n", path,
               argv[2], nlevels, (long long)m.nnodes);
    double failures = test_failures;
    CHECK_OK(comm_sum(&failures, 1));
    test_failures = (int)failures;
    mesh_destroy(&m);
    mesh_destroy(&bad);
    return comm_rank() == 0 ? test_result("test_mpi_mesh_share") : (test_failures ? 1 : 0);
}
