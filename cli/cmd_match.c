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

/* What the options say, read by every step below */
struct match_opts {
	int format;
	const char *out_path, *dir, *explain, *expect, *baseline, *log;
	struct fs_strlist names; /* --pattern */
};

/* The gates and the report; returns the exit code. */
static int report(struct fs_match_run *r, const struct fs_patlib *lib, struct fs_scan *s, const struct match_opts *o)
{
	struct fs_catalog cat; /* what each AD transform inserts */
	fs_catalog_init(&cat, s);
	fs_catalog_load_default(&cat, NULL, &s->diags);
	r->cat = &cat;
	int bad = (o->log && fs_match_log_read(r, o->log, &s->diags) < 0);
	bad = bad || (o->expect && fs_match_gate_expect(r, o->expect, &s->diags) < 0) ||
	      (o->baseline && fs_match_gate_baseline(r, o->baseline, lib, &s->diags) < 0);
	if (!bad)
		fs_match_check_log(r);
	struct fs_out out;
	int rc = fs_out_open(&out, o->out_path);
	if (rc == 0) {
		rc = o->format == 1 ? fs_match_json(r, out.f) : o->format == 2 ? fs_match_junit(r, out.f) : fs_match_text(r, out.f);
		rc = fs_out_finish(&out, rc);
	}
	if (r->gates.failed)
		fprintf(stderr, "fusescan match: %u of %u gate checks failed\n", r->gates.failed, r->gates.n);
	r->cat = NULL;
	fs_catalog_release(&cat);
	return rc || bad || s->diags.n_errors ? FS_EXIT_INPUT : r->gates.failed ? FS_EXIT_GATE : FS_EXIT_OK;
}

/* The dumps; none of the files the options read may be among the outputs */
static struct fs_scan *read_dumps(const struct fs_command *cmd, char **argv, int npos, const struct match_opts *o)
{
	struct fs_guard g = {0};
	fs_guard_add(&g, "the --patterns directory", o->dir);
	fs_guard_add(&g, "the --expect file", o->expect);
	fs_guard_add(&g, "the --baseline", o->baseline);
	fs_guard_add(&g, "the --log file", o->log);
	struct fs_scan *s = fs_cli_read(cmd, argv, npos, &g, o->out_path);
	fs_guard_release(&g);
	return s;
}

/* The pattern library on the dumps, then the gates and the report; returns the exit code. */
static int match_and_report(struct fs_scan *s, struct match_opts *o)
{
	struct fs_patlib lib;
	fs_patlib_init(&lib);
	if (o->dir)
		fs_patlib_load_dir(&lib, o->dir, &s->diags);
	else
		fs_patlib_load_builtin(&lib, &s->diags);
	int rc = FS_EXIT_INPUT;
	/* with --pattern, the explained pattern is matched too; without, all are */
	if (o->explain && o->names.n) {
		FS_GROW(o->names.v, o->names.cap, o->names.n + 1);
		o->names.v[o->names.n++] = o->explain;
	}
	if (!lib.n)
		fs_diag_add(&s->diags, FS_ERROR, o->dir ? o->dir : "patterns", 0, 0, NULL, 0, "no usable pattern");
	else if (o->explain && fs_patlib_find(&lib, o->explain) < 0)
		fs_diag_add(&s->diags, FS_ERROR, o->explain, 0, 0, NULL, 0, "--explain: unknown pattern '%s'", o->explain);
	else {
		struct fs_match_run *run = fs_match_run(s, &lib, o->names.v, o->names.n, &s->diags);
		if (run) {
			run->explain = o->explain ? fs_match_group(run, o->explain) : -1;
			rc = report(run, &lib, s, o);
		}
		fs_match_run_free(run);
	}
	fs_patlib_release(&lib);
	return rc;
}

int fs_cmd_match(const struct fs_command *cmd, int argc, char **argv)
{
	struct match_opts o = {0};
	const struct fs_option opts[] = {
		{"pattern", 'p', FS_OPT_LIST, "NAME", "match only this pattern (repeatable)", &o.names, NULL},
		{"patterns", 0, FS_OPT_STRING, "DIR", "pattern files (*.pat) to use instead of the built-in library", &o.dir, NULL},
		{"format", 'f', FS_OPT_CHOICE, "FMT", "report format", &o.format, formats},
		{"output", 'o', FS_OPT_STRING, "FILE", "write the report to FILE (atomically)", &o.out_path, NULL},
		{"explain", 0, FS_OPT_STRING, "NAME", "near misses of a pattern, grouped by cause", &o.explain, NULL},
		{"expect", 0, FS_OPT_STRING, "FILE", "gate on expected counts of patterns or AD transforms ('rmsnorm >= 2*layers+1')", &o.expect, NULL},
		{"baseline", 0, FS_OPT_STRING, "PATH", "gate: fail on any count below a run or saved JSON", &o.baseline, NULL},
		{"log", 0, FS_OPT_STRING, "FILE", "cross-check ad.log's matches= with what each transform changed", &o.log, NULL},
		{0},
	};
	int npos, r = fs_opts_parse(cmd, opts, argc, argv, &npos);
	if (r) {
		free(o.names.v);
		return r > 0 ? FS_EXIT_OK : FS_EXIT_INPUT;
	}
	struct fs_scan *s = fs_opts_no_input(cmd, opts, npos) ? NULL : read_dumps(cmd, argv, npos, &o);
	if (!s) {
		free(o.names.v);
		return FS_EXIT_INPUT;
	}
	int rc = match_and_report(s, &o);
	fs_diags_print(&s->diags, stderr);
	free(o.names.v);
	fs_scan_free(s);
	return rc;
}
