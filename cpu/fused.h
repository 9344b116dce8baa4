/* The fused CPU operator's pieces, shared by cpu/fused.c (the operator override: element order, colouring,
 * threads) and cpu/fused_kernels.c (one chunk of elements, SIMD across the elements of a batch; compiled for
 * several x86-64 levels and picked at run time). Internal to the CPU backend. */
#ifndef FEMTO_CPU_FUSED_H
#define FEMTO_CPU_FUSED_H

#include "fem/device.h"

/* Elements per batch: the SIMD lanes of the batch loops (a multiple of the widest vector, 8 doubles). */
#define FUSED_LANES 8
/* Elements per chunk, one thread's unit of work and the grain of the colouring: about a block's elements /
 * 512 (a colour then has dozens of chunks to share among threads, where 128-element chunks left a medium mesh
 * a handful per colour), a multiple of FUSED_LANES between 16 and 128 (short chunks share more nodes with
 * their neighbours and run their batches from colder caches). It depends on the block alone, not on the
 * threads, so that results do not either. */
static inline int64_t fused_chunk_size(int64_t nelem) {
    int64_t c = (nelem / 512 + FUSED_LANES - 1) / FUSED_LANES * FUSED_LANES;
    return c < 2 * FUSED_LANES ? 2 * FUSED_LANES : c > 128 ? 128 : c;
}
/* Below this much work per call and block (elements x dofs x q-points) a parallel region costs more than it
 * saves: the block runs on the calling thread. */
#define FUSED_PARALLEL_WORK 200000
/* Blocks of simplices (cells) and of facets whose full tables have up to this many (q-point, dof) pairs are
 * fused (simplices to p = 3); larger ones keep the default implementation. Quadrilateral and hexahedral cells
 * run sum factorised (cpu/fused_kernels.c) at every order. */
#define FUSED_MAX_PAIRS 4096

/* The hot functions are compiled for several x86-64 levels (baseline, AVX2 + FMA, AVX-512) and the loader
 * picks the best the processor runs (GCC's target_clones, through an ifunc); elsewhere, or with another
 * compiler, once for the build's target. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FUSED_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define FUSED_CLONES
#endif

/* Runs a physics' point function on every q-point of a batch (the arguments' n). */
typedef void (*FusedPoints)(const QfArgs *a);

/* One block's application: the kernels' view, the q-function arguments of the whole block (op_block_args),
 * the batch's point function, the elements in the order they are processed, the input and output L-vectors.
 */
typedef struct {
    const ElemView *v;
    QfArgs a;
    FusedPoints points;
    const int64_t *order; /* [nelem]: element ids */
    const double *geo;    /* the block's geometry in that order ([nelem][nq][geo_stride]) */
    int facet;            /* boundary facets: values (and gradients along the facet) in, s out */
    int grads;            /* the point function reads gradients */
    int geo_stride;       /* doubles of geometry per q-point */
    const double *in;
    double *out;
} FusedJob;

/* Doubles of scratch one thread needs for a job (fused_chunk's w, 64-byte aligned). */
size_t fused_scratch_doubles(const FusedJob *job);
/* out += the contributions of the elements order[k0 .. k1), added in that order. */
void fused_chunk(const FusedJob *job, int64_t k0, int64_t k1, double *w);

#endif
