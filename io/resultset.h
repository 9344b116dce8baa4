/* A run's results as one set that replaces the previous set in its folder whole, or not at all.
 *
 * A run writes every file of its set (VTU and PVD, HDF5 and XDMF, the summary; for a coupled run both
 * series) into a hidden staging folder inside the results folder, DIR/.femto-stage.NAME.PID/. Nothing in DIR
 * changes while the run computes. On success the set is committed: a manifest listing its files is written
 * into the staging folder, and renaming the folder to DIR/.femto-commit.NAME.PID/ is the commit point; the
 * files are then moved to their names in DIR (data files first, the .pvd/.xdmf that name them after, the
 * summary last), and files of the previous set that the new one lacks (extra NAME_NNNN.vtu of a longer
 * run, a series the new run does not write) are removed. On failure or on SIGINT/SIGTERM/SIGHUP
 * (io/interrupt.h) the staging folder is removed and DIR keeps the previous set byte for byte.
 *
 * Runs that share a folder take an exclusive lock on it (flock on the directory) around that move and
 * around their start, so two runs into one folder never interleave their files: the one that commits last
 * leaves its whole set. A folder left behind by a run that was killed is recognised because no live
 * process holds its lock (each run locks its own staging folder): the next run removes a staging folder
 * and finishes moving a commit folder (its set was complete), so the folder always ends with one whole set.
 * See docs/output.md for the design and the alternatives. */
#ifndef FEMTO_RESULTSET_H
#define FEMTO_RESULTSET_H

#include <stddef.h>

typedef struct ResultSet ResultSet;

enum { RESULTSET_MAX_SERIES = 8 };

/* Begins the set `name` in the folder `dir` (created when missing): settles what killed runs left there, then
 * makes the staging folder. `series` (NULL-terminated) are the suffixes of `name` that name the series a set
 * of this name may hold ("" for NAME itself); all their files belong to the set. */
int resultset_begin(ResultSet **set, const char *dir, const char *name, const char *const *series);
/* The staging folder, where the set's files are written until the commit. */
const char *resultset_stage(const ResultSet *set);
/* The path at which the set's file `file` (a name without directory) is written: in the staging folder. */
int resultset_path(const ResultSet *set, const char *file, char *path, size_t size);
/* Puts the staged set in place of the previous one (see above) and frees `*set`. On a failure before the
 * commit point the staging folder is removed and the previous set stays; after it (a rename failed), the
 * message says that the next run into the folder completes the move. */
int resultset_commit(ResultSet **set);
/* Removes the staging folder and frees `*set`; the folder keeps the previous set. Safe on NULL. */
void resultset_abort(ResultSet **set);

#endif
