/*
 * site_text.c: --apply's report of one site as text (fusescan/site.h): the
 * CPU executions, the kernels, the tuning, the GPU's check and times, the
 * buckets, and the verdict last.
 */
#include "fusescan/site.h"

#include <stdio.h>

/* the last line: the one verdict (fs_verdict_settle) */
static void print_verdict(const struct fs_site_result *r, FILE *out)
{
	fprintf(out, "  verdict: %s%s%s\n", fs_verdict_name(r->verdict), r->why[0] ? ": " : "", r->why);
}

/* The CPU executions' errors, check and triage. */
static void print_cpu(const struct fs_site_result *r, FILE *out)
{
	fprintf(out, "numerics (CPU, float64 reference; %s):\n  %s\n", r->shape.binding, r->shape.shapes);
	if (r->shape.planted[0])
		fprintf(out, "  planted bug (debug): %s\n", r->shape.planted);
	if (!r->cpu.ran)
		fprintf(out, "  CPU executions skipped: %s\n", r->cpu.skipped);
	const struct {
		const char *name;
		const struct fs_errors *e;
	} rows[] = {{"unfused (eager rounding)", &r->cpu.unfused}, {"fused (fp32 inside)", &r->cpu.fused},
		    {"fused, per-op rounding", &r->cpu.emulated}};
	if (r->cpu.ran)
		fprintf(out, "  %-26s %11s %11s %11s %9s\n", "execution", "max abs", "max rel", "nrmse", "non-fin.");
	for (int i = 0; r->cpu.ran && i < (r->triage != FS_TRIAGE_NONE || r->cpu.emulated.max_abs > 0 ? 3 : 2); i++)
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", rows[i].name, rows[i].e->max_abs, rows[i].e->max_rel,
			rows[i].e->nrmse, (unsigned long long)rows[i].e->nonfinite);
	if (r->cpu.ran)
		fprintf(out, "  CPU check: %s (fused <= %.0f x unfused + %.0e; minimum tolerance that passes: %.3e)%s%s\n",
			fs_verdict_name(r->cpu.check.verdict), r->rule.k, r->rule.tol, r->cpu.check.min_tol, r->cpu.check.why[0] ? ": " : "",
			r->cpu.check.why);
	enum fs_triage cpu = r->cpu.triage;
	if (cpu != FS_TRIAGE_NONE)
		fprintf(out, "  triage (CPU): %s (%s)\n", fs_triage_name(cpu),
			cpu == FS_TRIAGE_ROUNDING ? "the difference vanishes when every op rounds like eager"
						  : "the difference stays when every op rounds like eager");
}

/* What was generated and compiled. */
static void print_kernels(const struct fs_site_result *r, FILE *out)
{
	uint32_t fused = r->gpu.ran ? r->gpu.n_tactics : r->gpu.kernels - r->gpu.unfused_kernels - r->gpu.ref_kernels - r->gpu.gemm_kernels;
	char gemm[64] = "";
	if (r->gpu.gemm_kernels)
		snprintf(gemm, sizeof(gemm), ", the GEMM with its epilogue under %u", r->gpu.gemm_kernels);
	fprintf(out, "  kernels: %u generated (fused under %u tactic%s%s, %u unfused, %u float64 reference), %u compiled for %s with %s%s%s\n",
		r->gpu.kernels, fused, fused == 1 ? "" : "s", gemm, r->gpu.unfused_kernels, r->gpu.ref_kernels, r->gpu.compiled, r->gpu.arch,
		r->gpu.nvrtc[0] ? r->gpu.nvrtc : "no NVRTC", r->gpu.error[0] ? "; error: " : "", r->gpu.error);
}

/* The tuning: the tactic chosen and how, the finalists, each failure. */
static void print_tuning(const struct fs_site_result *r, FILE *out)
{
	if (!r->gpu.n_tactics)
		return;
	if (r->gpu.chosen < 0)
		fprintf(out, "  tuning: %u tactic%s timed, none passed its check: the fallback kernel (any size) runs\n", r->gpu.n_tactics,
			r->gpu.n_tactics == 1 ? "" : "s");
	else if (r->gpu.cache_hit)
		fprintf(out, "  tuning: cache hit (%s, bucket %s): no tactic profiled\n", r->gpu.tactics[r->gpu.chosen].rec.name, r->shape.bucket);
	else {
		uint32_t fin = 0;
		for (uint32_t i = 0; i < r->gpu.n_tactics; i++)
			fin += r->gpu.tactics[i].rec.final != 0;
		fprintf(out,
			"  tuning: %u tactics timed, %u failed, %u finalist%s timed again interleaved;"
			" chosen %s %.4f ms (+-%.4f, p90-p10 %.4f)",
			r->gpu.n_tactics, r->gpu.n_failed, fin, fin == 1 ? "" : "s", r->gpu.tactics[r->gpu.chosen].rec.name, r->gpu.tactics[r->gpu.chosen].rec.ms, r->gpu.tactics[r->gpu.chosen].rec.ci,
			r->gpu.tactics[r->gpu.chosen].rec.spread);
		if (r->gpu.runner_up >= 0)
			fprintf(out, ", runner-up %s %.4f ms", r->gpu.tactics[r->gpu.runner_up].rec.name, r->gpu.tactics[r->gpu.runner_up].rec.ms);
		fprintf(out, "\n");
		for (uint32_t i = 0; i < r->gpu.n_tactics; i++)
			if (r->gpu.tactics[i].rec.worst > 0)
				fprintf(out, "    %-22s finalist: %.4f ms among the finalists, %.4f after the unfused chain, %.4f after a copy;"
					     " worst ratio to a company's fastest %.3f\n", r->gpu.tactics[i].rec.name, r->gpu.tactics[i].rec.company_ms[0],
					r->gpu.tactics[i].rec.company_ms[1], r->gpu.tactics[i].rec.company_ms[2], r->gpu.tactics[i].rec.worst);
	}
	for (uint32_t i = 0; i < r->gpu.n_tactics; i++)
		if (r->gpu.tactics[i].rec.failed[0])
			fprintf(out, "    %-16s failed: %s\n", r->gpu.tactics[i].rec.name, r->gpu.tactics[i].rec.failed);
}

/* The GPU executions' errors against the float64 reference, check and triage. */
static void print_gpu_check(const struct fs_site_result *r, FILE *out)
{
	fprintf(out, "  GPU %s, float64 reference on the GPU", r->gpu.device);
	if (r->gpu.ref_checked)
		fprintf(out, " (against the CPU's: max abs %.2e, max rel %.2e, %llu non-finite)", r->gpu.ref_vs_cpu.max_abs,
			r->gpu.ref_vs_cpu.max_rel, (unsigned long long)(r->gpu.ref_vs_cpu.nonfinite + r->gpu.ref_vs_cpu.unwritten));
	else
		fprintf(out, " (no CPU reference at these sizes)");
	fprintf(out, ":\n");
	fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "unfused kernels", r->gpu.unfused.max_abs, r->gpu.unfused.max_rel,
		r->gpu.unfused.nrmse, (unsigned long long)(r->gpu.unfused.nonfinite + r->gpu.unfused.unwritten));
	fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused kernel", r->gpu.fused.max_abs, r->gpu.fused.max_rel,
		r->gpu.fused.nrmse, (unsigned long long)(r->gpu.fused.nonfinite + r->gpu.fused.unwritten));
	if (r->gpu_check.triaged) {
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused, FMA contraction off", r->gpu.no_fma.max_abs,
			r->gpu.no_fma.max_rel, r->gpu.no_fma.nrmse, (unsigned long long)r->gpu.no_fma.nonfinite);
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused, per-op rounding", r->gpu.emulated.max_abs,
			r->gpu.emulated.max_rel, r->gpu.emulated.nrmse, (unsigned long long)r->gpu.emulated.nonfinite);
	}
	fprintf(out, "  GPU check: %s (minimum tolerance that passes: %.3e)%s%s\n", fs_verdict_name(r->gpu_check.check.verdict),
		r->gpu_check.check.min_tol, r->gpu_check.check.why[0] ? ": " : "", r->gpu_check.check.why);
	if (r->gpu_check.triaged && r->triage != FS_TRIAGE_NONE)
		fprintf(out, "  triage (GPU): %s (%s)\n", fs_triage_name(r->triage),
			r->triage == FS_TRIAGE_ROUNDING ? "the kernel passes with FMA contraction off or eager rounding"
							: "the kernel fails with FMA contraction off and with eager rounding");
}

/* Fused against unfused, side by side. */
static void print_time(const struct fs_site_result *r, FILE *out)
{
	double fg = (double)r->gpu.fused_bytes / (r->gpu.fused_ms * 1e-3) / 1e9, ug = (double)r->gpu.unfused_bytes / (r->gpu.unfused_ms * 1e-3) / 1e9;
	fprintf(out, "  time (median of %u, %u input copies rotated, %s): fused %.4f ms (+-%.4f), ", r->gpu.reps, r->gpu.rotate,
		r->gpu.apart ? "timed apart: both do not fit the device at once" : "fused and unfused side by side", r->gpu.fused_ms,
		r->gpu.fused_ci);
	if (r->gpu.flops > 0) /* matrix products: their rate, not a copy's */
		fprintf(out, "%.1f TFLOP/s, %.0f GB/s; unfused %.4f ms (+-%.4f, %u launches), %.1f TFLOP/s", r->gpu.flops / (r->gpu.fused_ms * 1e-3) / 1e12,
			fg, r->gpu.unfused_ms, r->gpu.unfused_ci, r->gpu.unfused_launches, r->gpu.flops / (r->gpu.unfused_ms * 1e-3) / 1e12);
	else
		fprintf(out, "%.0f GB/s, %.0f%% of copy %.0f GB/s (%.0f%% of a copy of the same bytes, %.0f GB/s); unfused %.4f ms (+-%.4f, "
			     "%u kernels), %.0f GB/s",
			fg, 100 * fg / r->gpu.copy_gbs, r->gpu.copy_gbs, 100 * fg / r->gpu.copy_same_gbs, r->gpu.copy_same_gbs, r->gpu.unfused_ms, r->gpu.unfused_ci,
			r->gpu.unfused_launches, ug);
	fprintf(out, "; speedup %.3fx [%.3f, %.3f]\n", r->gpu.speedup, r->gpu.speedup_lo, r->gpu.speedup_hi);
}

/* The bucket table. */
static void print_buckets(const struct fs_site_result *r, FILE *out)
{
	uint32_t tuned = 0;
	for (uint32_t i = 0; i < r->buckets.n; i++)
		tuned += r->buckets.v[i].tuned;
	if (!tuned)
		return;
	fprintf(out, "  tuned per bucket (a token count takes the smallest bucket at least as large; timed as CUDA graphs "
		     "of %d calls, of fewer where a call moves over %.0f MB: graphs of N):\n",
		FS_GRAPH_CALLS, FS_GRAPH_CALL_BYTES / 1e6);
	fprintf(out, "    %8s  %-18s %10s %10s %10s %22s %7s  %s\n", "tokens", "tactic", "fused ms", "+-", "unfused ms",
		"speedup [95% interval]", "tuning", "");
	for (uint32_t i = 0; i < r->buckets.n; i++) {
		const struct fs_bucket_run *b = &r->buckets.v[i];
		if (!b->tuned) {
			fprintf(out, "    %8lld  not tuned: %s\n", (long long)b->tokens, b->error);
			continue;
		}
		char graphs[32] = "";
		if (b->graph_calls > 1)
			snprintf(graphs, sizeof(graphs), "graphs of %u ", b->graph_calls);
		char sp[40];
		snprintf(sp, sizeof(sp), "%.3fx [%.3f, %.3f]", b->speedup, b->speedup_lo, b->speedup_hi);
		fprintf(out, "    %8lld  %-18s %10.4f %10.4f %10.4f %22s %6.1fs  %s%s%s%s%s%s\n", (long long)b->tokens, b->tactic, b->ms,
			b->ci, b->unfused_ms, sp, b->seconds, graphs,
			b->variant == 1 ? "cuBLASLt's epilogue chosen " : b->variant == 2 ? "the generated GEMM chosen " : "",
			b->cache_hit ? "cache hit " : "", b->slower ? "fused plan slower here (profitable: false) " : "",
			b->passed ? "" : "FAILS: ", b->passed ? "" : b->error);
	}
}

void fs_site_report_text(const struct fs_site_result *r, FILE *out)
{
	print_cpu(r, out);
	print_kernels(r, out);
	if (r->emit.text[0])
		fprintf(out, "  %s: %s\n", r->emit.failed ? "emit failed" : "emitted", r->emit.text);
	if (!r->gpu.ran) {
		fprintf(out, "  GPU: %s\n", r->gpu.skipped[0] ? r->gpu.skipped : "not run (see the error above)");
		print_verdict(r, out);
		return;
	}
	if (r->gpu.gemm[0])
		fprintf(out, "  matrix products: %s\n", r->gpu.gemm);
	print_tuning(r, out);
	print_gpu_check(r, out);
	print_time(r, out);
	print_buckets(r, out);
	print_verdict(r, out);
}
