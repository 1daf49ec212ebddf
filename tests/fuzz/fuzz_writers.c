/*
 * fuzz_writers.c: libFuzzer target for the writers of generated code: the
 * AutoDeploy scaffold (fs_scaffold_write, --scaffold) and the op module
 * --emit writes (its names, signature and descriptor from fuse/emit_op.c,
 * filled into kernels/torch_op.py as fuse/emit.c fills it). The input is
 * fields split at 0x1e: a candidate or pattern name, a candidate id, a
 * catalog's kernels= value (parsed as a catalog entry), an eps literal and
 * a dump whose "@EPS@" becomes that literal; every call node of its first
 * graph is the site. Aborts where a writer's output is not what its
 * language takes: a Python file that does not lex (pycheck.h: strings
 * closed and escaped, numbers Python literals, nothing else), whose
 * skeleton differs from the one written with harmless names (a name became
 * code), a chain line calling anything but torch.ops; an op parameter that
 * is no identifier, a keyword, a builtin, one of the module's names or a
 * repeat; a descriptor that is not valid UTF-8 JSON, a symbol no Python
 * name, a dim formula holding more than numbers, symbols, max, min and
 * arithmetic; a file named outside [a-z0-9_.]. Replayed over
 * tests/fuzz/corpus_writers by ctest (fuzz.replay.writers).
 */
#include "../../fuse/codegen.h"
#include "../../fuse/emit_op.h"
#include "../../fuse/prog.h"
#include "fusescan/catalog.h"
#include "fusescan/escape.h"
#include "fusescan/site.h"
#include "fusescan/scaffold.h"
#include "fusescan/scan.h"
#include "pycheck.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a check that failed: said where (a reproducer's report names it), then abort */
#define must(ok) ((ok) ? (void)0 : (fprintf(stderr, "fuzz_writers.c:%d: %s\n", __LINE__, #ok), abort()))

enum { F_NAME, F_ID, F_KERNELS, F_EPS, F_DUMP, N_FIELDS };

/* the input's fields, each NUL-terminated (absent ones empty) */
static void split(const uint8_t *data, size_t size, char *buf, char *f[N_FIELDS])
{
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (int i = 0; i < N_FIELDS; i++)
		f[i] = buf + size;
	char *c = buf;
	for (int i = 0; i < N_FIELDS && c <= buf + size; i++) {
		f[i] = c;
		char *e = i + 1 < N_FIELDS ? memchr(c, 0x1e, (size_t)(buf + size - c)) : NULL;
		if (!e)
			break;
		*e = '\0';
		c = e + 1;
	}
}

/* the dump with every "@EPS@" as the eps literal */
static char *dump_text(const char *dump, const char *eps, size_t *len)
{
	struct fs_text t = {0};
	const char *at;
	while ((at = strstr(dump, "@EPS@"))) {
		fs_text_put(&t, "%.*s%s", (int)(at - dump), dump, eps);
		dump = at + 5;
	}
	fs_text_put(&t, "%s", dump);
	*len = t.n;
	return t.s;
}

/* the kernels= value as the catalog reads it: its first kernel (or the value itself where no entry parses) */
static char *catalog_kernel(struct fs_scan *s, const char *value)
{
	struct fs_text t = {0};
	fs_text_put(&t, "[fz]\nkind = norm\nchain = mul rsqrt\nkernels = %s\n", value);
	struct fs_catalog c;
	struct fs_diags d;
	fs_diags_init(&d);
	fs_catalog_init(&c, s);
	fs_catalog_parse(&c, "fuzz.catalog", t.s, t.n, &d);
	const char *k = c.n && c.e[0].n_kernels ? fs_scan_str(s, c.e[0].kernels[0]) : value;
	char *out = strdup(k);
	fs_catalog_release(&c);
	fs_diags_release(&d);
	free(t.s);
	return out;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	must(f != NULL);
	struct fs_text t = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fs_text_put(&t, "%.*s", (int)n, buf);
	fclose(f);
	must(t.s == NULL || strlen(t.s) == t.n); /* no NUL inside */
	return t.s ? t.s : strdup("");
}

/* default.yaml: its head, "transforms:", and per transform "  KEY:", its stage and enabled: false */
static void check_yaml(const char *text)
{
	must(!strncmp(text, FS_SCAFFOLD_YAML_HEAD, strlen(FS_SCAFFOLD_YAML_HEAD)));
	for (const char *l = strchr(text, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		const char *c = l + 1;
		size_t n = strcspn(c, "\n");
		if ((n == 11 && !strncmp(c, "transforms:", n)) || (n == 27 && !strncmp(c, "    stage: post_load_fusion", n)) ||
		    (n == 18 && !strncmp(c, "    enabled: false", n)))
			continue;
		must(n > 3 && !strncmp(c, "  fuse_", 7) && c[n - 1] == ':');
		for (size_t i = 2; i + 1 < n; i++)
			must((c[i] >= 'a' && c[i] <= 'z') || (c[i] >= '0' && c[i] <= '9') || c[i] == '_');
	}
}

static void check_json_text(const char *text)
{
	must(fs_utf8_valid(text));
	cJSON *j = cJSON_Parse(text);
	must(j != NULL);
	cJSON_Delete(j);
}

/* One file of a scaffold: its name and its text checked, then removed. */
static void scaffold_file(const char *path, const char *n, struct fs_text *sk)
{
	for (const char *c = n; *c; c++)
		must((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '.');
	char *text = read_all(path);
	size_t len = strlen(n);
	if (len > 3 && !strcmp(n + len - 3, ".py"))
		must(py_check(text, 0, sk) == 0);
	else if (!strcmp(n, "default.yaml"))
		check_yaml(text);
	else if (len > 11 && !strcmp(n + len - 11, ".sites.json"))
		check_json_text(text);
	else
		must(len > 3 && !strcmp(n + len - 3, ".md") && fs_utf8_valid(text));
	free(text);
	must(unlink(path) == 0);
}

/* A scaffold written into dir: each file checked (in name order), its Python's skeletons appended to sk, then removed. */
static void scaffold_files(const char *dir, struct fs_text *sk)
{
	struct dirent **e;
	int n_e = scandir(dir, &e, NULL, alphasort);
	must(n_e >= 0);
	char path[4200];
	for (int i = 0; i < n_e; i++) {
		const char *n = e[i]->d_name;
		if (strcmp(n, ".") && strcmp(n, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, n);
			scaffold_file(path, n, sk);
		}
		free(e[i]);
	}
	free(e);
}

struct names {
	const char *name, *id, *kernel, *dump, *ops;
};

/* The scaffold of the site under these names into dir: its skeleton (empty where the writer refused the site). */
static char *scaffold_run(const struct fs_scan *s, const struct fs_graph *g, const struct fs_site *site, const struct names *nm,
			  const char *dir)
{
	struct fs_scaffold_variant v = {.site = site, .n_sites = 1, .op = "fs_0123456789abcdef"};
	snprintf(v.verdict, sizeof(v.verdict), "%s", nm->name);
	struct fs_scaffold sc = {.name = nm->name, .id = nm->id, .recommendation = nm->id, .kernel = nm->kernel,
				 .existing = nm->kernel[0] != '\0', .dump = nm->dump, .ops_dir = nm->ops, .all = site,
				 .sites = 1, .fused = 1, .tokens = 16, .v = &v, .n = 1};
	char why[512];
	struct fs_text sk = {0};
	if (fs_scaffold_write(s, g, &sc, 1, dir, why, sizeof(why)) == 0)
		scaffold_files(dir, &sk);
	else { /* why (the CLI's stderr) may quote a name as it is */
		struct fs_text none = {0};
		scaffold_files(dir, &none); /* a refused write may leave nothing behind but its directory */
		must(none.s == NULL);
	}
	return sk.s ? sk.s : strdup("");
}

static char dir[64]; /* the scaffolds' directory, empty between inputs */

static void remove_dir(void)
{
	rmdir(dir);
}

/* The scaffold under the fuzzed names and under harmless ones: one skeleton. */
static void check_scaffold(const struct fs_scan *s, const struct fs_graph *g, const struct fs_site *site, const struct names *nm)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_writers.XXXXXX");
		must(mkdtemp(dir) != NULL);
		atexit(remove_dir);
	}
	struct names plain = {"x", "x", nm->kernel[0] ? "k" : "", "d", "o"};
	char *a = scaffold_run(s, g, site, nm, dir), *b = scaffold_run(s, g, site, &plain, dir);
	must(!strcmp(a, b));
	free(a);
	free(b);
}

/* kernels/torch_op.py with its placeholders filled (as fuse/emit.c fills it) */
static char *op_module(const char *name, const struct fs_emit_sig *sig)
{
	static const char *const keys[] = {"@NAME@", "@SIGNATURE@", "@ARGS@", "@RETURNS@", "@DOC@"};
	const char *vals[] = {name, sig->sig.s ? sig->sig.s : "", sig->args.s ? sig->args.s : "", sig->ret.s ? sig->ret.s : "",
			      sig->doc.s ? sig->doc.s : ""};
	const char *tpl = fs_kernel_file("torch_op.py");
	must(tpl != NULL);
	struct fs_text t = {0};
	for (const char *c = tpl; *c;) {
		int k = 0;
		while (k < 5 && strncmp(c, keys[k], strlen(keys[k])))
			k++;
		if (k < 5) {
			fs_text_put(&t, "%s", vals[k]);
			c += strlen(keys[k]);
		} else
			fs_text_put(&t, "%c", *c++);
	}
	return t.s;
}

/* the template's own top-level names (imports, assignments, functions, classes) */
static int module_own(const char *tpl, const char *name)
{
	size_t n = strlen(name);
	for (const char *l = tpl; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *c = !strncmp(l, "import ", 7) ? l + 7 : !strncmp(l, "def ", 4) ? l + 4 : !strncmp(l, "class ", 6) ? l + 6 : l;
		if (!strncmp(c, name, n) && !py_idc(c[n]) && (c != l || !strncmp(c + n, " = ", 3)))
			return 1;
	}
	return 0;
}

/* the op's parameters: "a: torch.Tensor, ..." and "a, ...", each a name no keyword, builtin, module name or repeat */
static void check_sig(const struct fs_emit_sig *sig)
{
	const char *tpl = fs_kernel_file("torch_op.py");
	char seen[64][96];
	int n = 0;
	const char *c = sig->sig.s ? sig->sig.s : "", *a = sig->args.s ? sig->args.s : "";
	while (*c) {
		size_t k = strcspn(c, ":");
		must(k > 0 && k < 96 && n < 64 && !strncmp(c + k, ": torch.Tensor", 14));
		memcpy(seen[n], c, k);
		seen[n][k] = '\0';
		must(fs_py_ident(seen[n]) && !fs_py_reserved(seen[n]) && seen[n][0] != '_' && strncmp(seen[n], "fs_", 3));
		must(!module_own(tpl, seen[n]));
		for (int i = 0; i < n; i++)
			must(strcmp(seen[i], seen[n]));
		must(!strncmp(a, seen[n], k) && (a[k] == '\0' || !strncmp(a + k, ", ", 2)));
		a += k + (a[k] ? 2 : 0);
		c += k + 14;
		n++;
		if (*c)
			must(!strncmp(c, ", ", 2)), c += 2;
	}
	must(*a == '\0');
	for (const char *d = sig->doc.s ? sig->doc.s : ""; *d; d++)
		must(py_idc(*d) || *d == ' ' || *d == ',');
}

/* a dim formula: the characters torch_op.py's _FORMULA takes, lexing as numbers, symbols, max, min and arithmetic */
static void check_formula(const char *f, const cJSON *syms)
{
	for (const char *c = f; *c; c++)
		must(py_idc(*c) || strchr(" ()+*/%,-", *c));
	struct fs_text sk = {0};
	must(py_check(f, 1, &sk) == 0);
	for (char *w = sk.s ? strtok(sk.s, " \n") : NULL; w; w = strtok(NULL, " \n")) {
		if (!py_idc(w[0]) || (w[0] >= '0' && w[0] <= '9') || !strcmp(w, "N") || !strcmp(w, "max") || !strcmp(w, "min"))
			continue;
		int known = 0;
		for (const cJSON *s = syms ? syms->child : NULL; s && !known; s = s->next)
			known = !strcmp(cJSON_GetObjectItemCaseSensitive(s, "name")->valuestring, w);
		must(known);
	}
	free(sk.s);
}

/* every string of j: valid UTF-8; each name a Python name; each formula (a string in a "shape") checked */
static void check_desc(const cJSON *j, const cJSON *syms, int in_shape)
{
	for (const cJSON *x = j->child; x; x = x->next) {
		if (cJSON_IsString(x)) {
			must(fs_utf8_valid(x->valuestring));
			if (x->string && !strcmp(x->string, "name"))
				must(fs_py_ident(x->valuestring));
			if (in_shape)
				check_formula(x->valuestring, syms);
		}
		check_desc(x, syms, in_shape || (x->string && !strcmp(x->string, "shape")));
	}
}

/* The op module of the region: its signature, its descriptor and the module text. */
static void check_emit(const struct prog *p)
{
	struct fs_emit_op e;
	char why[1024];
	if (fs_emit_op_init(&e, p, why, sizeof(why)))
		return;
	struct fs_kernel k = {0};
	e.kq.index64 = 1;
	struct fs_diags d;
	fs_diags_init(&d);
	int have_k = e.kernel && fs_codegen(&e.kq, -1, FS_GEN_KERNEL, NULL, &k, &d) == 0;
	fs_diags_release(&d);
	if (e.kernel && !have_k) {
		fs_emit_op_release(&e);
		return;
	}
	cJSON *j = cJSON_CreateObject();
	struct fs_emit_sig sig = {0};
	if (fs_emit_op_json(&e, have_k ? &k : NULL, j, &sig, why, sizeof(why)) == 0) {
		check_sig(&sig);
		char *text = fs_json_print(j);
		check_json_text(text);
		cJSON *back = cJSON_Parse(text);
		const cJSON *syms = cJSON_GetObjectItemCaseSensitive(back, "symbols");
		for (const cJSON *s = syms ? syms->child : NULL; s; s = s->next) {
			const char *n = cJSON_GetObjectItemCaseSensitive(s, "name")->valuestring;
			must(fs_py_ident(n) && strcmp(n, "max") && strcmp(n, "min") && strncmp(n, "__", 2));
		}
		check_desc(back, syms, 0);
		cJSON_Delete(back);
		free(text);
		char *py = op_module("fs_0123456789abcdef", &sig);
		struct fs_text sk = {0};
		must(py_check(py, 0, &sk) == 0);
		free(sk.s);
		free(py);
	}
	free(sig.sig.s), free(sig.args.s), free(sig.ret.s), free(sig.doc.s);
	cJSON_Delete(j);
	if (have_k)
		fs_kernel_release(&k);
	fs_emit_op_release(&e);
}

/* every call node of the first graph, as one site (at most a fused kernel's nodes) */
static uint32_t site_nodes(const struct fs_graph *g, uint32_t *nodes)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->n_nodes && n < FS_MAX_SITE_NODES; i++)
		if (g->nodes[i].kind == FS_NODE_CALL)
			nodes[n++] = i;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *f[N_FIELDS];
	split(data, size, buf, f);
	size_t len;
	char *text = dump_text(f[F_DUMP], f[F_EPS], &len);
	struct fs_scan *s = fs_scan_new();
	fs_scan_buffer(s, "fuzz.txt", text ? text : "", len);
	char *kernel = catalog_kernel(s, f[F_KERNELS]);
	const struct fs_graph *g = s->n_modules ? s->modules[0].graph : NULL;
	uint32_t *nodes = g ? malloc((g->n_nodes + 1) * sizeof(*nodes)) : NULL;
	uint32_t n = g ? site_nodes(g, nodes) : 0;
	struct prog p = {.s = s, .g = g};
	struct fs_diags d;
	fs_diags_init(&d);
	if (n && fs_prog_build(&p, nodes, n, 16, &d) == 0) {
		struct fs_site site = {nodes, n};
		struct names nm = {f[F_NAME], f[F_ID], kernel, f[F_NAME], f[F_ID]};
		if (!fs_gemm_any(&p))
			check_scaffold(s, g, &site, &nm);
		check_emit(&p);
	}
	fs_prog_free(&p);
	fs_diags_release(&d);
	free(nodes);
	free(kernel);
	fs_scan_free(s);
	free(text);
	free(buf);
	return 0;
}
