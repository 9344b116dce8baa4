/* femto-app: the command line. Parses arguments, runs the stages in order, maps statuses to exit codes. */
#include "fem/error.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("femto %s\n", FEMTO_VERSION);
        return 0;
    }
    printf("usage: femto-app run|check|info FILE\n");
    return argc > 1 ? FEM_ERR_USAGE : 0;
}
