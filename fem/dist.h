/* A rank's part of a mesh split over MPI processes: its cells as a mesh of their own, the space on them with
 * its nodes numbered OWNED first, then GHOST, the map to the global numbering, and which nodes it exchanges
 * with which neighbour rank (the halo, fem/halo.h moves values along it).
 *
 * A rank's part is made from the global space and the partition (fem/partition.h) as a record, DistPart,
 * which holds everything the rank needs: its cells, their nodes' global numbers and owners, and which of its
 * nodes other ranks' cells touch. The rank builds its Dist from the record alone (dist_create_part), so the
 * record can be made on rank 0 and sent (the run's finest level: app/run_dist.c), or made by the rank itself
 * from the global space (dist_create). Both ends of every exchange agree by construction: the owners and the
 * ordered lists come from the same global computation. Every rank still holds the whole mesh for the
 * multigrid's coarser levels (dist_create_order), the output and the summary; removing that is the next
 * step, and the local objects below do not change then.
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
     * the global mesh and the partition, from which dist_create_order splits a space of another order; NULL
     * from dist_create_part until the caller sets them. */
    const Mesh *global_mesh;
    const int32_t *part;
} Dist;

/* What one rank needs to build its Dist without the global mesh: its cells and facets as a mesh (node numbers
 * its own, in increasing global order; not finished), the global node of every slot of its cells at the
 * space's order, its nodes' owners, and the (rank, node) pairs of its nodes that cells of other ranks touch.
 * Made from the global space (dist_part_make, fem/dist_part.c), moved between ranks as bytes
 * (dist_part_pack, dist_part_unpack), and turned into the Dist (dist_create_part). */
typedef struct {
    int rank, nranks, order, ncomp;
    int64_t nglobal_nodes;
    Mesh mesh;
    int cell_block[MESH_MAX_BLOCKS], facet_block[MESH_MAX_BLOCKS];
    unsigned char cell_boundary[MESH_MAX_BLOCKS];
    int64_t *cell_global[MESH_MAX_BLOCKS], *facet_global[MESH_MAX_BLOCKS];
    int ndof[MESH_MAX_BLOCKS];
    int64_t *slot_global[MESH_MAX_BLOCKS]; /* [count][ndof] global space node of each local cell's slot */
    int64_t nnodes;                        /* the global space nodes of the part's cells */
    int64_t *node;                         /* [nnodes] increasing */
    int32_t *owner;                        /* [nnodes] */
    int64_t npairs;                        /* (pair_rank, pair_node): sorted by rank, then node */
    int32_t *pair_rank;
    int64_t *pair_node;
} DistPart;

/* What every rank's part needs from the global space gsp split by part[] into nranks parts, computed once
 * (nodes' owners, the parts touching each node, each part's cells): then each part costs its own size. gsp
 * and part must outlive it. */
typedef struct DistSplit DistSplit;
int dist_split_create(const Space *gsp, const int32_t *part, int nranks, DistSplit **s);
void dist_split_destroy(DistSplit *s);
/* Rank r's part (s keeps scratch marks between parts, hence not const). */
int dist_part_make(DistSplit *s, int r, DistPart *p);
void dist_part_destroy(DistPart *p);
/* The part as one malloc'ed record of *len bytes, and back (a record that does not parse is
 * FEM_ERR_INTERNAL). */
int dist_part_pack(const DistPart *p, char **buf, int64_t *len);
int dist_part_unpack(const char *buf, int64_t len, DistPart *p);
/* The Dist of the part's rank, taking the part's mesh and element lists (p is left to dist_part_destroy).
 * global_mesh and part stay NULL: the caller sets them where it holds the global mesh. A part without cells
 * is FEM_ERR_INPUT. */
int dist_create_part(Dist *d, DistPart *p);
/* The index of v in the increasing a[0 .. n), or -1 (a part's node list, fem/dist*.c). */
int64_t dist_find(const int64_t *a, int64_t n, int64_t v);

/* The calling rank's part of the global space gsp split by part[] into comm_size() parts, made on rank 0
 * (gsp and part are read there only) and sent: collective, and every rank returns the same status (a part
 * without cells anywhere is every rank's FEM_ERR_INPUT, in that rank's sentence); on failure d holds
 * nothing. global_mesh and part stay NULL. */
int dist_scatter(Dist *d, const Space *gsp, const int32_t *part);

/* Rank `rank`'s part of the global space gsp (on its global mesh) split by part[] (partition.h's cell
 * numbering, values in [0, nranks)). A rank without cells is FEM_ERR_INPUT. */
int dist_create(Dist *d, const Space *gsp, const int32_t *part, int rank, int nranks);
void dist_destroy(Dist *d);

/* The owner of a node is the part with the smallest key among the parts of the cells touching it. */
uint64_t dist_owner_key(int64_t node, int32_t part);

/* The same rank's part of the global space of order `order` (like's components) on like's global mesh and
 * partition: a p-multigrid level over ranks. Its local mesh has like's cells in like's order (the parts are
 * made deterministically), so element c of local block b is the same cell at both orders; its nodes, owners
 * and halo are those of the new order. Collective: rank 0 builds the global space at that order from its
 * like->global_mesh and like->part, makes every rank's part and sends it (dist_scatter); the result's
 * global_mesh and part are like's. */
int dist_create_order(Dist *d, const Dist *like, int order);

/* Global dof numbers of the first n local dofs (ncomp components interleaved), into g[n]. */
void dist_global_dofs(const Dist *d, int64_t n, int64_t *g);

/* Where a nodal value is smallest and largest (a physics' summary: the lowest temperature, the largest
 * displacement and where). */
typedef struct {
    double value[2]; /* [0] the smallest, [1] the largest (+inf and -inf where no node has a value) */
    int64_t node[2]; /* their global nodes (-1 where none) */
    double x[2][3];  /* and coordinates (the origin where none) */
} DistExtremes;

/* The extremes of a nodal field v (host, ncomp values at every node of sp; ncomp > 1: of its magnitude; NaN
 * is never one) over every node of the run's solution: each rank looks at the nodes it owns, ties go to the
 * lowest global node (as one process, scanning its nodes in order, keeps the first), and every rank gets the
 * same answer. Collective over the ranks when d is set (sp = &d->space); d NULL: sp is a whole space, all of
 * whose nodes count. */
int dist_node_extremes(const Dist *d, const Space *sp, const double *v, int ncomp, DistExtremes *e);

/* The bounding box of the whole mesh (the union of the ranks' parts when d is set: collective; d NULL: m's
 * own). */
int dist_bounding_box(const Dist *d, const Mesh *m, double lo[3], double hi[3]);

FEM_EXTERN_C_END

#endif
