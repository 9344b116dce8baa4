/* Patches: a block's elements cut into runs of epb consecutive elements (one GPU thread block each), with the
 * distinct nodes each run touches and, for each of those nodes, where its values go among the run's element
 * slots. A kernel that works on a patch reads each of its nodes once (coalesced), spreads the values into
 * shared memory, lets every thread work on its element there, sums each node's element contributions in
 * shared memory and writes each node once: a plain add where no other patch touches the node, and where one
 * does an atomic add, or (deterministic assembly) the node's partial, which a second pass adds to the others'
 * in patch order (element_patches_partials). Elements in curve order (mesh_sort_cells) make a patch compact,
 * so it has far fewer distinct nodes than element-node pairs (p = 2 tetrahedra, 128 elements: about 350 of
 * 1,280), and the global atomics and scattered loads of a thread-per-element kernel fall by that factor.
 *
 * Slots: element le of a patch (0 <= le < epb), its node i (0 <= i < nd): slot i * epb + le, so that the
 * threads of a warp, one element each, touch consecutive slots. */
#ifndef FEMTO_ELEMENT_PATCH_H
#define FEMTO_ELEMENT_PATCH_H

#include "hd.h"

#include <stdint.h>

FEM_EXTERN_C_BEGIN

typedef struct {
    int64_t npatch; /* ceil(ne / epb); patch p holds elements p * epb ... */
    int64_t ntotal; /* the patches' distinct nodes, all together */
    int epb, nd;
    int maxn;          /* the most distinct nodes of one patch */
    int32_t *node_off; /* [npatch + 1]: patch p's nodes are nodes[node_off[p] .. node_off[p + 1]) */
    int32_t
        *npriv; /* [npatch]: the first npriv[p] of them no other patch touches (private), then the shared */
    fem_idx *nodes;      /* [ntotal] the node numbers (the dof map's entries) */
    int32_t *inc_beg;    /* [ntotal + 1]: node k's slots are inc_slot[inc_beg[k] .. inc_beg[k + 1]) */
    uint16_t *inc_slot;  /* [ne * nd] slots, grouped by node; patch p's lie in [p epb nd, (p epb + its
                            elements) nd) */
    uint16_t *slot_node; /* [npatch epb nd]: element le of patch p has node i at nodes[node_off[p] +
                          * slot_node[p epb nd
                          * + le nd + i]] (element-major, unlike the slots; 0 for the last patch's missing
                          * elements) */
    /* The partial sums of deterministic assembly (element_patches_partials; NULL until it runs): patch p
     * writes its j-th shared node's sum (node nodes[node_off[p] + npriv[p] + j]) to partial part_off[p] + j,
     * and node sh_node[k] is then the sum of its partials sh_part[sh_beg[k] .. sh_beg[k + 1]), in patch
     * order. */
    int64_t nshared;   /* nodes that more than one patch touches */
    int32_t *part_off; /* [npatch + 1]; part_off[npatch]: the partials */
    fem_idx *sh_node;  /* [nshared], increasing */
    int32_t *sh_beg;   /* [nshared + 1] */
    int32_t *sh_part;  /* [part_off[npatch]] */
} ElementPatches;

/* The patches of ne elements of nd nodes each (dofs[e * nd + i] in [0, nnodes)), epb to a patch. Leaves *p
 * empty (npatch 0) where the sizes do not fit the 16- and 32-bit fields (epb nd > 65536, ne nd >= 2^31). */
int element_patches(const fem_idx *dofs, int64_t ne, int nd, int64_t nnodes, int epb, ElementPatches *p);

/* The partial sums' numbering of p (built by element_patches over nnodes nodes), for an assembly that adds
 * each node's element contributions in an order fixed by the mesh alone (bitwise the same every run): a patch
 * adds its private nodes' sums to the output, writes its shared nodes' sums to their partials, and a second
 * pass adds each shared node's partials in patch order. O(partials + nnodes). */
int element_patches_partials(ElementPatches *p, int64_t nnodes);

void element_patches_destroy(ElementPatches *p);

FEM_EXTERN_C_END

#endif
