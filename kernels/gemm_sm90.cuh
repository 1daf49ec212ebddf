// gemm_sm90.cuh: the generated GEMM of a region (fuse/gemm_gen.c): D = A B^T
// on Hopper's tensor cores, the region's epilogue applied to the
// accumulators before anything is stored. A [M, K] and B [N, K] (a linear's
// weight, or several concatenated) are bf16, row-major, loaded by TMA into
// 128-byte-swizzled shared memory: one producer thread issues the loads into
// a ring of FS_STAGES buffers; FS_CONS consumer warpgroups run wgmma on them,
// each owning FS_WN columns (of FS_BN = FS_WN FS_CONS) of all FS_BM = 64 FS_MB rows
// of the tile. The kernel is persistent: each cluster of FS_CLUSTER blocks
// walks tiles from its index by the number of clusters, in groups of
// FS_GROUP_M tile rows (the weight's tiles stay in L2); the blocks of a
// cluster take tiles one above the other and share the weight's tile, each
// loading a part and multicasting it to all.
//
// Before this file the generator defines FS_MB, FS_WN (a literal), FS_CONS, FS_STAGES,
// FS_CLUSTER, FS_GROUP_M, FS_NM (the products of the tile: a concatenated
// group's members, each FS_WN / FS_NM columns of every consumer's share,
// interleaved so by the launcher), and the epilogue:
//   fs_epi(row, col, a FS_EPI_ARGS): a[m][0..1] the accumulators of member m
//   at (row, col) and (row, col + 1), col in the member's own columns;
//   FS_EPI_PARAMS its parameters in the kernel's list (each after a comma),
//   FS_EPI_ARGS their names.
// Compiled by NVRTC for sm_90a, no headers. FS_WN is 96, 128 or 256 (the wgmma
// widths below, fs_gemm_gen_tactics).

#define FS_BK 64
#define FS_BM (64 * FS_MB)
#define FS_BN (FS_WN * FS_CONS)
#define FS_G (FS_WN / FS_NM)

struct __align__(64) fs_tmap { unsigned long long v[16]; }; // CUtensorMap, filled by the launcher

__device__ __forceinline__ unsigned fs_smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void fs_bar_init(unsigned long long *b, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(fs_smem(b)), "r"(count));
}
__device__ __forceinline__ void fs_bar_expect(unsigned long long *b, unsigned bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(fs_smem(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void fs_bar_arrive(unsigned long long *b)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(fs_smem(b)) : "memory");
}
__device__ __forceinline__ void fs_bar_wait(unsigned long long *b, unsigned phase)
{
	unsigned done;
	do
		asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(fs_smem(b)), "r"(phase)
			     : "memory");
	while (!done);
}
// a box of the tensor at (x: the K element, y: the row) into shared memory,
// completing on bar; multicast: into the same place of every block of the
// cluster in `mask`, completing on each one's bar
__device__ __forceinline__ void fs_tma_load(void *dst, const fs_tmap *m, unsigned long long *bar, int x, int y)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
		     ::"r"(fs_smem(dst)), "l"((unsigned long long)m), "r"(fs_smem(bar)), "r"(x), "r"(y)
		     : "memory");
}
__device__ __forceinline__ void fs_tma_multicast(void *dst, const fs_tmap *m, unsigned long long *bar, int x, int y, unsigned short mask)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
		     " [%0], [%1, {%3, %4}], [%2], %5;"
		     ::"r"(fs_smem(dst)), "l"((unsigned long long)m), "r"(fs_smem(bar)), "r"(x), "r"(y), "h"(mask)
		     : "memory");
}
// an arrival on the barrier at b's place in block `rank` of the cluster
__device__ __forceinline__ void fs_bar_arrive_at(unsigned long long *b, unsigned rank)
{
	asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, [r];\n}\n"
		     ::"r"(fs_smem(b)), "r"(rank)
		     : "memory");
}
// a consumer's release of a stage: thread r of the warpgroup arrives on block r's barrier
__device__ __forceinline__ void fs_release(unsigned long long *b, int tid)
{
	if (FS_CLUSTER == 1 && tid == 0)
		fs_bar_arrive(b);
	else if (FS_CLUSTER > 1 && tid < FS_CLUSTER)
		fs_bar_arrive_at(b, (unsigned)tid);
}
__device__ __forceinline__ unsigned fs_cluster_rank(void)
{
	unsigned r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}
__device__ __forceinline__ void fs_cluster_sync(void)
{
	asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// wgmma's descriptor of a K-major tile in 128-byte swizzle: rows of 64
// bf16, 8-row groups 1024 bytes apart
__device__ __forceinline__ unsigned long long fs_desc(const void *p)
{
	return (unsigned long long)((fs_smem(p) & 0x3FFFF) >> 4) | 1ull << 16 | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
}

// fs_wgmma<N>(d, a, b, acc): D (64 x N, fp32, N / 2 registers a thread) +=
// (acc, else =) A (64 x 16) B^T (16 x N), both from shared memory
// descriptors. An asm operand list must be literal text, so the accumulators'
// names (%0 ...) and operands ("+f"(d[0]) ...) come in blocks of 16.
#define FS_R0 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define FS_R16 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FS_R32 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define FS_R48 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FS_R64 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define FS_R80 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define FS_R96 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define FS_R112 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FS_D4(i) "+f"(d[i]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3])
#define FS_D16(i) FS_D4(i), FS_D4((i) + 4), FS_D4((i) + 8), FS_D4((i) + 12)
// n; its accumulators' names; the names of operands a, b, acc (after them); their operands
#define FS_WGMMA_DEF(n, regs, a, b, acc, ...)                                                            \
	__device__ __forceinline__ void fs_wgmma##n(float *d, unsigned long long da, unsigned long long db, int acc_) \
	{                                                                                                 \
		asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " acc ", 0;\n"                                \
			     "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32.bf16.bf16 {" regs "}, " a ", " b   \
			     ", p, 1, 1, 0, 0;\n}\n"                                                             \
			     : __VA_ARGS__                                                                        \
			     : "l"(da), "l"(db), "r"(acc_));                                                      \
	}
FS_WGMMA_DEF(96, FS_R0 ", " FS_R16 ", " FS_R32, "%48", "%49", "%50", FS_D16(0), FS_D16(16), FS_D16(32))
FS_WGMMA_DEF(128, FS_R0 ", " FS_R16 ", " FS_R32 ", " FS_R48, "%64", "%65", "%66", FS_D16(0), FS_D16(16), FS_D16(32),
	     FS_D16(48))
FS_WGMMA_DEF(256, FS_R0 ", " FS_R16 ", " FS_R32 ", " FS_R48 ", " FS_R64 ", " FS_R80 ", " FS_R96 ", " FS_R112, "%128", "%129",
	     "%130", FS_D16(0), FS_D16(16), FS_D16(32), FS_D16(48), FS_D16(64), FS_D16(80), FS_D16(96), FS_D16(112))

#define FS_WGMMA_(n) fs_wgmma##n
#define FS_WGMMA(n) FS_WGMMA_(n)

struct fs_gemm_smem {
	unsigned short a[FS_STAGES][FS_BM * FS_BK];
	unsigned short b[FS_STAGES][FS_BN * FS_BK];
	unsigned long long full[FS_STAGES], empty[FS_STAGES];
};

// tile t of the walk: tile rows in groups of FS_GROUP_M, each group column
// by column (a tile row here: FS_CLUSTER tiles, one per block of the cluster)
__device__ __forceinline__ void fs_tile(int t, int tiles_m, int tiles_n, int *tm, int *tn)
{
	int per_group = FS_GROUP_M * tiles_n, first = t / per_group * FS_GROUP_M;
	int rows = tiles_m - first < FS_GROUP_M ? tiles_m - first : FS_GROUP_M;
	*tm = first + t % per_group % rows;
	*tn = t % per_group / rows;
}

// M rows of A; N rows of B (the concatenated weight, interleaved); Nm the
// columns of each member's output
extern "C" __global__ void __launch_bounds__(128 * (FS_CONS + 1), 1)
fs_gemm(const __grid_constant__ fs_tmap ta, const __grid_constant__ fs_tmap tb, int M, int N, int K, int Nm FS_EPI_PARAMS)
{
	extern __shared__ unsigned char fs_smem_raw[];
	fs_gemm_smem &s = *(fs_gemm_smem *)(((unsigned long long)fs_smem_raw + 1023) & ~1023ull);
	const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
	const unsigned rank = FS_CLUSTER > 1 ? fs_cluster_rank() : 0;
	const int tiles_m = (M + FS_BM * FS_CLUSTER - 1) / (FS_BM * FS_CLUSTER), tiles_n = (N + FS_BN - 1) / FS_BN;
	const int tiles = tiles_m * tiles_n, kt = (K + FS_BK - 1) / FS_BK;
	const int first = blockIdx.x / FS_CLUSTER, step = gridDim.x / FS_CLUSTER;
	if (threadIdx.x == 0) {
		for (int i = 0; i < FS_STAGES; i++) {
			fs_bar_init(&s.full[i], 1);
			fs_bar_init(&s.empty[i], FS_CONS * FS_CLUSTER);
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	if (FS_CLUSTER > 1)
		fs_cluster_sync();
	else
		__syncthreads();
	if (wg == 0) { // the producer: one thread issues every load
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
		if (tid == 0) {
			int it = 0;
			for (int t = first; t < tiles; t += step) {
				int tm, tn;
				fs_tile(t, tiles_m, tiles_n, &tm, &tn);
				for (int k = 0; k < kt; k++, it++) {
					const int st = it % FS_STAGES;
					if (it >= FS_STAGES) // every consumer of the cluster is done with the stage
						fs_bar_wait(&s.empty[st], (it / FS_STAGES + 1) & 1);
					fs_bar_expect(&s.full[st], (FS_BM + FS_BN) * FS_BK * 2);
					fs_tma_load(s.a[st], &ta, &s.full[st], k * FS_BK, (tm * FS_CLUSTER + (int)rank) * FS_BM);
					if (FS_CLUSTER > 1) // this block's part of the weight's tile, into every block's
						fs_tma_multicast(&s.b[st][rank * (FS_BN / FS_CLUSTER) * FS_BK], &tb, &s.full[st], k * FS_BK,
								 tn * FS_BN + (int)rank * (FS_BN / FS_CLUSTER), (unsigned short)((1 << FS_CLUSTER) - 1));
					else
						fs_tma_load(s.b[st], &tb, &s.full[st], k * FS_BK, tn * FS_BN);
				}
			}
		}
	} else {
		asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
		const int c = wg - 1, warp = tid / 32, lane = tid % 32;
		int it = 0;
		for (int t = first; t < tiles; t += step) {
			int tm, tn;
			fs_tile(t, tiles_m, tiles_n, &tm, &tn);
			float d[FS_MB][FS_WN / 2];
#pragma unroll
			for (int mb = 0; mb < FS_MB; mb++)
#pragma unroll
				for (int i = 0; i < FS_WN / 2; i++)
					d[mb][i] = 0.0f;
			for (int k = 0; k < kt; k++, it++) {
				const int st = it % FS_STAGES;
				fs_bar_wait(&s.full[st], (it / FS_STAGES) & 1);
				asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
				for (int kk = 0; kk < FS_BK / 16; kk++)
#pragma unroll
					for (int mb = 0; mb < FS_MB; mb++)
						FS_WGMMA(FS_WN)(d[mb], fs_desc(&s.a[st][mb * 64 * FS_BK + kk * 16]),
								fs_desc(&s.b[st][c * FS_WN * FS_BK + kk * 16]), 1);
				asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
				asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
				if (k) // the stage before is read: its producers may refill it
					fs_release(&s.empty[(it + FS_STAGES - 1) % FS_STAGES], tid);
			}
			asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
			fs_release(&s.empty[(it + FS_STAGES - 1) % FS_STAGES], tid);
			// the epilogue: of each 64-row block, thread (warp, lane) holds rows
			// 16 warp + lane / 4 (+ 8), columns 8 j + 2 (lane % 4) (+ 1) of each
			// 8-column group j of the consumer's share; member m's columns of
			// the share are FS_G from m FS_G on
			const int row0 = (tm * FS_CLUSTER + (int)rank) * FS_BM + warp * 16 + lane / 4;
			const int col0 = (tn * FS_CONS + c) * FS_G + 2 * (lane % 4);
#pragma unroll
			for (int mb = 0; mb < FS_MB; mb++)
#pragma unroll
				for (int j = 0; j < FS_G / 2; j += 2) {
					const int row = row0 + mb * 64 + 8 * ((j >> 1) & 1), col = col0 + 8 * (j >> 2);
					float a[FS_NM][2];
#pragma unroll
					for (int m = 0; m < FS_NM; m++) {
						a[m][0] = d[mb][j + m * FS_G / 2];
						a[m][1] = d[mb][j + 1 + m * FS_G / 2];
					}
					if (row < M && col < Nm)
						fs_epi(row, col, a FS_EPI_ARGS);
				}
		}
	}
	if (FS_CLUSTER > 1) // no block leaves while another may still arrive on its barriers
		fs_cluster_sync();
}
