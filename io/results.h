/* Results of a run as files: builds OutFrames (io/output.h) from femto's spaces and writes the series of a
 * run (VTU per output time + PVD, one HDF5 + XDMF) into the run's result set (io/resultset.h), which puts
 * them in the results folder, with the rest of the run's files, once the whole run has succeeded.
 *
 * Output points are the nodes of the space's lattice at their equispaced reference positions, which is where
 * VTK's Lagrange cells expect them; point ids equal the space's node numbers, so nodal fields (solution,
 * derived flux or stress) are written as they are. */
#ifndef FEMTO_RESULTS_H
#define FEMTO_RESULTS_H

#include "fem/space.h"
#include "io/output.h"
#include "io/problem.h"
#include "io/resultset.h"

FEM_EXTERN_C_BEGIN

/* The mesh part of a frame for space sp: points, cells (VTK order), cell data "region" (the physical tag of
 * each cell's region, from cell_tags and region_tags) and "quality" (min/max Jacobian determinant ratio),
 * field data (physical group names, femto version, problem file). */
int results_frame(const Space *sp, const int32_t *const *cell_region, const char *problem_path, OutFrame *f);

/* Values of a nodal field (ncomp per node, in the space's node numbering) at the output points: the field
 * interpolated from the space's nodes to the equispaced positions (they differ for p >= 3). */
int results_nodal_field(const Space *sp, const double *u, int ncomp, double *out);

/* Adds a point array (copied) to a frame. */
int results_add_point_array(OutFrame *f, const char *name, const char *units, int ncomp, int64_t n,
                            const double *data);

/* A run's result series: the files of one base name (pb->output.basename) in a result set. */
typedef struct {
    char dir[PROBLEM_PATH_MAX], base[PROBLEM_NAME_MAX]; /* dir: the set's staging folder */
    int vtu, compress, subdivide, hdf5;
    int nsteps;
    double *times;
    char **files;        /* VTU names relative to dir */
    void *h5;            /* H5Out */
    int64_t bytes;       /* written so far */
    const OutPart *part; /* over MPI ranks: this rank's part (the caller's); NULL in one process */
    int gather;          /* over MPI ranks with an HDF5 library without MPI, or FEMTO_HDF5_RANK0=1: rank 0
                          * writes the file alone, from frames gathered whole (outframe_gather) */
} ResultSeries;

/* series: NULL for the run's first series (NAME), or a name appended to NAME (NAME_series) for the series of
 * a further physics of the same run. */
int results_open(ResultSeries *rs, ResultSet *set, const Problem *pb, const char *series,
                 const OutFrame *mesh);
/* The same over MPI ranks (collective; part NULL or one rank: results_open). Every rank passes its piece's
 * mesh frame (results_frame of its part's space) and its part, which says where the piece sits in the whole
 * frame no rank holds; set is rank 0's (the others pass NULL and write into rank 0's staging folder, which
 * must therefore be on a file system every rank sees). Each output time is then written as
 *   NAME_NNNN.pvtu            (rank 0) naming the pieces, which the .pvd lists instead of NAME_NNNN.vtu,
 *   NAME_NNNN_pRRRR.vtu       rank RRRR's piece (outframe_piece: its cells, owned and ghost points, the
 *                             arrays "global_node" and "rank" that map it back),
 * and NAME.h5 is one file that the ranks write together (h5out_open_part) with the same datasets, in the
 * same global order, as one process writes. */
int results_open_part(ResultSeries *rs, ResultSet *set, const Problem *pb, const char *series,
                      const OutFrame *mesh, const OutPart *part);
/* Writes one output time (the frame holds mesh and arrays). Over MPI ranks collective, and every rank's frame
 * is its piece, with the point arrays of its points (owned first) computed on its part (fem/evaluate.h). */
int results_write(ResultSeries *rs, double time, const OutFrame *frame);
/* Writes the PVD and closes the HDF5/XDMF (ok), or drops the HDF5 file (ok == 0, after a failure: the set
 * is then aborted, which removes the rest). */
int results_close(ResultSeries *rs, int ok);

FEM_EXTERN_C_END

#endif
