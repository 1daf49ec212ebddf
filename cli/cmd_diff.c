/*
 * cmd_diff.c: `fusescan diff A B` (two dumps) or `fusescan diff DIR [--log
 * ad.log]` (every transform of a run): what changed, semantically.
 */
#include "cli.h"
#include "fusescan/discover.h"
#include "fusescan/semdiff.h"

int fs_cmd_diff(const struct fs_command *cmd, int argc, char **argv)
{
	const char *log_path = NULL, *out_path = NULL, *catalog = NULL;
	const struct fs_option opts[] = {
		{"log", 0, FS_OPT_STRING, "FILE", "with a run: AutoDeploy's log, its report beside each transform", &log_path, NULL},
		{"output", 'o', FS_OPT_STRING, "FILE", "write the diff to FILE (atomically)", &out_path, NULL},
		{"catalog", 0, FS_OPT_STRING, "FILE", "kernel catalog to use instead of the built-in one", &catalog, NULL},
		{0},
	};
	int npos, r = fs_opts_parse(cmd, opts, argc, argv, &npos);
	if (r)
		return r > 0 ? FS_EXIT_OK : FS_EXIT_INPUT;
	if (npos < 1 || npos > 2) {
		fprintf(stderr, "fusescan %s: give two dumps, or one run directory\n", cmd->name);
		return FS_EXIT_INPUT;
	}
	struct fs_guard g = {0};
	fs_guard_add(&g, "the --log file", log_path);
	fs_guard_add(&g, "the --catalog file", catalog);
	struct fs_scan *s = fs_cli_read(cmd, argv, npos, &g, out_path);
	fs_guard_release(&g);
	if (!s)
		return FS_EXIT_INPUT;
	struct fs_catalog cat;
	struct fs_adlog log;
	fs_catalog_init(&cat, s);
	fs_adlog_init(&log);
	fs_catalog_load_default(&cat, catalog, &s->diags);
	if (log_path)
		fs_adlog_load(&log, log_path, &s->diags);
	int rc = FS_EXIT_INPUT;
	if (!s->diags.n_errors) {
		int two = npos == 2 && s->n_files == 2 && s->files[0].n_modules && s->files[1].n_modules;
		if (!two && !(npos == 1 && s->n_runs == 1))
			fprintf(stderr, "fusescan %s: give two dump files, or one run directory\n", cmd->name);
		else {
			struct fs_out out;
			if (fs_out_open(&out, out_path) == 0) {
				int w = two ? fs_semdiff_files(s, &cat, 0, 1, out.f)
					    : fs_semdiff_run(s, &cat, 0, log_path ? &log : NULL, out.f);
				rc = fs_out_finish(&out, w) ? FS_EXIT_INPUT : FS_EXIT_OK;
			}
		}
	}
	fs_diags_print(&s->diags, stderr);
	fs_adlog_release(&log);
	fs_catalog_release(&cat);
	fs_scan_free(s);
	return rc;
}
