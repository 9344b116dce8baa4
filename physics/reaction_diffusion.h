/* Steady reaction-diffusion, -div(k grad u) + c u = f, with prescribed values of u on boundaries: the
 * smallest physics femto has, kept as the proof that a physics' input is its lines in io/problem.xsd and its
 * rows in the format table (io/problem_format.c), which read the <reaction-diffusion> section straight into
 * the records below. The q-functions (reaction_diffusion_qf.h) read the material records as they are stored.
 */
#ifndef FEMTO_REACTION_DIFFUSION_H
#define FEMTO_REACTION_DIFFUSION_H

enum { RD_NAME_MAX = 128 }; /* PROBLEM_NAME_MAX: the table stores names into such arrays */

typedef struct {
    char region[RD_NAME_MAX];
    double diffusivity; /* k [m^2/s] > 0 */
    double reaction;    /* c [1/s] >= 0 */
    double source;      /* f [u/s] */
} ReactionMaterial;

typedef struct {
    char boundary[RD_NAME_MAX];
    double value; /* u on the boundary */
} ReactionValue;

#endif
