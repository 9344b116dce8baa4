/* CUDA backend entry point (filled in by the kernel work). */
extern "C" int gpu_backend_available(void) { return 1; }
