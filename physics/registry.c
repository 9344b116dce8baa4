/* The physics femto solves, in the order a run solves them (see physics.h): heat first, since elasticity may
 * read the temperature it solves. */
#include "physics/physics.h"

#include <stdarg.h>
#include <stdio.h>

extern const PhysicsType heat_type, elasticity_type, reaction_diffusion_type;

const PhysicsType *const physics_types[] = {&heat_type, &elasticity_type, &reaction_diffusion_type};
const int physics_ntypes = (int)(sizeof physics_types / sizeof physics_types[0]);

void report_line(const Report *rep, const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    rep->line(rep->ctx, text);
}
