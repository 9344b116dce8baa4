/* Result sets (io/resultset.h): a committed set replaces the previous one whole (its extra files and series
 * go, other names stay), an aborted one changes nothing, a signal while staging removes the staging folder
 * and ends the process, and a run started after killed runs finishes their commits and removes their staging
 * folders and temporary files, while leaving alone what a live run holds. Also the path helpers the sets rely
 * on (messages name the final file; the XDMF names its HDF5 file relatively).
 *
 * Usage: test_io_resultset SCRATCHDIR */
#include "io_frames.h"

#include "fem/error.h"
#include "io/fileutil.h"
#include "io/interrupt.h"
#include "io/resultset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const series[] = {"", "_elasticity", NULL};

static void put(const char *dir, const char *name, const char *text) {
    char path[FILEUTIL_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

/* The text of dir/name ("" when missing; "<dir>" for a directory). */
static const char *get(const char *dir, const char *name) {
    static char text[256];
    char path[FILEUTIL_PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    text[0] = '\0';
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return "<dir>";
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    return text;
}

/* The folder's entries, sorted, joined by spaces. */
static const char *listing(const char *dir) {
    static char out[4096];
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, ".."))
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? " " : "", list[i]->d_name);
        free(list[i]);
    }
    if (n >= 0) free(list);
    return out;
}

static void fresh(char *dir, size_t size, const char *scratch, const char *name) {
    snprintf(dir, size, "%s/%s", scratch, name);
    char cmd[FILEUTIL_PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 || fileutil_mkdir_p(dir) != FEM_OK) {
        fprintf(stderr, "cannot make %s\n", dir);
        exit(1);
    }
}

/* A previous set of "beam" with five output times and an elasticity series, and files of other names. */
static void previous_set(const char *dir) {
    const char *old[] = {"beam.pvd",
                         "beam.h5",
                         "beam.xdmf",
                         "beam_summary.txt",
                         "beam_0000.vtu",
                         "beam_0001.vtu",
                         "beam_0002.vtu",
                         "beam_0003.vtu",
                         "beam_0004.vtu",
                         "beam_elasticity.pvd",
                         "beam_elasticity_0000.vtu"};
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) put(dir, old[i], "old");
    const char *others[] = {"beam_v1.pvd", "other.pvd", "beam_0001.vtu.bak", "notes.txt", "beam_12.vtu"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) put(dir, others[i], "keep");
}

static void stage_new_set(ResultSet *set) {
    const char *files[] = {"beam.pvd",      "beam.h5",       "beam.xdmf",
                           "beam_0000.vtu", "beam_0001.vtu", "beam_summary.txt"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) put(resultset_stage(set), files[i], "new");
}

static void test_commit_replaces_the_set(const char *scratch) {
    char dir[1024], want[8192];
    fresh(dir, sizeof dir, scratch, "commit");
    previous_set(dir);
    char before[4096];
    snprintf(before, sizeof before, "%s", listing(dir));
    ResultSet *set;
    EXPECT(resultset_begin(&set, dir, "beam", series) == FEM_OK, "%s", fem_last_error());
    stage_new_set(set);
    EXPECT(strncmp(resultset_stage(set) + strlen(dir), "/.femto-stage.beam.", 19) == 0, "%s",
           resultset_stage(set));
    snprintf(want, sizeof want, "%s %s", strrchr(resultset_stage(set), '/') + 1, before);
    EXPECT(strcmp(listing(dir), want) == 0 && strcmp(get(dir, "beam.pvd"), "old") == 0,
           "before the commit only the staging folder is new: %s", listing(dir));
    EXPECT(resultset_commit(&set) == FEM_OK && set == NULL, "%s", fem_last_error());
    snprintf(want, sizeof want,
             "beam.h5 beam.pvd beam.xdmf beam_0000.vtu beam_0001.vtu beam_0001.vtu.bak "
             "beam_12.vtu beam_summary.txt beam_v1.pvd notes.txt other.pvd");
    EXPECT(strcmp(listing(dir), want) == 0, "the new set and the other names only:\n  %s\nwant\n  %s",
           listing(dir), want);
    EXPECT(strcmp(get(dir, "beam.pvd"), "new") == 0 && strcmp(get(dir, "beam_0001.vtu"), "new") == 0 &&
               strcmp(get(dir, "notes.txt"), "keep") == 0,
           "contents: beam.pvd '%s'", get(dir, "beam.pvd"));
}

static void test_abort_keeps_the_set(const char *scratch) {
    char dir[1024], before[4096];
    fresh(dir, sizeof dir, scratch, "abort");
    previous_set(dir);
    snprintf(before, sizeof before, "%s", listing(dir));
    ResultSet *set;
    EXPECT(resultset_begin(&set, dir, "beam", series) == FEM_OK, "%s", fem_last_error());
    stage_new_set(set);
    resultset_abort(&set);
    EXPECT(set == NULL && strcmp(listing(dir), before) == 0, "an aborted set changes nothing: %s",
           listing(dir));
    EXPECT(strcmp(get(dir, "beam_0004.vtu"), "old") == 0, "the old files keep their contents");
    resultset_abort(&set); /* safe on NULL */
}

/* A process id that no process has: a child that has exited and been reaped. */
static long dead_pid(void) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, NULL, 0);
    return (long)pid;
}

static void test_settles_what_killed_runs_left(const char *scratch) {
    char dir[1024], sub[FILEUTIL_PATH_MAX], name[256];
    fresh(dir, sizeof dir, scratch, "settle");
    previous_set(dir);
    /* a run killed half way through moving its set: the VTU moved, the rest still in the commit folder */
    put(dir, "beam_0000.vtu", "killed");
    snprintf(sub, sizeof sub, "%s/.femto-commit.beam.%ld", dir, dead_pid());
    fileutil_mkdir_p(sub);
    put(sub, ".manifest",
        "femto result set 1\nseries beam\nseries beam_elasticity\nfile beam_0000.vtu\n"
        "file beam.pvd\nfile beam_summary.txt\n");
    put(sub, "beam.pvd", "killed");
    put(sub, "beam_summary.txt", "killed");
    /* a run killed while computing, and one that is alive (it holds its staging folder's lock) */
    snprintf(sub, sizeof sub, "%s/.femto-stage.beam.%ld", dir, dead_pid());
    fileutil_mkdir_p(sub);
    put(sub, "beam_0000.vtu", "dead");
    snprintf(sub, sizeof sub, "%s/.femto-stage.other.%ld", dir, (long)getpid());
    fileutil_mkdir_p(sub);
    put(sub, "other_0000.vtu", "alive");
    int live = open(sub, O_RDONLY | O_DIRECTORY);
    EXPECT(live >= 0 && flock(live, LOCK_EX) == 0, "locking the live staging folder");
    /* temporary files written straight into the folder by femto 0.1: a dead run's and a live one's */
    snprintf(name, sizeof name, ".beam.h5.tmp.%ld", dead_pid());
    put(dir, name, "dead");
    snprintf(name, sizeof name, ".beam.h5.tmp.%ld", (long)getpid());
    put(dir, name, "alive");

    ResultSet *set;
    EXPECT(resultset_begin(&set, dir, "next", NULL) == FEM_OK, "%s", fem_last_error());
    char want[2048];
    snprintf(want, sizeof want,
             "%s %s %s beam.pvd beam_0000.vtu beam_0001.vtu.bak beam_12.vtu beam_summary.txt beam_v1.pvd "
             "notes.txt other.pvd",
             name, strrchr(resultset_stage(set), '/') + 1, sub + strlen(dir) + 1);
    EXPECT(strcmp(listing(dir), want) == 0,
           "the killed commit finished, dead leftovers gone:\n  %s\nwant\n  %s", listing(dir), want);
    EXPECT(strcmp(get(dir, "beam.pvd"), "killed") == 0 && strcmp(get(dir, "beam_0000.vtu"), "killed") == 0,
           "the killed run's set is the one in place");
    EXPECT(strcmp(get(sub, "other_0000.vtu"), "alive") == 0, "the live run's staging folder is untouched");
    resultset_abort(&set);
    close(live);
}

/* A child that stages a set and then gets SIGTERM: it must end by SIGTERM, leaving the folder as it was. */
static void test_signal_removes_the_staging_folder(const char *scratch) {
    char dir[1024], before[4096];
    fresh(dir, sizeof dir, scratch, "signal");
    previous_set(dir);
    snprintf(before, sizeof before, "%s", listing(dir));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        interrupt_install("test_io_resultset");
        ResultSet *set;
        if (resultset_begin(&set, dir, "beam", series) != FEM_OK) _exit(1);
        stage_new_set(set);
        raise(SIGTERM);
        _exit(2); /* not reached */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "the child ended by SIGTERM (status %#x)", st);
    EXPECT(strcmp(listing(dir), before) == 0, "no staging folder, the previous set as it was: %s",
           listing(dir));
}

static void test_paths(const char *scratch) {
    char out[FILEUTIL_PATH_MAX], a[FILEUTIL_PATH_MAX], b[FILEUTIL_PATH_MAX];
    fileutil_shown_path("out/.femto-stage.beam.12/beam.h5", out, sizeof out);
    EXPECT(strcmp(out, "out/beam.h5") == 0, "%s", out);
    fileutil_shown_path(".femto-stage.beam.12/beam_0001.vtu", out, sizeof out);
    EXPECT(strcmp(out, "beam_0001.vtu") == 0, "%s", out);
    fileutil_shown_path("/a/.b/beam.h5", out, sizeof out);
    EXPECT(strcmp(out, "/a/.b/beam.h5") == 0, "%s", out);
    EXPECT(fileutil_fail("r/.femto-stage.x.1/x.h5", ENOSPC) == FEM_ERR_INPUT &&
               strcmp(fem_last_error(), "cannot write results file 'r/x.h5': No space left on device") == 0,
           "%s", fem_last_error());
    EXPECT(fileutil_relative("d/beam.xdmf", "d/beam.h5", out, sizeof out) == FEM_OK &&
               strcmp(out, "beam.h5") == 0,
           "%s", out);
    snprintf(a, sizeof a, "%s/rel/x/beam.xdmf", scratch);
    snprintf(b, sizeof b, "%s/rel/y/z/beam.h5", scratch);
    snprintf(out, sizeof out, "%s/rel/x", scratch);
    fileutil_mkdir_p(out);
    snprintf(out, sizeof out, "%s/rel/y/z", scratch);
    fileutil_mkdir_p(out);
    EXPECT(fileutil_relative(a, b, out, sizeof out) == FEM_OK && strcmp(out, "../y/z/beam.h5") == 0, "%s",
           out);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCRATCHDIR\n", argv[0]);
        return 2;
    }
    test_commit_replaces_the_set(argv[1]);
    test_abort_keeps_the_set(argv[1]);
    test_settles_what_killed_runs_left(argv[1]);
    test_signal_removes_the_staging_folder(argv[1]);
    test_paths(argv[1]);
    printf("%s\n",
           io_test_failures ? "FAILED" : "result sets: commit, abort, signals and recovery as specified");
    return io_test_failures ? 1 : 0;
}
