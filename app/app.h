/* femto-app's subcommands and the options they share. */
#ifndef FEMTO_APP_H
#define FEMTO_APP_H

#include "io/mesh_read.h"
#include "io/problem.h"

typedef struct {
    const char *file;       /* the problem or mesh file (schema: where to write it, NULL: stdout) */
    int device;             /* -1: from the file; else DeviceKind */
    int order;              /* 0: from the file */
    const char *output_dir; /* NULL: from the file */
    int verbosity;          /* 0 quiet, 1 normal, 2 verbose */
    int threads;            /* -1: from the file; 0: all cores (OpenMP's default); else that many */
    int force;              /* mesh a .geo even when the estimated element count is very large */
} AppOptions;

/* The mesh reading options for pb's mesh (pb NULL: a mesh file on its own); result may be NULL. */
MeshReadOptions app_mesh_options(const AppOptions *o, const Problem *pb, MeshReadResult *result);

int app_info(const AppOptions *o);
int app_check(const AppOptions *o);
int app_run(const AppOptions *o);
int app_schema(const AppOptions *o);

/* What `info` prints about a problem file: every setting, defaults filled in, with units. */
void app_print_problem(const Problem *pb);

/* Prints a line unless quiet (verbosity 0); level 2 lines only with -v. */
void app_say(const AppOptions *o, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prints "warning: ..." on stderr unless quiet: a result or a solve the user should look at twice. */
void app_warn(const AppOptions *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
