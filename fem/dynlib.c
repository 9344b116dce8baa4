/* Shared libraries loaded at run time (see dynlib.h). */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *dynlib_existing(const char *file) {
    struct stat st;
    return file && file[0] && stat(file, &st) == 0 ? file : NULL;
}

int dynlib_open(DynLib *lib, const char *file, const char *soname) {
    lib->handle = NULL;
    if (dynlib_existing(file)) lib->handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) lib->handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (lib->handle) return 1;
    const char *why = dlerror();
    snprintf(lib->failure, sizeof lib->failure, "%s", why ? why : "not found");
    return 0;
}

int dynlib_find(DynLib *lib, const char *name, void *fn, size_t size) {
    void *p = lib->handle ? dlsym(lib->handle, name) : NULL;
    if (!p) snprintf(lib->failure, sizeof lib->failure, "it lacks %s", name);
    memcpy(fn, &p, size < sizeof p ? size : sizeof p);
    return p != NULL;
}

void dynlib_close(DynLib *lib) {
    if (lib->handle) dlclose(lib->handle);
    lib->handle = NULL;
}

int dynlib_open_all(DynLib *lib, const char *file, const char *soname, const DynSym *syms, int n) {
    if (!dynlib_open(lib, file, soname)) return 0;
    for (int i = 0; i < n; i++)
        if (!dynlib_find(lib, syms[i].name, syms[i].fn, syms[i].size)) return dynlib_close(lib), 0;
    return 1;
}
