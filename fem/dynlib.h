/* A shared library loaded at run time rather than linked: Gmsh (io/gmsh_load.c), cuDSS (gpu/cudss_load.cu),
 * NCCL (gpu/nccl.cu) and cuSOLVER (gpu/cusolver_load.cu), which with what they link took most of femto-app's
 * start whether a run used them or not, or serve only some runs. Each loader defines
 * the library's functions femto calls and fills a table of pointers with these helpers, once. */
#ifndef FEMTO_DYNLIB_H
#define FEMTO_DYNLIB_H

#include "hd.h"

#include <stddef.h>

FEM_EXTERN_C_BEGIN

typedef struct {
    void *handle;      /* NULL: not loaded */
    char failure[512]; /* why not: the loader's message, or the function it lacks */
} DynLib;

/* file when it names an existing file, else NULL (the loader's search path decides). */
const char *dynlib_existing(const char *file);

/* Loads the library from file (when dynlib_existing says so), else by soname through the loader's search path
 * (local symbols, every reference bound now). 1 when loaded; else 0 and lib->failure. */
int dynlib_open(DynLib *lib, const char *file, const char *soname);

/* The library's function `name` into *fn, a function pointer of `size` bytes (POSIX guarantees that an object
 * pointer from dlsym converts). 1 when found; else 0, lib->failure, and *fn NULL. */
int dynlib_find(DynLib *lib, const char *name, void *fn, size_t size);

/* Unloads a library (one that lacked a function): handle NULL, the failure kept. */
void dynlib_close(DynLib *lib);

/* One function of a loader's table: its name, its pointer's address and size (as dynlib_find takes them). */
typedef struct {
    const char *name;
    void *fn;
    size_t size;
} DynSym;

/* dynlib_open, then every function of syms[0 .. n) found; a library that lacks one is closed again (its name
 * in lib->failure). 1 when loaded with all of them. What every loader's once-only load does. */
int dynlib_open_all(DynLib *lib, const char *file, const char *soname, const DynSym *syms, int n);

FEM_EXTERN_C_END

#endif
