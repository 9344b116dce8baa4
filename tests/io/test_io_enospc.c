/* A full disk: every writer must fail with "... No space left on device", naming the file, and leave nothing.
 *
 * Usage: test_io_enospc DIR, where DIR is a small file system of its own (run_enospc.sh mounts a 256 KiB
 * tmpfs in a private mount namespace, which vanishes with the process). The frame written is larger than the
 * file system, so VTU and HDF5 run out of space half way; a PVD is small, so a filler file takes the space
 * first. After each failure the file system must be as empty as before: no result, no temporary. */
#include "io_frames.h"

#include "fem/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int failures;

static void expect_enospc(int status, const char *path, const char *what)
{
    char want[2048];
    snprintf(want, sizeof want, "cannot write results file '%s': %s", path, strerror(ENOSPC));
    if (status != FEM_ERR_INPUT || strcmp(fem_last_error(), want) != 0) {
        failures++;
        fprintf(stderr, "%s: status %d, message '%s', want '%s'\n", what, status, fem_last_error(), want);
    } else {
        printf("%s: %s\n", what, fem_last_error());
    }
}

/* Free blocks of the file system holding `dir`. */
static unsigned long free_blocks(const char *dir)
{
    struct statvfs fs;
    return statvfs(dir, &fs) == 0 ? (unsigned long)fs.f_bfree : 0;
}

/* Entries in `dir` other than `keep` (NULL: none kept). */
static int leftovers(const char *dir, const char *keep)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (keep && strcmp(e->d_name, keep) == 0) continue;
        fprintf(stderr, "left in %s: %s\n", dir, e->d_name);
        n++;
    }
    if (d) closedir(d);
    return n;
}

/* Fills `dir` with one file until the file system is full. */
static void fill(const char *path)
{
    FILE *fp = fopen(path, "w");
    char block[4096] = {0};
    while (fp && fwrite(block, 1, sizeof block, fp) == sizeof block) {
    }
    while (fp && fwrite(block, 1, 1, fp) == 1) {
    }
    if (fp) fclose(fp);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (a small file system)\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0 || (double)fs.f_blocks * fs.f_frsize > 4.0 * 1024 * 1024) {
        fprintf(stderr, "%s is not a small file system\n", dir);
        return 1;
    }
    unsigned long empty = free_blocks(dir);
    OutFrame f;
    IoBlockSpec big = {SHAPE_HEX, 4, 64}; /* ~ 8000 points: over 1 MB of data, compressed or not */
    io_test_frame(&f, 3, 1, &big, 0.0, 0);
    char path[1024], xdmf[1024], filler[1024];
    snprintf(path, sizeof path, "%s/beam_0003.vtu", dir);
    expect_enospc(vtu_write(path, &f, 0), path, "uncompressed VTU");
    failures += leftovers(dir, NULL);
    expect_enospc(vtu_write(path, &f, 1), path, "compressed VTU");
    failures += leftovers(dir, NULL);

    snprintf(path, sizeof path, "%s/beam.h5", dir);
    snprintf(xdmf, sizeof xdmf, "%s/beam.xdmf", dir);
    H5Out *h = NULL;
    int status = h5out_open(&h, path, xdmf, &f, "<problem/>", 1);
    for (int s = 0; status == FEM_OK && s < 8; s++) status = h5out_write_step(h, s, &f);
    if (status == FEM_OK) status = h5out_close(&h);
    else h5out_abort(&h);
    expect_enospc(status, path, "HDF5");
    failures += leftovers(dir, NULL);
    /* a file HDF5 could not close is still open, unnamed: its blocks must have been given back all the same
     */
    if (free_blocks(dir) + 2 < empty) {
        failures++;
        fprintf(stderr, "HDF5 failure kept %lu of %lu blocks\n", empty - free_blocks(dir), empty);
    }

    snprintf(filler, sizeof filler, "%s/filler", dir);
    fill(filler);
    snprintf(path, sizeof path, "%s/beam.pvd", dir);
    double t = 0.0;
    char *names[1] = {"beam_0000.vtu"};
    expect_enospc(pvd_write(path, 1, &t, names), path, "PVD on a full disk");
    failures += leftovers(dir, "filler");
    unlink(filler);
    outframe_destroy(&f);
    printf("%s\n", failures ? "FAILED" : "all writers fail cleanly on a full disk");
    return failures ? 1 : 0;
}
