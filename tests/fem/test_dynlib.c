/* fem/dynlib.c, which loads Gmsh and cuDSS at run time: a real library found by soname and by file, a
 * function found and called through the pointer, and the sentences for a library or a function that is not
 * there. zlib stands in (every femto build links it, so its soname is on the loader's path). */
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
    return test_result("dynlib");
}
