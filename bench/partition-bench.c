/* femto-partition-bench: what splitting a mesh over many MPI ranks costs in halo traffic, and where a run over
 * ranks would stop scaling (issue 15's simulated-scale table; docs/PERFORMANCE.md).
 *
 * For each part count P the mesh's cells are cut by the same METIS call a run over ranks makes
 * (fem/partition.h), and the halo is counted with the ownership rule of fem/dist.h (a node belongs to the
 * part with the smallest dist_owner_key among the cells touching it; every other part touching it holds a
 * ghost copy): owned and ghost
 * dofs per part, neighbours, and the bytes one exchange moves. Counting needs no Dist per part (that builds
 * each part's space): one sorted list of (node, part) pairs gives it all.
 *
 * The measured mesh is then scaled to a target size (--target-dofs, 10^8 by default) at the same part count:
 * parts keep their shapes and neighbours, owned dofs scale with the mesh and ghost (surface) dofs with its 2/3
 * power (1/2 in 2D). The halo time of one CG iteration is modelled from a latency and a bandwidth (--latency,
 * --bandwidth: measured ones, or a network's published figures) for two exchanges (forward before the
 * operator, reverse-add after) and three global sums of log2(P) latency steps, against the compute time of an
 * iteration at --rate dofs per second per rank. "overlapped" assumes the exchange hides behind the interior
 * elements (the operator's begin/compute/end), "serial" that it does not. --staging adds the copies of a
 * halo staged through host memory (device to host and back, at that bandwidth; 0: CUDA-aware MPI, none).
 *
 * usage: femto-partition-bench MESH [--size H] [--order P] [--ncomp C] [--parts 2,4,...]
 *                              [--target-dofs N] [--rate DOFS_PER_S] [--latency S] [--bandwidth BYTES_PER_S]
 *                              [--staging BYTES_PER_S] [--markdown FILE] [--check]
 *
 * The last columns time what rank 0 does at the start of a run over P ranks (fem/dist.h, dist_scatter): one split
 * of the space, then every rank's part made and packed; and the records' sizes (the largest, all of them).
 *
 * --check compares the counts with the Dist that fem/dist.h builds for every rank from its part. */
#include "fem/dist.h"
#include "fem/error.h"
#include "fem/partition.h"
#include "fem/space.h"
#include "io/mesh_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_PARTS_LIST = 32 };

typedef struct {
    const char *mesh, *markdown;
    double size, target_dofs, rate, latency, bandwidth, staging;
    int order, ncomp, nparts_list, parts[MAX_PARTS_LIST];
    int check; /* compare the counts with each rank's fem/dist.h part */
} Opts;

/* One part count's halo, per part (the maxima are what a bulk-synchronous iteration waits for). */
typedef struct {
    int nparts;
    int64_t owned_max, owned_min, ghost_max;
    double ghost_mean; /* mean over parts of ghost / owned */
    double ghost_frac_max;
    int nbr_max;
    double nbr_mean;
    int64_t bytes_max;    /* the larger of a part's sent and received bytes in one exchange */
    double msg_mean_bytes; /* mean message size */
    double seconds;       /* METIS and counting */
    /* what rank 0 does at a run's start over that many ranks (fem/dist.h, dist_scatter): one split of the space,
     * then every rank's part made and packed */
    double parts_seconds;
    int64_t part_bytes_max, parts_bytes;
} HaloStats;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct (node, part) pairs of the space's cells, as node << 20 | part, sorted. */
static int node_part_pairs(const Space *sp, const int32_t *part, uint64_t **pairs, int64_t *npairs) {
    int64_t n = 0;
    for (int b = 0; b < sp->ncell_blocks; b++) n += sp->cells[b].count * sp->cells[b].ndof;
    FEM_ALLOC(*pairs, n, "the node-part pairs");
    int64_t k = 0;
    for (int b = 0; b < sp->ncell_blocks; b++) {
        const SpaceBlock *sb = &sp->cells[b];
        const int64_t off = partition_cell_offset(sp->mesh, b);
        for (int64_t e = 0; e < sb->count; e++)
            for (int i = 0; i < sb->ndof; i++)
                (*pairs)[k++] = (uint64_t)sb->dofs[e * sb->ndof + i] << 20 | (uint64_t)part[off + e];
    }
    qsort(*pairs, (size_t)n, sizeof **pairs, cmp_u64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || (*pairs)[i] != (*pairs)[m - 1]) (*pairs)[m++] = (*pairs)[i];
    *npairs = m;
    return FEM_OK;
}

/* From the pairs: owned and ghost nodes per part, and the (owner, ghost holder) links with their node counts
 * as owner << 20 | holder, sorted (one entry per shared node and holder). */
static int halo_links(const uint64_t *pairs, int64_t npairs, int64_t *owned, int64_t *ghost, uint64_t **links,
                      int64_t *nlinks) {
    FEM_ALLOC(*links, npairs, "the halo links");
    int64_t nl = 0;
    for (int64_t i = 0; i < npairs;) {
        const int64_t node = (int64_t)(pairs[i] >> 20);
        int64_t j = i;
        int owner = -1;
        for (; j < npairs && (int64_t)(pairs[j] >> 20) == node; j++) {
            const int p = (int)(pairs[j] & 0xfffff);
            if (owner < 0 || dist_owner_key(node, p) < dist_owner_key(node, owner)) owner = p;
        }
        owned[owner]++;
        for (int64_t k = i; k < j; k++) {
            const int holder = (int)(pairs[k] & 0xfffff);
            if (holder == owner) continue;
            ghost[holder]++;
            (*links)[nl++] = (uint64_t)owner << 20 | (uint64_t)holder;
        }
        i = j;
    }
    qsort(*links, (size_t)nl, sizeof **links, cmp_u64);
    *nlinks = nl;
    return FEM_OK;
}

/* Messages and bytes per part from the sorted links: a part sends each holder of its nodes one message and
 * receives one from each owner of its ghosts. */
static void message_stats(const uint64_t *links, int64_t nlinks, int nparts, int ncomp, HaloStats *st) {
    int64_t *sent = calloc((size_t)nparts, sizeof *sent), *recv = calloc((size_t)nparts, sizeof *recv);
    int *nsend = calloc((size_t)nparts, sizeof *nsend), *nrecv = calloc((size_t)nparts, sizeof *nrecv);
    int64_t messages = 0;
    if (!sent || !recv || !nsend || !nrecv) goto done;
    for (int64_t i = 0; i < nlinks;) {
        int64_t j = i;
        while (j < nlinks && links[j] == links[i]) j++;
        const int owner = (int)(links[i] >> 20), holder = (int)(links[i] & 0xfffff);
        const int64_t bytes = (j - i) * ncomp * (int64_t)sizeof(double);
        sent[owner] += bytes, recv[holder] += bytes;
        nsend[owner]++, nrecv[holder]++;
        messages++;
        i = j;
    }
    int64_t total = 0;
    for (int p = 0; p < nparts; p++) {
        const int nbr = nsend[p] > nrecv[p] ? nsend[p] : nrecv[p];
        const int64_t bytes = sent[p] > recv[p] ? sent[p] : recv[p];
        if (nbr > st->nbr_max) st->nbr_max = nbr;
        if (bytes > st->bytes_max) st->bytes_max = bytes;
        st->nbr_mean += (double)nbr / nparts;
        total += sent[p];
    }
    st->msg_mean_bytes = messages ? (double)total / (double)messages : 0;
done:
    free(sent), free(recv), free(nsend), free(nrecv);
}

/* The counts above against what a run over nparts ranks builds: every rank's Dist (its owned and ghost nodes,
 * its neighbours) from the same partition. A mismatch is FEM_ERR_INTERNAL naming the rank. */
static int check_against_dist(const Space *sp, const int32_t *part, int nparts, const int64_t *owned,
                              const int64_t *ghost, const uint64_t *links, int64_t nlinks) {
    int *nbrs = calloc((size_t)nparts, sizeof *nbrs);
    uint64_t *pairs = malloc(sizeof *pairs * (size_t)(nlinks ? nlinks : 1));
    if (!nbrs || !pairs) return free(nbrs), free(pairs), fem_fail(FEM_ERR_INTERNAL, "out of memory checking");
    int64_t n = 0;
    for (int64_t i = 0; i < nlinks; i++) {
        const uint64_t a = links[i] >> 20, b = links[i] & 0xfffff;
        pairs[n++] = a < b ? a << 20 | b : b << 20 | a; /* a neighbour pair, whichever way values go */
    }
    qsort(pairs, (size_t)n, sizeof *pairs, cmp_u64);
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || pairs[i] != pairs[i - 1]) nbrs[pairs[i] >> 20]++, nbrs[pairs[i] & 0xfffff]++;
    DistSplit *split = NULL;
    int status = dist_split_create(sp, part, nparts, &split);
    for (int r = 0; r < nparts && !status; r++) {
        Dist d;
        DistPart dp;
        status = dist_part_make(split, r, &dp);
        if (!status) status = dist_create_part(&d, &dp);
        dist_part_destroy(&dp);
        if (status) break;
        if (d.space.nnodes_owned != owned[r] || d.space.nnodes - d.space.nnodes_owned != ghost[r] ||
            d.nnbr != nbrs[r])
            status = fem_fail(FEM_ERR_INTERNAL,
                              "part %d of %d: %lld owned, %lld ghost nodes and %d neighbours counted, the rank's "
                              "Dist has %lld, %lld and %d",
                              r, nparts, (long long)owned[r], (long long)ghost[r], nbrs[r],
                              (long long)d.space.nnodes_owned, (long long)(d.space.nnodes - d.space.nnodes_owned),
                              d.nnbr);
        dist_destroy(&d);
    }
    dist_split_destroy(split);
    free(nbrs), free(pairs);
    return status;
}

/* Rank 0's work at the start of a run over nparts ranks: the split, then each rank's part made and packed
 * (what dist_scatter sends), timed; the largest record and all of them, in bytes. */
static int parts_cost(const Space *sp, const int32_t *part, int nparts, HaloStats *st) {
    const double t0 = now();
    DistSplit *split = NULL;
    int status = dist_split_create(sp, part, nparts, &split);
    for (int r = 0; r < nparts && !status; r++) {
        DistPart dp;
        char *buf = NULL;
        int64_t len = 0;
        status = dist_part_make(split, r, &dp);
        if (!status) status = dist_part_pack(&dp, &buf, &len);
        dist_part_destroy(&dp);
        free(buf);
        st->parts_bytes += len;
        if (len > st->part_bytes_max) st->part_bytes_max = len;
    }
    dist_split_destroy(split);
    st->parts_seconds = now() - t0;
    return status;
}

static int halo_stats(const Space *sp, int nparts, int ncomp, int check, HaloStats *st) {
    memset(st, 0, sizeof *st);
    st->nparts = nparts;
    const double t0 = now();
    int32_t *part = NULL;
    uint64_t *pairs = NULL, *links = NULL;
    int64_t npairs = 0, nlinks = 0, *owned = NULL, *ghost = NULL;
    int status = FEM_OK;
    if (nparts >= 1 << 20) return fem_fail(FEM_ERR_USAGE, "at most %d parts", (1 << 20) - 1);
    FEM_ALLOC(part, partition_ncells(sp->mesh), "the partition");
    owned = calloc((size_t)nparts, sizeof *owned), ghost = calloc((size_t)nparts, sizeof *ghost);
    if (!owned || !ghost) status = fem_fail(FEM_ERR_INTERNAL, "out of memory counting %d parts", nparts);
    if (!status) status = partition_mesh(sp->mesh, nparts, part);
    if (!status) status = node_part_pairs(sp, part, &pairs, &npairs);
    if (!status) status = halo_links(pairs, npairs, owned, ghost, &links, &nlinks);
    if (!status && check) status = check_against_dist(sp, part, nparts, owned, ghost, links, nlinks);
    st->seconds = now() - t0;
    if (!status) status = parts_cost(sp, part, nparts, st);
    if (!status) {
        message_stats(links, nlinks, nparts, ncomp, st);
        st->owned_min = INT64_MAX;
        for (int p = 0; p < nparts; p++) {
            const int64_t o = owned[p] * ncomp, g = ghost[p] * ncomp;
            if (o > st->owned_max) st->owned_max = o;
            if (o < st->owned_min) st->owned_min = o;
            if (g > st->ghost_max) st->ghost_max = g;
            const double f = o ? (double)g / (double)o : 0;
            st->ghost_mean += f / nparts;
            if (f > st->ghost_frac_max) st->ghost_frac_max = f;
        }
    }
    free(part), free(pairs), free(links), free(owned), free(ghost);
    return status;
}

/* The model of one CG iteration at the target size (see the header). */
typedef struct {
    double owned, ghost_frac, bytes, compute, halo, reduce, eff_serial, eff_overlap;
} Scaled;

static Scaled scale_to_target(const HaloStats *st, int64_t ndofs, int dim, const Opts *o) {
    Scaled s;
    const double grow = o->target_dofs / (double)ndofs;
    const double surface = pow(grow, (dim - 1.0) / dim); /* how a part's boundary grows with its volume */
    s.owned = o->target_dofs / st->nparts;
    s.ghost_frac = st->ghost_frac_max * surface / grow;
    s.bytes = (double)st->bytes_max * surface;
    s.compute = (double)st->owned_max * grow / o->rate;
    const double stage = o->staging > 0 ? 2 * s.bytes / o->staging : 0; /* device -> host -> device */
    s.halo = 2 * (st->nbr_max * o->latency + s.bytes / o->bandwidth + stage);
    s.reduce = 3 * ceil(log2((double)st->nparts)) * o->latency;
    const double comm_overlap = s.halo > s.compute ? s.halo - s.compute : 0;
    const double ideal = o->target_dofs / o->rate / st->nparts;
    s.eff_serial = ideal / (s.compute + s.halo + s.reduce);
    s.eff_overlap = ideal / (s.compute + comm_overlap + s.reduce);
    return s;
}

static void print_row(FILE *f, const HaloStats *st, const Scaled *s) {
    fprintf(f,
            "| %d | %lld | %.4f | %.4f | %d | %.1f | %.1f | %.2f | %.3g | %.3f | %.2f | %.1f | %.1f | %.0f%% | "
            "%.0f%% | %.2f | %.2f | %.1f |\n",
            st->nparts, (long long)st->owned_max, st->ghost_mean, st->ghost_frac_max, st->nbr_max, st->nbr_mean,
            st->msg_mean_bytes / 1024.0, st->bytes_max / 1024.0, s->owned, s->ghost_frac, s->bytes / 1048576.0,
            s->compute * 1e6, (s->halo + s->reduce) * 1e6, 100 * s->eff_serial, 100 * s->eff_overlap,
            st->parts_seconds, st->part_bytes_max / 1e6, st->parts_bytes / 1e6);
}

static void print_header(FILE *f, const Opts *o, const Space *sp, int64_t cells) {
    fprintf(f,
            "Mesh %s: %lld cells, order %d, %d component(s), %lld dofs. Scaled to %.3g dofs; model: %.3g dofs/s "
            "per rank for a CG iteration, latency %.3g us, bandwidth %.3g GB/s, staging %s%.3g GB/s.\n\n",
            o->mesh, (long long)cells, o->order, o->ncomp, (long long)sp->ndofs, o->target_dofs, o->rate,
            o->latency * 1e6, o->bandwidth / 1e9, o->staging > 0 ? "" : "none ", o->staging / 1e9);
    fprintf(f, "| parts | owned dofs (max) | ghost/owned (mean) | ghost/owned (max) | neighbours (max) | "
               "neighbours (mean) | message KiB (mean) | exchange KiB (max) | target: owned dofs | target: "
               "ghost/owned (max) | target: exchange MiB (max) | target: compute us | target: halo + sums us "
               "| efficiency, serial | efficiency, overlapped | rank 0 makes the parts, s | largest part MB | "
               "all parts MB |\n");
    fprintf(f, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

static int parse_parts(const char *s, Opts *o) {
    o->nparts_list = 0;
    for (const char *p = s; *p && o->nparts_list < MAX_PARTS_LIST;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1) return 0;
        o->parts[o->nparts_list++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (end == p && *end) return 0;
    }
    return o->nparts_list > 0;
}

static int parse(int argc, char **argv, Opts *o) {
    *o = (Opts){.order = 2, .ncomp = 3, .target_dofs = 1e8, .rate = 4.06e9, .latency = 2e-6, .bandwidth = 25e9};
    parse_parts("2,4,8,16,32,64,128,256,512,1024", o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int used = 1;
        if (strcmp(a, "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (!v && a[0] == '-') return 0;
        if (strcmp(a, "--size") == 0) o->size = atof(v);
        else if (strcmp(a, "--order") == 0) o->order = atoi(v);
        else if (strcmp(a, "--ncomp") == 0) o->ncomp = atoi(v);
        else if (strcmp(a, "--target-dofs") == 0) o->target_dofs = atof(v);
        else if (strcmp(a, "--rate") == 0) o->rate = atof(v);
        else if (strcmp(a, "--latency") == 0) o->latency = atof(v);
        else if (strcmp(a, "--bandwidth") == 0) o->bandwidth = atof(v);
        else if (strcmp(a, "--staging") == 0) o->staging = atof(v);
        else if (strcmp(a, "--markdown") == 0) o->markdown = v;
        else if (strcmp(a, "--parts") == 0) {
            if (!parse_parts(v, o)) return 0;
        } else if (a[0] != '-' && !o->mesh) o->mesh = a, used = 0;
        else return 0;
        i += used;
    }
    return o->mesh && o->order >= 1 && o->ncomp >= 1 && o->rate > 0 && o->latency >= 0 && o->bandwidth > 0 &&
           o->target_dofs > 0;
}

int main(int argc, char **argv) {
    Opts o;
    if (!parse(argc, argv, &o)) {
        fprintf(stderr, "usage: femto-partition-bench MESH [--size H] [--order P] [--ncomp C] [--parts 2,4,...] "
                        "[--target-dofs N] [--rate DOFS_PER_S] [--latency S] [--bandwidth BYTES_PER_S] "
                        "[--staging BYTES_PER_S] [--markdown FILE] [--check]\n");
        return 1;
    }
    MeshReadOptions mo = {.size = o.size};
    Mesh m;
    Space sp;
    if (mesh_read(o.mesh, &mo, &m) || space_create(&m, o.order, o.ncomp, &sp)) {
        fprintf(stderr, "femto-partition-bench: %s\n", fem_last_error());
        return 2;
    }
    FILE *md = o.markdown ? fopen(o.markdown, "w") : NULL;
    if (o.markdown && !md) {
        fprintf(stderr, "femto-partition-bench: cannot write %s\n", o.markdown);
        return 2;
    }
    const int64_t cells = partition_ncells(&m);
    print_header(stdout, &o, &sp, cells);
    if (md) print_header(md, &o, &sp, cells);
    int status = 0;
    for (int i = 0; i < o.nparts_list && !status; i++) {
        HaloStats st;
        if (o.parts[i] > cells) break;
        status = halo_stats(&sp, o.parts[i], o.ncomp, o.check, &st);
        if (status) break;
        Scaled s = scale_to_target(&st, sp.ndofs, m.dim, &o);
        print_row(stdout, &st, &s);
        if (md) print_row(md, &st, &s);
        fflush(stdout);
    }
    if (status) fprintf(stderr, "femto-partition-bench: %s\n", fem_last_error());
    if (md) fclose(md);
    space_destroy(&sp);
    mesh_destroy(&m);
    return status ? 2 : 0;
}
