/* MUMPS as the coarse solver (see coarse.h, mumps_coarse.h).
 *
 * Over MPI ranks the coarse level gathered to rank 0 (coarse_gather.c) leaves every other rank waiting while
 * rank 0 solves with the whole factor: that serial solve took a fifth to a third of a V-cycle at 16 ranks
 * (docs/PERFORMANCE.md). MUMPS spreads the factor over the ranks instead: each rank hands in its rows of the
 * order-1 matrix in the global numbering (the distributed assembled format; MUMPS sums the partial rows of
 * ghost dofs), the elimination tree's subtrees are factorised and solved on the ranks that hold them, and the
 * top of the tree on all of them together. The matrix is symmetric positive definite (SYM = 1: L D L^T
 * without pivoting), and only its upper triangle is handed in. The analysis runs on rank 0 (it is cheap next
 * to the factorisation at these sizes). The right-hand side is gathered to rank 0 and the solution scattered
 * from it (MUMPS's centralised vectors): the transfers are a few hundred kilobytes, and the work between them
 * is shared.
 *
 * In one process (CoarseOptions.global NULL) the whole matrix is factorised on this process alone. */
#include "mumps_coarse.h"

#ifdef FEMTO_HAVE_MUMPS

#include "coarse_gather.h"
#include "fem/comm_mpi.h"
#include "fem/error.h"

#include <dmumps_c.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ICNTL(i) icntl[(i)-1]
#define INFOG(i) infog[(i)-1]

enum { ROOT = 0, JOB_INIT = -1, JOB_END = -2, JOB_FACTORISE = 2, JOB_SOLVE = 3, JOB_ANALYSE_FACTORISE = 4 };
/* MUMPS's orderings (ICNTL(7)) that Debian's build has: AMD 0, AMF 2, PORD 4, QAMD 6, its own choice 7 */
enum { ORDER_AMD = 0, ORDER_AMF = 2, ORDER_PORD = 4, ORDER_QAMD = 6, ORDER_AUTO = 7 };

typedef struct {
    DMUMPS_STRUC_C id;
    int started;    /* JOB_INIT done: JOB_END frees MUMPS's own memory */
    int over_ranks; /* 1: every rank of the run; 0: this process alone */
    int64_t nlocal; /* A's rows on this rank */
    int64_t nowned; /* of which its own: the first nowned */
    int64_t n;      /* the whole matrix's rows */
    int64_t *off;   /* over ranks: [ranks + 1] byte offsets of the ranks' owned entries in a whole vector */
    double *whole;  /* centralised vectors, on rank 0 (one process: this process): the whole right-hand side,
                     * then the solution */
    MUMPS_INT *irn, *jcn; /* this rank's upper-triangle entries, 1-based global numbers, kept for a later
                           * factorisation of new values on the same pattern (coarse_refactor) */
    double *a;
    int64_t *global; /* over ranks: [nlocal] A's local dofs' global numbers (NULL: one process) */
    /* Distributed vectors (FEMTO_MUMPS_VECTORS=distributed): b's owned entries go in where they are, and the
     * solution comes out on the ranks MUMPS computed it on, from where one exchange takes each entry to its
     * owner (the plan is made at the first application, when MUMPS has said which entries a rank holds). */
    int distributed;
    int64_t first;          /* this rank's first owned dof in the global numbering */
    double *rhs, *sol;      /* [nowned] b's owned entries; [lsol] the solution entries MUMPS left here */
    MUMPS_INT *irhs, *isol; /* their global numbers, 1-based */
    int planned, npeers;    /* the exchange: with npeers ranks (this one included where it keeps entries) */
    int *peers;
    int64_t *send_off, *recv_off; /* [npeers + 1] */
    int64_t *send_pick;           /* [lsol] the sol entries in send order */
    int64_t *recv_at;             /* [received] where each received value goes in x */
    double *send, *recv;
} Mumps;

/* The distributed vectors' arrays and the solution's exchange plan freed: a new factorisation may leave the
 * solution's entries on other ranks. */
static void forget_vectors(Mumps *m) {
    free(m->rhs), free(m->sol), free(m->irhs), free(m->isol);
    free(m->peers), free(m->send_off), free(m->recv_off), free(m->send_pick), free(m->recv_at);
    free(m->send), free(m->recv);
    m->rhs = m->sol = m->send = m->recv = NULL, m->irhs = m->isol = NULL, m->peers = NULL;
    m->send_off = m->recv_off = m->send_pick = m->recv_at = NULL;
    m->planned = m->npeers = 0;
}

static void mumps_destroy(void *impl) {
    Mumps *m = impl;
    if (!m) return;
    if (m->started) {
        m->id.job = JOB_END;
        dmumps_c(&m->id);
    }
    free(m->off);
    free(m->global);
    free(m->whole);
    free(m->irn);
    free(m->jcn);
    free(m->a);
    forget_vectors(m);
    free(m);
}

/* MUMPS's global status (INFOG(1), the same on every rank) after `what` as one sentence, or FEM_OK. */
static int check(const Mumps *m, const char *what) {
    int e = m->id.INFOG(1), e2 = m->id.INFOG(2);
    if (e >= 0) return FEM_OK;
    if (e == -10)
        return fem_fail(FEM_ERR_SOLVER,
                        "MUMPS could not factorise the coarse matrix: it is singular, not positive definite "
                        "(MUMPS error -10, %d pivots factorised of %lld)",
                        e2, (long long)m->n);
    if (e == -13 || e == -5 || e == -7)
        return fem_fail(FEM_ERR_INTERNAL,
                        "MUMPS ran out of host memory while %s (%lld rows; MUMPS error %d, %d)", what,
                        (long long)m->n, e, e2);
    return fem_fail(FEM_ERR_SOLVER, "MUMPS failed while %s (MUMPS error %d, %d)", what, e, e2);
}

/* The number of this rank's entries of A's upper triangle in the global numbering (A's rows and columns are
 * local dofs; global maps them, or is NULL for the identity), and with irn, jcn, a not NULL the entries
 * themselves, 1-based. Zero entries (a constrained ghost's row) are left out. */
static int64_t upper_entries(const CsrMatrix *A, const int64_t *global, MUMPS_INT *irn, MUMPS_INT *jcn,
                             double *a) {
    int64_t k = 0;
    for (int64_t i = 0; i < A->nrows; i++) {
        int64_t gi = global ? global[i] : i;
        for (int64_t q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            int64_t gj = global ? global[A->cols[q]] : A->cols[q];
            if (gj < gi || A->vals[q] == 0.0) continue;
            if (irn) irn[k] = (MUMPS_INT)(gi + 1), jcn[k] = (MUMPS_INT)(gj + 1), a[k] = A->vals[q];
            k++;
        }
    }
    return k;
}

/* m's entries (irn, jcn, a) from A, handed to MUMPS. */
static int entries(Mumps *m, const CsrMatrix *A, const int64_t *global) {
    int64_t nnz = upper_entries(A, global, NULL, NULL, NULL);
    FEM_ALLOC(m->irn, nnz + 1, "the coarse matrix's rows for MUMPS");
    FEM_ALLOC(m->jcn, nnz + 1, "the coarse matrix's columns for MUMPS");
    FEM_ALLOC(m->a, nnz + 1, "the coarse matrix's values for MUMPS");
    m->id.nnz_loc = upper_entries(A, global, m->irn, m->jcn, m->a);
    m->id.irn_loc = m->irn, m->id.jcn_loc = m->jcn, m->id.a_loc = m->a;
    return FEM_OK;
}

/* The ordering MUMPS is asked for: FEMTO_MUMPS_ORDERING (amd, amf, pord, qamd, auto) for comparisons, else
 * PORD, the nested-dissection ordering Debian's MUMPS has (it is built without METIS and Scotch). */
static int ordering(void) {
    const char *e = getenv("FEMTO_MUMPS_ORDERING");
    if (!e || !*e || !strcmp(e, "pord")) return ORDER_PORD;
    return !strcmp(e, "amd")    ? ORDER_AMD
           : !strcmp(e, "amf")  ? ORDER_AMF
           : !strcmp(e, "qamd") ? ORDER_QAMD
                                : ORDER_AUTO;
}

static const char *ordering_name(int o) {
    return o == ORDER_AMD    ? "AMD"
           : o == ORDER_AMF  ? "AMF"
           : o == ORDER_PORD ? "PORD"
           : o == ORDER_QAMD ? "QAMD"
           : o == 5          ? "METIS"
           : o == 3          ? "Scotch"
                             : "its own";
}

/* JOB_INIT on comm, with MUMPS's printing off (femto reports through its own sentences). */
static int start(Mumps *m, MPI_Comm comm) {
    m->id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(comm);
    m->id.par = 1; /* the host (rank 0) works too */
    m->id.sym = 1; /* symmetric positive definite */
    m->id.job = JOB_INIT;
    dmumps_c(&m->id);
    m->started = 1;
    FEM_TRY(check(m, "starting"));
    m->id.ICNTL(1) = -1, m->id.ICNTL(2) = -1, m->id.ICNTL(3) = -1, m->id.ICNTL(4) = 0;
    m->id.ICNTL(5) = 0;  /* assembled */
    m->id.ICNTL(18) = 3; /* each rank hands in its own entries */
    m->id.ICNTL(28) = 1; /* the analysis on rank 0 */
    m->id.ICNTL(7) = ordering();
    m->id.ICNTL(14) = 40;                      /* 40% more working memory than the analysis estimates */
    m->id.ICNTL(20) = m->distributed ? 10 : 0; /* b on rank 0 (dense), or where its entries are owned */
    m->id.ICNTL(21) = m->distributed ? 1 : 0;  /* x on rank 0, or where MUMPS computes it */
    /* FEMTO_MUMPS_ICNTL="K=V,K=V": MUMPS's controls set by hand, for measurements (docs/solvers.md) */
    const char *e = getenv("FEMTO_MUMPS_ICNTL");
    for (int k, v, used; e && sscanf(e, "%d=%d%n", &k, &v, &used) == 2; e += used + (e[used] == ',')) {
        if (k >= 1 && k <= 60) m->id.ICNTL(k) = v;
        if (!e[used]) break;
    }
    return FEM_OK;
}

/* The analysis and the factorisation (job JOB_ANALYSE_FACTORISE), or the factorisation alone with the
 * analysis made before (JOB_FACTORISE); a factorisation short of working memory (errors -8, -9) is repeated
 * with more, twice. */
static int factorise(Mumps *m, int job) {
    m->id.n = (MUMPS_INT)m->n;
    m->id.job = job;
    dmumps_c(&m->id);
    for (int retry = 0; retry < 2 && (m->id.INFOG(1) == -8 || m->id.INFOG(1) == -9); retry++) {
        m->id.ICNTL(14) *= 3;
        m->id.job = JOB_FACTORISE;
        dmumps_c(&m->id);
    }
    FEM_TRY(check(m, "factorising the coarse matrix"));
    /* SYM = 1 factorises a symmetric indefinite matrix too (no pivoting): its inverse would break CG */
    if (m->id.INFOG(12) > 0)
        return fem_fail(FEM_ERR_SOLVER,
                        "MUMPS could not factorise the coarse matrix: it is not positive definite (%d of its "
                        "%lld pivots are negative)",
                        m->id.INFOG(12), (long long)m->n);
    return FEM_OK;
}

/* The distributed vectors' arrays, once the factorisation has said how many solution entries this rank
 * holds (INFO(23)). */
static int distributed_vectors(Mumps *m) {
    int64_t lsol = m->id.info[22];
    FEM_ALLOC(m->rhs, m->nowned + 1, "the coarse solver's right-hand side");
    FEM_ALLOC(m->irhs, m->nowned + 1, "the coarse solver's right-hand side");
    FEM_ALLOC(m->sol, lsol + 1, "the coarse solver's solution");
    FEM_ALLOC(m->isol, lsol + 1, "the coarse solver's solution");
    for (int64_t i = 0; i < m->nowned; i++) m->irhs[i] = (MUMPS_INT)(m->first + i + 1);
    m->id.nloc_rhs = (MUMPS_INT)m->nowned, m->id.lrhs_loc = (MUMPS_INT)m->nowned;
    m->id.rhs_loc = m->rhs, m->id.irhs_loc = m->irhs;
    m->id.sol_loc = m->sol, m->id.isol_loc = m->isol, m->id.lsol_loc = (MUMPS_INT)lsol;
    m->id.nrhs = 1;
    return FEM_OK;
}

/* The rank that owns global dof g (m->off: byte offsets of the ranks' owned blocks). */
static int owner(const Mumps *m, int64_t g) {
    int lo = 0, hi = comm_size() - 1;
    int64_t at = g * (int64_t)sizeof(double);
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (m->off[mid] <= at)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The exchange that takes the solution entries MUMPS left on each rank to their owners: the counts each rank
 * sends each other through an all-to-all, then the global numbers once (as doubles: exact below 2^53).
 * Collective. */
static int plan(Mumps *m) {
    int n = comm_size();
    int64_t lsol = m->id.lsol_loc, *sends = calloc((size_t)n, sizeof(int64_t)),
            *gets = calloc((size_t)n, sizeof(int64_t));
    int status = comm_agree(sends && gets ? FEM_OK
                                          : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse "
                                                                       "solution's plan"));
    if (status) return free(sends), free(gets), status;
    for (int64_t k = 0; k < lsol; k++) sends[owner(m, m->isol[k] - 1)]++; /* [to rank] entries for it */
    status = comm_alltoall_int64(sends, gets);
    int64_t nsend = 0, nrecv = 0;
    m->peers = malloc(sizeof(int) * (size_t)n);
    m->send_off = calloc((size_t)n + 1, sizeof(int64_t));
    m->recv_off = calloc((size_t)n + 1, sizeof(int64_t));
    if (!status && (!m->peers || !m->send_off || !m->recv_off))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse solution's plan");
    if (!status)
        for (int r = 0; r < n; r++) {
            int64_t s = sends[r], q = gets[r];
            if (!s && !q) continue;
            m->peers[m->npeers++] = r;
            m->send_off[m->npeers] = (nsend += s), m->recv_off[m->npeers] = (nrecv += q);
        }
    free(sends), free(gets);
    if (!status) {
        m->send_pick = malloc(sizeof(int64_t) * (size_t)(nsend + 1));
        m->recv_at = malloc(sizeof(int64_t) * (size_t)(nrecv + 1));
        m->send = malloc(sizeof(double) * (size_t)(nsend + 1));
        m->recv = malloc(sizeof(double) * (size_t)(nrecv + 1));
        if (!m->send_pick || !m->recv_at || !m->send || !m->recv)
            status = fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse solution's plan");
    }
    status = comm_agree(status);
    if (status) return status;
    int64_t fill[n]; /* (small: one per rank) */
    memset(fill, 0, sizeof fill);
    int slot[n];
    for (int i = 0; i < m->npeers; i++) slot[m->peers[i]] = i;
    for (int64_t k = 0; k < lsol; k++) {
        int i = slot[owner(m, m->isol[k] - 1)];
        int64_t at = m->send_off[i] + fill[i]++;
        m->send_pick[at] = k, m->send[at] = (double)(m->isol[k] - 1);
    }
    CommExchange x;
    status = comm_exchange_begin(&x, m->npeers, m->peers, m->send_off, m->send, m->recv_off, m->recv);
    if (!status) status = comm_exchange_end(&x);
    for (int64_t k = 0; !status && k < nrecv; k++) m->recv_at[k] = (int64_t)m->recv[k] - m->first;
    m->planned = 1;
    return comm_agree(status);
}

/* x = A^-1 b with distributed vectors: b's owned entries in, MUMPS's solve, each solution entry to its owner;
 * x's ghosts 0. */
static int distributed_apply(Mumps *m, const double *b, double *x) {
    memcpy(m->rhs, b, sizeof(double) * (size_t)m->nowned);
    m->id.job = JOB_SOLVE;
    dmumps_c(&m->id);
    FEM_TRY(check(m, "solving with the coarse factor"));
    if (!m->planned) FEM_TRY(plan(m));
    int64_t nsend = m->send_off[m->npeers], nrecv = m->recv_off[m->npeers];
    for (int64_t k = 0; k < nsend; k++) m->send[k] = m->sol[m->send_pick[k]];
    CommExchange xc;
    int status = comm_exchange_begin(&xc, m->npeers, m->peers, m->send_off, m->send, m->recv_off, m->recv);
    if (!status) status = comm_exchange_end(&xc);
    for (int64_t k = 0; !status && k < nrecv; k++) x[m->recv_at[k]] = m->recv[k];
    for (int64_t i = m->nowned; i < m->nlocal; i++) x[i] = 0.0;
    return comm_agree(status);
}

/* x = A^-1 b: b's owned entries to rank 0, MUMPS's solve over the ranks, x's owned entries back; x's ghosts
 * 0. Every rank takes every step whatever failed before it (each is collective), and the ranks agree on the
 * status once, at the end. */
static int mumps_apply(void *impl, const double *b, double *x) {
    Mumps *m = impl;
    const int64_t own = (int64_t)sizeof(double) * m->nowned;
    if (!m->over_ranks) {
        memcpy(m->whole, b, (size_t)own);
        m->id.job = JOB_SOLVE;
        dmumps_c(&m->id);
        FEM_TRY(check(m, "solving with the coarse factor"));
        memcpy(x, m->whole, (size_t)own);
        return FEM_OK;
    }
    if (m->distributed) return distributed_apply(m, b, x);
    int status = comm_gather_bytes(b, own, m->whole, m->off, ROOT);
    m->id.job = JOB_SOLVE;
    dmumps_c(&m->id);
    int solved = check(m, "solving with the coarse factor");
    if (!status) status = solved;
    int moved = comm_scatter_bytes(m->whole, m->off, x, own, ROOT);
    if (!status) status = moved;
    for (int64_t i = m->nowned; i < m->nlocal; i++) x[i] = 0.0;
    return comm_agree(status);
}

/* New values on the pattern MUMPS analysed (Newton's next step, coarse_refactor): where every rank's entries
 * have the positions of those it handed in before, MUMPS factorises the new values with its analysis (the
 * ordering and the mapping over the ranks kept: JOB = 2 alone); else *done = 0 and nothing changed.
 * Collective over the ranks. */
static int mumps_refactor(void *impl, const CsrMatrix *A, int *done) {
    Mumps *m = impl;
    *done = 0;
    int64_t nnz = upper_entries(A, m->global, NULL, NULL, NULL);
    int same = nnz == m->id.nnz_loc, status = FEM_OK;
    MUMPS_INT *irn = NULL, *jcn = NULL;
    double *a = NULL;
    if (same) {
        irn = malloc(sizeof(MUMPS_INT) * (size_t)(nnz + 1));
        jcn = malloc(sizeof(MUMPS_INT) * (size_t)(nnz + 1));
        a = malloc(sizeof(double) * (size_t)(nnz + 1));
        if (!irn || !jcn || !a) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory refactorising MUMPS");
    }
    if (same && !status) {
        upper_entries(A, m->global, irn, jcn, a);
        same = !memcmp(irn, m->irn, sizeof(MUMPS_INT) * (size_t)nnz) &&
               !memcmp(jcn, m->jcn, sizeof(MUMPS_INT) * (size_t)nnz);
    }
    free(irn), free(jcn);
    if (m->over_ranks) {
        status = comm_agree(status);
        double differ[1] = {!same};
        int reduced = comm_max(differ, 1);
        if (!status) status = reduced;
        same = differ[0] == 0.0;
    }
    if (status || !same) {
        free(a);
        return status;
    }
    m->a = a, m->id.a_loc = a, m->id.irn_loc = m->irn, m->id.jcn_loc = m->jcn;
    status = factorise(m, JOB_FACTORISE);
    free(m->a);
    m->a = NULL, m->id.a_loc = NULL;
    if (!status && m->distributed) {
        forget_vectors(m);
        status = comm_agree(distributed_vectors(m));
    }
    *done = !status;
    return status;
}

/* Over ranks: the byte offsets of the ranks' owned blocks in a whole vector, and the whole matrix's size. */
static int layout(Mumps *m) {
    int64_t *owned = NULL;
    int status = coarse_owned_layout(m->nowned, &owned, &m->off);
    if (!status) m->n = m->off[comm_size()] / (int64_t)sizeof(double);
    free(owned);
    return status;
}

static void describe(Mumps *m, CoarseBackend *out) {
    double factor = m->id.INFOG(29) >= 0 ? (double)m->id.INFOG(29) : -1e6 * m->id.INFOG(29);
    int ranks = m->over_ranks ? comm_size() : 1;
    snprintf(out->description, sizeof out->description,
             "MUMPS %s (L D L^T over %d MPI rank%s, %s ordering, nnz(L) = %.2g, %d MB on the largest rank)",
             m->id.version_number, ranks, ranks > 1 ? "s" : "", ordering_name(m->id.INFOG(7)), factor,
             m->id.INFOG(21));
}

int mumps_coarse_create(const CsrMatrix *A, const CoarseOptions *opt, CoarseBackend *out) {
    Mumps *m = fem_calloc(1, sizeof *m, "the MUMPS coarse solver");
    int status = m ? comm_ensure_init() : FEM_ERR_INTERNAL;
    int over = opt->global != NULL;
    if (over) status = comm_agree(status);
    if (status) {
        free(m);
        return status;
    }
    m->over_ranks = over;
    m->first = over ? opt->first : 0;
    const char *vectors = getenv("FEMTO_MUMPS_VECTORS");
    m->distributed = over && vectors && !strcmp(vectors, "distributed");
    m->nlocal = A->nrows;
    m->nowned = over ? opt->nowned : A->nrows;
    m->n = A->nrows;
    if (over) status = comm_agree(layout(m));
    if (!status && m->n > INT_MAX)
        status =
            fem_fail(FEM_ERR_USAGE, "the coarse level has %lld rows, more than MUMPS's 32-bit indices allow",
                     (long long)m->n);
    if (!status && !m->distributed && (!over || comm_rank() == ROOT))
        status = (m->whole = malloc(sizeof(double) * (size_t)(m->n + 1)))
                     ? FEM_OK
                     : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse solver's vectors");
    if (over) status = comm_agree(status);
    if (!status) status = start(m, over ? comm_world() : comm_self());
    if (!status) status = entries(m, A, over ? opt->global : NULL); /* (after JOB_INIT, which clears them) */
    if (over) status = comm_agree(status);
    if (!status) {
        if (m->whole) m->id.rhs = m->whole, m->id.nrhs = 1, m->id.lrhs = (MUMPS_INT)m->n;
        status = factorise(m, JOB_ANALYSE_FACTORISE);
    }
    if (!status && m->distributed) status = comm_agree(distributed_vectors(m));
    if (!status && over) {
        m->global = malloc(sizeof(int64_t) * (size_t)(m->nlocal + 1)); /* for a refactorisation */
        if (m->global) memcpy(m->global, opt->global, sizeof(int64_t) * (size_t)m->nlocal);
        status = m->global ? FEM_OK : fem_fail(FEM_ERR_INTERNAL, "out of host memory for the coarse solver");
        status = comm_agree(status);
    }
    if (!status) {
        free(m->a); /* MUMPS keeps its own copy in the factor; the pattern stays for a refactorisation */
        m->a = NULL, m->id.a_loc = NULL;
        describe(m, out);
    }
    status = coarse_backend_finish(out, status, m, 0, mumps_apply, mumps_destroy);
    if (!status) out->refactor = mumps_refactor;
    return status;
}

#endif
