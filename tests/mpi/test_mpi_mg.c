/* p-multigrid's pieces over MPI ranks (2 or 3 under mpiexec) against the same pieces in one process on every
 * rank, on the CPU:
 *   transfer MESH FINE COARSE NCOMP: the rank's parts of the spaces of both orders (dist_create_order) with
 *     their halos; prolongation and restriction of a field given on owned dofs only (the ghosts stale) equal
 *     one process's at the same global dofs to 1e-12 relative (to the largest entry), owned AND ghost dofs
 * for prolongation (it computes both), owned dofs for restriction (the ghosts' partial sums went to their
 *     owners: they must be 0);
 *   matrix PROBLEM.xml: the order-1 Jacobian as BoomerAMG receives it over ranks (each rank's rows, ghosts'
 *     partial rows, rank-contiguous numbers; mg_coarse_matrix), mapped back to the global dofs and summed
 * over the ranks, equals the one-process assembled matrix entry by entry to 1e-12 relative (to the largest);
 *     the contiguous numbers of each rank's own dofs are first .. first + nowned - 1 and cover 0 .. n - 1;
 *     and that matrix solved by CHOLMOD gathered to rank 0 equals one process's solve to 1e-12 (ghosts 0).
 *
 *   mpiexec -n N test_mpi_mg transfer MESH FINE COARSE NCOMP [SPACE_NCOMP]   (a scalar field on a vector space,
 *     as multigrid moves an auxiliary field: NCOMP 1, SPACE_NCOMP 3)
 *   mpiexec -n N test_mpi_mg matrix PROBLEM.xml */
#include "common/femto_test.h"
#include "fem/comm.h"
#include "fem/error.h"
#include "fem/halo.h"
#include "fem/partition.h"
#include "fem/solvers/assemble.h"
#include "fem/solvers/coarse.h"
#include "fem/solvers/multigrid.h"
#include "fem/transfer.h"
#include "io/mesh_read.h"
#include "io/problem.h"
#include "physics/physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double field(int64_t gdof) {
    return 0.5 + 0.25 * sin(0.37 * (double)gdof) + 1e-3 * (double)(gdof % 97);
}

/* max over ranks of |local[i] - global[g[i]]| over the first n local dofs, relative to max |global|. */
static double difference(const double *local, const int64_t *g, int64_t n, const double *global,
                         int64_t nglobal) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) diff = fmax(diff, fabs(local[i] - global[g[i]]));
    for (int64_t i = 0; i < nglobal; i++) scale = fmax(scale, fabs(global[i]));
    int nr = comm_size();
    double *each = calloc((size_t)nr, sizeof(double));
    each[comm_rank()] = diff;
    CHECK_OK(comm_sum(each, nr));
    for (int r = 0; r < nr; r++) diff = fmax(diff, each[r]);
    free(each);
    return diff / scale;
}

/* in = field on the first nset entries (the rest stale), out = the transfer's result (host). */
static void apply(int restrict_, Transfer *t, Vec *in, Vec *out, const int64_t *g, int64_t nset,
                  double *host_out) {
    double *x = malloc(sizeof(double) * (size_t)in->n);
    for (int64_t i = 0; i < in->n; i++) x[i] = i < nset ? field(g ? g[i] : i) : -1e30;
    CHECK_OK(vec_upload(in, x));
    CHECK_OK(restrict_ ? transfer_restrict(t, in, out) : transfer_prolong(t, in, out));
    CHECK_OK(vec_download(out, host_out));
    free(x);
}

static int64_t *global_dofs(const Dist *d) {
    int64_t *g = malloc(sizeof(int64_t) * (size_t)(d->space.ndofs + 1));
    dist_global_dofs(d, d->space.ndofs, g);
    return g;
}

/* The global numbers of d's nodes with nc components each (nc may differ from the space's: a scalar field
 * transferred on a vector space, as multigrid moves an auxiliary field). */
static int64_t *global_numbers(const Dist *d, int nc) {
    int64_t n = d->space.nnodes * nc, *g = malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) g[i] = d->node_global[i / nc] * nc + i % nc;
    return g;
}

/* Transfers of nc components between the spaces of orders pf and pc with snc components (snc = nc, or a
 * scalar field's transfer on a vector space, snc > nc = 1). */
static void check_transfer(Mesh *m, int pf, int pc, int nc, int snc, Device *dev) {
    Space gf, gc;
    CHECK_OK(space_create(m, pf, snc, &gf));
    CHECK_OK(space_create(m, pc, snc, &gc));
    Transfer t1, td;
    CHECK_OK(transfer_create(&t1, dev, &gf, &gc, nc));
    int32_t *part = malloc(sizeof(int32_t) * (size_t)partition_ncells(m));
    CHECK_OK(partition_mesh_shared(m, comm_size(), part));
    Dist df, dc;
    CHECK_OK(dist_create(&df, &gf, part, comm_rank(), comm_size()));
    CHECK_OK(dist_create_order(&dc, &df, pc));
    Halo hf, hc;
    CHECK_OK(halo_create(&hf, &df, dev, nc));
    CHECK_OK(halo_create(&hc, &dc, dev, nc));
    CHECK_OK(transfer_create(&td, dev, &df.space, &dc.space, nc));
    CHECK_OK(transfer_set_halo(&td, &hf, &hc));
    /* the element path's weights have the transfer's components, not the space's (they once had the space's,
     * and the scalar field's transfer read and wrote past a host array: an intermittent crash of the thermal
     * bar); the nodal path's restriction has a row for every coarse node */
    if (!td.nodal)
        CHECK(td.inv_mult_all_f.n == df.space.nnodes * nc, "the multiplicity weights have %lld entries, not %lld",
              (long long)td.inv_mult_all_f.n, (long long)(df.space.nnodes * nc));
    else
        CHECK(td.PT.nrows == dc.space.nnodes, "the restriction has %lld rows, not %lld", (long long)td.PT.nrows,
              (long long)dc.space.nnodes);
    int64_t *g_f = global_numbers(&df, nc), *g_c = global_numbers(&dc, nc);
    const int64_t nf1 = gf.nnodes * nc, nc1 = gc.nnodes * nc;
    Vec f1, c1, fd, cd;
    CHECK_OK(vec_create(&f1, dev, nf1));
    CHECK_OK(vec_create(&c1, dev, nc1));
    CHECK_OK(vec_create_split(&fd, dev, df.space.nnodes * nc, df.space.nnodes_owned * nc));
    CHECK_OK(vec_create_split(&cd, dev, dc.space.nnodes * nc, dc.space.nnodes_owned * nc));
    double *one_f = malloc(sizeof(double) * (size_t)nf1), *one_c = malloc(sizeof(double) * (size_t)nc1);
    double *d_f = malloc(sizeof(double) * (size_t)fd.n), *d_c = malloc(sizeof(double) * (size_t)cd.n);
    /* consistent inputs (every ghost its owner's value) and outputs: every local entry, ghosts included,
     * is compared with one process's */
    apply(0, &t1, &c1, &f1, NULL, nc1, one_f);
    apply(0, &td, &cd, &fd, g_c, cd.n, d_f);
    double dp = difference(d_f, g_f, fd.n, one_f, nf1);
    apply(1, &t1, &f1, &c1, NULL, nf1, one_c);
    apply(1, &td, &fd, &cd, g_f, fd.n, d_c);
    double dr = difference(d_c, g_c, cd.n, one_c, nc1);
    CHECK(dp <= 1e-12, "prolongation p=%d->%d over %d ranks differs from one process's by %.3g relative", pc,
          pf, comm_size(), dp);
    CHECK(dr <= 1e-12, "restriction p=%d->%d over %d ranks differs from one process's by %.3g relative", pf,
          pc, comm_size(), dr);
    /* the restriction's copies of a coarse dof hold the same bits: a forward changes none of them */
    double *again = malloc(sizeof(double) * (size_t)cd.n);
    CHECK_OK(halo_forward(&hc, &cd));
    CHECK_OK(vec_download(&cd, again));
    int64_t moved = 0;
    for (int64_t i = 0; i < cd.n; i++) moved += again[i] != d_c[i];
    CHECK(moved == 0, "rank %d: %lld copies of restricted dofs differ from their owners' values", comm_rank(),
          (long long)moved);
    free(again);
    if (comm_rank() == 0)
        printf("p=%d<->%d, %d components (space %d), %d ranks, %s: prolongation differs by %.2e, restriction by "
               "%.2e\n", pf, pc, nc, snc, comm_size(), td.nodal ? "node matrices" : "element kernels", dp, dr);
    Vec *v[] = {&f1, &c1, &fd, &cd};
    for (int i = 0; i < 4; i++) vec_destroy(v[i]);
    free(one_f), free(one_c), free(d_f), free(d_c), free(g_f), free(g_c), free(part);
    transfer_destroy(&td);
    transfer_destroy(&t1);
    halo_destroy(&hf), halo_destroy(&hc);
    dist_destroy(&dc), dist_destroy(&df);
    space_destroy(&gf), space_destroy(&gc);
}

/* The problem's operator at order 1 on sp with md's constraints (and halo). */
static void order1_operator(Device *dev, const Problem *pb, const Space *sp, Model *md, Halo *h,
                            Operator *op) {
    CHECK_OK(op_create(op, dev, sp, &md->phys, pb->quadrature_degree, md->cell_tags, md->facet_tags));
    op_set_halo(op, h);
    CHECK_OK(op_set_dirichlet(op, md->ndir, md->dir_dofs));
    Vec u, r;
    CHECK_OK(vec_create_split(&u, dev, sp->ndofs, sp->ndofs_owned));
    CHECK_OK(vec_duplicate(&r, &u));
    CHECK_OK(vec_set(&u, 0.0));
    CHECK_OK(op_residual(op, &u, &r)); /* the state the element matrices are taken at */
    vec_destroy(&u), vec_destroy(&r);
}

/* The distributed matrix summed into a dense global one (global space numbering), through the contiguous
 * numbers: c2g maps each contiguous number back to its global dof. */
static double *gather_dense(const CsrMatrix *A, const CoarseOptions *o, const int64_t *gdof, int64_t n) {
    double *c2g = calloc((size_t)n, sizeof(double)), *D = calloc((size_t)(n * n), sizeof(double));
    for (int64_t i = 0; i < o->nowned; i++) c2g[o->first + i] += (double)gdof[i] + 1; /* 0: unset */
    CHECK_OK(comm_sum(c2g, (int)n));
    int64_t unset = 0;
    for (int64_t k = 0; k < n; k++) unset += c2g[k] == 0;
    CHECK(unset == 0, "%lld contiguous numbers belong to no rank's own dofs", (long long)unset);
    for (int64_t r = 0; r < A->nrows && !unset; r++)
        for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) {
            int64_t gr = (int64_t)c2g[o->global[r]] - 1, gc = (int64_t)c2g[o->global[A->cols[k]]] - 1;
            D[gr * n + gc] += A->vals[k];
        }
    CHECK_OK(comm_sum(D, (int)(n * n)));
    free(c2g);
    return D;
}

/* The coarse level over ranks solved by `type` (CHOLMOD gathered to rank 0, coarse_gather.h; MUMPS over the
 * ranks, mumps_coarse.h), whose description must hold `says`, equals one process's CHOLMOD solve of the whole
 * matrix G at every rank's own dofs to `tol` relative, and leaves the ghosts 0. */
static void check_ranks_solve(Device *dev, const CsrMatrix *A, const CoarseOptions *o, const CsrMatrix *G,
                              const int64_t *gdof, CoarseType type, const char *says, double tol) {
    CoarseOptions go = *o, one = *o;
    go.type = type, one.type = COARSE_CHOLMOD;
    one.global = NULL, one.nowned = one.first = 0;
    CoarseSolver *cs = NULL, *cs1 = NULL;
    int status = coarse_create(dev, A, &go, &cs);
    if (status == FEM_ERR_USAGE && strstr(fem_last_error(), "not built in")) {
        if (comm_rank() == 0) printf("%s: the solve over ranks is not checked\n", fem_last_error());
        fem_clear_error();
        return;
    }
    CHECK_OK(status);
    CHECK(strstr(coarse_describe(cs), says) != NULL, "the coarse solver says: %s", coarse_describe(cs));
    status = coarse_create(dev, G, &one, &cs1);
    if (status == FEM_ERR_USAGE && strstr(fem_last_error(), "not built in")) {
        if (comm_rank() == 0) printf("%s: no one-process solve to check against\n", fem_last_error());
        fem_clear_error();
        coarse_destroy(&cs);
        return;
    }
    CHECK_OK(status);
    int64_t n = G->nrows, nl = A->nrows;
    double *b = malloc(sizeof(double) * (size_t)(n + nl)), *x = malloc(sizeof(double) * (size_t)(n + nl));
    double *bl = b + n, *xl = x + n, diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) b[i] = field(i);
    for (int64_t i = 0; i < nl; i++) bl[i] = i < o->nowned ? field(gdof[i]) : -1e30; /* ghosts unread */
    CHECK_OK(coarse_apply(cs1, b, x));
    CHECK_OK(coarse_apply(cs, bl, xl));
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(x[i]));
    for (int64_t i = 0; i < nl; i++) diff = fmax(diff, i < o->nowned ? fabs(xl[i] - x[gdof[i]]) : fabs(xl[i]));
    double each[1] = {diff};
    CHECK_OK(comm_sum(each, 1));
    CHECK(each[0] <= tol * scale,
          "%s differs from one process's CHOLMOD solve by %.3g relative (%.0e allowed)", coarse_describe(cs),
          each[0] / scale, tol);
    if (comm_rank() == 0)
        printf("%s: solution differs from one process's by %.2e relative\n", coarse_describe(cs),
               each[0] / scale);
    free(b), free(x);
    coarse_destroy(&cs), coarse_destroy(&cs1);
}

/* MUMPS over the ranks made again for new values on its pattern (Newton's next step, coarse_refactor): A
 * doubled is refactorised on every rank (its analysis kept), and its solve is half one process's CHOLMOD
 * solve of G to `tol`; then one entry of rank 0's rows set to zero (MUMPS is not handed zeros, so rank 0's
 * pattern changes while the others' do not) is refused on every rank, the solver unchanged. A is put back. */
static void check_ranks_refactor(Device *dev, CsrMatrix *A, const CoarseOptions *o, const CsrMatrix *G,
                                 const int64_t *gdof, double tol) {
#if defined(FEMTO_HAVE_MUMPS) && defined(FEMTO_HAVE_CHOLMOD)
    CoarseOptions go = *o, one = *o;
    go.type = COARSE_MUMPS, one.type = COARSE_CHOLMOD;
    one.global = NULL, one.nowned = one.first = 0;
    CoarseSolver *cs = NULL, *cs1 = NULL;
    CHECK_OK(coarse_create(dev, A, &go, &cs));
    CHECK_OK(coarse_create(dev, G, &one, &cs1));
    CHECK(coarse_can_refactor(cs), "MUMPS over the ranks says it cannot refactorise");
    int64_t n = G->nrows, nl = A->nrows, nnz = A->rowptr[nl];
    for (int64_t k = 0; k < nnz; k++) A->vals[k] *= 2;
    int done = 0;
    CHECK_OK(coarse_refactor(cs, A, &done));
    CHECK(done, "rank %d: MUMPS over the ranks did not refactorise the same pattern", comm_rank());
    double *b = malloc(sizeof(double) * (size_t)(n + nl)), *x = malloc(sizeof(double) * (size_t)(n + nl));
    double *bl = b + n, *xl = x + n, diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) b[i] = field(i);
    for (int64_t i = 0; i < nl; i++) bl[i] = i < o->nowned ? field(gdof[i]) : -1e30;
    CHECK_OK(coarse_apply(cs1, b, x));
    CHECK_OK(coarse_apply(cs, bl, xl));
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(x[i]));
    for (int64_t i = 0; i < o->nowned; i++) diff = fmax(diff, fabs(2 * xl[i] - x[gdof[i]]));
    double each[1] = {diff};
    CHECK_OK(comm_sum(each, 1));
    CHECK(each[0] <= tol * scale, "MUMPS refactorised over the ranks: twice its solve differs from one "
          "process's by %.3g relative (%.0e allowed)", each[0] / scale, tol);
    if (comm_rank() == 0)
        printf("MUMPS refactorised with new values over %d ranks: solution differs by %.2e relative\n",
               comm_size(), each[0] / scale);
    double kept = 0;
    int64_t at = -1;
    for (int64_t k = 0; k < nnz && at < 0; k++)
        if (comm_rank() == 0 && A->vals[k] != 0 && A->cols[k] != 0) at = k;
    if (at >= 0) kept = A->vals[at], A->vals[at] = 0;
    done = 1;
    CHECK_OK(coarse_refactor(cs, A, &done));
    CHECK(!done, "rank %d: MUMPS refactorised although rank 0's pattern changed", comm_rank());
    if (at >= 0) A->vals[at] = kept;
    CHECK_OK(coarse_apply(cs, bl, xl)); /* the solver is still the doubled matrix's */
    diff = 0;
    for (int64_t i = 0; i < o->nowned; i++) diff = fmax(diff, fabs(2 * xl[i] - x[gdof[i]]));
    each[0] = diff;
    CHECK_OK(comm_sum(each, 1));
    CHECK(each[0] <= tol * scale, "MUMPS changed after refusing a refactorisation: %.3g", each[0] / scale);
    for (int64_t k = 0; k < nnz; k++) A->vals[k] /= 2;
    free(b), free(x);
    coarse_destroy(&cs), coarse_destroy(&cs1);
#else
    (void)dev, (void)A, (void)o, (void)G, (void)gdof, (void)tol;
#endif
}

/* AUTO over ranks on a matrix that is not positive definite (A negated): MUMPS refuses it on every rank, and
 * the ranks go on together to the solver gathered to rank 0 (whose own AUTO ends with BoomerAMG, which sets
 * up on it), the description saying why; no rank is left waiting. A is put back. */
static void check_auto_fallback(Device *dev, CsrMatrix *A, const CoarseOptions *o) {
#if defined(FEMTO_HAVE_MUMPS) && defined(FEMTO_HAVE_CHOLMOD)
    for (int64_t k = 0; k < A->rowptr[A->nrows]; k++) A->vals[k] = -A->vals[k];
    CoarseOptions ao = *o;
    ao.type = COARSE_AUTO;
    CoarseSolver *cs = NULL;
    int status = coarse_create(dev, A, &ao, &cs);
    const char *d = status ? fem_last_error() : coarse_describe(cs);
    if (comm_rank() == 0)
        printf("AUTO on the negated matrix over %d ranks: %s (status %d)\n", comm_size(), d, status);
    CHECK(strstr(d, "instead of MUMPS over the ranks: MUMPS could not factorise the coarse matrix: it is not "
                    "positive definite") != NULL,
          "AUTO over ranks after MUMPS refused: \"%s\"", d);
    fem_clear_error();
    coarse_destroy(&cs);
    for (int64_t k = 0; k < A->rowptr[A->nrows]; k++) A->vals[k] = -A->vals[k];
#else
    (void)dev, (void)A, (void)o;
#endif
}

static void check_matrix(const Problem *pb, Mesh *m, Device *dev) {
    const char *xml = pb->path;
    const PhysicsType *t = NULL;
    for (int i = 0; i < physics_ntypes && !t; i++)
        if (problem_has_physics(pb, physics_types[i]->name)) t = physics_types[i];
    Space gsp;
    CHECK_OK(space_create(m, 1, t->components ? m->dim : 1, &gsp));
    Model gmd, lmd;
    CHECK_OK(t->create(pb, &gsp, &gmd));
    Operator gop, lop;
    order1_operator(dev, pb, &gsp, &gmd, NULL, &gop);
    CsrMatrix G, A;
    CHECK_OK(op_assemble(&gop, &G));
    int32_t *part = malloc(sizeof(int32_t) * (size_t)partition_ncells(m));
    CHECK_OK(partition_mesh_shared(m, comm_size(), part));
    Dist d;
    CHECK_OK(dist_create(&d, &gsp, part, comm_rank(), comm_size()));
    CHECK_OK(model_localize(&gmd, &d, &lmd));
    Halo h;
    CHECK_OK(halo_create(&h, &d, dev, gsp.ncomp));
    order1_operator(dev, pb, &d.space, &lmd, &h, &lop);
    CoarseOptions o = {0};
    int64_t *global = NULL, n = gsp.ndofs, *gdof = global_dofs(&d);
    CHECK_OK(mg_coarse_matrix(&lop, &A, &o, &global));
    double owned = (double)o.nowned, first = (double)o.first, scale = 0, diff = 0;
    CHECK_OK(comm_sum(&owned, 1));
    CHECK(owned == (double)n, "the ranks own %.0f coarse dofs, the space has %lld", owned, (long long)n);
    CHECK(o.nowned == d.space.ndofs_owned && global[0] == o.first,
          "rank %d: the contiguous numbering does not start at its first own dof", comm_rank());
    double *D = gather_dense(&A, &o, gdof, n), *Gd = calloc((size_t)(n * n), sizeof(double));
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = G.rowptr[r]; k < G.rowptr[r + 1]; k++) Gd[r * n + G.cols[k]] = G.vals[k];
    for (int64_t k = 0; k < n * n; k++)
        scale = fmax(scale, fabs(Gd[k])), diff = fmax(diff, fabs(Gd[k] - D[k]));
    CHECK(diff <= 1e-12 * scale,
          "the coarse matrix over %d ranks differs from one process's by %.3g relative", comm_size(),
          diff / scale);
    if (comm_rank() == 0)
        printf("%s order 1 over %d ranks: %lld dofs, matrix differs by %.2e relative (rank 0 first %.0f)\n",
               xml, comm_size(), (long long)n, diff / scale, first);
    check_ranks_solve(dev, &A, &o, &G, gdof, COARSE_CHOLMOD, "gathered to rank 0", 1e-12);
    /* another factorisation (its own ordering, L D L^T), spread over the ranks: measured 2e-17 to 1.1e-15 */
    char over[64];
    snprintf(over, sizeof over, "over %d MPI ranks", comm_size());
    check_ranks_solve(dev, &A, &o, &G, gdof, COARSE_MUMPS, over, 1e-12);
    /* the same with MUMPS's distributed vectors (b where it is owned, x from where MUMPS computed it) */
    setenv("FEMTO_MUMPS_VECTORS", "distributed", 1);
    check_ranks_solve(dev, &A, &o, &G, gdof, COARSE_MUMPS, over, 1e-12);
    check_ranks_refactor(dev, &A, &o, &G, gdof, 1e-12); /* distributed vectors: their plan made again */
    unsetenv("FEMTO_MUMPS_VECTORS");
    check_ranks_refactor(dev, &A, &o, &G, gdof, 1e-12);
    check_auto_fallback(dev, &A, &o);
    free(D), free(Gd), free(global), free(gdof), free(part);
    csr_destroy(&A), csr_destroy(&G);
    op_destroy(&lop), op_destroy(&gop);
    halo_destroy(&h);
    model_destroy(&lmd), model_destroy(&gmd);
    dist_destroy(&d);
    space_destroy(&gsp);
}

int main(int argc, char **argv) {
    int transfer = (argc == 6 || argc == 7) && strcmp(argv[1], "transfer") == 0,
        matrix = argc == 3 && !strcmp(argv[1], "matrix");
    if (!transfer && !matrix) {
        fprintf(stderr,
                "usage: mpiexec -n N test_mpi_mg transfer MESH FINE COARSE NCOMP [SPACE_NCOMP] | matrix PROBLEM.xml\n");
        return 2;
    }
    Mesh m = {0};
    MeshReadOptions mo = {0};
    static Problem pb;
    if (matrix) CHECK_OK(problem_read(argv[2], &pb));
    /* before MPI: the reader forks */
    CHECK_OK(mesh_read(matrix ? pb.mesh_file : strchr(argv[2], '/') ? argv[2] : test_mesh(argv[2]), &mo, &m));
    CHECK_OK(comm_ensure_init());
    Device dev;
    CHECK_OK(test_device(&dev, DEV_CPU, 1, ASSEMBLE_GATHER));
    /* both ways of transferring: the CPU's node matrices, and the element kernels the GPU uses */
    for (int elements = 0; transfer && elements < 2; elements++) {
        setenv("FEMTO_TRANSFER_ELEMENTS", elements ? "1" : "0", 1);
        check_transfer(&m, atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[argc == 7 ? 6 : 5]), &dev);
    }
    unsetenv("FEMTO_TRANSFER_ELEMENTS");
    if (matrix) check_matrix(&pb, &m, &dev);
    double failures = test_failures;
    CHECK_OK(comm_sum(&failures, 1));
    test_failures = (int)failures;
    device_destroy(&dev);
    mesh_destroy(&m);
    return comm_rank() == 0 ? test_result("test_mpi_mg") : (test_failures ? 1 : 0);
}
