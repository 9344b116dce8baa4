/* Spaces: continuous Lagrange (H1) fields of order p with n components on a mesh, and their dof numbering.
 *
 * A node of order p sits on a vertex, an edge, a face or a cell interior (fem/element.h, lattice_site). Its
 * number depends only on that entity and on the node's position measured in a frame fixed by the entity's
 * global vertex numbers (from the lower-numbered vertex along an edge; from the lowest vertex towards its
 * lower neighbour on a quadrilateral face; by sorted vertex numbers on a triangle), so two cells that share
 * an edge or face agree on its nodes whatever their local orientation: fields are continuous for every p.
 * Entities receive their numbers in first-touch order over the cells, which keeps an element's dofs close
 * together in memory.
 *
 * The space order p is independent of the mesh's geometric order (p = 3 on tet4, p = 1 on hex27). Vector
 * fields interleave components: dof = node * ncomp + component. */
#ifndef FEMTO_SPACE_H
#define FEMTO_SPACE_H

#include "mesh.h"

FEM_EXTERN_C_BEGIN

typedef struct {
    Shape shape;
    int order;     /* p */
    int ndof;      /* nodes per element (scalar) */
    int64_t count; /* elements */
    fem_idx *dofs; /* [count][ndof] node numbers, lattice order: the restriction */
    /* transpose of the restriction for deterministic gather assembly: for node n, the element slots
     * (e * ndof + i) that hold it are t_slots[t_offsets[n] .. t_offsets[n+1]) */
    int64_t *t_offsets; /* [nnodes + 1] */
    int32_t *t_slots;
} SpaceBlock;

typedef struct Space {
    const Mesh *mesh;
    int order, ncomp;
    int64_t nnodes; /* scalar nodes */
    int64_t ndofs;  /* nnodes * ncomp */
    /* the nodes (and their dofs) this process owns come first; the rest are ghosts, copies of nodes another
     * rank owns (fem/dist.h). On one process every node is owned. */
    int64_t nnodes_owned, ndofs_owned;
    int ncell_blocks, nfacet_blocks; /* as in the mesh */
    SpaceBlock cells[MESH_MAX_BLOCKS];
    SpaceBlock facets[MESH_MAX_BLOCKS]; /* the trace of the space on each facet block */
    double *node_x;                     /* [nnodes][3] coordinates of the nodes */
} Space;

/* A space of order p with ncomp components on m (which must outlive it and have its topology built). */
int space_create(const Mesh *m, int order, int ncomp, Space *s);
/* The outline of that space on a mesh's outline (Mesh.outline, an MPI rank other than 0): its order,
 * components, blocks (shapes, orders, counts, nodes per element) and nnodes nodes (rank 0's count), no node
 * list. */
int space_outline(const Mesh *m, int order, int ncomp, int64_t nnodes, Space *s);
void space_destroy(Space *s);

/* Renumbers the nodes: node n becomes new_of_old[n] (a permutation), and the first nowned of the new numbers
 * are this process's own (fem/dist.c numbers a rank's owned nodes before its ghosts). The element maps, their
 * transposes and the node coordinates follow. */
int space_renumber(Space *s, const fem_idx *new_of_old, int64_t nowned);

/* Physical coordinates x[nnodes][3] of every node, mapped through each cell's geometry from the node's
 * reference position: its own (GLL) position, or (equispaced = 1) the equispaced lattice position where VTK's
 * Lagrange cells expect it. Shared nodes get the same point from every cell. */
int space_lattice_points(const Space *sp, int equispaced, double *x);

/* The nodes on the facets of physical group g (sorted, unique); *nodes is malloc'ed. */
int space_group_nodes(const Space *s, const PhysicalGroup *g, fem_idx **nodes, int64_t *count);

/* Where a lattice node of an element sits inside its entity, in the entity's canonical frame, given the
 * element's corner vertex numbers (local_interior: the element's own interior keeps its local order). Exposed
 * for tests (continuity across randomly oriented cells). */
int64_t space_canonical_position(Shape s, int p, const int lat[3], const fem_idx *corner_vertex,
                                 int local_interior);

FEM_EXTERN_C_END

#endif
