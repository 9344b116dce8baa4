/* fem_fail keeps a message of any length whole, and may quote the previous message (fem/error.c). */
#include "common/femto_test.h"

#include "fem/error.h"

#include <string.h>

int main(void) {
    /* 10,000 characters: five times the 2,048-byte buffer that used to cut such a sentence */
    static char path[10001];
    memset(path, 'x', sizeof path - 1);
    int status = fem_fail(FEM_ERR_INPUT, "cannot write results file '%s': %s", path, "File name too long");
    const char *msg = fem_last_error();
    CHECK(status == FEM_ERR_INPUT, "status %d", status);
    CHECK(strlen(msg) == strlen("cannot write results file '': File name too long") + 10000,
          "%zu characters kept", strlen(msg));
    CHECK(strcmp(msg + strlen(msg) - 21, "': File name too long") == 0, "the sentence ends with its reason");
    fem_fail(FEM_ERR_INPUT, "inner reason");
    fem_fail(FEM_ERR_INPUT, "outer sentence (%s)", fem_last_error());
    CHECK(strcmp(fem_last_error(), "outer sentence (inner reason)") == 0, "'%s'", fem_last_error());
    fem_clear_error();
    CHECK(fem_last_error()[0] == '\0', "cleared");
    return test_result("error");
}
