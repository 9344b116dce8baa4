/* Partitioning a mesh's cells over the ranks of a run, the first step of splitting a solve over MPI processes
 * (fem/dist.h builds each rank's part from it).
 *
 * Cells are numbered across blocks: cell c of cell block b is cell partition_cell_offset(m, b) + c. The dual
 * graph joins two cells that share a facet (a face in 3D, an edge in 2D, found through the mesh's topology),
 * so mixed meshes need no special case; METIS (k-way, a fixed seed, contiguous parts when the graph is
 * connected) cuts it into parts of equal cell counts: to 0.1% (METIS's ufactor 1) where that cuts at most 5%
 * more facets than METIS's default balance of 3%, else to 3% (a solve over ranks waits for its largest part:
 * on the weak-scaling beam the default gave one GPU 0.7% more cells than the other, 2.9% more owned dofs; on
 * small meshes the tight balance can cost compact parts: docs/PERFORMANCE.md, sixteenth session). METIS is
 * deterministic for a given input and build, and partition_mesh_shared computes on rank 0 and broadcasts
 * anyway, so every rank holds the same parts. A refined mesh (Mesh.parent) takes its parent's parts, each
 * cell in its parent cell's, so that each rank holds whole parent cells (multigrid's levels on the parents
 * need it), where the parent has enough cells for balanced parts (PARTITION_PARENT_MIN_CELLS a part). One
 * part needs no METIS: every cell is in part 0. Built without METIS (FEMTO_HAVE_METIS undefined), more than
 * one part is one sentence. */
#ifndef FEMTO_PARTITION_H
#define FEMTO_PARTITION_H

#include "mesh.h"

FEM_EXTERN_C_BEGIN

/* The number of cells of every cell block together, and where block b's cells start in that numbering. */
int64_t partition_ncells(const Mesh *m);
int64_t partition_cell_offset(const Mesh *m, int b);

/* The dual graph (CSR, malloc'ed): the neighbours of cell i are adj[xadj[i] .. xadj[i+1]). Needs the
 * topology. */
int partition_dual_graph(const Mesh *m, int64_t **xadj, int32_t **adj);

/* part[i] in [0, nparts) for every cell i (caller's array of partition_ncells(m)); computed in this process.
 * A mesh with fewer cells than parts is FEM_ERR_INPUT; a METIS failure FEM_ERR_INTERNAL, one sentence each.
 */
int partition_mesh(const Mesh *m, int nparts, int32_t *part);

/* A refined mesh is split by its parent's parts only when the parent has at least this many cells a part. */
enum { PARTITION_PARENT_MIN_CELLS = 32 };

/* The same, computed on rank 0 and broadcast: every rank gets rank 0's parts, or its error (the same code and
 * sentence on every rank). */
int partition_mesh_shared(const Mesh *m, int nparts, int32_t *part);

/* METIS on a graph given as above (exposed for tests): k-way into nparts, contiguous parts when contig. */
int partition_graph(int64_t n, const int64_t *xadj, const int32_t *adj, int nparts, int contig,
                    int32_t *part);

FEM_EXTERN_C_END

#endif
