/* A run's results as one set: staging, commit, and settling what killed runs left (see resultset.h).
 *
 * Every step that names files in the results folder runs with the folder's lock held, so the folder is
 * only ever changed by one run at a time; computing and writing (seconds to hours) happen in the staging
 * folder without it. The manifest and the moves live in resultset_journal.c. */
#include "resultset.h"
#include "resultset_journal.h"

#include "fem/error.h"
#include "fileutil.h"
#include "interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct ResultSet {
    char dir[FILEUTIL_PATH_MAX];
    char stage[FILEUTIL_PATH_MAX];      /* DIR/.femto-stage.NAME.PID */
    char stage_name[JOURNAL_NAME_MAX];  /* .femto-stage.NAME.PID */
    char commit_name[JOURNAL_NAME_MAX]; /* .femto-commit.NAME.PID */
    int dir_fd, stage_fd;
    int guarded;  /* io/interrupt removes the staging folder on a signal */
    int made_dir; /* the folder did not exist: an aborted set removes it again when empty */
    int nseries;
    char series[RESULTSET_MAX_SERIES][JOURNAL_NAME_MAX];
};

static int folder_fail(const char *dir, int err) {
    return fem_fail(FEM_ERR_INPUT, "cannot write results into the folder '%s': %s", dir, strerror(err));
}

/* Exclusive use of the folder. Where the file system has no locks for directories (NFS), runs go on
 * without: concurrent runs into one folder are then the user's to avoid (docs/output.md). */
static void lock_folder(int fd, int op) {
    while (flock(fd, op) != 0 && errno == EINTR) {
    }
}

/* Finishes or removes what runs that died left in the folder: a commit folder is moved into place (its set
 * was complete), a staging folder is removed; folders whose run is alive (it holds their lock) stay. */
static int settle(int dir_fd, const char *dir, const char *own) {
    JournalNames entries = {0};
    int status = journal_list(dir_fd, dir, &entries);
    for (int i = 0; i < entries.n && !status; i++) {
        const char *e = entries.v[i];
        int commit = strncmp(e, FILEUTIL_COMMIT_PREFIX, strlen(FILEUTIL_COMMIT_PREFIX)) == 0;
        int stage = strncmp(e, FILEUTIL_STAGE_PREFIX, strlen(FILEUTIL_STAGE_PREFIX)) == 0;
        if (!commit && !stage) {
            journal_remove_dead_temporary(dir_fd, e);
            continue;
        }
        if (own && strcmp(e, own) == 0) continue;
        int fd = openat(dir_fd, e, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) { /* no live run holds it */
            if (commit) {
                status = journal_roll_forward(dir_fd, dir, fd, e);
            } else {
                char path[FILEUTIL_PATH_MAX];
                snprintf(path, sizeof path, "%s/%s", dir, e);
                fileutil_remove_flat_dir(path, fd);
            }
        }
        close(fd);
    }
    journal_names_free(&entries);
    return status;
}

static void release(ResultSet **sp) {
    ResultSet *s = *sp;
    if (s->stage_fd >= 0) close(s->stage_fd); /* gives up its lock */
    if (s->dir_fd >= 0) close(s->dir_fd);
    free(s);
    *sp = NULL;
}

/* The staging folder, made and locked while the folder's lock is held (so that no other run's settle can
 * take it for a dead run's between the mkdir and the flock). */
static int make_stage(ResultSet *s, const char *name) {
    long pid = (long)getpid();
    int n = snprintf(s->stage_name, sizeof s->stage_name, "%s%s.%ld", FILEUTIL_STAGE_PREFIX, name, pid);
    int m = snprintf(s->commit_name, sizeof s->commit_name, "%s%s.%ld", FILEUTIL_COMMIT_PREFIX, name, pid);
    int k = snprintf(s->stage, sizeof s->stage, "%s/%s", s->dir, s->stage_name);
    if (n < 0 || m < 0 || k < 0 || (size_t)m >= sizeof s->commit_name || (size_t)k >= sizeof s->stage)
        return folder_fail(s->dir, ENAMETOOLONG);
    if (mkdirat(s->dir_fd, s->stage_name, 0777) != 0) return folder_fail(s->dir, errno);
    s->stage_fd = openat(s->dir_fd, s->stage_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->stage_fd < 0 || flock(s->stage_fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        fileutil_remove_flat_dir(s->stage, s->stage_fd);
        return folder_fail(s->dir, err);
    }
    s->guarded = interrupt_guard(s->stage, s->stage_fd);
    return FEM_OK;
}

int resultset_begin(ResultSet **sp, const char *dir, const char *name, const char *const *series) {
    *sp = NULL;
    struct stat st;
    int made_dir = stat(dir, &st) != 0;
    FEM_TRY(fileutil_mkdir_p(dir));
    ResultSet *s = fem_calloc(1, sizeof *s, "result set");
    if (!s) return FEM_ERR_INTERNAL;
    s->dir_fd = s->stage_fd = -1;
    s->made_dir = made_dir;
    *sp = s;
    int status = FEM_OK;
    if (strlen(dir) >= sizeof s->dir) status = folder_fail(dir, ENAMETOOLONG);
    static const char *const just_name[] = {"", NULL};
    for (const char *const *suffix = series ? series : just_name; !status && *suffix; suffix++) {
        int n = s->nseries < RESULTSET_MAX_SERIES
                    ? snprintf(s->series[s->nseries], sizeof s->series[0], "%s%s", name, *suffix)
                    : -1;
        if (n < 0 || (size_t)n >= sizeof s->series[0])
            status = fem_fail(FEM_ERR_INTERNAL, "result set '%s': too many or too long series names", name);
        else
            s->nseries++;
    }
    if (!status) {
        strcpy(s->dir, dir);
        s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dir_fd < 0) status = folder_fail(dir, errno);
    }
    if (status) {
        release(sp);
        return status;
    }
    lock_folder(s->dir_fd, LOCK_EX);
    status = settle(s->dir_fd, s->dir, NULL);
    if (!status) status = make_stage(s, name);
    lock_folder(s->dir_fd, LOCK_UN);
    if (status) release(sp);
    return status;
}

const char *resultset_stage(const ResultSet *s) {
    return s->stage;
}

int resultset_path(const ResultSet *s, const char *file, char *path, size_t size) {
    int n = snprintf(path, size, "%s/%s", s->stage, file);
    if (n < 0 || (size_t)n >= size) return fileutil_fail(path, ENAMETOOLONG);
    return FEM_OK;
}

void resultset_abort(ResultSet **sp) {
    if (!sp || !*sp) return;
    ResultSet *s = *sp;
    if (s->guarded) interrupt_hold();
    fileutil_remove_flat_dir(s->stage, s->stage_fd);
    if (s->guarded) interrupt_release();
    if (s->made_dir) rmdir(s->dir); /* fails, as it should, when another run has put files there */
    release(sp);
}

int resultset_commit(ResultSet **sp) {
    ResultSet *s = *sp;
    if (!s) return fem_fail(FEM_ERR_INTERNAL, "resultset_commit: no result set");
    int status = journal_write_manifest(s->dir, s->stage_fd, s->nseries, s->series);
    if (status) {
        resultset_abort(sp);
        return status;
    }
    lock_folder(s->dir_fd, LOCK_EX);
    if (s->guarded) interrupt_hold();
    /* a dead run's commit first: its set is older than this one */
    status = settle(s->dir_fd, s->dir, s->stage_name);
    int committed = 0;
    if (!status) {
        if (renameat(s->dir_fd, s->stage_name, s->dir_fd, s->commit_name) == 0)
            committed = 1;
        else
            status = folder_fail(s->dir, errno);
    }
    if (committed) {
        (void)fsync(s->dir_fd); /* the commit point reaches the disk before any file moves */
        status = journal_roll_forward(s->dir_fd, s->dir, s->stage_fd, s->commit_name);
    } else {
        fileutil_remove_flat_dir(s->stage, s->stage_fd);
    }
    lock_folder(s->dir_fd, LOCK_UN);
    if (s->guarded) interrupt_release();
    release(sp);
    return status;
}
