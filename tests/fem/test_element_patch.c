/* Element patches (fem/element_patch.h), the layout of the GPU register kernel's patch variant, checked on
 * the host: on a real mesh and space, every element-node pair of a patch appears in exactly one slot of
 * exactly one of the patch's nodes and that slot names the node of the dof map; a patch lists each node once;
 * a node is private exactly when all of its elements (in the whole block) lie in the patch; and summing
 * random element contributions slot by slot, node by node (what the kernel does) equals adding them element
 * by element to 1e-14. The partial sums of deterministic assembly (element_patches_partials): a patch adds
 * its private nodes and writes its shared ones to their partials, each written once, and each shared node's
 * partials, listed in patch order, add up to the same sums to 1e-14, bitwise the same when done twice.
 * Compactness: with the cells in curve order (mesh_read's default) a patch of EPB elements must touch at most
 * MAXRATIO x its element-node pairs in distinct nodes; the file's order (FEMTO_CELL_ORDER=mesh) spreads a
 * patch over the whole mesh, which the ratio printed shows.
 *
 * usage: test_element_patch MESH.geo SIZE P EPB MAXRATIO */
#include "common/femto_test.h"
#include "fem/element_patch.h"
#include "fem/error.h"
#include "fem/space.h"
#include "io/mesh_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 6) return fprintf(stderr, "usage: %s MESH.geo SIZE P EPB MAXRATIO\n", argv[0]), 2;
    const int p = atoi(argv[3]), epb = atoi(argv[4]);
    const double maxratio = atof(argv[5]);
    Mesh m;
    MeshReadOptions mo = {0};
    mo.size = atof(argv[2]);
    CHECK_OK(mesh_read(test_mesh(argv[1]), &mo, &m));
    Space sp;
    CHECK_OK(space_create(&m, p, 1, &sp));
    const SpaceBlock *sb = &sp.cells[0];
    const int64_t ne = sb->count, nd = sb->ndof, nn = sp.nnodes;
    ElementPatches pt;
    CHECK_OK(element_patches(sb->dofs, ne, (int)nd, nn, epb, &pt));
    CHECK(pt.npatch == (ne + epb - 1) / epb, "%lld patches for %lld elements of %d", (long long)pt.npatch,
          (long long)ne, epb);
    int32_t *deg = calloc((size_t)nn, sizeof *deg), *seen = malloc(sizeof(int32_t) * (size_t)nn);
    unsigned char *hit = malloc((size_t)epb * nd);
    for (int64_t k = 0; k < ne * nd; k++) deg[sb->dofs[k]]++;
    for (int64_t k = 0; k < nn; k++) seen[k] = -1;
    int errors = 0, maxn = 0;
    for (int64_t pi = 0; pi < pt.npatch && errors < 5; pi++) {
        const int64_t e0 = pi * epb, nb = ne - e0 < epb ? ne - e0 : epb;
        memset(hit, 0, (size_t)epb * nd);
        const int32_t k0 = pt.node_off[pi], k1 = pt.node_off[pi + 1];
        if (k1 - k0 > maxn) maxn = k1 - k0;
        CHECK(pt.inc_beg[k0] == e0 * nd && pt.inc_beg[k1] == (e0 + nb) * nd,
              "patch %lld: slots %d..%d, not %lld..%lld", (long long)pi, pt.inc_beg[k0], pt.inc_beg[k1],
              (long long)(e0 * nd), (long long)((e0 + nb) * nd));
        for (int32_t k = k0; k < k1; k++) {
            const fem_idx g = pt.nodes[k];
            if (seen[g] == (int32_t)pi)
                errors++, printf("patch %lld lists node %d twice\n", (long long)pi, g);
            seen[g] = (int32_t)pi;
            const int32_t n = pt.inc_beg[k + 1] - pt.inc_beg[k];
            if ((n == deg[g]) != (k - k0 < pt.npriv[pi]))
                errors++, printf("patch %lld node %d: %d of its %d elements here, listed as %s\n",
                                 (long long)pi, g, n, deg[g], k - k0 < pt.npriv[pi] ? "private" : "shared");
            for (int32_t j = pt.inc_beg[k]; j < pt.inc_beg[k + 1]; j++) {
                const int s = pt.inc_slot[j], i = s / epb, le = s % epb;
                if (le >= nb || i >= nd || hit[s] || sb->dofs[(e0 + le) * nd + i] != g)
                    errors++, printf("patch %lld node %d: slot %d (element %d, node %d) wrong or repeated\n",
                                     (long long)pi, g, s, le, i);
                else
                    hit[s] = 1;
            }
        }
        for (int64_t le = 0; le < nb; le++)
            for (int i = 0; i < nd; i++)
                if (!hit[i * epb + le])
                    errors++, printf("patch %lld: element %lld node %d in no slot\n", (long long)pi,
                                     (long long)le, i);
        for (int64_t le = 0; le < nb; le++)
            for (int i = 0; i < nd; i++) {
                const int l = pt.slot_node[pi * epb * nd + le * nd + i];
                if (l >= k1 - k0 || pt.nodes[k0 + l] != sb->dofs[(e0 + le) * nd + i])
                    errors++, printf("patch %lld: element %lld node %d: local node %d is wrong\n",
                                     (long long)pi, (long long)le, i, l);
            }
    }
    CHECK(errors == 0, "%d errors in the patches", errors);
    CHECK(maxn == pt.maxn, "the most nodes of a patch: %d, reported %d", maxn, pt.maxn);

    /* the kernel's sums against element-by-element adds */
    uint64_t seed = 7;
    double *c = malloc(sizeof(double) * (size_t)(ne * nd)), *y0 = calloc((size_t)nn, sizeof(double)),
           *y1 = calloc((size_t)nn, sizeof(double)), *S = malloc(sizeof(double) * (size_t)epb * nd);
    for (int64_t k = 0; k < ne * nd; k++) c[k] = test_rand(&seed) - 0.5, y0[sb->dofs[k]] += c[k];
    for (int64_t pi = 0; pi < pt.npatch; pi++) {
        const int64_t e0 = pi * epb, nb = ne - e0 < epb ? ne - e0 : epb;
        for (int64_t le = 0; le < nb; le++)
            for (int i = 0; i < nd; i++) S[i * epb + le] = c[(e0 + le) * nd + i];
        for (int32_t k = pt.node_off[pi]; k < pt.node_off[pi + 1]; k++) {
            double s = 0.0;
            for (int32_t j = pt.inc_beg[k]; j < pt.inc_beg[k + 1]; j++) s += S[pt.inc_slot[j]];
            y1[pt.nodes[k]] += s;
        }
    }
    double d = 0.0, n2 = 0.0;
    for (int64_t k = 0; k < nn; k++) d += (y1[k] - y0[k]) * (y1[k] - y0[k]), n2 += y0[k] * y0[k];
    CHECK(sqrt(d / n2) <= 1e-14, "patch sums differ from element adds by %.3e", sqrt(d / n2));

    /* deterministic assembly: private nodes straight to the output, shared ones through their partials */
    CHECK_OK(element_patches_partials(&pt, nn));
    const int32_t npart = pt.part_off[pt.npatch];
    double *part = malloc(sizeof(double) * (size_t)(npart + 1));
    unsigned char *written = calloc((size_t)npart + 1, 1);
    int perr = 0;
    double *y2[2] = {calloc((size_t)nn, sizeof(double)), calloc((size_t)nn, sizeof(double))};
    for (int run = 0; run < 2; run++) {
        for (int64_t pi = 0; pi < pt.npatch; pi++) {
            const int64_t e0 = pi * epb, nb = ne - e0 < epb ? ne - e0 : epb;
            for (int64_t le = 0; le < nb; le++)
                for (int i = 0; i < nd; i++) S[i * epb + le] = c[(e0 + le) * nd + i];
            const int32_t k0 = pt.node_off[pi], kp = k0 + pt.npriv[pi];
            CHECK(pt.part_off[pi + 1] - pt.part_off[pi] == pt.node_off[pi + 1] - kp,
                  "patch %lld: %d partials for %d shared nodes", (long long)pi,
                  pt.part_off[pi + 1] - pt.part_off[pi], pt.node_off[pi + 1] - kp);
            for (int32_t k = k0; k < pt.node_off[pi + 1]; k++) {
                double s = 0.0;
                for (int32_t j = pt.inc_beg[k]; j < pt.inc_beg[k + 1]; j++) s += S[pt.inc_slot[j]];
                if (k < kp) {
                    y2[run][pt.nodes[k]] += s;
                    continue;
                }
                const int32_t at = pt.part_off[pi] + (k - kp);
                if (run == 0 && written[at]++)
                    perr++, printf("patch %lld: partial %d written twice\n", (long long)pi, at);
                part[at] = s;
            }
        }
        for (int64_t k = 0; k < pt.nshared; k++) {
            const fem_idx g = pt.sh_node[k];
            if (run == 0 && (pt.sh_beg[k + 1] - pt.sh_beg[k] < 2 || (k > 0 && pt.sh_node[k - 1] >= g)))
                perr++, printf("shared node %d: %d partials (at least 2), after node %d\n", g,
                               pt.sh_beg[k + 1] - pt.sh_beg[k], k > 0 ? pt.sh_node[k - 1] : -1);
            double s = 0.0;
            for (int32_t j = pt.sh_beg[k]; j < pt.sh_beg[k + 1]; j++) {
                if (j > pt.sh_beg[k] && pt.sh_part[j] <= pt.sh_part[j - 1])
                    perr++, printf("shared node %d: partials not in patch order\n", g);
                s += part[pt.sh_part[j]];
            }
            y2[run][g] += s;
        }
    }
    for (int32_t j = 0; j < npart; j++)
        if (!written[j]) perr++, printf("partial %d is never written\n", j);
    CHECK(perr == 0, "%d errors in the partial sums", perr);
    CHECK(pt.sh_beg[pt.nshared] == npart, "the shared nodes list %d partials of %d", pt.sh_beg[pt.nshared],
          npart);
    d = 0.0;
    for (int64_t k = 0; k < nn; k++) d += (y2[0][k] - y0[k]) * (y2[0][k] - y0[k]);
    CHECK(sqrt(d / n2) <= 1e-14, "deterministic patch sums differ from element adds by %.3e", sqrt(d / n2));
    CHECK(memcmp(y2[0], y2[1], sizeof(double) * (size_t)nn) == 0,
          "the deterministic patch sums differ between runs");
    printf("%lld shared nodes, %d partials (%.2f a shared node; %.3f per element-node pair)\n",
           (long long)pt.nshared, npart, (double)npart / (double)(pt.nshared ? pt.nshared : 1),
           (double)npart / (double)(ne * nd));
    free(part), free(written), free(y2[0]), free(y2[1]);

    int64_t npriv = 0;
    for (int64_t pi = 0; pi < pt.npatch; pi++) npriv += pt.npriv[pi];
    const double ratio = (double)pt.ntotal / (double)(ne * nd);
    printf("%lld elements of %lld nodes, %lld patches of %d: %.3f distinct nodes per element-node pair (at "
           "most %.3f), "
           "%.1f%% of them private, at most %d in one patch\n",
           (long long)ne, (long long)nd, (long long)pt.npatch, epb, ratio, maxratio,
           100.0 * (double)npriv / (double)pt.ntotal, pt.maxn);
    CHECK(ratio <= maxratio, "%.3f distinct nodes per element-node pair, more than %.3f", ratio, maxratio);

    element_patches_destroy(&pt);
    free(deg), free(seen), free(hit), free(c), free(y0), free(y1), free(S);
    space_destroy(&sp);
    mesh_destroy(&m);
    return test_result("test_element_patch");
}
