/*
 * cmd_match.c: `fusescan match PATH...`: the pattern library (built in, or
 * --patterns DIR) on every dump, in AutoDeploy's summary form, with
 * --explain, and the CI gates --expect, --baseline and --log. Exit 1 when a
 * gate fails, 2 on bad input or options.
 */
#include "cli.h"
#include "fusescan/catalog.h"
#include "fusescan/discover.h"
#include "fusescan/matchrun.h"

#include <stdlib.h>
#include <string.h>

static const char *const formats[] = {"text", "json", "junit", NULL};

/* The gates and the report; returns the exit code. */
static int report(struct fs_match_run *r, const struct fs_patlib *lib, struct fs_scan *s, int format,
		  const char *out_path, const char *expect, const char *baseline, const char *log)
{
	struct fs_catalog cat; /* what each AD transform inserts */
	fs_catalog_init(&cat, s);
	fs_catalog_load_default(&cat, NULL, &s->diags);
	r->cat = &cat;
	int bad = (log && fs_match_log_read(r, log, &s->diags) < 0);
	bad = bad || (expect && fs_match_gate_expect(r, expect, &s->diags) < 0) ||
	      (baseline && fs_match_gate_baseline(r, baseline, lib, &s->diags) < 0);
	if (!bad)
		fs_match_check_log(r);
	struct fs_out out;
	int rc = fs_out_open(&out, out_path);
	if (rc == 0) {
		rc = format == 1 ? fs_match_json(r, out.f) : format == 2 ? fs_match_junit(r, out.f) : fs_match_text(r, out.f);
		rc = fs_out_finish(&out, rc);
	}
	if (r->gates.failed)
		fprintf(stderr, "fusescan match: %u of %u gate checks failed\n", r->gates.failed, r->gates.n);
	r->cat = NULL;
	fs_catalog_release(&cat);
	return rc || bad || s->diags.n_errors ? FS_EXIT_INPUT : r->gates.failed ? FS_EXIT_GATE : FS_EXIT_OK;
}

int fs_cmd_match(const struct fs_command *cmd, int argc, char **argv)
{
	int format = 0;
	const char *out_path = NULL, *dir = NULL, *explain = NULL, *expect = NULL, *baseline = NULL, *log = NULL;
	struct fs_strlist names = {0};
	const struct fs_option opts[] = {
		{"pattern", 'p', FS_OPT_LIST, "NAME", "match only this pattern (repeatable)", &names, NULL},
		{"patterns", 0, FS_OPT_STRING, "DIR", "pattern files (*.pat) to use instead of the built-in library", &dir, NULL},
		{"format", 'f', FS_OPT_CHOICE, "FMT", "report format", &format, formats},
		{"output", 'o', FS_OPT_STRING, "FILE", "write the report to FILE (atomically)", &out_path, NULL},
		{"explain", 0, FS_OPT_STRING, "NAME", "near misses of a pattern, grouped by cause", &explain, NULL},
		{"expect", 0, FS_OPT_STRING, "FILE", "gate on expected counts of patterns or AD transforms ('rmsnorm >= 2*layers+1')", &expect, NULL},
		{"baseline", 0, FS_OPT_STRING, "PATH", "gate: fail on any count below a run or saved JSON", &baseline, NULL},
		{"log", 0, FS_OPT_STRING, "FILE", "cross-check ad.log's matches= with what each transform changed", &log, NULL},
		{0},
	};
	int npos, r = fs_opts_parse(cmd, opts, argc, argv, &npos);
	if (r) {
		free(names.v);
		return r > 0 ? FS_EXIT_OK : FS_EXIT_INPUT;
	}
	if (fs_opts_no_input(cmd, opts, npos)) {
		free(names.v);
		return FS_EXIT_INPUT;
	}
	struct fs_guard g = {0};
	fs_guard_add(&g, "the --patterns directory", dir);
	fs_guard_add(&g, "the --expect file", expect);
	fs_guard_add(&g, "the --baseline", baseline);
	fs_guard_add(&g, "the --log file", log);
	struct fs_scan *s = fs_cli_read(cmd, argv, npos, &g, out_path);
	fs_guard_release(&g);
	if (!s) {
		free(names.v);
		return FS_EXIT_INPUT;
	}
	struct fs_patlib lib;
	fs_patlib_init(&lib);
	if (dir)
		fs_patlib_load_dir(&lib, dir, &s->diags);
	else
		fs_patlib_load_builtin(&lib, &s->diags);
	int rc = FS_EXIT_INPUT;
	/* with --pattern, the explained pattern is matched too; without, all are */
	if (explain && names.n) {
		FS_GROW(names.v, names.cap, names.n + 1);
		names.v[names.n++] = explain;
	}
	if (!lib.n)
		fs_diag_add(&s->diags, FS_ERROR, dir ? dir : "patterns", 0, 0, NULL, 0, "no usable pattern");
	else if (explain && fs_patlib_find(&lib, explain) < 0)
		fs_diag_add(&s->diags, FS_ERROR, explain, 0, 0, NULL, 0, "--explain: unknown pattern '%s'", explain);
	else {
		struct fs_match_run *run = fs_match_run(s, &lib, names.v, names.n, &s->diags);
		if (run) {
			run->explain = explain ? fs_match_group(run, explain) : -1;
			rc = report(run, &lib, s, format, out_path, expect, baseline, log);
		}
		fs_match_run_free(run);
	}
	fs_diags_print(&s->diags, stderr);
	free(names.v);
	fs_patlib_release(&lib);
	fs_scan_free(s);
	return rc;
}
