/* A steady sample solved over MPI ranks (2 or 3 under mpiexec) against the same problem solved in one process
 * on every rank, on the CPU:
 *   - the distributed Jacobian action (forward halo, local apply, reverse-add, Dirichlet rows on owned dofs)
 *     equals the one-process J x at the same global dofs to 1e-12 relative (to the largest entry); so does
 * the consistent action (op_jacobian_consistent: the input at every local dof, one share exchange) at every
 *     local dof, ghosts included, whose copies hold the same bits on every rank;
 *   - Newton with CG and Jacobi (the diagonal reverse-added too) gives the one-process solution to 1e-10
 *     relative, in a number of CG iterations within 10% of one process's;
 *   - with `multigrid`: Newton with CG and p-multigrid, whose coarse level is BoomerAMG on both sides (over
 *     all ranks, and in one process on a communicator of its own), gives the one-process solution to 1e-10
 *     relative (both solves converge to CG rtol 1e-12), in a number of CG iterations within the fraction of
 *     one process's that the last argument allows, plus one: BoomerAMG's hierarchy over ranks is not the
 *     one-process hierarchy (parallel coarsening, Gauss-Seidel within each rank), so the counts differ a
 * little.
 *
 *   mpiexec -n N test_mpi_solve PROBLEM.xml ORDER [multigrid FRACTION] */
#include "common/femto_test.h"
#include "fem/comm.h"
#include "fem/error.h"
#include "fem/halo.h"
#include "fem/partition.h"
#include "fem/solvers/coarse.h"
#include "io/mesh_read.h"
#include "io/problem.h"
#include "physics/physics.h"

#include <math.h>
#include <string.h>

typedef struct {
    double *Jx, *u; /* host, every local dof */
    double *Jxc;    /* op_jacobian_consistent's J x of the same x given at every local dof, ghosts too */
    int moved;      /* copies of Jxc that a forward changed: not every copy the same bits */
    int iterations;
} Case;

static double field(int64_t gdof) {
    return 0.5 + 0.25 * sin(0.37 * (double)gdof) + 1e-3 * (double)(gdof % 97);
}

/* J x at the initial state and the solution, on sp (the whole space, or a rank's with its halo). */
static void solve_case(Device *dev, const Problem *pb, const PhysicsType *t, const Space *sp, Model *md,
                       Halo *halo, const int64_t *gdof, PcType pc, Case *c) {
    Operator op;
    CHECK_OK(op_create(&op, dev, sp, &md->phys, pb->quadrature_degree, md->cell_tags, md->facet_tags));
    op_set_halo(&op, halo);
    CHECK_OK(op_set_dirichlet(&op, md->ndir, md->dir_dofs));
    int64_t n = sp->ndofs, nown = sp->ndofs_owned;
    Vec u, x, y;
    CHECK_OK(vec_create_split(&u, dev, n, nown));
    CHECK_OK(vec_duplicate(&x, &u));
    CHECK_OK(vec_duplicate(&y, &u));
    c->u = malloc(sizeof(double) * (size_t)n);
    c->Jx = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) c->u[i] = t->initial(pb);
    for (int64_t i = 0; i < md->ndir; i++) c->u[md->dir_dofs[i]] = md->dir_values[i];
    CHECK_OK(vec_upload(&u, c->u));
    CHECK_OK(op_residual(&op, &u, &y)); /* the state J is taken at */
    for (int64_t i = 0; i < n; i++)
        c->Jx[i] = i < nown ? field(gdof ? gdof[i] : i) : -1e30; /* ghosts: stale */
    CHECK_OK(vec_upload(&x, c->Jx));
    CHECK_OK(op_jacobian(&op, &x, &y));
    CHECK_OK(vec_download(&y, c->Jx));
    /* the consistent action: x given at every local dof (as multigrid's cycle and the Krylov solve keep it),
     * J x summed into every copy by one share exchange, the same bits on every rank */
    c->Jxc = malloc(sizeof(double) * (size_t)n);
    double *again = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) c->Jxc[i] = field(gdof ? gdof[i] : i);
    CHECK_OK(vec_upload(&x, c->Jxc));
    CHECK_OK(op_jacobian_consistent(&op, &x, &y));
    CHECK_OK(vec_download(&y, c->Jxc));
    if (halo) CHECK_OK(halo_forward(halo, &y));
    CHECK_OK(vec_download(&y, again));
    c->moved = 0;
    for (int64_t i = 0; i < n; i++) c->moved += again[i] != c->Jxc[i];
    free(again);
    NewtonSettings ns = {.rtol = 1e-11,
                         .max_iterations = 20,
                         .line_search = 1,
                         .linear = md->linear,
                         .pc = {.type = pc, .coarse = COARSE_BOOMERAMG},
                         .ksp = {.type = KSP_CG, .rtol = 1e-12, .max_iterations = 20000}};
    Newton nw;
    NewtonResult res;
    CHECK_OK(newton_create(&nw, &op, &ns, NULL, NULL));
    CHECK_OK(newton_solve(&nw, &u, NULL, &res));
    CHECK_OK(vec_download(&u, c->u));
    c->iterations = res.linear_iterations;
    newton_destroy(&nw);
    vec_destroy(&u);
    vec_destroy(&x);
    vec_destroy(&y);
    op_destroy(&op);
}

/* max |a_i - b_{g(i)}| over the owned i of every rank (all local i: ghosts too), relative to max |b|. */
static double local_difference(const Dist *d, const double *a, const double *b, int64_t nglobal, int all) {
    int64_t n = all ? d->space.ndofs : d->space.ndofs_owned, *g = malloc(sizeof(int64_t) * (size_t)(n + 1));
    dist_global_dofs(d, n, g);
    int nr = comm_size();
    double *each = calloc((size_t)nr, sizeof(double)), diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) each[comm_rank()] = fmax(each[comm_rank()], fabs(a[i] - b[g[i]]));
    CHECK_OK(comm_sum(each, nr)); /* each rank's largest difference, on every rank */
    for (int r = 0; r < nr; r++) diff = fmax(diff, each[r]);
    for (int64_t i = 0; i < nglobal; i++) scale = fmax(scale, fabs(b[i]));
    free(each);
    free(g);
    return diff / scale;
}

/* The model femto-app makes on a rank's part (the physics' create on the local space, then model_join_part)
 * has the Dirichlet list and the cells' materials of the whole model mapped to the part (model_localize),
 * exactly, and the whole model's count of constrained dofs. */
static void check_model_on_part(const Problem *pb, const PhysicsType *t, const Dist *d, const Model *gmd,
                                const Model *lmd) {
    Model pmd;
    CHECK_OK(t->create(pb, &d->space, &pmd));
    CHECK_OK(model_join_part(&pmd, d));
    int same = pmd.ndir == lmd->ndir;
    for (int64_t i = 0; same && i < pmd.ndir; i++)
        same = pmd.dir_dofs[i] == lmd->dir_dofs[i] && pmd.dir_values[i] == lmd->dir_values[i];
    CHECK(same,
          "rank %d: the model made on the part constrains %lld dofs, the whole model's mapped to it %lld "
          "(or other dofs or values)",
          d->rank, (long long)pmd.ndir, (long long)lmd->ndir);
    for (int b = 0; b < d->mesh.ncell_blocks; b++)
        for (int64_t c = 0; c < d->mesh.cells[b].count; c++)
            if (pmd.cell_tags[b][c] != lmd->cell_tags[b][c]) same = 0;
    CHECK(same, "rank %d: the model made on the part gives some cell another material", d->rank);
    int64_t n;
    CHECK_OK(model_count_dirichlet(&pmd, &n));
    CHECK(n == gmd->ndir, "the ranks' models constrain %lld dofs in all, the whole model %lld", (long long)n,
          (long long)gmd->ndir);
    model_destroy(&pmd);
}

/* The same on a partition that deals the cells out in turn (cell c to rank c mod nranks): most nodes are
 * shared, and many a rank holds a node of a fixed boundary through a cell that does not carry the boundary's
 * facet, which only model_join_part's exchange can tell it (on a mesh of simplices the exchange must add
 * constrained dofs somewhere). */
static void check_model_on_scattered_part(const Problem *pb, const PhysicsType *t, const Space *gsp,
                                          const Model *gmd, int rank, int nranks) {
    int64_t ncells = partition_ncells(gsp->mesh);
    int32_t *part = malloc(sizeof(int32_t) * (size_t)(ncells + 1));
    for (int64_t c = 0; c < ncells; c++) part[c] = (int32_t)(c % nranks);
    Dist d;
    CHECK_OK(dist_create(&d, gsp, part, rank, nranks));
    Model lmd, own;
    CHECK_OK(model_localize(gmd, &d, &lmd));
    CHECK_OK(t->create(pb, &d.space, &own)); /* before the exchange: what the rank's own facets constrain */
    double added = (double)(lmd.ndir - own.ndir);
    CHECK_OK(comm_sum(&added, 1));
    /* (on a mesh of simplices; on structured hexahedra every cell at a fixed node carries a fixed facet) */
    CHECK(added > 0 || shape_is_tensor(gsp->cells[0].shape),
          "the scattered partition leaves no constrained node to be learnt from another rank");
    check_model_on_part(pb, t, &d, gmd, &lmd);
    if (rank == 0)
        printf("scattered partition: the ranks learnt %.0f constrained dofs from each other\n", added);
    model_destroy(&own);
    model_destroy(&lmd);
    dist_destroy(&d);
    free(part);
}

int main(int argc, char **argv) {
    int mg = argc == 5 && strcmp(argv[3], "multigrid") == 0;
    if (argc != 3 && !mg) {
        fprintf(stderr, "usage: mpiexec -n N test_mpi_solve PROBLEM.xml ORDER [multigrid FRACTION]\n");
        return 2;
    }
    PcType pc = mg ? PC_MULTIGRID : PC_JACOBI;
    double allowed = mg ? atof(argv[4]) : 0.1, slack = mg ? 1 : 0;
    static Problem pb;
    CHECK_OK(problem_read(argv[1], &pb));
    pb.order = atoi(argv[2]);
    Mesh m = {0};
    MeshReadOptions mo = {0};
    CHECK_OK(mesh_read(pb.mesh_file, &mo, &m)); /* before MPI: the reader forks */
    CHECK_OK(comm_ensure_init());
    int rank = comm_rank(), nranks = comm_size();
    const PhysicsType *t = NULL;
    for (int i = 0; i < physics_ntypes && !t; i++)
        if (problem_has_physics(&pb, physics_types[i]->name)) t = physics_types[i];
    Space gsp;
    CHECK_OK(space_create(&m, pb.order, t->components ? m.dim : 1, &gsp));
    Model gmd;
    CHECK_OK(t->create(&pb, &gsp, &gmd));
    Device dev;
    CHECK_OK(test_device(&dev, DEV_CPU, 1, ASSEMBLE_GATHER));
    Case one, split;
    solve_case(&dev, &pb, t, &gsp, &gmd, NULL, NULL, pc, &one);

    int32_t *part = malloc(sizeof(int32_t) * (size_t)partition_ncells(&m));
    CHECK_OK(partition_mesh_shared(&m, nranks, part));
    Dist d;
    CHECK_OK(dist_create(&d, &gsp, part, rank, nranks));
    Model lmd;
    CHECK_OK(model_localize(&gmd, &d, &lmd));
    check_model_on_part(&pb, t, &d, &gmd, &lmd);
    check_model_on_scattered_part(&pb, t, &gsp, &gmd, rank, nranks);
    Halo halo;
    CHECK_OK(halo_create(&halo, &d, &dev, gsp.ncomp));
    int64_t *gdof = malloc(sizeof(int64_t) * (size_t)d.space.ndofs);
    dist_global_dofs(&d, d.space.ndofs, gdof);
    solve_case(&dev, &pb, t, &d.space, &lmd, &halo, gdof, pc, &split);

    double jx = local_difference(&d, split.Jx, one.Jx, gsp.ndofs, 0);
    double du = local_difference(&d, split.u, one.u, gsp.ndofs, 0);
    double jxc = local_difference(&d, split.Jxc, one.Jxc, gsp.ndofs, 1);
    CHECK(jx <= 1e-12, "J x over %d ranks differs from one process's by %.3g relative (1e-12 allowed)",
          nranks, jx);
    CHECK(jxc <= 1e-12,
          "the consistent J x over %d ranks differs from one process's by %.3g relative at some local dof, "
          "owned or ghost (1e-12 allowed)",
          nranks, jxc);
    CHECK(split.moved == 0,
          "rank %d: %d copies of the consistent J x differ in their bits from their owners'", rank,
          split.moved);
    CHECK(du <= 1e-10,
          "the solution over %d ranks differs from one process's by %.3g relative (1e-10 allowed)", nranks,
          du);
    CHECK(abs(split.iterations - one.iterations) <= allowed * one.iterations + slack,
          "%d CG iterations over %d ranks, %d in one process (%.0f%%%s allowed)", split.iterations, nranks,
          one.iterations, 100 * allowed, slack ? " + 1" : "");
    if (rank == 0)
        printf(
            "%s p=%d on %d ranks: %lld dofs, J x differs by %.2e (consistent, every copy: %.2e), u by %.2e; "
            "CG + %s %d iterations (one process %d)\n",
            argv[1], pb.order, nranks, (long long)gsp.ndofs, jx, jxc, du, pc_name(pc), split.iterations,
            one.iterations);
    double failures = test_failures;
    CHECK_OK(comm_sum(&failures, 1));
    test_failures = (int)failures;
    halo_destroy(&halo);
    model_destroy(&lmd);
    dist_destroy(&d);
    model_destroy(&gmd);
    space_destroy(&gsp);
    device_destroy(&dev);
    mesh_destroy(&m);
    free(part), free(gdof);
    free(one.u), free(one.Jx), free(one.Jxc), free(split.u), free(split.Jx), free(split.Jxc);
    return rank == 0 ? test_result("test_mpi_solve") : (test_failures ? 1 : 0);
}
