/* Rank 0's mesh on every rank of an MPI run (see mesh_read.h): the record the reading child hands back
 * (mesh_blob.c), with the topology rank 0's mesh_finish built, broadcast; the receiving ranks take the mesh
 * as rank 0 finished it. */
#define _GNU_SOURCE /* memfd_create */
#include "mesh_internal.h"

#include "fem/comm.h"
#include "fem/error.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* all n bytes through read or write, however the kernel splits them */
static int move_all(int fd, char *buf, int64_t n, int writing) {
    for (int64_t done = 0; done < n;) {
        ssize_t k =
            writing ? write(fd, buf + done, (size_t)(n - done)) : read(fd, buf + done, (size_t)(n - done));
        if (k <= 0) return fem_fail(FEM_ERR_INTERNAL, "could not stage the mesh for the other MPI ranks");
        done += k;
    }
    return FEM_OK;
}

/* Rank 0: the mesh as one record in memory. */
static int record_of(const Mesh *m, char **buf, int64_t *n) {
    int fd = memfd_create("femto-mesh-share", MFD_CLOEXEC);
    if (fd < 0) return fem_fail(FEM_ERR_INTERNAL, "could not stage the mesh for the other MPI ranks (memfd)");
    int status = mesh_blob_write(fd, m, 0, 1); /* finished: with its topology */
    *n = status ? 0 : (int64_t)lseek(fd, 0, SEEK_END);
    *buf = status ? NULL : malloc((size_t)*n + 1);
    if (!status && !*buf) status = fem_fail(FEM_ERR_INTERNAL, "out of host memory sharing the mesh");
    if (!status && lseek(fd, 0, SEEK_SET) != 0)
        status = fem_fail(FEM_ERR_INTERNAL, "could not stage the mesh");
    if (!status) status = move_all(fd, *buf, *n, 0);
    close(fd);
    return status;
}

/* The other ranks: the record back into a mesh, as rank 0 finished it (with its topology: only the groups'
 * counts are made again). */
static int mesh_of(char *buf, int64_t n, Mesh *m) {
    int fd = memfd_create("femto-mesh-share", MFD_CLOEXEC);
    if (fd < 0) return fem_fail(FEM_ERR_INTERNAL, "could not receive the mesh from MPI rank 0 (memfd)");
    int status = move_all(fd, buf, n, 1);
    if (!status && lseek(fd, 0, SEEK_SET) != 0)
        status = fem_fail(FEM_ERR_INTERNAL, "could not receive the mesh");
    if (!status) status = mesh_blob_read(fd, n, m);
    close(fd);
    if (!status) status = m->has_topology ? mesh_finish_stored(m) : mesh_finish(m);
    if (!status) mesh_finish_parents(m, 1, NULL, 0);
    return status;
}

int mesh_share(Mesh *m, int status) {
    if (comm_size() == 1) return status;
    int root = comm_rank() == 0;
    char *buf = NULL;
    int64_t n = 0;
    if (root && !status) status = record_of(m, &buf, &n); /* with its parents (multigrid's levels) */
    status = comm_agree(root ? status : FEM_OK);          /* rank 0's failure, on every rank */
    if (!status) status = comm_bcast(&n, sizeof n, 0);
    if (!status && !root && !(buf = malloc((size_t)n + 1)))
        status = fem_fail(FEM_ERR_INTERNAL, "out of host memory receiving the mesh");
    status = comm_agree(status);
    if (!status) status = comm_bcast(buf, n, 0);
    if (!status) status = comm_bcast(m->path, sizeof m->path, 0);
    if (!status && !root) status = mesh_of(buf, n, m);
    free(buf);
    return comm_agree(status);
}
