// gemm_ref.cuh: the float64 reference of a region's matrix products, after
// fused.cuh (fs_real double). fuse/gemm.c puts before it the operands' types
// and loads: FS_TA / FS_LDA (A), FS_TB / FS_LDB (B), FS_TBIAS / FS_LDBIAS, and
// FS_TX / FS_CMPX (the result fs_ref_cmp checks). Products are accumulated in
// double, so the reference is exact up to double rounding whatever K.

// D[z, m, n] = sum_k A[z, m, k] B(z, k, n) + bias[m * bias_m + n], stored as
// double. B(z, k, n) is b[z sb + n K + k] (b_nk: a linear's [N, K] weight) or
// b[z sb + k N + n]. A block computes a 64 x 64 tile of D, each of its 256
// threads 4 x 4 elements, over steps of 16 along K staged in shared memory.
extern "C" __global__ void __launch_bounds__(256)
fs_ref_gemm(const FS_TA *__restrict__ a, const FS_TB *__restrict__ b, const FS_TBIAS *__restrict__ bias, double *__restrict__ d,
	    long long M, long long N, long long K, long long sa, long long sb, long long bias_m, int b_nk)
{
	__shared__ double As[16][65], Bs[16][65];
	const long long z = blockIdx.z, m0 = (long long)blockIdx.y * 64, n0 = (long long)blockIdx.x * 64;
	const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	const FS_TA *A = a + z * sa;
	const FS_TB *B = b + z * sb;
	double acc[4][4] = {};
	for (long long k0 = 0; k0 < K; k0 += 16) {
		for (int i = threadIdx.x; i < 16 * 64; i += 256) {
			int kk = i % 16, r = i / 16; /* along K: coalesced for A and an [N, K] B */
			long long m = m0 + r, k = k0 + kk, n = n0 + r;
			As[kk][r] = m < M && k < K ? (double)FS_LDA(A, m * K + k) : 0.0;
			if (b_nk)
				Bs[kk][r] = n < N && k < K ? (double)FS_LDB(B, n * K + k) : 0.0;
			else {
				int c = i % 64, kr = i / 64; /* along N: coalesced for a [K, N] B */
				long long nc = n0 + c, kc = k0 + kr;
				Bs[kr][c] = nc < N && kc < K ? (double)FS_LDB(B, kc * N + nc) : 0.0;
			}
		}
		__syncthreads();
		for (int kk = 0; kk < 16; kk++) {
			double av[4], bv[4];
			for (int i = 0; i < 4; i++)
				av[i] = As[kk][ty + 16 * i], bv[i] = Bs[kk][tx + 16 * i];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] += av[i] * bv[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			long long m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
			if (m < M && n < N)
				d[(z * M + m) * N + n] = acc[i][j] + (bias ? (double)FS_LDBIAS(bias, m * bias_m + n) : 0.0);
		}
}

// The errors of a result x (rows x cols, rows ldx elements apart: a slice of
// a concatenated product) against the reference ref (dense), added to st.
extern "C" __global__ void __launch_bounds__(256)
fs_ref_cmp(const double *__restrict__ ref, const FS_TX *__restrict__ x, long long rows, long long cols, long long ldx, fs_stats *st)
{
	fs_acc err = {};
	for (long long i = blockIdx.x * 256ll + threadIdx.x; i < rows * cols; i += gridDim.x * 256ll)
		FS_CMPX(x, i / cols * ldx + i % cols, ref[i], err);
	fs_acc_flush(err, st);
}
