/* What the files of the CUDA backend share: its state, the error macro every CUDA call goes through, and the
 * entry points of each file (memory.cu, vector.cu, kernels.cu) that device.cu puts into the Device table. */
#ifndef FEMTO_GPU_INTERNAL_CUH
#define FEMTO_GPU_INTERNAL_CUH

#include "fem/device.h"
#include "fem/error.h"
#include "fem/operator.h"
#include "gpu/gpu.h"

#include <cuda_runtime.h>

/* Largest block of the element kernels: they are compiled with __launch_bounds__(GPU_MAX_THREADS,
 * GPU_MIN_BLOCKS), so a launch of that many threads never fails for lack of registers, and the register
 * budget (64 per thread) leaves room for two such blocks per SM (kernels.cu: the full-table path in one and
 * two dimensions has a smaller budget and blocks of at most 256 threads). */
enum { GPU_MAX_THREADS = 512, GPU_MIN_BLOCKS = 2, GPU_VEC_THREADS = 256, GPU_DOT_BLOCKS = 1024 };

/* Kernels whose dynamic shared-memory limit may need raising above the 48 KB default. */
enum { GPU_K_INTERPOLATE = 0, GPU_K_INTEGRATE = 1, GPU_K_DIAG = 2, GPU_NKERNELS = 3 };
/* Compiled variants of each element kernel (kernels.cu): the full-table path for reference dimensions 1, 2
 * and 3, and the sum-factorised quadrilateral and hexahedron paths. */
enum { GPU_V_FULL1 = 0, GPU_V_FULL2 = 1, GPU_V_FULL3 = 2, GPU_V_QUAD = 3, GPU_V_HEX = 4, GPU_NVARIANTS = 5 };

/* The largest of fused_simplex.cu's constant-memory shape tables: 4 q-points x 10 nodes x 4 doubles. */
enum { GPU_PATCH_ROWS = 1120 }; /* 14 q-points x 20 nodes x 4: tetrahedra of order 3 */

typedef struct {
    int device;
    int sm_count;
    size_t shared_optin; /* largest dynamic shared memory of one block (after cudaFuncSetAttribute) */
    int regs_per_sm, threads_per_sm;
    size_t shared_per_sm;
    int kernel_regs[GPU_NKERNELS][GPU_NVARIANTS];    /* registers per thread of each kernel variant */
    int kernel_threads[GPU_NKERNELS][GPU_NVARIANTS]; /* the largest block of each variant */
    double *dot_partial;  /* [GPU_DOT_BLOCKS + 1]: per-block sums, then the count of finished blocks */
    double *dot_host;     /* pinned, mapped host memory: the dot product's result */
    double *dot_host_dev; /* the same, as the kernels address it */
    double *fill_pattern; /* device copy of a long fill pattern */
    int fill_capacity;
    size_t shared_set[GPU_NKERNELS][GPU_NVARIANTS]; /* the limit cudaFuncSetAttribute raised each to */
    GpuTuning tuning;
    char last_launch[224];
    /* fused_simplex.cu's layout choice per entry of its kernel list and dimension (2, 3): 0 not yet decided,
     * 1 one thread per element, 2 one lane per component (decided once: it reads the kernels' registers) */
    signed char simplex_layout[32][2];
    /* the specialised separate kernels (kernels_special.cu): 0 off, 1 on, 2 on with the q-point arrays read
     * and written in global memory (FEMTO_GPU_SPECIAL=0, unset, global) */
    int special;
    /* fused_simplex.cu's constant-memory shape tables of the patch and split kernels, [dim - 2][order - 1]:
     * the canonical table each holds (patch_rows_n doubles; 0: not uploaded by this Device yet); const_tables
     * 0 keeps every kernel on shared-memory tables (FEMTO_GPU_CONST_TABLES=0) */
    int const_tables;
    double patch_rows[2][3][GPU_PATCH_ROWS];
    int patch_rows_n[2][3];
    /* nccl.cu: the exchanges between the ranks' GPUs on the GPU's own queue (NULL until peer_init) */
    struct GpuPeer *peer;
} GpuState;

static inline GpuState *gpu_state(const Device *d) {
    return (GpuState *)d->impl;
}

/* Records a FEM_ERR_DEVICE message for a failed CUDA call and returns FEM_ERR_DEVICE. */
int gpu_fail(cudaError_t e, const char *call, const char *file, int line);

/* Every CUDA call: on failure, one sentence naming the call, the CUDA error and where. */
#define GPU_CHECK(call)                                                                                      \
    do {                                                                                                     \
        cudaError_t gpu_check_e_ = (call);                                                                   \
        if (gpu_check_e_ != cudaSuccess) return gpu_fail(gpu_check_e_, #call, __FILE__, __LINE__);           \
    } while (0)

/* After every kernel launch: launch errors (bad configuration, too much shared memory) show here; errors
 * while the kernel runs show at the next synchronising call (dot, download, sync). */
#define GPU_LAUNCHED(name) GPU_CHECK(cudaGetLastError())

/* Grid of a grid-stride loop over n items with GPU_VEC_THREADS threads per block. */
unsigned gpu_vec_blocks(const GpuState *g, int64_t n);

/* Blocks of `threads` threads, `regs` registers a thread and `smem` bytes of dynamic shared memory that fit
 * on one SM at once (registers, threads, shared memory with 1 KB reserved a block, at most 32 blocks). */
int64_t gpu_resident_blocks(const GpuState *g, int regs, int threads, size_t smem);

/* memory.cu */
int gpu_alloc(Device *d, void **p, size_t bytes);
void gpu_free(Device *d, void *p);
int gpu_host_alloc(Device *d, void **p, size_t bytes);
void gpu_host_free(Device *d, void *p);
int gpu_upload(Device *d, void *dst, const void *src, size_t bytes);
int gpu_download(Device *d, void *dst, const void *src, size_t bytes);
/* cuSOLVER, loaded on first use (gpu/cusolver_load.cu); FEM_ERR_DEVICE, one sentence, when it cannot be. */
int gpu_cusolver_load(void);
int gpu_copy(Device *d, void *dst, const void *src, size_t bytes);
int gpu_zero(Device *d, void *p, size_t bytes);

/* nccl.cu: the Device table's peer_* entries (fem/device.h), and freeing their state */
int gpu_peer_init(Device *d);
int gpu_peer_ready(const Device *d, char *why, size_t size);
int gpu_peer_exchange_begin(Device *d, int n, const int *ranks, const int64_t *send_off, const double *send,
                            const int64_t *recv_off, double *recv, int beside, int64_t *ticket);
int gpu_peer_exchange_end(Device *d, int64_t ticket);
void gpu_peer_destroy(GpuState *g);

/* vector.cu */
int gpu_axpby(Device *d, int64_t n, double a, const double *x, double b, double *y);
int gpu_dot(Device *d, int64_t n, const double *x, const double *y, double *out);
int gpu_recip(Device *d, int64_t n, const double *x, double *y);
int gpu_mult(Device *d, int64_t n, const double *a, const double *x, double *y);
int gpu_cheb_step(Device *dev, int64_t n, double a, const double *inv_diag, const double *r, const double *t,
                  double b, double *d, double *z);
int gpu_scatter(Device *d, int64_t n, const int32_t *idx, const double *vals, double *y);
int gpu_gather(Device *d, int64_t n, const int32_t *idx, const double *x, double *out);
int gpu_take(Device *d, int64_t n, const int32_t *idx, double *x, double *out);
int gpu_put2(Device *d, int64_t n, const int32_t *idx, const double *vals, double *y, double *z);
int gpu_sum_copies(Device *d, int64_t n, const int32_t *dof, const int32_t *off, const int32_t *src,
                   const double *vals, double *v);
int gpu_node_spmv(Device *d, int64_t nrows, int ncomp, const int32_t *ptr, const int32_t *col,
                  const double *val, const double *x, double *y);
int gpu_fill(Device *d, int64_t n, int m, const double *pattern, double *y);

/* qfunctions.cu: the instances of physics/qfunctions.h's list, indexed by q-function id */
extern "C" const QfFn gpu_qfunctions[];
extern "C" const int gpu_nqfunctions;

/* fused.cu: the operator override (Device.ops.operator_setup) */
extern "C" int gpu_operator_setup(struct Operator *op);

/* fused_simplex.cu: the register kernel of triangles and tetrahedra of order <= 2 (used by fused.cu) */
extern "C" int gpu_fused_simplex_fits(const Operator *op, const OpBlock *b, int residual);
/* The register kernel's element patches for atomic assembly (gpu/fused_simplex.cu; FEMTO_GPU_PATCH=0: none).
 */
extern "C" int gpu_fused_simplex_patch_setup(Operator *op);
extern "C" int gpu_fused_simplex_block(Operator *op, OpBlock *b, int residual, const double *in, double *out);
/* Cell block bi's element patches of deterministic assembly, of `kind` (0: the one-thread, patch and tensor
 * kernels' blocks, 1: the split kernel's), where they were made for epb elements a patch; else NULL. Then
 * gpu_patch_partials adds the partials of the block's shared nodes to out (after the block's kernel). */
struct PatchView;
extern "C" const struct PatchView *gpu_op_patches(const Operator *op, int bi, int kind, int epb);
extern "C" int gpu_patch_partials(const Operator *op, int bi, int kind, double *out);
extern "C" int gpu_fused_simplex_occupancy(const Operator *op, const OpBlock *b, int residual, int *regs,
                                           int *blocks_per_sm);

/* fused_tensor.cu: the sum-factorised fused kernel of quad and hex cell blocks, which fused.cu tries first.
 * gpu_fused_tensor_block runs a block's residual or Jacobian action (0 in *done where it does not serve the
 * block); _ready says whether it serves the block's residual or Jacobian; _occupancy gives its registers and
 * resident blocks per SM (0 in *handled where it does not serve the block). */
int gpu_fused_tensor_block(Operator *op, OpBlock *b, int residual, const double *in, double *out, int *done);
int gpu_fused_tensor_ready(const Operator *op, const OpBlock *b);
/* The elements per block of a block's fused tensor kernel for its Jacobian action from compact q-point data,
 * the one launch that takes deterministic patch assembly; 0 where there is none. */
int gpu_fused_tensor_epb(const Operator *op, const OpBlock *b);
int gpu_fused_tensor_occupancy(const Operator *op, const OpBlock *b, int residual, int *regs,
                               int *blocks_per_sm, int *handled);

/* kernels_special.cu: the specialised interpolation and integration kernels (triangles, tetrahedra,
 * quadrilaterals and hexahedra of p = 1..3 at the default rules, 1 or dim components), which kernels.cu tries
 * first: 0 in *done where they do not serve the launch. Integration: atomics into r, or (evec given) the
 * element vectors. */
int gpu_special_interpolate(GpuState *g, const ElemView *v, const double *u, double *uq, double *duq,
                            int *done);
int gpu_special_integrate(GpuState *g, const ElemView *v, const double *sq, const double *fq, double *r,
                          double *evec, int *done);

/* kernels.cu */
int gpu_interpolate(Device *d, const ElemView *v, const double *u, double *uq, double *duq);
int gpu_integrate(Device *d, const ElemView *v, const double *sq, const double *fq, double *r, double *evec);
int gpu_diag_add(Device *d, const ElemView *v, int c, int b, const double *sq, const double *fq,
                 double *evec);
int gpu_assemble(Device *d, const ElemView *v, const double *evec, double *r);
/* Checks that the element kernels were compiled for this GPU (cudaFuncGetAttributes) and reads the threads
 * per block they can be launched with. */
int gpu_kernels_init(GpuState *g);

#endif
