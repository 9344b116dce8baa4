/* A space split over MPI ranks (fem/dist.h) and its halo (fem/halo.h), run under mpiexec with 2 or 3 ranks:
 *   - every global node is owned by exactly one rank (the owned counts sum to the global count);
 *   - a local node sits where its global node sits (the local-to-global map);
 *   - forward fills every ghost with its owner's value exactly, and reverse-add after it leaves on each owned
 *     dof its valence (the number of ranks that hold the node) times the value, with the ghosts zeroed;
 *   - with split begin/end and other work between them, the same;
 *   - interior cell blocks touch no shared node, boundary blocks only cells that do, and there are both;
 *   - a failure on one rank reaches every rank as the same code and sentence (comm_agree);
 *   - rank 0 makes every rank's part and scatters it: each equals the part the rank makes itself;
 *   - evaluations, probes and extremes on the ranks' parts equal one process's on the whole space: nodal
 *     averages, cell and boundary integrals, probed values, extremes with their places (ties to the lowest
 *     global node), the bounding box.
 *
 *   mpiexec -n N test_mpi_dist MESH ORDER NCOMP */
#include "common/femto_test.h"
#include "fem/comm.h"
#include "fem/error.h"
#include "fem/evaluate.h"
#include "fem/halo.h"
#include "fem/partition.h"
#include "fem/probe.h"
#include "io/mesh_read.h"
#include "physics/elasticity_qf.h"
#include "physics/qfunctions.h"

#include <math.h>
#include <string.h>

static double field(int64_t gdof) {
    return 1.0 + 0.25 * sin(0.37 * (double)gdof) + 1e-3 * (double)gdof;
}

/* valence[g]: how many distinct parts have a cell on global node g. */
static int *node_valence(const Space *gsp, const int32_t *part, int nranks) {
    int *val = calloc((size_t)gsp->nnodes, sizeof(int));
    char *seen = calloc((size_t)gsp->nnodes * (size_t)nranks, 1);
    for (int b = 0; b < gsp->ncell_blocks; b++) {
        const SpaceBlock *sb = &gsp->cells[b];
        int64_t off = partition_cell_offset(gsp->mesh, b);
        for (int64_t c = 0; c < sb->count; c++)
            for (int i = 0; i < sb->ndof; i++) {
                int64_t g = sb->dofs[c * sb->ndof + i];
                char *s = &seen[g * nranks + part[off + c]];
                if (!*s) *s = 1, val[g]++;
            }
    }
    free(seen);
    return val;
}

static void check_ownership(const Dist *d, const Space *gsp) {
    double *count = calloc((size_t)gsp->nnodes, sizeof(double)), owned = (double)d->space.nnodes_owned;
    for (int64_t i = 0; i < d->space.nnodes_owned; i++) count[d->node_global[i]] += 1;
    CHECK_OK(comm_sum(count, (int)gsp->nnodes));
    CHECK_OK(comm_sum(&owned, 1));
    int64_t wrong = 0;
    for (int64_t g = 0; g < gsp->nnodes; g++) wrong += count[g] != 1.0;
    CHECK(owned == (double)gsp->nnodes, "owned nodes sum to %.0f over the ranks, the space has %lld", owned,
          (long long)gsp->nnodes);
    CHECK(wrong == 0, "%lld global nodes are not owned by exactly one rank", (long long)wrong);
    int64_t misplaced = 0;
    for (int64_t i = 0; i < d->space.nnodes; i++)
        for (int a = 0; a < 3; a++)
            misplaced += fabs(d->space.node_x[3 * i + a] - gsp->node_x[3 * d->node_global[i] + a]) > 1e-12;
    CHECK(misplaced == 0, "rank %d: %lld local node coordinates differ from their global node's", d->rank,
          (long long)misplaced);
    free(count);
}

/* One exchange of v: forward (kind 0), reverse-add (1) or share (2); split: begin, other work (even a
 * reduction) while the messages travel, end. */
static void exchange(Halo *h, Vec *v, int kind, int split) {
    int (*whole[])(Halo *, Vec *) = {halo_forward, halo_reverse_add, halo_share};
    int (*start[])(Halo *, Vec *) = {halo_forward_begin, halo_reverse_begin, halo_share_begin};
    int (*finish[])(Halo *, Vec *) = {halo_forward_end, halo_reverse_end, halo_share_end};
    if (!split) {
        CHECK_OK(whole[kind](h, v));
        return;
    }
    double dot;
    CHECK_OK(start[kind](h, v));
    CHECK_OK(vec_dot(v, v, &dot));
    CHECK_OK(finish[kind](h, v));
}

/* forward, reverse-add, then share (each split into begin and end when split), by the halo's staged or direct
 * path. */
static void check_exchange(const Dist *d, Device *dev, int ncomp, const int *valence, int split,
                           HaloPath path) {
    Halo h;
    CHECK_OK(halo_create_path(&h, d, dev, ncomp, path));
    CHECK(h.direct == (path == HALO_DIRECT), "rank %d: halo path %d, asked for %d", d->rank, h.direct, path);
    Vec v;
    int64_t n = d->space.nnodes * ncomp, nown = d->space.nnodes_owned * ncomp;
    CHECK_OK(vec_create_split(&v, dev, n, nown));
    double *x = malloc(sizeof(double) * (size_t)n);
    int64_t *g = malloc(sizeof(int64_t) * (size_t)n);
    dist_global_dofs(d, n, g);
    for (int64_t i = 0; i < n; i++) x[i] = i < nown ? field(g[i]) : -1e30;
    CHECK_OK(vec_upload(&v, x));
    exchange(&h, &v, 0, split);
    CHECK_OK(vec_download(&v, x));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += x[i] != field(g[i]);
    CHECK(bad == 0, "rank %d: %lld entries differ from the owner's value after forward", d->rank,
          (long long)bad);
    exchange(&h, &v, 1, split);
    CHECK_OK(vec_download(&v, x));
    bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double want = i < nown ? valence[g[i] / ncomp] * field(g[i]) : 0.0;
        double err = fabs(x[i] - want) / fabs(field(g[i]));
        bad += err > 1e-15 * 4;
        if (err > worst) worst = err;
    }
    CHECK(bad == 0, "rank %d: %lld entries are not valence x value after reverse-add (worst relative %.3g)",
          d->rank, (long long)bad, worst);
    /* share: every copy of a shared dof = the sum of all ranks' copies (here each rank's own multiple of
     * the field, so that the sum depends on which ranks hold the node), the same bits on every rank */
    int64_t ng = d->nglobal_nodes * ncomp;
    double *want = calloc((size_t)ng, sizeof(double));
    for (int64_t i = 0; i < n; i++) x[i] = (1.0 + 0.1 * d->rank) * field(g[i]), want[g[i]] = x[i];
    CHECK_OK(comm_sum(want, (int)ng));
    CHECK_OK(vec_upload(&v, x));
    exchange(&h, &v, 2, split);
    CHECK_OK(vec_download(&v, x));
    bad = 0;
    for (int64_t i = 0; i < n; i++) bad += fabs(x[i] - want[g[i]]) > 4e-15 * fabs(want[g[i]]);
    CHECK(bad == 0, "rank %d: %lld entries are not the sum of their copies after share", d->rank,
          (long long)bad);
    double *again = malloc(sizeof(double) * (size_t)n);
    CHECK_OK(halo_forward(&h, &v));
    CHECK_OK(vec_download(&v, again));
    bad = 0;
    for (int64_t i = 0; i < n; i++) bad += again[i] != x[i];
    CHECK(bad == 0, "rank %d: %lld ghost copies differ in their bits from their owners' after share", d->rank,
          (long long)bad);
    free(again);
    free(want);
    printf("rank %d of %d (%s): %lld owned + %lld ghost nodes, %d neighbours, %lld dofs sent, %d ranks share "
           "%lld dofs\n", d->rank, d->nranks, h.direct ? "direct" : "staged", (long long)d->space.nnodes_owned,
           (long long)(d->space.nnodes - d->space.nnodes_owned), d->nnbr, (long long)h.nsend, h.nshare,
           (long long)h.nshared);
    free(x);
    free(g);
    vec_destroy(&v);
    halo_destroy(&h);
}

/* CUDA-aware MPI is detected: a GPU device takes the direct path exactly when MPI says it is CUDA-aware (a
 * Device of kind CUDA is only asked, never used), the CPU device always stages; Debian's Open MPI, whose
 * headers say MPIX_CUDA_AWARE_SUPPORT 0, must be found not CUDA-aware. */
static void check_cuda_detection(const Dist *d, Device *cpu) {
    CommCudaSupport s = comm_cuda_support();
    Device gpu = {0};
    gpu.kind = DEV_CUDA;
    HaloPath want = s.aware ? HALO_DIRECT : HALO_STAGED;
    CHECK(halo_auto_path(&gpu) == want, "rank %d: a GPU halo path %d, while MPI says '%s'", d->rank,
          halo_auto_path(&gpu), s.why);
    CHECK(halo_auto_path(cpu) == HALO_STAGED, "rank %d: the CPU device does not stage", d->rank);
    CHECK(s.aware == (s.compiled == 1 && s.runtime == 1), "rank %d: aware %d from %d and %d", d->rank,
          s.aware, s.compiled, s.runtime);
    if (s.compiled == 0)
        CHECK(!s.aware && halo_auto_path(&gpu) == HALO_STAGED && strstr(s.why, "does not support"),
              "rank %d: an MPI built without CUDA taken for CUDA-aware: %s", d->rank, s.why);
    Halo h;
    CHECK_OK(halo_create(&h, d, cpu, 1));
    char text[256];
    halo_describe(&h, text, sizeof text);
    CHECK(!h.direct && strncmp(text, "staged through host", 19) == 0, "rank %d: halo '%s'", d->rank, text);
    if (d->rank == 0)
        printf("MPI and CUDA: %s; a GPU's halo would be %s\n", s.why,
               want == HALO_DIRECT ? "direct" : "staged");
    halo_destroy(&h);
}

/* The interior and boundary cell blocks (dist.h, cell_boundary): no interior cell touches a node that another
 * rank holds (a ghost, or an owned node in a send list), every boundary cell does, and on meshes of 10 cells a
 * rank or more some rank has interior cells, so that the operator's overlap (op_set_halo) is exercised. */
static void check_interior(const Dist *d, const int *valence) {
    int64_t ncell[2] = {0, 0}, wrong = 0;
    for (int b = 0; b < d->space.ncell_blocks; b++) {
        const SpaceBlock *sb = &d->space.cells[b];
        int boundary = d->cell_boundary[b];
        ncell[boundary] += sb->count;
        for (int64_t c = 0; c < sb->count; c++) {
            int touches = 0;
            for (int i = 0; i < sb->ndof; i++) touches |= valence[d->node_global[sb->dofs[c * sb->ndof + i]]] > 1;
            wrong += touches != boundary;
        }
    }
    CHECK(wrong == 0, "rank %d: %lld cells in a block of the wrong kind (interior: touches no shared node)",
          d->rank, (long long)wrong);
    double sums[3] = {(double)ncell[0], (double)ncell[1], 1.0};
    CHECK_OK(comm_sum(sums, 3));
    CHECK(ncell[1] > 0, "rank %d: no boundary cell", d->rank);
    /* (meshes of 10 cells or more a rank; the 12-hexahedron cube over 3 ranks has none inside) */
    CHECK(sums[0] > 0 || sums[0] + sums[1] < 10 * sums[2], "no rank has an interior cell (%.0f cells)",
          sums[0] + sums[1]);
    printf("rank %d: %lld interior, %lld boundary cells\n", d->rank, (long long)ncell[0], (long long)ncell[1]);
}

/* A failure on the last rank alone reaches every rank: the same code and the failing rank's sentence. */
static void check_agree(int rank, int nranks) {
    int status = rank == nranks - 1 ? fem_fail(FEM_ERR_INPUT, "rank %d found a bad input", rank) : FEM_OK;
    status = comm_agree(status);
    char want[64];
    snprintf(want, sizeof want, "rank %d found a bad input", nranks - 1);
    CHECK(status == FEM_ERR_INPUT && strcmp(fem_last_error(), want) == 0,
          "rank %d: agreed status %d '%s', expected %d '%s'", rank, status, fem_last_error(), FEM_ERR_INPUT,
          want);
    CHECK(comm_agree(FEM_OK) == FEM_OK, "rank %d: every rank succeeded, yet the agreement failed", rank);
}

/* The largest displacement gradient at the nodes and integrated over the cells; a traction (1, 2, 3) Pa
 * integrated over the boundary's facets (the force it applies). */
static void evaluate(const EvalField *f, const PhysicalGroup *g, double *nodal, double *cells, double *force) {
    OutputFn grad = {{QF_DESCRIBE(elas_gradient_out), .in = {{"u", QF_UNKNOWN, QF_VALUE | QF_GRAD}}}, 1, NULL, 0};
    ElasCtx c = {.dim = f->sp->mesh->dim, .load = 1.0, .nbc = 1, .bc = {{.t = {1.0, 2.0, 3.0}}}};
    OutputFn load = {{QF_DESCRIBE(elas_load_out), .in = {{"u", QF_UNKNOWN, QF_VALUE | QF_GRAD}},
                      .out = {"out", QF_UNKNOWN, QF_VALUE}},
                     3, &c, sizeof c};
    CHECK_OK(eval_nodal(f, &grad, 1, nodal));
    CHECK_OK(eval_cells(f, &grad, NULL, cells));
    CHECK_OK(eval_facets(f, &load, g, force));
}

/* Extremes on the ranks' parts (dist_node_extremes: each rank its owned nodes, then one all-gather) against
 * one process's on the whole space: the same values, global nodes and places, for a field of distinct values
 * and for one of five values, where many nodes tie and the lowest global node must win; and the parts'
 * bounding box is the whole mesh's (dist_bounding_box). */
static void check_part_extremes(const Dist *d, const Space *gsp) {
    const Space *sp = &d->space;
    double *whole = malloc(sizeof(double) * (size_t)(gsp->nnodes + 1)),
           *local = malloc(sizeof(double) * (size_t)(sp->nnodes + 1));
    for (int ties = 0; ties < 2; ties++) {
        for (int64_t n = 0; n < gsp->nnodes; n++) whole[n] = ties ? (double)(n * 7 % 5) : field(n);
        for (int64_t n = 0; n < sp->nnodes; n++) local[n] = whole[d->node_global[n]];
        DistExtremes a, b;
        CHECK_OK(dist_node_extremes(NULL, gsp, whole, 1, &a));
        CHECK_OK(dist_node_extremes(d, sp, local, 1, &b));
        for (int k = 0; k < 2; k++)
            CHECK(a.node[k] == b.node[k] && a.value[k] == b.value[k] &&
                      memcmp(a.x[k], b.x[k], sizeof a.x[k]) == 0,
                  "rank %d, %s field: %s %.17g at node %lld on the parts, %.17g at node %lld in one process",
                  d->rank, ties ? "tied" : "distinct", k ? "largest" : "smallest", b.value[k],
                  (long long)b.node[k], a.value[k], (long long)a.node[k]);
        if (ties) /* 7 n mod 5: 0 first at node 0, 4 first at node 2 */
            CHECK(a.node[0] == 0 && a.node[1] == 2, "tied extremes at nodes %lld and %lld, not 0 and 2",
                  (long long)a.node[0], (long long)a.node[1]);
    }
    double lo[2][3], hi[2][3];
    mesh_bounding_box(gsp->mesh, lo[0], hi[0]);
    CHECK_OK(dist_bounding_box(d, &d->mesh, lo[1], hi[1]));
    CHECK(memcmp(lo[0], lo[1], sizeof lo[0]) == 0 && memcmp(hi[0], hi[1], sizeof hi[0]) == 0,
          "rank %d: the parts' bounding box is not the mesh's", d->rank);
    if (d->rank == 0) printf("extremes on the ranks' parts: those of one process, ties to the lowest node\n");
    free(whole), free(local);
}

/* The same evaluations on the rank's part (EvalField.dist: its own cells and facets, its owned and ghost
 * dofs) against the whole space's on this rank alone, at every node of the part (shared ones included) and
 * for the integrals, to 1e-12. */
static void check_part_evaluation(const Dist *d, const Space *gsp, Device *dev) {
    const PhysicalGroup *g = mesh_find_group(gsp->mesh, "boundary", gsp->mesh->dim - 1);
    const PhysicalGroup *lg = mesh_find_group(&d->mesh, "boundary", gsp->mesh->dim - 1);
    CHECK(g && lg, "the mesh or the rank's part has no boundary group");
    if (!g || !lg) return;
    const Space *sp = &d->space;
    Vec u, ul;
    CHECK_OK(vec_create(&u, dev, gsp->ndofs));
    CHECK_OK(vec_create(&ul, dev, sp->ndofs));
    double *host = malloc(sizeof(double) * (size_t)gsp->ndofs),
           *alone = malloc(sizeof(double) * (size_t)gsp->nnodes);
    double *local = malloc(sizeof(double) * (size_t)sp->ndofs),
           *part = malloc(sizeof(double) * (size_t)sp->nnodes);
    int64_t *gdof = malloc(sizeof(int64_t) * (size_t)sp->ndofs);
    for (int64_t i = 0; i < gsp->ndofs; i++) host[i] = field(i);
    dist_global_dofs(d, sp->ndofs, gdof);
    for (int64_t i = 0; i < sp->ndofs; i++) local[i] = field(gdof[i]);
    CHECK_OK(vec_upload(&u, host));
    CHECK_OK(vec_upload(&ul, local));
    EvalField f = {gsp, &u, NULL, NULL, 0, NULL, NULL}, fl = {sp, &ul, NULL, NULL, 0, NULL, d};
    double cells[2], force[2][3];
    evaluate(&f, g, alone, &cells[0], force[0]);
    evaluate(&fl, lg, part, &cells[1], force[1]);
    double worst = 0.0, scale = 0.0;
    for (int64_t n = 0; n < sp->nnodes; n++) {
        worst = fmax(worst, fabs(part[n] - alone[d->node_global[n]]));
        scale = fmax(scale, fabs(alone[d->node_global[n]]));
    }
    CHECK(scale > 0 && worst <= 1e-12 * scale, "rank %d: nodal values on the part differ by %.3g of %.3g",
          d->rank, worst, scale);
    CHECK(cells[0] > 0 && fabs(cells[1] - cells[0]) <= 1e-12 * cells[0],
          "rank %d: cell integral over the parts %.17g, one process %.17g", d->rank, cells[1], cells[0]);
    for (int k = 0; k < gsp->mesh->dim; k++)
        CHECK(force[0][k] > 0 && fabs(force[1][k] - force[0][k]) <= 1e-12 * force[0][k],
              "rank %d: boundary force %d over the parts: %.17g, one process %.17g", d->rank, k, force[1][k],
              force[0][k]);
    /* every copy of a shared node holds the same bits: the neighbours' copies, in the share lists' order */
    int64_t nshared = d->share_off[d->nshare], differ = 0;
    double *mine = malloc(sizeof(double) * (size_t)(nshared + 1)),
           *theirs = malloc(sizeof(double) * (size_t)(nshared + 1));
    for (int64_t j = 0; j < nshared; j++) mine[j] = part[d->share[j]];
    CommExchange x;
    CHECK_OK(comm_exchange_begin(&x, d->nshare, d->share_nbr, d->share_off, mine, d->share_off, theirs));
    CHECK_OK(comm_exchange_end(&x));
    for (int64_t j = 0; j < nshared; j++) differ += memcmp(&mine[j], &theirs[j], sizeof(double)) != 0;
    CHECK(differ == 0, "rank %d: %lld of %lld shared nodal values differ from a neighbour's copy", d->rank,
          (long long)differ, (long long)nshared);
    free(mine), free(theirs);
    if (d->rank == 0)
        printf("evaluations on the ranks' parts: nodal values within %.2e of one process's, shared copies "
               "identical\n",
               worst / scale);
    free(host), free(alone), free(local), free(part), free(gdof);
    vec_destroy(&u), vec_destroy(&ul);
}

/* Probes on the ranks' parts (probe_field_parts: each rank searches its own cells, the lowest finder answers)
 * against probe_field on the whole space in one process: the same value and gradient to 1e-12 at points
 * across the mesh's box (inside or outside alike), and "not found" outside it. */
static void check_part_probes(const Dist *d, const Space *gsp) {
    const Space *sp = &d->space;
    int nc = gsp->ncomp, dim = gsp->mesh->dim, checked = 0;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t n = 0; n < gsp->mesh->nnodes; n++)
        for (int a = 0; a < 3; a++)
            lo[a] = fmin(lo[a], gsp->mesh->x[3 * n + a]), hi[a] = fmax(hi[a], gsp->mesh->x[3 * n + a]);
    double *host = malloc(sizeof(double) * (size_t)gsp->ndofs),
           *local = malloc(sizeof(double) * (size_t)sp->ndofs);
    int64_t *gdof = malloc(sizeof(int64_t) * (size_t)sp->ndofs);
    for (int64_t i = 0; i < gsp->ndofs; i++) host[i] = field(i);
    dist_global_dofs(d, sp->ndofs, gdof);
    for (int64_t i = 0; i < sp->ndofs; i++) local[i] = field(gdof[i]);
    double *linear = malloc(sizeof(double) * (size_t)gsp->ndofs);
    for (int64_t i = 0; i < gsp->ndofs; i++) linear[i] = gsp->node_x[3 * (i / nc)];
    for (int k = 0; k < 28; k++) {
        double x[3] = {0, 0, 0}, u1[64], g1[64 * 3], u2[64], g2[64 * 3];
        /* a lattice of points through the box, off the planes a structured mesh has, and one well outside (k
         * = 27): the gradient jumps across facets, where two cells may answer */
        for (int a = 0; a < dim; a++)
            x[a] = k == 27 ? hi[a] + (hi[a] - lo[a])
                           : lo[a] + (hi[a] - lo[a]) *
                                         (0.1 + 0.8 * ((k / (a ? a * 3 : 1)) % 3) / 2.0 + 0.0137 * (a + 1));
        int alone = probe_field(gsp, host, x, u1, g1), parts = -1;
        /* the field u = x (every component) is exact in the space: a probe found in the wrong cell misses it
         */
        double ux[64];
        CHECK(!alone || (probe_field(gsp, linear, x, ux, NULL) && fabs(ux[0] - x[0]) <= 1e-10),
              "point %d: u = x probed as %.17g at x = %.17g", k, ux[0], x[0]);
        CHECK_OK(probe_field_parts(sp, local, x, u2, g2, &parts));
        CHECK(parts == alone, "rank %d: point %d found %d on the parts, %d in one process", d->rank, k, parts,
              alone);
        for (int c = 0; alone && parts == alone && c < nc * (1 + dim); c++) {
            double a = c < nc ? u1[c] : g1[c - nc], b = c < nc ? u2[c] : g2[c - nc];
            CHECK(fabs(a - b) <= 1e-12 * fmax(1.0, fabs(a)),
                  "rank %d: point %d value %d: %.17g on the parts, %.17g in one process", d->rank, k, c, b,
                  a);
        }
        checked += alone;
    }
    CHECK(checked > 0, "no probe point fell inside the mesh");
    if (d->rank == 0)
        printf("probes on the ranks' parts: %d points inside, their values those of one process\n", checked);
    free(host), free(local), free(gdof), free(linear);
}

static int same_i64(const int64_t *a, const int64_t *b, int64_t n) {
    return n == 0 || !memcmp(a, b, sizeof(int64_t) * (size_t)n);
}

static int same_i32(const int32_t *a, const int32_t *b, int64_t n) {
    return n == 0 || !memcmp(a, b, sizeof(int32_t) * (size_t)n);
}

/* The part rank 0 made for this rank and sent (dist_scatter, the run's way) gives the Dist this rank makes
 * from the global space itself (dist_create): the same mesh, node numbers, owners, halo and shared lists;
 * a damaged record is refused in one sentence. */
static void check_scatter(const Dist *d, const Space *gsp, const int32_t *part) {
    Dist e;
    CHECK_OK(dist_scatter(&e, comm_rank() == 0 ? gsp : NULL, comm_rank() == 0 ? part : NULL));
    int64_t n = d->space.nnodes;
    int same = e.space.nnodes == n && e.space.nnodes_owned == d->space.nnodes_owned &&
               e.mesh.nnodes == d->mesh.nnodes && e.mesh.ncell_blocks == d->mesh.ncell_blocks &&
               e.mesh.nfacet_blocks == d->mesh.nfacet_blocks && e.nnbr == d->nnbr && e.nshare == d->nshare &&
               e.nglobal_nodes == d->nglobal_nodes && same_i64(e.node_global, d->node_global, n) &&
               !memcmp(e.mesh.x, d->mesh.x, sizeof(double) * 3 * (size_t)d->mesh.nnodes);
    for (int b = 0; same && b < d->mesh.ncell_blocks; b++) {
        const MeshBlock *x = &e.mesh.cells[b], *y = &d->mesh.cells[b];
        same = x->count == y->count && x->nnodes == y->nnodes && x->type == y->type &&
               e.cell_block[b] == d->cell_block[b] && e.cell_boundary[b] == d->cell_boundary[b] &&
               same_i64(e.cell_global[b], d->cell_global[b], y->count) &&
               same_i32(x->nodes, y->nodes, y->count * y->nnodes) &&
               same_i32(e.space.cells[b].dofs, d->space.cells[b].dofs, y->count * d->space.cells[b].ndof);
    }
    for (int b = 0; same && b < d->mesh.nfacet_blocks; b++)
        same = e.mesh.facets[b].count == d->mesh.facets[b].count && e.facet_block[b] == d->facet_block[b] &&
               same_i64(e.facet_global[b], d->facet_global[b], d->mesh.facets[b].count);
    same = same && !memcmp(e.nbr, d->nbr, sizeof(int) * (size_t)d->nnbr) &&
           same_i64(e.send_off, d->send_off, d->nnbr + 1) && same_i64(e.recv_off, d->recv_off, d->nnbr + 1) &&
           same_i32(e.send, d->send, d->send_off[d->nnbr]) &&
           same_i32(e.recv, d->recv, d->recv_off[d->nnbr]) &&
           !memcmp(e.share_nbr, d->share_nbr, sizeof(int) * (size_t)d->nshare) &&
           same_i64(e.share_off, d->share_off, d->nshare + 1) &&
           same_i32(e.share, d->share, d->share_off[d->nshare]);
    CHECK(same, "rank %d: the part rank 0 sent builds another Dist than the rank's own", comm_rank());
    CHECK(e.global_mesh == NULL && e.part == NULL, "a scattered Dist claims a global mesh");
    dist_destroy(&e);
    /* a record cut short is refused */
    DistSplit *s;
    DistPart p, q;
    CHECK_OK(dist_split_create(gsp, part, d->nranks, &s));
    CHECK_OK(dist_part_make(s, d->rank, &p));
    char *buf;
    int64_t len;
    CHECK_OK(dist_part_pack(&p, &buf, &len));
    CHECK(dist_part_unpack(buf, len - 1, &q) == FEM_ERR_INTERNAL && strstr(fem_last_error(), "damaged"),
          "a record cut short: %s", fem_last_error());
    fem_clear_error();
    CHECK_OK(dist_part_unpack(buf, len, &q));
    CHECK(q.npairs == p.npairs && q.nnodes == p.nnodes && same_i64(q.node, p.node, p.nnodes) &&
              same_i32(q.owner, p.owner, p.nnodes),
          "rank %d: a part unpacked differs from the one packed", d->rank);
    dist_part_destroy(&q);
    dist_part_destroy(&p);
    dist_split_destroy(s);
    free(buf);
    if (comm_rank() == 0) printf("the parts rank 0 sent build every rank's own Dist\n");
    /* every cell on rank 0: the others receive no cell, and every rank reports it in one sentence */
    int32_t *all0 = calloc((size_t)partition_ncells(gsp->mesh) + 1, sizeof(int32_t));
    int status = dist_scatter(&e, comm_rank() == 0 ? gsp : NULL, all0);
    CHECK(status == FEM_ERR_INPUT && strstr(fem_last_error(), "MPI rank 1 of ") &&
              strstr(fem_last_error(), "received no cell; run on fewer ranks"),
          "rank %d: a part without cells gave %d: %s", comm_rank(), status, fem_last_error());
    if (comm_rank() == 0) printf("a rank without cells: %s\n", fem_last_error());
    fem_clear_error();
    free(all0); /* (dist_scatter freed rank 0's whole part) */
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: mpiexec -n N test_mpi_dist MESH ORDER NCOMP\n");
        return 2;
    }
    Mesh m = {0};
    MeshReadOptions mo = {0};
    CHECK_OK(
        mesh_read(strchr(argv[1], '/') ? argv[1] : test_mesh(argv[1]), &mo, &m)); /* before MPI: a fork */
    CHECK_OK(comm_ensure_init());
    int rank = comm_rank(), nranks = comm_size(), order = atoi(argv[2]), ncomp = atoi(argv[3]);
    Space gsp;
    CHECK_OK(space_create(&m, order, ncomp, &gsp));
    int32_t *part = malloc(sizeof(int32_t) * (size_t)partition_ncells(&m));
    CHECK_OK(partition_mesh_shared(&m, nranks, part));
    Dist d;
    CHECK_OK(dist_create(&d, &gsp, part, rank, nranks));
    int *valence = node_valence(&gsp, part, nranks);
    Device dev;
    CHECK_OK(test_device(&dev, DEV_CPU, 1, ASSEMBLE_GATHER));
    check_ownership(&d, &gsp);
    for (HaloPath path = HALO_STAGED; path <= HALO_DIRECT; path++) {
        check_exchange(&d, &dev, ncomp, valence, 0, path);
        check_exchange(&d, &dev, ncomp, valence, 1, path);
    }
    check_cuda_detection(&d, &dev);
    check_interior(&d, valence);
    check_scatter(&d, &gsp, part);
    check_agree(rank, nranks);
    check_part_extremes(&d, &gsp);
    check_part_evaluation(&d, &gsp, &dev);
    check_part_probes(&d, &gsp);
    double failures = test_failures;
    CHECK_OK(comm_sum(&failures, 1));
    test_failures = (int)failures;
    free(valence);
    free(part);
    dist_destroy(&d);
    space_destroy(&gsp);
    device_destroy(&dev);
    mesh_destroy(&m);
    return rank == 0 ? test_result("test_mpi_dist") : (test_failures ? 1 : 0);
}
