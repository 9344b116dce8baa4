/* femto-mesh-bench: how long reading a mesh takes, split into Gmsh's part (in the reading child, or in this
 * process) and mesh_finish (orientation, Jacobian checks, topology). Best of N runs; docs/meshes.md.
 *
 * usage: femto-mesh-bench FILE [--in-process] [--repeat N] [--threads N] [--size H] */
#include "fem/error.h"
#include "io/mesh_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
    MeshReadResult res;
    MeshReadOptions mo = {.result = &res};
    int repeat = 3;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--in-process") == 0)
            mo.in_process = 1;
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            mo.threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            mo.size = atof(argv[++i]);
        else
            file = argv[i];
    }
    if (!file || repeat < 1) {
        fprintf(stderr,
                "usage: femto-mesh-bench FILE [--in-process] [--repeat N] [--threads N] [--size H]\n");
        return 1;
    }
    double best = 1e30, best_read = 0, best_finish = 0;
    int64_t cells = 0;
    for (int r = 0; r < repeat; r++) {
        Mesh m;
        double t = now();
        if (mesh_read(file, &mo, &m)) {
            fprintf(stderr, "femto-mesh-bench: %s\n", fem_last_error());
            return 2;
        }
        t = now() - t;
        cells = 0;
        for (int b = 0; b < m.ncell_blocks; b++) cells += m.cells[b].count;
        mesh_destroy(&m);
        if (t < best) best = t, best_read = res.seconds_read, best_finish = res.seconds_finish;
    }
    printf("%s: %lld cells, %s, best of %d: %.3f s (Gmsh and hand-back %.3f s, mesh_finish %.3f s)\n", file,
           (long long)cells, mo.in_process ? "in process" : "through the child", repeat, best, best_read,
           best_finish);
    return 0;
}
