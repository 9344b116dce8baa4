/* fem/dynlib.c, which loads Gmsh, cuDSS, NCCL and cuSOLVER at run time: a real library found by soname and by file, a
 * function found and called through the pointer, and the sentences for a library or a function that is not
 * there, and a loader's whole table at once. zlib stands in (every femto build links it, so its soname is on the loader's path). */
#include "common/femto_test.h"

#include "fem/dynlib.h"

#include <string.h>

typedef const char *(*VersionFn)(void);

int main(void) {
    DynLib lib;
    CHECK(dynlib_open(&lib, NULL, "libz.so.1") && lib.handle, "zlib by soname: %s", lib.failure);
    VersionFn version = NULL;
    CHECK(dynlib_find(&lib, "zlibVersion", &version, sizeof version) && version, "zlibVersion: %s", lib.failure);
    if (version) CHECK(version()[0] >= '1' && version()[0] <= '9', "zlib says its version is '%s'", version());
    VersionFn missing = version;
    CHECK(!dynlib_find(&lib, "femto_no_such_function", &missing, sizeof missing) && !missing,
          "a missing function is NULL");
    CHECK(strcmp(lib.failure, "it lacks femto_no_such_function") == 0, "the failure names it: '%s'", lib.failure);
    dynlib_close(&lib);
    CHECK(!lib.handle, "closed");

    /* a file that does not exist falls back to the soname; one that names no library fails with the
     * loader's sentence */
    CHECK(dynlib_existing("/no/such/libfemto.so") == NULL, "no file there");
    CHECK(dynlib_open(&lib, "/no/such/libfemto.so", "libz.so.1"), "the soname after a missing file: %s", lib.failure);
    dynlib_close(&lib);
    CHECK(!dynlib_open(&lib, NULL, "libfemto_no_such_library.so.9") && !lib.handle, "no such library");
    CHECK(strstr(lib.failure, "libfemto_no_such_library.so.9") != NULL, "the failure names the library: '%s'",
          lib.failure);

    /* a loader's table at once: every function found; one missing closes the library and names it */
    VersionFn v1 = NULL, v2 = NULL, v3 = version;
    DynSym all[] = {{"zlibVersion", &v1, sizeof v1}, {"zError", &v2, sizeof v2}};
    CHECK(dynlib_open_all(&lib, NULL, "libz.so.1", all, 2) && lib.handle && v1 && v2, "zlib's table: %s",
          lib.failure);
    if (v1) CHECK(strcmp(v1(), version()) == 0, "the table's zlibVersion says '%s'", v1());
    dynlib_close(&lib);
    DynSym lacking[] = {{"zlibVersion", &v1, sizeof v1}, {"femto_no_such_function", &v3, sizeof v3}};
    CHECK(!dynlib_open_all(&lib, NULL, "libz.so.1", lacking, 2) && !lib.handle && !v3,
          "a table with a missing function: not loaded");
    CHECK(strcmp(lib.failure, "it lacks femto_no_such_function") == 0, "the failure names it: '%s'", lib.failure);
    return test_result("dynlib");
}
