// gemm_mma.cuh: the generated GEMM's portable form (fuse/gemm_gen.c), for
// any GPU from sm_80 on: D = A B^T with mma.sync (m16n8k16, bf16 in, fp32
// accumulators), the region's epilogue applied to the accumulators as in
// gemm_sm90.cuh. A [M, K] and B [N, K] bf16 row-major; each block computes a
// tile of FS_BM = 64 FS_MB rows by FS_BN = FS_WN FS_CONS columns with FS_MB x
// FS_CONS warps of 64 x FS_WN each; tiles of K by 32 go global -> shared
// memory with cp.async through FS_STAGES buffers (rows padded by 16 bytes:
// ldmatrix reads them without bank conflicts).
//
// Before this file the generator defines FS_MB, FS_WN (64), FS_CONS,
// FS_STAGES, FS_NM and the epilogue (fs_epi, FS_EPI_PARAMS, FS_EPI_ARGS) as
// for gemm_sm90.cuh: member m's columns of each warp's share are FS_G from
// m FS_G on. Compiled by NVRTC, no headers.

#define FS_BK 32
#define FS_BM (64 * FS_MB)
#define FS_BN (FS_WN * FS_CONS)
#define FS_G (FS_WN / FS_NM)
#define FS_LD (FS_BK + 8) // a shared row, in elements: 80 bytes
#define FS_NT (FS_WN / 8) // 8-column tiles per warp

__device__ __forceinline__ unsigned fs_smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// 16 bytes from global to shared memory, zeros where ok is 0
__device__ __forceinline__ void fs_cp16(void *dst, const void *src, int ok)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(fs_smem(dst)), "l"(src), "r"(ok ? 16 : 0) : "memory");
}

__device__ __forceinline__ void fs_ldsm4(unsigned *r, const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(fs_smem(p)));
}

__device__ __forceinline__ void fs_mma(float *d, const unsigned *a, unsigned b0, unsigned b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		     "{%0, %1, %2, %3};"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// rows [r0, r0 + rows) of a row-major matrix (K columns) from column k0:
// each row's 32 elements as four 16-byte pieces, spread over the block
__device__ __forceinline__ void fs_load_tile(unsigned short *dst, const unsigned short *src, int r0, int rows, int limit, int K,
					     int k0)
{
	for (int c = threadIdx.x; c < rows * 4; c += blockDim.x) {
		int r = c / 4, q = c % 4, row = r0 + r, k = k0 + q * 8;
		int ok = row < limit && k < K;
		fs_cp16(&dst[r * FS_LD + q * 8], src + (ok ? (long long)row * K + k : 0), ok);
	}
}

// M rows of A; N rows of B; Nm the columns of each member's output
extern "C" __global__ void __launch_bounds__(32 * FS_MB * FS_CONS)
fs_gemm(const unsigned short *__restrict__ A, const unsigned short *__restrict__ B, int M, int N, int K, int Nm FS_EPI_PARAMS)
{
	extern __shared__ unsigned char fs_smem_raw[];
	unsigned short *sa = (unsigned short *)fs_smem_raw, *sb = sa + FS_STAGES * FS_BM * FS_LD;
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp / FS_CONS, wn = warp % FS_CONS;
	const int tiles_n = (N + FS_BN - 1) / FS_BN, tm = blockIdx.x / tiles_n, tn = blockIdx.x % tiles_n;
	const int kt = (K + FS_BK - 1) / FS_BK;
	float d[4][FS_NT][4];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < FS_NT; j++)
#pragma unroll
			for (int u = 0; u < 4; u++)
				d[i][j][u] = 0.0f;
	for (int s = 0; s < FS_STAGES - 1; s++) {
		if (s < kt) {
			fs_load_tile(sa + s * FS_BM * FS_LD, A, tm * FS_BM, FS_BM, M, K, s * FS_BK);
			fs_load_tile(sb + s * FS_BN * FS_LD, B, tn * FS_BN, FS_BN, N, K, s * FS_BK);
		}
		asm volatile("cp.async.commit_group;" ::: "memory");
	}
	for (int k = 0; k < kt; k++) {
		asm volatile("cp.async.wait_group %0;" ::"n"(FS_STAGES - 2) : "memory");
		__syncthreads(); // stage k is in; every warp is done with stage k - 1, refilled now
		const int next = k + FS_STAGES - 1;
		if (next < kt) {
			fs_load_tile(sa + next % FS_STAGES * FS_BM * FS_LD, A, tm * FS_BM, FS_BM, M, K, next * FS_BK);
			fs_load_tile(sb + next % FS_STAGES * FS_BN * FS_LD, B, tn * FS_BN, FS_BN, N, K, next * FS_BK);
		}
		asm volatile("cp.async.commit_group;" ::: "memory");
		const unsigned short *a = sa + k % FS_STAGES * FS_BM * FS_LD + wm * 64 * FS_LD;
		const unsigned short *b = sb + k % FS_STAGES * FS_BN * FS_LD + wn * FS_WN * FS_LD;
#pragma unroll
		for (int kk = 0; kk < FS_BK; kk += 16) {
			unsigned af[4][4], bf[FS_NT][2];
#pragma unroll
			for (int i = 0; i < 4; i++) // rows 16 i + lane % 16, columns kk + 8 (lane / 16)
				fs_ldsm4(af[i], &a[(i * 16 + lane % 16) * FS_LD + kk + (lane / 16) * 8]);
#pragma unroll
			for (int j = 0; j < FS_NT; j += 2) { // two 8-column tiles: rows of B 8 j + lane % 8 (+ 8), columns kk (+ 8)
				unsigned r[4];
				fs_ldsm4(r, &b[(j * 8 + (lane & 7) + ((lane >> 4) << 3)) * FS_LD + kk + ((lane >> 3) & 1) * 8]);
				bf[j][0] = r[0], bf[j][1] = r[1], bf[j + 1][0] = r[2], bf[j + 1][1] = r[3];
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < FS_NT; j++)
					fs_mma(d[i][j], af[i], bf[j][0], bf[j][1]);
		}
	}
	// the epilogue: of 16-row tile i, thread lane holds rows lane / 4 (+ 8),
	// columns 2 (lane % 4) (+ 1) of each 8-column tile j of the warp's share
	const int row0 = tm * FS_BM + wm * 64 + lane / 4;
	const int col0 = (tn * FS_CONS + wn) * FS_G + 2 * (lane % 4);
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < FS_NT / FS_NM; j++)
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int row = row0 + i * 16 + h * 8, col = col0 + j * 8;
				float v[FS_NM][2];
#pragma unroll
				for (int m = 0; m < FS_NM; m++) {
					v[m][0] = d[i][j + m * FS_NT / FS_NM][2 * h];
					v[m][1] = d[i][j + m * FS_NT / FS_NM][2 * h + 1];
				}
				if (row < M && col < Nm)
					fs_epi(row, col, v FS_EPI_ARGS);
			}
}
