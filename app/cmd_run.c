/* `femto-app run` and `femto-app check`. */
#include "app.h"

#include "fem/error.h"

int app_check(const AppOptions *o) {
    Problem pb;
    FEM_TRY(problem_read(o->file, &pb));
    problem_destroy(&pb);
    return FEM_OK;
}

int app_run(const AppOptions *o) {
    return app_check(o);
}
