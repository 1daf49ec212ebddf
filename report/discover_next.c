/*
 * discover_next.c: what the text and Markdown discovery reports open and
 * close with (report_int.h): the row of a candidate in the summary table,
 * and the commands to run next, exact enough to copy. Each format lays them
 * out in its own syntax; the cells and the commands are made here once.
 */
#include "report_int.h"
#include "fusescan/pattern.h"

#include <string.h>

uint32_t fs_discover_cands_shown(const struct fs_discovery *d, const struct fs_analysis *a)
{
	uint32_t n = a->mine->n_cands;
	return d->top && d->top < n ? d->top : n;
}

uint32_t fs_discover_summary_rows(const struct fs_discovery *d, const struct fs_analysis *a)
{
	uint32_t n = fs_discover_cands_shown(d, a);
	return n < SUMMARY_ROWS ? n : SUMMARY_ROWS;
}

void fs_discover_summary_row(const struct fs_discovery *d, const struct fs_candidate *k, struct summary_row *r)
{
	const char *kern = fs_cand_kernel(d, k);
	r->kind = fs_kind_name((enum fs_kind)k->kind);
	/* the recommendation, in a word where no kernel exists */
	r->kernel = kern ? kern : k->rec == FS_REC_NEEDS_TRITON ? "generate" : "defer";
	if (k->cost_known)
		fs_human_bytes(k->bytes_total, r->saves, sizeof(r->saves));
	else
		snprintf(r->saves, sizeof(r->saves), "?");
}

/* ---- the commands to run next ------------------------------------------------------------- */

/* s as one shell word: as it is where every character is safe, else in
 * single quotes; a word that would read as an option (a path beginning with
 * '-') behind "./" */
static void bare_word(const char *s, FILE *out)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:=@%+,";
	fputs(s[0] == '-' ? "./" : "", out);
	if (s[0] && !s[strspn(s, safe)]) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", out); /* the quote closed, an escaped one, reopened */
		else
			fputc(*s, out);
	fputc('\'', out);
}

/* s as the next shell word of a command */
static void word(const char *s, FILE *out)
{
	fputc(' ', out);
	bare_word(s, out);
}

/* The command as the user called it (argv[0]: a path or a name on PATH),
 * so that a line runs as printed. */
static void command(const struct fs_discovery *d, const char *indent, FILE *out)
{
	fputs(indent, out);
	bare_word(d->prog ? d->prog : "fusescan", out);
}

/* the options a command must repeat to name the same candidates: the
 * catalog names them, the GELU's form changes their numerics */
static void same_options(const struct fs_discovery *d, FILE *out)
{
	static const char *const gelu[] = {NULL, "tanh", "erf"};
	if (d->catalog) {
		fputs(" --catalog", out);
		word(d->catalog, out);
	}
	if (d->cat.gelu < sizeof(gelu) / sizeof(gelu[0]) && gelu[d->cat.gelu])
		fprintf(out, " --gelu %s", gelu[d->cat.gelu]);
}

/* fusescan --apply ID --out TMP/fusescan-apply-ID [--emit TMP/fusescan-emit-ID] ... FILE:
 * its outputs in the temporary folder, never among the user's files */
static void apply_line(const struct fs_discovery *d, const struct fs_candidate *k, int emit, const char *file,
		       const char *indent, FILE *out)
{
	const char *tmp = d->tmp ? d->tmp : "/tmp";
	char dir[FS_DISCOVER_TMP_MAX + 32 + sizeof(k->id)];
	command(d, indent, out);
	fputs(" --apply", out);
	word(k->id, out);
	snprintf(dir, sizeof(dir), "%.*s/fusescan-apply-%s", FS_DISCOVER_TMP_MAX, tmp, k->id);
	fputs(" --out", out);
	word(dir, out);
	if (emit) {
		snprintf(dir, sizeof(dir), "%.*s/fusescan-emit-%s", FS_DISCOVER_TMP_MAX, tmp, k->id);
		fputs(" --emit", out);
		word(dir, out);
	}
	same_options(d, out);
	word(file, out);
	fputc('\n', out);
}

/* `fusescan match -p P...` over the graph's run (its file alone when it has
 * none) for the patterns of the n candidates k[pick[i]], each once; nothing
 * when none has one */
static void match_line(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_candidate *k, const uint32_t *pick,
		       uint32_t n, const char *file, const char *indent, FILE *out)
{
	const char *p[NEXT_CANDIDATES];
	uint32_t np = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *name = fs_cand_count_pattern(d, &k[pick[i]]);
		uint32_t j = 0;
		while (name && j < np && strcmp(p[j], name))
			j++;
		if (name && j == np)
			p[np++] = name;
	}
	if (!np)
		return;
	const char *path = a->run == UINT32_MAX ? file : d->scan->runs[a->run].dir;
	fprintf(out, "%s# count their patterns in %s; --expect FILE gates CI on the counts\n", indent,
		a->run == UINT32_MAX ? "the dump" : "every dump of the run");
	command(d, indent, out);
	fputs(" match", out);
	for (uint32_t i = 0; i < np; i++) {
		fputs(" -p", out);
		word(p[i], out);
	}
	word(path, out);
	fputc('\n', out);
}

/* One graph's commands: its top candidates applied (but those the generator
 * does not take: --apply would refuse them), the first of these that needs a
 * generated kernel emitted, their patterns counted. */
static void next_graph(const struct fs_discovery *d, const struct fs_analysis *a, const char *indent, FILE *out)
{
	const struct fs_scan *s = d->scan;
	const struct fs_dumpfile *f = &s->files[s->modules[a->module].file];
	const struct fs_candidate *k = a->mine->cands;
	uint32_t shown = fs_discover_cands_shown(d, a), pick[NEXT_CANDIDATES], n = 0, gen = 0;
	for (uint32_t i = 0; i < shown && n < NEXT_CANDIDATES; i++)
		if (!k[i].refused[0])
			pick[n++] = i;
	if (f->n_modules > 1) { /* fuse_or_tune's target_module */
		fprintf(out, "%s# --apply rewrites a file of one GraphModule, and this one holds %u:", indent, f->n_modules);
		word(f->path, out);
		fputc('\n', out);
		return;
	}
	if (n)
		fprintf(out, "%s# apply a top candidate: rewrite, check the numerics, compile the kernel (a GPU also runs and tunes it)\n",
			indent);
	for (uint32_t i = 0; i < n; i++)
		apply_line(d, &k[pick[i]], 0, f->path, indent, out);
	while (gen < n && k[pick[gen]].rec != FS_REC_NEEDS_TRITON)
		gen++;
	if (gen < n) {
		fprintf(out, "%s# write candidate %u's generated kernel for deployment, for every token count (tuned on a GPU)\n",
			indent, pick[gen] + 1);
		apply_line(d, &k[pick[gen]], 1, f->path, indent, out);
	}
	match_line(d, a, k, pick, n, f->path, indent, out);
}

void fs_discover_next_steps(const struct fs_discovery *d, const char *head, const char *indent, const char *tail, FILE *out)
{
	uint32_t dumps = 0, more = 0, said = UINT32_MAX;
	for (uint32_t i = 0; i < d->n_a; i++) {
		uint32_t file = d->scan->modules[d->a[i].module].file;
		if (!fs_discover_cands_shown(d, &d->a[i]) || file == said)
			continue; /* a file's other GraphModules: said with the first */
		said = file;
		if (dumps == NEXT_DUMPS) {
			more++;
			continue;
		}
		fputs(dumps++ ? "" : head, out);
		next_graph(d, &d->a[i], indent, out);
	}
	if (more)
		fprintf(out, "%s# and %u more dump%s: the same commands with the ids of their tables and their files\n", indent, more,
			more == 1 ? "" : "s");
	fputs(dumps ? tail : "", out);
}
