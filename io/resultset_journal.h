/* The journal of a result set (internal to io/resultset.c): the manifest that lists a set's files, the moves
 * that put a committed set in place (also the recovery of a run killed half way through them), and the
 * listing of a folder.
 *
 * The manifest, ".manifest" in the staging folder, is text: a first line "femto result set 1", then
 * "series NAME" for each series the set owns and "file NAME" for each of its files, in the order they are
 * moved. It is written before the commit point, so every commit folder has one. */
#ifndef FEMTO_RESULTSET_JOURNAL_H
#define FEMTO_RESULTSET_JOURNAL_H

enum { JOURNAL_NAME_MAX = 256 };

/* A list of file names (malloc'ed strings). */
typedef struct {
    int n, cap;
    char **v;
} JournalNames;

void journal_names_free(JournalNames *l);
/* The entries of the folder open as `fd` (named `dir` in messages), "." and ".." left out. */
int journal_list(int fd, const char *dir, JournalNames *out);

/* Writes the manifest of the staging folder open as `fd` (of the results folder `dir`, named in messages):
 * its files, data files first, and the series the set owns. */
int journal_write_manifest(const char *dir, int fd, int nseries, const char (*series)[JOURNAL_NAME_MAX]);
/* Moves the files of the commit folder `name` (open as `fd`) in the folder `dir` (open as `dir_fd`) to their
 * names there, removes the files of its series that the set lacks, then the commit folder. Moves already
 * done are skipped, so a recovery after a kill finishes the job. */
int journal_roll_forward(int dir_fd, const char *dir, int fd, const char *name);

/* Removes `name` from the folder if it is the temporary result file of a process that no longer runs
 * (".beam.h5.tmp.PID", written straight into results folders by femto 0.1). */
void journal_remove_dead_temporary(int dir_fd, const char *name);

#endif
