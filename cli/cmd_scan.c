/*
 * cmd_scan.c: `fusescan scan PATH...` (also plain `fusescan PATH...`).
 * Reads every path, prints the scan report (text or JSON) and the
 * diagnostics; exit 2 if any input had an error, after reporting all that
 * did parse.
 */
#include "cli.h"
#include "fusescan/report.h"
#include "fusescan/scan.h"

#include <string.h>

static const char *const formats[] = {"text", "json", NULL};

int fs_cmd_scan(const struct fs_command *cmd, int argc, char **argv)
{
	int format = 0;
	const char *out_path = NULL;
	const struct fs_option opts[] = {
		{"format", 'f', FS_OPT_CHOICE, "FMT", "report format", &format, formats},
		{"output", 'o', FS_OPT_STRING, "FILE", "write the report to FILE (atomically)", &out_path, NULL},
		{0},
	};
	int npos, r = fs_opts_parse(cmd, opts, argc, argv, &npos);
	if (r)
		return r > 0 ? FS_EXIT_OK : FS_EXIT_INPUT;
	if (fs_opts_no_input(cmd, opts, npos))
		return FS_EXIT_INPUT;
	struct fs_scan *s = fs_cli_read(cmd, argv, npos, NULL, out_path);
	if (!s)
		return FS_EXIT_INPUT;
	struct fs_scan_report rep;
	fs_scan_report_build(&rep, s);
	struct fs_out out;
	int rc = fs_out_open(&out, out_path);
	if (rc == 0) {
		rc = format ? fs_scan_report_json(&rep, out.f) : fs_scan_report_text(&rep, out.f);
		rc = fs_out_finish(&out, rc);
	}
	fs_diags_print(&s->diags, stderr);
	int errors = s->diags.n_errors;
	if (errors)
		fprintf(stderr, "fusescan: %d error%s in the input\n", errors, errors == 1 ? "" : "s");
	fs_scan_report_release(&rep);
	fs_scan_free(s);
	return rc || errors ? FS_EXIT_INPUT : FS_EXIT_OK;
}
