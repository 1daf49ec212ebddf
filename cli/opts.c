/*
 * opts.c: the one option parser of every command (table-driven, GNU style:
 * --name VALUE, --name=VALUE, -x VALUE, -- ends options; list options may
 * repeat, any other option is given once) and its usage text. A value after a space never begins with "--":
 * that is the next option, and the value is missing (--name=--x still works).
 */
#include "cli.h"
#include "fusescan/base.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct fs_option help_opt = {"help", 'h', FS_OPT_FLAG, NULL, "show this help", NULL, NULL};

void fs_opts_usage(const struct fs_command *cmd, const struct fs_option *opts, FILE *out)
{
	fprintf(out, "usage: fusescan %s %s\n  %s\n\noptions:\n", cmd->name, cmd->synopsis, cmd->summary);
	for (const struct fs_option *o = opts;; o++) {
		if (!o->name)
			o = &help_opt;
		char left[64], sh[8] = "    ";
		if (o->short_name)
			snprintf(sh, sizeof(sh), "-%c, ", o->short_name);
		snprintf(left, sizeof(left), "%s--%s%s%s", sh, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-28s %s", left, o->help);
		if (o->kind == FS_OPT_CHOICE) {
			fprintf(out, " (");
			for (int i = 0; o->choices[i]; i++)
				fprintf(out, "%s%s", i ? "|" : "", o->choices[i]);
			fprintf(out, ")");
		}
		fputc('\n', out);
		if (o == &help_opt)
			break;
	}
}

static const struct fs_option *find(const struct fs_option *opts, const char *name, size_t n, char c)
{
	for (const struct fs_option *o = opts; o->name; o++)
		if (c ? o->short_name == c : (strlen(o->name) == n && !memcmp(o->name, name, n)))
			return o;
	return NULL;
}

/* hint: "; did you mean ...?", or "" */
static int bad(const struct fs_command *cmd, const char *what, const char *arg, const char *hint)
{
	fprintf(stderr, "fusescan %s: %s '%s'%s\nusage: fusescan %s %s\n(see 'fusescan %s --help')\n", cmd->name, what,
		arg, hint, cmd->name, cmd->synopsis, cmd->name);
	return -1;
}

/* An option this command does not take: the one it most likely means. */
static int unknown(const struct fs_command *cmd, const struct fs_option *opts, const char *arg, size_t len)
{
	const char *names[64];
	uint32_t n = 0;
	char hint[96] = "";
	for (const struct fs_option *o = opts; o->name && n < 63; o++)
		names[n++] = o->name;
	names[n++] = help_opt.name;
	const char *near = arg[1] == '-' ? fs_did_you_mean(arg + 2, len, names, n) : NULL;
	if (near)
		snprintf(hint, sizeof(hint), "; did you mean '--%s'?", near);
	return bad(cmd, "unknown option", arg, hint);
}

static int set(const struct fs_command *cmd, const struct fs_option *o, const char *val)
{
	if (o->kind == FS_OPT_FLAG) {
		*(int *)o->dest = 1;
		return 0;
	}
	if (o->kind == FS_OPT_STRING) {
		*(const char **)o->dest = val;
		return 0;
	}
	if (o->kind == FS_OPT_LIST) {
		struct fs_strlist *l = o->dest;
		FS_GROW(l->v, l->cap, l->n + 1);
		l->v[l->n++] = val;
		return 0;
	}
	for (int i = 0; o->choices[i]; i++)
		if (!strcmp(o->choices[i], val)) {
			*(int *)o->dest = i;
			return 0;
		}
	uint32_t n = 0;
	while (o->choices[n])
		n++;
	const char *near = fs_did_you_mean(val, strlen(val), o->choices, n);
	fprintf(stderr, "fusescan %s: invalid value '%s' for --%s%s%s%s\n(see 'fusescan %s --help')\n", cmd->name, val, o->name,
		near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", cmd->name);
	return -1;
}

int fs_opts_parse(const struct fs_command *cmd, const struct fs_option *opts,
		  int argc, char **argv, int *npos)
{
	int k = 0, only_pos = 0;
	uint64_t given = 0; /* bit per option of the table: each but a list at most once */
	for (int i = 0; i < argc; i++) {
		char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			argv[k++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fs_opts_usage(cmd, opts, stdout);
			return 1;
		}
		const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
		const struct fs_option *o = a[1] == '-'
			? find(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0)
			: (a[2] ? NULL : find(opts, NULL, 0, a[1]));
		if (!o)
			return unknown(cmd, opts, a, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		uint64_t bit = 1ull << ((o - opts) & 63);
		if (o->kind != FS_OPT_LIST && (given & bit))
			return bad(cmd, "option given twice", a, "");
		given |= bit;
		const char *val = NULL;
		if (o->kind != FS_OPT_FLAG) {
			/* `--apply --approvals F`: the next option is no value */
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2))
				val = argv[++i];
			else
				return bad(cmd, "missing value for option", a, "");
		} else if (eq)
			return bad(cmd, "option takes no value", a, "");
		if (set(cmd, o, val) < 0)
			return -1;
	}
	*npos = k;
	return 0;
}

int fs_opt_int(const struct fs_command *cmd, const char *name, const char *text, long long lo, long long hi,
	       long long *out)
{
	if (!text)
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (*text && !*end && !errno && v >= lo && v <= hi) {
		*out = v;
		return 0;
	}
	if (lo == 1)
		fprintf(stderr, "fusescan %s: --%s wants a positive integer up to %lld, got '%s'\n", cmd->name, name, hi, text);
	else
		fprintf(stderr, "fusescan %s: --%s wants an integer from %lld to %lld, got '%s'\n", cmd->name, name, lo, hi, text);
	return -1;
}

int fs_opt_size(const struct fs_command *cmd, const char *name, const char *text, long long lo, long long hi, long long *out)
{
	static const char units[] = "KMGT";
	if (!text)
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	const char *u = *end ? strchr(units, *end) : NULL;
	int shift = u ? 10 * (int)(u - units + 1) : 0;
	if (*text >= '0' && *text <= '9' && !errno && (!*end || (u && !end[1])) && v <= (hi >> shift) && (v << shift) >= lo) {
		*out = v << shift;
		return 0;
	}
	fprintf(stderr, "fusescan %s: --%s wants a size from %lldM to %lldT (bytes, or with K, M, G, T), got '%s'\n", cmd->name,
		name, lo >> 20, hi >> 40, text);
	return -1;
}

int fs_opt_int_list(const struct fs_command *cmd, const char *name, const char *text, long long lo, long long hi,
		    int64_t *out, uint32_t max, uint32_t *n)
{
	if (!text)
		return 0;
	const char *p = text;
	uint32_t k = 0;
	for (;;) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p || errno || v < lo || v > hi || k == max || (k && v <= out[k - 1]) || (*end && *end != ','))
			break;
		out[k++] = v;
		if (!*end) {
			*n = k;
			return 0;
		}
		p = end + 1;
	}
	fprintf(stderr, "fusescan %s: --%s wants up to %u increasing integers from %lld to %lld, comma-separated, got '%s'\n",
		cmd->name, name, max, lo, hi, text);
	return -1;
}

int fs_opts_no_input(const struct fs_command *cmd, const struct fs_option *opts, int npos)
{
	if (npos)
		return 0;
	fprintf(stderr, "fusescan %s: no input; give dump files or run directories\n", cmd->name);
	fs_opts_usage(cmd, opts, stderr);
	return 1;
}
