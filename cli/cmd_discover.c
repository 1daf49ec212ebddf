/*
 * cmd_discover.c: `fusescan [discover] PATH...`: the ranked list of what to
 * fuse next, with evidence (text, JSON or Markdown). Exit 2 on bad input or
 * options, after reporting whatever could be analysed.
 */
#include "cli.h"
#include "fusescan/discover.h"
#include "fusescan/mine.h"
#include "fusescan/site.h"

#include <stdlib.h>
#include <string.h>

/* Each candidate that needs a generated kernel, put to the generator as
 * --apply would at its default token count, with the GELU form --apply would
 * take (its first instance; the kernels generated, none compiled): one it
 * does not take is deferred, the reason kept for the report, so no
 * recommendation ends in a refusal. */
static void ask_generator(struct fs_discovery *d, int gelu_tanh)
{
	for (uint32_t a = 0; a < d->n_a; a++) {
		struct fs_mine *m = d->a[a].mine;
		for (uint32_t i = 0; m && i < m->n_cands; i++) {
			struct fs_candidate *k = &m->cands[i];
			const struct fs_region *r = &m->regions[k->instances[0]];
			struct fs_diags why; /* a refusal is the candidate's reason, no error of the run */
			fs_diags_init(&why);
			if (k->rec == FS_REC_NEEDS_TRITON && fs_site_generates(d->scan, m->g, r->nodes, r->n_nodes, gelu_tanh, FS_APPLY_TOKENS, &why)) {
				snprintf(k->refused, sizeof(k->refused), "%s", fs_diags_last(&why));
				k->rec = FS_REC_DEFER;
			}
			fs_diags_release(&why);
		}
	}
}

static const char *const formats[] = {"text", "json", "markdown", NULL};
static const char *const gelus[] = {"unstated", "tanh", "erf", NULL};

/* --dims, read once for every graph: 0, or -1 after saying why. */
static int bind_dims(const struct fs_command *cmd, struct fs_scan *s, const char *dims, struct fs_binding *bind,
		     struct fs_discover_opts *o)
{
	char why[200];
	int nb = fs_bind_parse(s, dims, bind, FS_DISCOVER_BIND, why, sizeof(why));
	if (nb < 0) {
		fprintf(stderr, "fusescan %s: --dims: %s (in '%s')\n", cmd->name, why, dims);
		return -1;
	}
	o->bind = bind, o->n_bind = (uint32_t)nb;
	return 0;
}

/* What the options say (the table points into it). */
struct dopts {
	int format, gelu;
	const char *out_path, *tokens, *top, *dims;
	struct fs_discover_opts o;
	struct fs_strlist configs; /* --ad-config, in order */
};

static int discover_run(const struct fs_command *cmd, const struct fs_option *opts, struct dopts *D, char **argv,
			int npos);

/* The temporary folder the reports' commands write under: $TMPDIR where it
 * is an absolute path of a bounded length, else NULL (/tmp). */
static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] == '/' && strlen(t) <= FS_DISCOVER_TMP_MAX ? t : NULL;
}

int fs_cmd_discover(const struct fs_command *cmd, int argc, char **argv)
{
	struct dopts D = {.o = {.tokens = 8192}};
	const struct fs_option opts[] = {
		{"format", 'f', FS_OPT_CHOICE, "FMT", "report format", &D.format, formats},
		{"output", 'o', FS_OPT_STRING, "FILE", "write the report to FILE (atomically)", &D.out_path, NULL},
		{"dump", 0, FS_OPT_STRING, "NNN|FILE", "dump of a run to analyse (default: the last)", &D.o.dump, NULL},
		{"dims", 0, FS_OPT_STRING, "S=N,...", "bind symbolic dims for the cost model, e.g. s72=1,s70=4096", &D.dims, NULL},
		{"tokens", 0, FS_OPT_STRING, "N", "tokens for the cost model, batch 1 (default 8192)", &D.tokens, NULL},
		{"top", 0, FS_OPT_STRING, "N", "show the N best candidates per graph (default all)", &D.top, NULL},
		{"catalog", 0, FS_OPT_STRING, "FILE", "kernel catalog to use instead of the built-in one", &D.o.catalog, NULL},
		{"kernels-from", 0, FS_OPT_STRING, "DIR", "index custom-op / transform registrations in a source tree", &D.o.kernels_from, NULL},
		{"ad-config", 0, FS_OPT_LIST, "FILE", "an AutoDeploy yaml merged over the defaults, in order (repeatable)", &D.configs, NULL},
		{"model", 0, FS_OPT_STRING, "NAME", "the --kernels-from registry model whose config files are merged", &D.o.model, NULL},
		{"config-id", 0, FS_OPT_STRING, "ID", "which of --model's registry entries (its config_id)", &D.o.config_id, NULL},
		{"gelu", 0, FS_OPT_CHOICE, "FORM", "the model's GELU, tanh or erf (the dump cannot say)", &D.gelu, gelus},
		{0},
	};
	int npos, r = fs_opts_parse(cmd, opts, argc, argv, &npos);
	if (!r && D.o.config_id && !D.o.model) {
		fprintf(stderr, "fusescan %s: --config-id picks one of --model's entries: give --model\n", cmd->name);
		r = -1;
	}
	r = r ? (r > 0 ? FS_EXIT_OK : FS_EXIT_INPUT) : discover_run(cmd, opts, &D, argv, npos);
	free(D.configs.v);
	return r;
}

static int discover_run(const struct fs_command *cmd, const struct fs_option *opts, struct dopts *D, char **argv,
			int npos)
{
	struct fs_discover_opts o = D->o;
	const char *out_path = D->out_path, *tokens = D->tokens, *top = D->top, *dims = D->dims;
	int format = D->format, gelu = D->gelu;
	o.ad_configs = D->configs.v, o.n_ad_configs = D->configs.n;
	long long tk = o.tokens, tp = 0;
	if (fs_opt_int(cmd, "tokens", tokens, 1, FS_MAX_DIM, &tk) || fs_opt_int(cmd, "top", top, 0, UINT32_MAX, &tp))
		return FS_EXIT_INPUT;
	o.tokens = tk, o.top = (uint32_t)tp, o.gelu = (uint8_t)gelu;
	o.inline_calls = 1; /* reports only: a rewrite (fuse) needs one module's sites */
	if (fs_opts_no_input(cmd, opts, npos))
		return FS_EXIT_INPUT;
	struct fs_guard g = {0};
	fs_guard_add(&g, "the --catalog file", o.catalog);
	fs_guard_add(&g, "the --kernels-from directory", o.kernels_from);
	for (uint32_t i = 0; i < o.n_ad_configs; i++)
		fs_guard_add(&g, "an --ad-config file", o.ad_configs[i]);
	struct fs_scan *s = fs_cli_read(cmd, argv, npos, &g, out_path);
	fs_guard_release(&g);
	if (!s)
		return FS_EXIT_INPUT;
	struct fs_binding bind[FS_DISCOVER_BIND];
	if (dims && bind_dims(cmd, s, dims, bind, &o)) {
		fs_scan_free(s);
		return FS_EXIT_INPUT;
	}
	struct fs_discovery *d = fs_discover(s, &o);
	int rc = 0;
	if (d) {
		d->prog = cmd->prog;
		d->tmp = tmp_dir();
		ask_generator(d, gelu != FS_GELU_ERF); /* as --apply: tanh unless erf is stated */
		struct fs_out out;
		rc = fs_out_open(&out, out_path);
		if (rc == 0) {
			rc = format == 1 ? fs_discover_json(d, out.f)
			   : format == 2 ? fs_discover_markdown(d, out.f) : fs_discover_text(d, out.f);
			rc = fs_out_finish(&out, rc);
		}
	}
	fs_diags_print(&s->diags, stderr);
	int errors = (int)s->diags.n_errors;
	if (errors)
		fprintf(stderr, "fusescan: %d error%s in the input\n", errors, errors == 1 ? "" : "s");
	int analysed = d != NULL;
	fs_discovery_free(d);
	fs_scan_free(s);
	return rc || errors || !analysed ? FS_EXIT_INPUT : FS_EXIT_OK;
}
