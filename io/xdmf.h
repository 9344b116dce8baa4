/* The XDMF3 sidecar of an HDF5 results file (internal to io/): how a mesh looks to XDMF, and the XML text.
 *
 * XDMF names cells only up to order 2, so io/hdf5_out gives it a view of the mesh in which blocks of order 3
 * and more are split into linear cells (outframe_subdivide_blocks). Order 2 keeps XDMF's quadratic cells,
 * whose node order, as ParaView reads them, is VTK's Lagrange order (see xdmf.c). Several blocks become one
 * Mixed topology, so that cell arrays, numbered block after block, need no slicing (ParaView's XDMF3 reader
 * does not read hyperslabs). */
#ifndef FEMTO_XDMF_H
#define FEMTO_XDMF_H

#include "output.h"

#include <stdint.h>

enum { XDMF_REF_MAX = 160 };

typedef struct {
    char type[24];      /* XDMF TopologyType */
    int64_t nelem;      /* cells */
    int nodes_per_elem; /* written for Polyline, 0 otherwise */
    int rank;           /* 2: [nelem][nodes], 1: Mixed's flat list */
    int64_t dims[2];
    int64_t *conn; /* the topology array, or NULL when block 0's connectivity serves as it is */
} XdmfTopology;

/* The topology of `f` (whose blocks have order <= 2) in XDMF's terms. */
int xdmf_topology(const OutFrame *f, XdmfTopology *t);
/* The same without the array (t->conn stays NULL): only the blocks' shapes, orders, sizes and ncells of f are
 * read, so a frame of block descriptions without connectivity serves (a rank's view of a mesh split over MPI
 * ranks, which writes its cells' entries itself). */
int xdmf_topology_header(const OutFrame *f, XdmfTopology *t);
/* The entries one cell of block b (order <= 2) has in a Mixed topology: xdmf_cell_length of them, written to
 * out from the cell's nodes; returns their number. */
int xdmf_cell_length(const OutCellBlock *b);
int xdmf_cell_entries(const OutCellBlock *b, const int64_t *nodes, int64_t *out);
void xdmf_topology_destroy(XdmfTopology *t);

typedef struct {
    char name[64];
    int cell; /* 0: Center="Node", 1: Center="Cell" */
    int ncomp;
    int64_t rows;
    char dataset[XDMF_REF_MAX]; /* path inside the HDF5 file */
} XdmfAttr;

typedef struct {
    const char *h5; /* the HDF5 file as the XDMF names it (relative to the XDMF, see hdf5_out.c) */
    const XdmfTopology *topology;
    const char *topology_dataset;
    int64_t npoints;
    int nmesh; /* attributes of every step (mesh point and cell arrays) */
    const XdmfAttr *mesh;
    int nsteps; /* 0: one grid with the mesh only */
    const double *times;
    const int *step_first; /* step s has attrs[step_first[s] .. step_first[s+1]) */
    const XdmfAttr *attrs;
} XdmfView;

int xdmf_write(const char *path, const XdmfView *v);

#endif
