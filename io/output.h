/* Results a user opens in ParaView: VTU/PVD and HDF5/XDMF.
 *
 * The writers know nothing of spaces or physics: they take an OutFrame, a mesh of points and cells already in
 * VTK's node order with named point, cell and field data. io/output_mesh.c builds OutFrames from femto's
 * spaces (points at the equispaced lattice of order p, so Lagrange cells look curved and smooth in ParaView).
 *
 * Every file is written under a temporary name in the same directory and renamed when complete, so a failure
 * (no space, no permission, missing directory) leaves no truncated result; each failure is one FEM_ERR_INPUT
 * sentence naming the file. A run's files together are one result set (io/resultset.h). */
#ifndef FEMTO_OUTPUT_H
#define FEMTO_OUTPUT_H

#include "fem/element.h"

#include <stdint.h>

enum { OUT_MAX_BLOCKS = 8, OUT_MAX_ARRAYS = 24, OUT_MAX_STRINGS = 16 };

/* VTK cell type numbers (facts of the VTK file format). */
enum {
    VTK_LINE = 3,
    VTK_TRIANGLE = 5,
    VTK_QUAD = 9,
    VTK_TETRA = 10,
    VTK_HEXAHEDRON = 12,
    VTK_LAGRANGE_CURVE = 68,
    VTK_LAGRANGE_TRIANGLE = 69,
    VTK_LAGRANGE_QUADRILATERAL = 70,
    VTK_LAGRANGE_TETRAHEDRON = 71,
    VTK_LAGRANGE_HEXAHEDRON = 72,
};

typedef struct {
    Shape shape;
    int order; /* 1: linear VTK cell; >= 2: VTK Lagrange cell of this order */
    int vtk_type;
    int nodes_per_cell;
    int64_t ncells;
    int64_t *conn; /* [ncells][nodes_per_cell] point indices, VTK node order */
} OutCellBlock;

typedef struct {
    char name[64];     /* as ParaView shows it, e.g. "temperature", "displacement", "stress" */
    int ncomp;         /* 1 scalar, 3 vector, 6 symmetric tensor (XX YY ZZ XY YZ XZ; HDF5 reorders it) */
    const char *units; /* e.g. "K", "m", "Pa" (stored as an attribute in HDF5, in the name's doc in VTU) */
    double *data;      /* [n][ncomp]; point arrays n = npoints, cell arrays n = total cells over blocks */
} OutArray;

typedef struct {
    int dim; /* 2 or 3; points always carry 3 coordinates */
    int64_t npoints;
    double *x; /* [npoints][3] */
    int nblocks;
    OutCellBlock blocks[OUT_MAX_BLOCKS];
    int npoint_arrays, ncell_arrays;
    OutArray point[OUT_MAX_ARRAYS];
    OutArray cell[OUT_MAX_ARRAYS]; /* cells numbered block after block */
    int nstrings; /* field data: name -> text (physical group names, femto version, problem file) */
    char string_name[OUT_MAX_STRINGS][64];
    char *string_value[OUT_MAX_STRINGS];
} OutFrame;

/* A cell block of a whole frame, as the ranks of a frame split over MPI ranks describe it (OutPart). */
typedef struct {
    Shape shape;
    int order;
    int64_t ncells;
} OutBlockInfo;

/* A rank's piece of a frame split over MPI ranks: the frame the rank holds is its piece (its cells, and every
 * point they touch: the ones it owns first, then the ghosts its neighbours own), in its own numbering, in
 * blocks of its own; OutPart says where that piece sits in the whole frame, which no rank holds. The whole
 * frame's points are numbered 0 .. npoints_global, its cells block after block through `blocks` (its cell
 * blocks, the same list on every rank). Each point has one owner, which writes its rows of the HDF5 file.
 * Point and cell arrays of every output time's frame hold the piece's rows. */
typedef struct {
    int rank, nranks;
    int64_t npoints_global;
    int nblocks;
    OutBlockInfo blocks[OUT_MAX_BLOCKS];
    int64_t npoints, nowned; /* the piece's points (its frame's npoints); the first nowned are the rank's */
    const int64_t *point_global; /* [npoints] the whole frame's number of each point; the owned increasing */
    int64_t ncells;              /* the piece's cells, block after block of the piece */
    const int64_t *cell_global;  /* [ncells] the whole frame's number of each; every cell has one rank */
} OutPart;

/* FEM_OK when the frame is consistent (block types and sizes, point indices in range, arrays present); the
 * writers call it first, so a bug upstream is a message rather than a corrupt file. */
int outframe_check(const OutFrame *f);

/* Frees what the frame owns (conn, x, data, string values) and zeroes it. */
void outframe_destroy(OutFrame *f);

/* A copy of `in` with every Lagrange block of order p split into linear cells on the same points (p^d
 * sub-cells each); cell arrays are repeated on the sub-cells. Point arrays are shared, not copied: `out` must
 * be destroyed with outframe_destroy_shallow. */
int outframe_subdivide(const OutFrame *in, OutFrame *out);
void outframe_destroy_shallow(OutFrame *f);
/* The rank's piece `in` as its VTU shows it: in's points, cells and arrays (shared, not copied) and two
 * arrays that map it back to the whole frame, "global_node" (point) and "rank" (cell), which `out` owns:
 * release it with outframe_piece_release. */
int outframe_piece(const OutFrame *in, const OutPart *part, OutFrame *out);
void outframe_piece_release(OutFrame *out);
/* The whole frame onto rank 0 from every rank's piece (collective): on rank 0 `whole` holds the whole
 * frame's arrays (point arrays from the points' owners) and, with_mesh, its points, blocks (connectivity in
 * the whole frame's numbers) and field data; elsewhere it stays empty. For an HDF5 library without MPI,
 * with which rank 0 writes the file alone. outframe_destroy frees it. */
int outframe_gather(const OutFrame *piece, const OutPart *part, int with_mesh, OutFrame *whole);
/* The same, splitting only the blocks b with split[b] != 0 (XDMF keeps its quadratic cells). */
int outframe_subdivide_blocks(const OutFrame *in, const int *split, OutFrame *out);
/* The linear subcells of one cell of shape s and order p: local[sub * nv + v] is the VTK node (0 <= . <
 * lattice_count) of corner v of subcell sub, in the linear VTK cell's corner order. Returns the number of
 * subcells (p^d), or -1 for an unsupported order. `local` holds p^d * shape_nvertices(s) entries. */
int outframe_subcells(Shape s, int p, int *local);

/* VTK's node order for a cell of shape s and order p (p = 1: the linear VTK cell): perm[k] is the femto
 * lattice index (fem/element.h) of VTK node k. Returns the number of nodes. This is the one place the
 * permutation lives; tests/io checks it against VTK's own reader for every shape and order. */
int vtk_node_order(Shape s, int p, int *perm);
int vtk_cell_type(Shape s, int p);

/* ---- VTU (VTK XML UnstructuredGrid, version 2.2, UInt64 headers, appended raw binary, optional zlib) */
int vtu_write(const char *path, const OutFrame *f, int compress);

/* ---- PVTU: the parallel file of one output time, naming the pieces (files, relative to its directory) that
 * the ranks wrote; their arrays are those of `piece` (any rank's piece: all have the same arrays). */
int pvtu_write(const char *path, const OutFrame *piece, int npieces, char *const *files);

/* ---- PVD collection: times[i] with files[i] (names relative to the .pvd's directory) */
int pvd_write(const char *path, int n, const double *times, char *const *files);

/* ---- HDF5 (+ XDMF3). One .h5 per run: the mesh once, every field at every output time (chunked; compressed
 * unless compress is 0, on OpenMP threads), units, times and the problem file's text as attributes. The .xdmf
 * sidecar describes a temporal collection that ParaView opens directly. Both are written to temporary names
 * and renamed by h5out_close. */
typedef struct H5Out H5Out;
int h5out_open(H5Out **h, const char *h5_path, const char *xdmf_path, const OutFrame *mesh,
               const char *problem_text, int compress);
/* The same file written by every rank of a run split over MPI ranks together (collective: every rank calls
 * every h5out function, with its piece's frames and the same path and text as rank 0's). Each rank writes
 * the rows of the whole frame's datasets that part says are its own (its owned points, its cells, the XDMF's
 * entries and subcells of its cells); times and attributes come from rank 0. part NULL, or one rank:
 * h5out_open. Over several ranks it needs HDF5 built for MPI (h5out_parallel; FEM_ERR_INPUT otherwise);
 * datasets are then contiguous, uncompressed (see hdf5_out.c). part and its arrays must outlive the file. */
int h5out_open_part(H5Out **h, const char *h5_path, const char *xdmf_path, const OutFrame *mesh,
                    const char *problem_text, int compress, const OutPart *part);
/* 1 when this build's HDF5 can write one file from several MPI ranks (parallel HDF5 and MPI). */
int h5out_parallel(void);
/* The point and cell arrays of `fields`, except those the mesh frame given to h5out_open has (same name and
 * centre: the mesh's region and quality are stored once, not at every step). */
int h5out_write_step(H5Out *h, double time, const OutFrame *fields);
int h5out_close(H5Out **h);  /* writes the XDMF, renames both; safe on NULL */
void h5out_abort(H5Out **h); /* removes the temporary files (after an error) */

#endif
