/*
 * cuda.c: NVRTC and the CUDA driver loaded at run time (see cuda.h).
 */
#include "cuda.h"

#include "fusescan/base.h"
#include "fusescan/tune.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CU_ATTR_SMS = 16, CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

void *fs_cuda_dlopen_first(const char *const *names)
{
	for (const char *const *n = names; *n; n++) {
		void *h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	return NULL;
}

/* dlsym into a function pointer; 0 if every symbol resolved. */
#define SYM(lib, field, name) (c->field = (__typeof__(c->field))dlsym(lib, name), c->field == NULL ? 1 : 0)

static int load_nvrtc(struct fs_cuda *c)
{
	static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
					    "/usr/local/cuda/lib64/libnvrtc.so", NULL};
	c->nvrtc_lib = fs_cuda_dlopen_first(names);
	if (!c->nvrtc_lib)
		return -1;
	void *l = c->nvrtc_lib;
	int missing = SYM(l, nvrtcCreateProgram, "nvrtcCreateProgram") + SYM(l, nvrtcCompileProgram, "nvrtcCompileProgram") +
		      SYM(l, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize") + SYM(l, nvrtcGetProgramLog, "nvrtcGetProgramLog") +
		      SYM(l, nvrtcGetCUBINSize, "nvrtcGetCUBINSize") + SYM(l, nvrtcGetCUBIN, "nvrtcGetCUBIN") +
		      SYM(l, nvrtcGetPTXSize, "nvrtcGetPTXSize") + SYM(l, nvrtcGetPTX, "nvrtcGetPTX") +
		      SYM(l, nvrtcDestroyProgram, "nvrtcDestroyProgram") + SYM(l, nvrtcGetErrorString, "nvrtcGetErrorString") +
		      SYM(l, nvrtcVersion, "nvrtcVersion");
	return missing || c->nvrtcVersion(&c->nvrtc_major, &c->nvrtc_minor) ? -1 : 0;
}

static int load_driver(struct fs_cuda *c)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
	c->driver_lib = fs_cuda_dlopen_first(names);
	if (!c->driver_lib) {
		snprintf(c->why_not, sizeof(c->why_not), "no CUDA driver (libcuda.so.1 not found)");
		return -1;
	}
	void *l = c->driver_lib;
	int missing = SYM(l, cuInit, "cuInit") + SYM(l, cuDeviceGetCount, "cuDeviceGetCount") +
		      SYM(l, cuDeviceGet, "cuDeviceGet") + SYM(l, cuDeviceGetName, "cuDeviceGetName") +
		      SYM(l, cuDeviceGetAttribute, "cuDeviceGetAttribute") +
		      SYM(l, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") +
		      SYM(l, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") +
		      SYM(l, cuCtxSetCurrent, "cuCtxSetCurrent") + SYM(l, cuCtxSynchronize, "cuCtxSynchronize") +
		      SYM(l, cuModuleLoadData, "cuModuleLoadData") + SYM(l, cuModuleUnload, "cuModuleUnload") +
		      SYM(l, cuModuleGetFunction, "cuModuleGetFunction") + SYM(l, cuLaunchKernel, "cuLaunchKernel") +
		      SYM(l, cuMemAlloc, "cuMemAlloc_v2") + SYM(l, cuMemFree, "cuMemFree_v2") +
		      SYM(l, cuMemcpyHtoD, "cuMemcpyHtoD_v2") + SYM(l, cuMemcpyDtoH, "cuMemcpyDtoH_v2") +
		      SYM(l, cuMemcpyDtoD, "cuMemcpyDtoD_v2") + SYM(l, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") + SYM(l, cuMemsetD8, "cuMemsetD8_v2") +
		      SYM(l, cuEventCreate, "cuEventCreate") + SYM(l, cuEventRecord, "cuEventRecord") +
		      SYM(l, cuEventSynchronize, "cuEventSynchronize") + SYM(l, cuEventElapsedTime, "cuEventElapsedTime_v2") +
		      SYM(l, cuEventDestroy, "cuEventDestroy_v2") + SYM(l, cuGetErrorName, "cuGetErrorName") +
		      SYM(l, cuStreamCreate, "cuStreamCreate") + SYM(l, cuStreamDestroy, "cuStreamDestroy_v2") +
		      SYM(l, cuStreamSynchronize, "cuStreamSynchronize") +
		      SYM(l, cuStreamBeginCapture, "cuStreamBeginCapture_v2") + SYM(l, cuStreamEndCapture, "cuStreamEndCapture") +
		      SYM(l, cuGraphInstantiate, "cuGraphInstantiateWithFlags") + SYM(l, cuGraphLaunch, "cuGraphLaunch") +
		      SYM(l, cuGraphExecDestroy, "cuGraphExecDestroy") + SYM(l, cuGraphDestroy, "cuGraphDestroy");
	if (missing) {
		snprintf(c->why_not, sizeof(c->why_not), "the CUDA driver lacks a function fusescan needs (too old?)");
		return -1;
	}
	if (SYM(l, cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled") + SYM(l, cuLaunchKernelEx, "cuLaunchKernelEx") +
	    SYM(l, cuFuncSetAttribute, "cuFuncSetAttribute"))
		c->cuTensorMapEncodeTiled = NULL; /* no generated GEMM (gemm_gen.h says so) */
	char err[200];
	int n = 0;
	if (fs_cuda_check(c, c->cuInit(0), "cuInit", err, sizeof(err)) ||
	    fs_cuda_check(c, c->cuDeviceGetCount(&n), "cuDeviceGetCount", err, sizeof(err))) {
		snprintf(c->why_not, sizeof(c->why_not), "%s", err);
		return -1;
	}
	if (n < 1) {
		snprintf(c->why_not, sizeof(c->why_not), "no CUDA device");
		return -1;
	}
	if (fs_cuda_check(c, c->cuDeviceGet(&c->device, 0), "cuDeviceGet", err, sizeof(err)) ||
	    fs_cuda_check(c, c->cuDeviceGetName(c->name, sizeof(c->name), c->device), "cuDeviceGetName", err, sizeof(err)) ||
	    fs_cuda_check(c, c->cuDeviceGetAttribute(&c->cc_major, CU_ATTR_CC_MAJOR, c->device), "cuDeviceGetAttribute", err, sizeof(err)) ||
	    fs_cuda_check(c, c->cuDeviceGetAttribute(&c->cc_minor, CU_ATTR_CC_MINOR, c->device), "cuDeviceGetAttribute", err, sizeof(err)) ||
	    fs_cuda_check(c, c->cuDeviceGetAttribute(&c->sms, CU_ATTR_SMS, c->device), "cuDeviceGetAttribute", err, sizeof(err)) ||
	    fs_cuda_check(c, c->cuDevicePrimaryCtxRetain(&c->ctx, c->device), "cuDevicePrimaryCtxRetain", err, sizeof(err)) ||
	    fs_cuda_check(c, c->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent", err, sizeof(err))) {
		snprintf(c->why_not, sizeof(c->why_not), "%s", err);
		return -1;
	}
	return 0;
}

int fs_cuda_open(struct fs_cuda *c)
{
	memset(c, 0, sizeof(*c));
	c->nvrtc = load_nvrtc(c) == 0;
	c->driver = load_driver(c) == 0;
	return 0;
}

/* The libraries stay loaded: NVRTC and the driver keep state of their own
 * for the life of the process and are not made to be unloaded. */
void fs_cuda_close(struct fs_cuda *c)
{
	if (c->ctx)
		c->cuDevicePrimaryCtxRelease(c->device);
	memset(c, 0, sizeof(*c));
}

void fs_cuda_arch(const struct fs_cuda *c, char *arch, size_t n)
{
	if (c->driver)
		snprintf(arch, n, "sm_%d%d", c->cc_major, c->cc_minor);
	else
		snprintf(arch, n, "sm_90");
}

int fs_cuda_check(const struct fs_cuda *c, int result, const char *call, char *err, size_t n)
{
	if (result == 0)
		return 0;
	const char *name = NULL;
	if (c->cuGetErrorName)
		c->cuGetErrorName(result, &name);
	snprintf(err, n, "%s: %s (%d)", call, name ? name : "CUDA error", result);
	return -1;
}

/* ---- the on-disk cache of compiled kernels ------------------------------------------------ */

static char *cache_path(const struct fs_cuda *c, const char *source, const char *arch)
{
	char dir[512];
	if (fs_cache_dir(dir, sizeof(dir)))
		return NULL;
	char *p = NULL;
	uint64_t h = fs_hash_bytes(source, strlen(source), 0x6b65726e656cull);
	size_t len = strlen(dir) + 96;
	p = fs_xmalloc(len);
	snprintf(p, len, "%s/%016llx-%s-nvrtc%d.%d.%s", dir, (unsigned long long)h, arch, c->nvrtc_major, c->nvrtc_minor,
		 strncmp(arch, "compute_", 8) ? "cubin" : "ptx");
	return p;
}

/* source compiled by NVRTC (no cache): 0, or -1 with its error and log in
 * err. Called from several threads at once: it touches only prog and its
 * arguments (NVRTC compiles distinct programs concurrently). */
static int nvrtc_compile(const struct fs_cuda *c, const char *source, const char *arch, int fmad, char **cubin, size_t *len,
			 char *err, size_t n)
{
	int ptx = !strncmp(arch, "compute_", 8);
	void *prog = NULL;
	char archopt[64];
	snprintf(archopt, sizeof(archopt), "--gpu-architecture=%s", arch);
	const char *opts[] = {archopt, "--std=c++17", "-default-device", fmad ? "--fmad=true" : "--fmad=false"};
	int r = c->nvrtcCreateProgram(&prog, source, "fused.cu", 0, NULL, NULL);
	if (r) {
		snprintf(err, n, "nvrtcCreateProgram: %s", c->nvrtcGetErrorString(r));
		return -1;
	}
	r = c->nvrtcCompileProgram(prog, 4, opts);
	if (r) {
		size_t ls = 0;
		c->nvrtcGetProgramLogSize(prog, &ls);
		char *log = fs_xmalloc(ls + 1);
		log[0] = '\0';
		c->nvrtcGetProgramLog(prog, log);
		snprintf(err, n, "nvrtcCompileProgram (%s): %s\n%s", arch, c->nvrtcGetErrorString(r), log);
		free(log);
	} else if ((r = (ptx ? c->nvrtcGetPTXSize : c->nvrtcGetCUBINSize)(prog, len)) != 0 || !*len) {
		snprintf(err, n, "nvrtcGet%sSize: %s", ptx ? "PTX" : "CUBIN", c->nvrtcGetErrorString(r));
		r = r ? r : -1;
	} else {
		*cubin = fs_xmalloc(*len);
		if ((r = (ptx ? c->nvrtcGetPTX : c->nvrtcGetCUBIN)(prog, *cubin)) != 0) {
			snprintf(err, n, "nvrtcGet%s: %s", ptx ? "PTX" : "CUBIN", c->nvrtcGetErrorString(r));
			free(*cubin);
			*cubin = NULL;
		}
	}
	c->nvrtcDestroyProgram(&prog);
	return r ? -1 : 0;
}

/* the compilations the cache did not hold, shared among the threads */
struct pool {
	const struct fs_cuda *c;
	struct fs_compile *jobs;
	const uint32_t *todo;
	uint32_t n;
	atomic_uint next;
	const char *arch;
	int fmad;
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	for (uint32_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
		struct fs_compile *j = &p->jobs[p->todo[i]];
		nvrtc_compile(p->c, j->source, p->arch, p->fmad, &j->cubin, &j->len, j->err, sizeof(j->err));
	}
	return NULL;
}

uint32_t fs_cuda_compile_all(struct fs_cuda *c, struct fs_compile *jobs, uint32_t n, const char *arch, int fmad)
{
	char key[40];
	snprintf(key, sizeof(key), "%s%s", arch, fmad ? "" : "-nofma");
	char **path = fs_xcalloc(n ? n : 1, sizeof(*path));
	uint32_t *todo = fs_xcalloc(n ? n : 1, sizeof(*todo)), m = 0, failed = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct fs_compile *j = &jobs[i];
		j->cubin = NULL, j->len = 0, j->err[0] = '\0';
		if (!c->nvrtc) {
			snprintf(j->err, sizeof(j->err), "NVRTC not found (libnvrtc.so)");
			continue;
		}
		path[i] = cache_path(c, j->source, key);
		j->cubin = path[i] ? fs_read_input(path[i], FS_IN_CUBIN, &j->len) : NULL;
		if (j->cubin && !j->len) { /* an empty file is no CUBIN */
			free(j->cubin);
			j->cubin = NULL;
		}
		if (!j->cubin)
			todo[m++] = i;
	}
	struct pool p = {.c = c, .jobs = jobs, .todo = todo, .n = m, .arch = arch, .fmad = fmad};
	atomic_init(&p.next, 0);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t want = m < 2 ? 0 : (uint32_t)(cores < 2 ? 1 : cores > 32 ? 32 : cores), started = 0;
	pthread_t th[32];
	want = want > m ? m : want;
	while (started < want && pthread_create(&th[started], NULL, worker, &p) == 0)
		started++;
	worker(&p); /* this thread too (and alone, where no thread started) */
	for (uint32_t t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	char dir[512]; /* made only now, as something is stored */
	int stored = m && c->nvrtc && fs_cache_dir_make(dir, sizeof(dir)) == 0;
	for (uint32_t t = 0; t < m && stored; t++) /* a cache: a failed write costs a compile later */
		if (jobs[todo[t]].cubin && path[todo[t]])
			fs_write_file_atomic(path[todo[t]], jobs[todo[t]].cubin, jobs[todo[t]].len);
	for (uint32_t i = 0; i < n; i++) {
		failed += !jobs[i].cubin;
		free(path[i]);
	}
	free(path);
	free(todo);
	return failed;
}

int fs_cuda_compile(struct fs_cuda *c, const char *source, const char *arch, int fmad, char **cubin, size_t *len,
		    char *err, size_t n)
{
	struct fs_compile j = {.source = source};
	if (fs_cuda_compile_all(c, &j, 1, arch, fmad)) {
		snprintf(err, n, "%s", j.err);
		return -1;
	}
	*cubin = j.cubin, *len = j.len;
	return 0;
}
