/* An order of a block's elements along a space-filling curve through their centroids, so that elements
 * processed one after another are neighbours in space and share nodes. Gmsh's Delaunay mesher numbers cells at
 * random, and femto numbers nodes in the cells' order: in curve order a node's elements come close together and
 * its values stay in cache. mesh_read sorts every mesh's cells so (mesh_sort_cells); the fused CPU operator
 * also runs its blocks in this order (cpu/fused.c), and the GPU's register kernel cuts the sorted cells into
 * patches that share their nodes through shared memory (fem/element_patch.h, gpu/fused_simplex.cu). */
#ifndef FEMTO_ELEMENT_ORDER_H
#define FEMTO_ELEMENT_ORDER_H

#include "mesh.h"

FEM_EXTERN_C_BEGIN

/* order[k] = the k-th of the n elements of mesh block mb (element j: mesh element list[j], or j without a
 * list) in Z-order (Morton order) of their centroids within the block's bounding box; ties keep j's order. */
int element_curve_order(const Mesh *m, const MeshBlock *mb, const fem_idx *list, int64_t n, int64_t *order);

/* Puts every cell block's cells in curve order (before the topology is built: mesh_read does it to every mesh
 * it reads, so that the space, which numbers nodes in first-touch order over the cells, numbers them along the
 * curve too, and every kernel that walks the cells in order finds a warp's or a thread's neighbours in
 * neighbouring memory). Facets are left in their order. FEMTO_CELL_ORDER=mesh keeps the file's order. */
int mesh_sort_cells(Mesh *m);

FEM_EXTERN_C_END

#endif
