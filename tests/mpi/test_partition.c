/* Cell partitions (fem/partition.h) of real meshes, in one process: every cell in a part, parts of equal size
 * within 5% + 1 cell, every part connected (METIS's contiguity option, the dual graph being connected), the
 * same parts on every call, one part without METIS, and METIS's failure as one sentence.
 *
 *   test_partition parts MESH NPARTS     (MESH: a file in tests/meshes or a path)
 *   test_partition failure */
#include "common/femto_test.h"
#include "fem/error.h"
#include "fem/partition.h"
#include "io/mesh_read.h"

#include <string.h>

static void read_mesh(const char *name, Mesh *m) {
    MeshReadOptions mo = {0};
    CHECK_OK(mesh_read(strchr(name, '/') ? name : test_mesh(name), &mo, m));
}

/* Cells of part p reached from its first cell through shared facets inside the part. */
static int64_t part_reach(int64_t n, const int64_t *xadj, const int32_t *adj, const int32_t *part, int p) {
    int32_t *queue = malloc(sizeof(int32_t) * (size_t)n);
    char *seen = calloc((size_t)n, 1);
    int64_t head = 0, tail = 0;
    for (int64_t i = 0; i < n && tail == 0; i++)
        if (part[i] == p) queue[tail++] = (int32_t)i, seen[i] = 1;
    while (head < tail) {
        int32_t v = queue[head++];
        for (int64_t k = xadj[v]; k < xadj[v + 1]; k++)
            if (part[adj[k]] == p && !seen[adj[k]]) seen[adj[k]] = 1, queue[tail++] = adj[k];
    }
    free(queue);
    free(seen);
    return tail;
}

static void check_parts(const char *name, int nparts) {
    Mesh m = {0};
    read_mesh(name, &m);
    int64_t n = partition_ncells(&m), count[64] = {0};
    int32_t *part = malloc(sizeof(int32_t) * (size_t)n), *again = malloc(sizeof(int32_t) * (size_t)n);
    CHECK_OK(partition_mesh(&m, nparts, part));
    CHECK_OK(partition_mesh(&m, nparts, again));
    CHECK(memcmp(part, again, sizeof(int32_t) * (size_t)n) == 0, "%s: two partitions into %d parts differ",
          name, nparts);
    int64_t outside = 0;
    for (int64_t i = 0; i < n; i++) {
        if (part[i] < 0 || part[i] >= nparts)
            outside++;
        else
            count[part[i]]++;
    }
    CHECK(outside == 0, "%s: %lld cells outside parts 0..%d", name, (long long)outside, nparts - 1);
    double mean = (double)n / nparts;
    int64_t *xadj;
    int32_t *adj;
    CHECK_OK(partition_dual_graph(&m, &xadj, &adj));
    for (int p = 0; p < nparts; p++) {
        CHECK(count[p] <= 1.05 * mean + 1 && count[p] >= 0.95 * mean - 1,
              "%s: part %d of %d has %lld cells, the mean is %.1f (5%% + 1 allowed)", name, p, nparts,
              (long long)count[p], mean);
        int64_t reach = nparts > 1 ? part_reach(n, xadj, adj, part, p) : count[p];
        CHECK(reach == count[p], "%s: part %d of %d is not connected (%lld of its %lld cells reached)", name,
              p, nparts, (long long)reach, (long long)count[p]);
    }
    printf("%s: %lld cells in %d parts:", name, (long long)n, nparts);
    for (int p = 0; p < nparts; p++) printf(" %lld", (long long)count[p]);
    printf("\n");
    free(xadj);
    free(adj);
    free(part);
    free(again);
    mesh_destroy(&m);
}

/* A graph METIS refuses (a vertex joined to itself) gives FEM_ERR_INTERNAL and one sentence naming METIS; a
 * mesh with fewer cells than parts is bad input. */
static void check_failure(void) {
    int64_t xadj[3] = {0, 1, 2};
    int32_t adj[2] = {1, 0}, part[2];
    int rc = partition_graph(2, xadj, adj, 0, 0, part);
    CHECK(rc == FEM_ERR_INTERNAL, "METIS asked for 0 parts: expected %d, got %d", FEM_ERR_INTERNAL, rc);
    CHECK(strstr(fem_last_error(), "METIS") && !strchr(fem_last_error(), '\n'),
          "one sentence naming METIS: '%s'", fem_last_error());
    Mesh m = {0};
    read_mesh("square_mixed.geo", &m);
    int32_t *many = malloc(sizeof(int32_t) * (size_t)partition_ncells(&m));
    rc = partition_mesh(&m, 1000, many);
    CHECK(rc == FEM_ERR_INPUT && strstr(fem_last_error(), "too few for 1000 MPI ranks"),
          "24 cells in 1000 parts: expected exit 2 and a sentence, got %d '%s'", rc, fem_last_error());
    free(many);
    mesh_destroy(&m);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "parts") == 0)
        check_parts(argv[2], atoi(argv[3]));
    else if (argc == 2 && strcmp(argv[1], "failure") == 0)
        check_failure();
    else {
        fprintf(stderr, "usage: test_partition parts MESH NPARTS | failure\n");
        return 2;
    }
    return test_result("test_partition");
}
