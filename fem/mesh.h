/* The mesh: nodes, cells and boundary facets in blocks of one element type, physical groups, and topology.
 *
 * io/gmsh fills it from a Gmsh file; everything after that reads only this struct. Cells are the elements of
 * the mesh's dimension, facets those of dimension - 1 (boundary and interface elements). Element nodes are
 * stored in femto's lattice order (fem/element.h), converted from Gmsh's order on reading by mesh_gmsh_type.
 * Elements keep their Gmsh entity tag; a physical group is a named set of entities, so "the cells of region
 * 'steel'" are the cells whose entity belongs to that group.
 *
 * Topology (mesh_build_topology) numbers the unique vertices, edges and faces, with each cell's edges and
 * faces, and matches every facet element to the cell and local facet it bounds. Spaces number their dofs
 * from it. */
#ifndef FEMTO_MESH_H
#define FEMTO_MESH_H

#include "element.h"

#include <stddef.h>
#include <stdint.h>

FEM_EXTERN_C_BEGIN

enum { MESH_MAX_BLOCKS = 8, MESH_NAME_MAX = 128 };

/* An element type femto reads: Gmsh's number and name, and where it sits in femto's element families. */
typedef struct {
    int gmsh_type;
    const char *name; /* "tet10" */
    Shape shape;
    int order; /* geometric order */
    int nnodes;
    const int *lattice_from_gmsh; /* lattice index of Gmsh node k (data, tested against Gmsh itself) */
} MeshElementType;

/* The element type of a Gmsh type number, or NULL when femto does not read it. */
const MeshElementType *mesh_gmsh_type(int gmsh_type);
/* The supported types, for messages ("femto reads: ..."). */
const char *mesh_supported_types(void);

typedef struct {
    const MeshElementType *type;
    Shape shape;
    int order;
    int nnodes; /* nodes per element */
    int64_t count;
    fem_idx *nodes;  /* [count][nnodes] mesh node indices, lattice order */
    int32_t *entity; /* Gmsh entity tag per element */
    int64_t *tag;    /* Gmsh element tag per element, for messages */
} MeshBlock;

typedef struct {
    int dim, tag;
    char name[MESH_NAME_MAX]; /* "" when the group has no name */
    int nentities;
    int *entities;
    int64_t nelements; /* cells or facets in the group (filled by mesh_finish) */
} PhysicalGroup;

/* Where a facet element sits: the cell it bounds and which facet of that cell it is. */
typedef struct {
    int8_t block;  /* cell block */
    int8_t facet;  /* local facet number (fem/element.h) */
    int8_t shared; /* 1 when a second cell shares it (an interface, not the boundary) */
    int8_t pad;
    fem_idx cell; /* index in the block */
} FacetCell;

typedef struct {
    int64_t nvertices, nedges, nfaces;      /* faces: 3D only (in 2D the cells are the faces) */
    fem_idx *vertex_of_node;                /* [nnodes] vertex id, -1 for nodes that are no cell's corner */
    fem_idx *edges;                         /* [nedges][2] vertex ids */
    fem_idx *cell_edges[MESH_MAX_BLOCKS];   /* [count][shape_nedges] edge ids */
    fem_idx *cell_faces[MESH_MAX_BLOCKS];   /* [count][shape_nfacets] face ids (3D) */
    FacetCell *facet_cell[MESH_MAX_BLOCKS]; /* per facet block: [count] */
    int64_t nboundary_facets;               /* facets of cells with no neighbour (whether meshed or not) */
} Topology;

typedef struct Mesh {
    char path[4096];
    int dim;
    int64_t nnodes;
    double *x;         /* [nnodes][3] */
    int64_t *node_tag; /* Gmsh node tag per node */
    int ncell_blocks, nfacet_blocks;
    MeshBlock cells[MESH_MAX_BLOCKS];
    MeshBlock facets[MESH_MAX_BLOCKS];
    int ngroups;
    PhysicalGroup *groups;
    Topology topo;
    int has_topology;
    /* An outline (mesh_share, over MPI ranks: the view of the mesh rank 0 holds from any other rank): the
     * counts, the blocks' types and sizes, the physical groups, the parents' outlines; no node, no cell's
     * nodes, no topology. */
    int outline;
    /* The mesh before its last uniform refinement (<mesh refine>), or NULL: its cells are of order 2 and
     * their nodes are nodes of this mesh (each of this mesh's corners is one of its order-2 nodes), so that a
     * field of order 1 on it is a field of order 2 on its cells, and multigrid takes it for a coarser level
     * (fem/solvers/multigrid.c). Its own parent is the mesh before the refinement before, and so on. Owned:
     * mesh_destroy frees the chain. Its x and node_tag are copies of this mesh's. */
    struct Mesh *parent;
} Mesh;

void mesh_destroy(Mesh *m);

/* The order of block mb's geometric map: mb->order, or 1 where its cells are simplices of a higher order
 * whose every node sits where the map through the cell's corners puts it, to 1e-10 of the cell's extent (Gmsh
 * places a straight edge's midpoint to about 1e-12), so that the map is affine and its Jacobian constant: the
 * meshes before a refinement (Mesh.parent) keep order-2 cells only to hold the refined mesh's corners, and a
 * straight-sided box meshed at order 2 is affine too. Tensor shapes keep their order (their map is
 * multilinear, not affine). */
int mesh_block_geometry_order(const Mesh *m, const MeshBlock *mb);

/* After a reader has filled nodes, blocks and groups: orients 2D cells counter-clockwise (Gmsh meshes a
 * surface with a downward normal clockwise), checks every cell's Jacobian (an inverted or degenerate cell is
 * an error naming its element tag), counts group sizes and builds the topology (a facet that matches no cell
 * is an error). */
int mesh_finish(Mesh *m);
/* The same for a mesh that mesh_finish finished before and that was stored with its topology (the mesh
 * cache, io/mesh_blob.c): only the groups' element counts, which are not stored. */
int mesh_finish_stored(Mesh *m);
/* mesh_finish (stored: mesh_finish_stored) for m's parents: a parent that does not pass is dropped with its
 * own parents, since they only make multigrid's coarser levels (the reason is in note, when not NULL). */
void mesh_finish_parents(Mesh *m, int stored, char *note, size_t note_size);
/* The number of meshes in m's chain of parents. */
int mesh_parent_count(const Mesh *m);
/* parent_cell[i]: the cell of m->parent that cell i of m (cells numbered across blocks, as fem/partition.h
 * numbers them) was split from: the parent cell whose nodes hold all of cell i's corners. FEM_ERR_INPUT when
 * a cell has no such parent (not a refinement). */
int mesh_parent_cells(const Mesh *m, int64_t *parent_cell);

/* Nodes found by their exact coordinates (a refined mesh's corners are its parent's order-2 nodes, computed
 * once: the same numbers; -0 and +0 alike). */
typedef struct {
    int64_t cap;
    fem_idx *slot;
    const double *x; /* [n][3], borrowed */
} MeshPointIndex;
int mesh_point_index_create(MeshPointIndex *t, const double *x, int64_t n);
/* The node at exactly p, or -1. */
fem_idx mesh_point_index_find(const MeshPointIndex *t, const double p[3]);
void mesh_point_index_destroy(MeshPointIndex *t);

int mesh_build_topology(Mesh *m);
/* Frees the topology and marks the mesh as without one, so that mesh_build_topology can number it again
 * (after the cells' node lists were changed in place). */
void mesh_destroy_topology(Mesh *m);

/* 2D only, after the topology: every cell, turned counter-clockwise, has its interior to the left of each of
 * its edges, so two cells that run along a shared edge in the same direction lie on the same side of it and
 * overlap — a fold that per-cell Jacobians cannot see once each cell was turned over on its own.
 * flipped[b][c] says which cells were clockwise in the file; the error names the cell whose orientation
 * differs from most of its surface (the inverted one). A surface meshed clockwise throughout is consistent
 * and passes. */
int mesh_check_folds(const Mesh *m, const uint8_t *const *flipped);

/* The physical group with this name and dimension, or NULL. */
const PhysicalGroup *mesh_find_group(const Mesh *m, const char *name, int dim);
/* "name (dim D, N elements)" list of the groups of dimension dim, comma separated, for messages. */
void mesh_group_names(const Mesh *m, int dim, char *buf, size_t len);
/* 1 when entity `entity` belongs to group g. */
int mesh_group_has_entity(const PhysicalGroup *g, int entity);

/* Jacobian determinants of a cell at its own geometric nodes: min and max (for `info` and validation). */
void mesh_cell_jacobian_range(const Mesh *m, int block, int64_t cell, double *jmin, double *jmax);
/* The same for every cell of a block: lo[c], hi[c] (one basis tabulation for the whole block). */
int mesh_block_jacobian_range(const Mesh *m, int block, double *lo, double *hi);

/* Bounding box lo[3], hi[3]. */
void mesh_bounding_box(const Mesh *m, double lo[3], double hi[3]);

FEM_EXTERN_C_END

#endif
