/*
 * cuda.h (private to fuse/): NVRTC and the CUDA driver, both loaded at run
 * time (dlopen), so fusescan runs and says what it skips where neither is
 * installed. Every call is checked; a failure is reported with the call and
 * the library's error name, and NVRTC's log on a compile error.
 *
 *   struct fs_cuda c;
 *   fs_cuda_open(&c);                 // c.nvrtc / c.driver say what loaded
 *   fs_cuda_compile(&c, src, "sm_90", 1, &cubin, &n, err, sizeof(err));
 */
#ifndef FUSESCAN_CUDA_H
#define FUSESCAN_CUDA_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t fs_devptr;

struct fs_cuda {
	void *nvrtc_lib, *driver_lib;
	int nvrtc, driver;             /* loaded and initialised */
	int nvrtc_major, nvrtc_minor;
	char why_not[256];             /* why the GPU side is unavailable */
	/* the device (driver only) */
	int cc_major, cc_minor, sms;
	char name[128];
	void *ctx;
	int device;
	/* NVRTC */
	int (*nvrtcCreateProgram)(void **, const char *, const char *, int, const char *const *, const char *const *);
	int (*nvrtcCompileProgram)(void *, int, const char *const *);
	int (*nvrtcGetProgramLogSize)(void *, size_t *);
	int (*nvrtcGetProgramLog)(void *, char *);
	int (*nvrtcGetCUBINSize)(void *, size_t *);
	int (*nvrtcGetCUBIN)(void *, char *);
	int (*nvrtcGetPTXSize)(void *, size_t *);
	int (*nvrtcGetPTX)(void *, char *);
	int (*nvrtcDestroyProgram)(void **);
	const char *(*nvrtcGetErrorString)(int);
	int (*nvrtcVersion)(int *, int *);
	/* driver */
	int (*cuInit)(unsigned);
	int (*cuDeviceGetCount)(int *);
	int (*cuDeviceGet)(int *, int);
	int (*cuDeviceGetName)(char *, int, int);
	int (*cuDeviceGetAttribute)(int *, int, int);
	int (*cuDevicePrimaryCtxRetain)(void **, int);
	int (*cuDevicePrimaryCtxRelease)(int);
	int (*cuCtxSetCurrent)(void *);
	int (*cuCtxSynchronize)(void);
	int (*cuModuleLoadData)(void **, const void *);
	int (*cuModuleUnload)(void *);
	int (*cuModuleGetFunction)(void **, void *, const char *);
	int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			      void **, void **);
	int (*cuMemAlloc)(fs_devptr *, size_t);
	int (*cuMemFree)(fs_devptr);
	int (*cuMemcpyHtoD)(fs_devptr, const void *, size_t);
	int (*cuMemcpyDtoH)(void *, fs_devptr, size_t);
	int (*cuMemcpyDtoD)(fs_devptr, fs_devptr, size_t);
	int (*cuMemcpyDtoDAsync)(fs_devptr, fs_devptr, size_t, void *);
	int (*cuMemsetD8)(fs_devptr, unsigned char, size_t);
	int (*cuEventCreate)(void **, unsigned);
	int (*cuEventRecord)(void *, void *);
	int (*cuEventSynchronize)(void *);
	int (*cuEventElapsedTime)(float *, void *, void *);
	int (*cuEventDestroy)(void *);
	int (*cuGetErrorName)(int, const char **);
	/* streams and graphs: small kernels are timed as graph replays */
	int (*cuStreamCreate)(void **, unsigned);
	int (*cuStreamDestroy)(void *);
	int (*cuStreamSynchronize)(void *);
	int (*cuStreamBeginCapture)(void *, int);
	int (*cuStreamEndCapture)(void *, void **);
	int (*cuGraphInstantiate)(void **, void *, unsigned long long);
	int (*cuGraphLaunch)(void *, void *);
	int (*cuGraphExecDestroy)(void *);
	int (*cuGraphDestroy)(void *);
	/* optional (NULL where the driver lacks them): the generated GEMM's
	 * tensor maps and cluster launch (fuse/gemm_gen.h) */
	int (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *, const unsigned *,
				      const unsigned *, int, int, int, int);
	int (*cuLaunchKernelEx)(const void *, void *, void **, void **);
	int (*cuFuncSetAttribute)(void *, int, int);
};

/* Loads what it can; 0 always (see nvrtc / driver and why_not). */
int fs_cuda_open(struct fs_cuda *c);
void fs_cuda_close(struct fs_cuda *c);
/* "sm_90" for the device, or sm_90 (H100 / H200) without one. */
void fs_cuda_arch(const struct fs_cuda *c, char *arch, size_t n);
/* Compiles to a CUBIN for arch "sm_XY", or to PTX (NUL-terminated) for a
 * virtual arch "compute_XY"; cached on disk, keyed by source, arch, FMA
 * contraction and NVRTC version. 0, or -1 with NVRTC's error and log in err. */
int fs_cuda_compile(struct fs_cuda *c, const char *source, const char *arch, int fmad, char **cubin, size_t *len,
		    char *err, size_t n);
/* One compilation of fs_cuda_compile_all: source in; the CUBIN / PTX
 * (fs_xmalloc'd, the caller frees it), or NULL and why in err, out. */
struct fs_compile {
	const char *source;
	char *cubin;
	size_t len;
	char err[1024];
};
/* fs_cuda_compile of every job; those the disk cache lacks compiled
 * concurrently, a thread a core (at most 32): NVRTC compiles distinct
 * programs at once. The number of jobs that failed. */
uint32_t fs_cuda_compile_all(struct fs_cuda *c, struct fs_compile *jobs, uint32_t n, const char *arch, int fmad);
/* The first of `names` (NULL-ended) that dlopen loads, or NULL. */
void *fs_cuda_dlopen_first(const char *const *names);
/* A driver result: 0, or -1 with "call: CUDA_ERROR_NAME" in err. */
int fs_cuda_check(const struct fs_cuda *c, int result, const char *call, char *err, size_t n);

#endif
