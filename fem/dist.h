/* A rank's part of a mesh split over MPI processes: its cells as a mesh of their own, the space on them with
 * its nodes numbered OWNED first, then GHOST, the map to the global numbering, and which nodes it exchanges
 * with which neighbour rank (the halo, fem/halo.h moves values along it).
 *
 * Every rank holds the whole mesh and the whole space (rank 0 reads the mesh and sends it, or every rank
 * reads it) and the partition (fem/partition.h); dist_create then builds the rank's part from them with no
 * message at all: each rank computes the same owners and the same ordered lists, so the two ends of every
 * exchange agree by construction. That costs every rank the memory of the whole mesh, which a later step
 * (each rank reads or receives only its cells) removes; the local objects below do not change then.
 *
 * A node is owned by one of the ranks whose cells touch it, picked by a hash of the node's global number and
 * the rank (dist_owner_key): every such rank is equally likely, so shared nodes split evenly. (The lowest
 * rank, the first rule, gave rank 0 every node it shared: 5% more owned dofs than the mean over 16 ranks, 39%
 * over 1,024; bench/partition-bench.c measures it.) The local numbering puts a rank's owned
 * nodes first in increasing global number, then its ghosts grouped by owner, each group in increasing global
 * number, so what rank o sends rank r (r's ghosts owned by o, sorted by global number) arrives as one
 * contiguous range of r's ghosts. Facet elements (boundary conditions) belong to the rank of the cell they
 * bound, so each is integrated once. Blocks with no cell on this rank are left out of the local mesh;
 * cell_block and facet_block say which global block each local block is. A global cell block becomes two
 * local ones, its interior cells (no mesh node shared with another rank) and then its boundary cells
 * (cell_boundary), so that the operator can compute the first while the halo travels (fem/operator.h). */
#ifndef FEMTO_DIST_H
#define FEMTO_DIST_H

#include "space.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    int rank, nranks;
    Mesh mesh;   /* this rank's cells, the facets they carry, their mesh nodes; topology built */
    Space space; /* order and components of the global space; nnodes_owned of them owned */
    int64_t nglobal_nodes;
    int64_t *node_global; /* [space.nnodes] the global space's number of each local node */
    int cell_block[MESH_MAX_BLOCKS], facet_block[MESH_MAX_BLOCKS]; /* the global block of a local block */
    /* 1 for a local cell block whose cells may touch a node shared with another rank; 0 for one whose cells
     * touch none (their operator needs no ghost and sends nothing, so it runs while the halo travels: each
     * global block's cells become an interior and a boundary local block, unless FEMTO_OVERLAP=0 or the mesh
     * has more than MESH_MAX_BLOCKS / 2 cell blocks) */
    unsigned char cell_boundary[MESH_MAX_BLOCKS];
    int64_t *cell_global[MESH_MAX_BLOCKS];  /* [count] the cell's index in its global block */
    int64_t *facet_global[MESH_MAX_BLOCKS]; /* [count] the facet's index in its global block */
    /* The halo, in local node numbers: to neighbour nbr[i] go the owned nodes send[send_off[i] ..
     * send_off[i+1]), from it come the ghosts recv[recv_off[i] .. recv_off[i+1]) (it owns them). Both ends
     * list a shared node at the same position. */
    int nnbr;
    int *nbr;
    int64_t *send_off, *recv_off;
    int32_t *send, *recv;
    /* Every node this rank has in common with another: with rank share_nbr[i] (increasing) the local nodes
     * share[share_off[i] .. share_off[i+1]), in increasing global number, so both ends list a node at the
     * same position. A superset of the halo: two ranks that both ghost a third's node share it. */
    int nshare;
    int *share_nbr;
    int64_t *share_off;
    int32_t *share;
    /* What it was split from (borrowed: the caller keeps them alive while the Dist is used to make others):
     * the global mesh and the partition, from which dist_create_order splits a space of another order. */
    const Mesh *global_mesh;
    const int32_t *part;
} Dist;

/* Rank `rank`'s part of the global space gsp (on its global mesh) split by part[] (partition.h's cell
 * numbering, values in [0, nranks)). A rank without cells is FEM_ERR_INPUT. */
int dist_create(Dist *d, const Space *gsp, const int32_t *part, int rank, int nranks);
void dist_destroy(Dist *d);

/* The owner of a node is the part with the smallest key among the parts of the cells touching it. */
uint64_t dist_owner_key(int64_t node, int32_t part);

/* The same rank's part of the global space of order `order` (like's components) on like's global mesh and
 * partition: a p-multigrid level over ranks. Its local mesh has like's cells in like's order (dist_create is
 * deterministic), so element c of local block b is the same cell at both orders; its nodes, owners and halo
 * are those of the new order. The global space at that order is built and freed here. */
int dist_create_order(Dist *d, const Dist *like, int order);

/* Global dof numbers of the first n local dofs (ncomp components interleaved), into g[n]. */
void dist_global_dofs(const Dist *d, int64_t n, int64_t *g);

FEM_EXTERN_C_END

#endif
