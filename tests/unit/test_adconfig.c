/*
 * test_adconfig.c: the AutoDeploy config reader and merge (match/yaml.c,
 * match/adconfig.c): the forms AD's files use, refused forms at
 * file:line:col, deep merge with later layers winning and the overridden
 * layer kept, registry entries (yaml_extra; ad_defaults then user_configs;
 * config_id), and the catalog's wants check.
 */
#include "fusescan/adconfig.h"
#include "fusescan/catalog.h"
#include "harness.h"

#include <string.h>

static int has(const struct fs_diags *d, uint32_t line, uint32_t col, const char *text)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->v[i].line == line && d->v[i].col == col && strstr(d->v[i].message, text))
			return 1;
	fs_diags_print(d, stderr);
	return 0;
}

static void t_reader_forms(void)
{
	const char *t = "---\n# head\ntransforms:\n  a:\n    stage: x  # s\n    enabled: False # why not\n"
			"  b:\n    dims: ['tp', \"e\\\"p\", bmm]\n    m: {k: 1, l: [2]}\n    n: null\nlist:\n- x\n- k: 1\n  j: ~\n";
	struct fs_yaml y;
	struct fs_diags d;
	fs_yaml_init(&y);
	fs_diags_init(&d);
	int32_t r = fs_yaml_parse(&y, 0, "t.yaml", t, strlen(t), &d);
	CHECK(r >= 0 && d.n == 0);
	int32_t a = fs_yaml_get(&y, fs_yaml_get(&y, r, "transforms"), "a");
	int32_t e = fs_yaml_get(&y, a, "enabled");
	CHECK(e >= 0 && fs_yaml_bool(&y.v[e]) == 0 && y.v[e].line == 6 && y.v[e].col == 5);
	CHECK_STR(y.v[e].comment, "why not");
	int32_t b = fs_yaml_get(&y, fs_yaml_get(&y, r, "transforms"), "b");
	int32_t dims = fs_yaml_get(&y, b, "dims");
	CHECK(y.v[dims].kind == FS_Y_SEQ);
	CHECK_STR(y.v[y.v[y.v[dims].first].next].text, "e\"p");
	CHECK(y.v[fs_yaml_get(&y, b, "n")].kind == FS_Y_NULL && y.v[fs_yaml_get(&y, b, "m")].kind == FS_Y_MAP);
	int32_t l = fs_yaml_get(&y, r, "list");
	int32_t second = y.v[y.v[l].first].next;
	CHECK(y.v[l].kind == FS_Y_SEQ && y.v[second].kind == FS_Y_MAP && y.v[fs_yaml_get(&y, second, "j")].kind == FS_Y_NULL);
	struct fs_ynode q = {.kind = FS_Y_SCALAR, .text = "TRUE"}, q2 = {.kind = FS_Y_SCALAR, .text = "tRue"};
	CHECK(fs_yaml_bool(&q) == 1 && fs_yaml_bool(&q2) == -1);
	fs_yaml_release(&y);
	fs_diags_release(&d);
}

static void t_reader_refuses(void)
{
	const char *t = "a: &x 1\nb: [1, 2\nc: |\n\td: 1\ne:\n  f: 1\n   g: 2\ne: 2\nh: 'open\n...\n";
	struct fs_yaml y;
	struct fs_diags d;
	fs_yaml_init(&y);
	fs_diags_init(&d);
	CHECK(fs_yaml_parse(&y, 0, "t.yaml", t, strlen(t), &d) == -1);
	CHECK(has(&d, 1, 4, "anchors, aliases"));
	CHECK(has(&d, 2, 4, "must end on its line"));
	CHECK(has(&d, 3, 4, "block scalars"));
	CHECK(has(&d, 4, 1, "a tab in indentation"));
	CHECK(has(&d, 7, 4, "unexpected indentation"));
	CHECK(has(&d, 8, 1, "duplicate key"));
	CHECK(has(&d, 9, 4, "must end on its line"));
	CHECK(has(&d, 10, 1, "one document"));
	fs_yaml_release(&y);
	fs_diags_release(&d);
}

static void t_merge_later_wins(void)
{
	const char *l0 = "transforms:\n  a:\n    stage: x\n    enabled: false # oom\n  b:\n    stage: y\n";
	const char *l1 = "transforms:\n  a:\n    enabled: true\n  c:\n    backend: z\nlist: [1]\n";
	const char *l2 = "list: [2, 3]\n";
	struct fs_adconfig a;
	struct fs_diags d;
	struct fs_adsetting s;
	fs_adconfig_init(&a);
	fs_diags_init(&d);
	CHECK(!fs_adconfig_add_text(&a, "d.yaml", l0, strlen(l0), FS_LAYER_DEFAULT, &d));
	CHECK(!fs_adconfig_add_text(&a, "u.yaml", l1, strlen(l1), FS_LAYER_USER, &d));
	CHECK(!fs_adconfig_add_text(&a, "v.yaml", l2, strlen(l2), FS_LAYER_USER, &d));
	CHECK(fs_adconfig_add_text(&a, "w.yaml", "[1]\n", 4, FS_LAYER_USER, &d) == -1 && has(&d, 1, 1, "is a mapping"));
	fs_adconfig_merge(&a);
	CHECK(fs_adconfig_transform(&a, "a", &s) && s.enabled == 1 && s.layer == 1 && s.line == 3);
	CHECK(s.was == 0 && s.was_layer == 0 && s.was_line == 4);
	CHECK(fs_adconfig_transform(&a, "b", &s) && s.enabled == -1 && s.layer == 0 && s.line == 5);
	CHECK(fs_adconfig_transform(&a, "c", &s) && s.enabled == -1 && s.layer == 1);
	CHECK(!fs_adconfig_transform(&a, "d", &s));
	int32_t list = fs_yaml_get(&a.y, a.merged, "list"); /* a list is replaced, not merged */
	CHECK(list >= 0 && a.y.v[list].layer == 2 && a.y.v[a.y.v[list].first].text[0] == '2');
	fs_adconfig_release(&a);
	fs_diags_release(&d);
}

static void t_registry_entries(void)
{
	const char *t = "models:\n- name: m\n  yaml_extra: ['a.yaml', 'b.yaml']\n- name: two\n  config_id: x\n"
			"  ad_defaults: [c.yaml]\n- name: two\n  config_id: y\n  ad_defaults: [c.yaml]\n  user_configs: [d.yaml]\n"
			"- name: bad\n  yaml_extra: ['../etc/x']\n";
	struct fs_yaml y;
	struct fs_diags d;
	struct fs_regfile f[4];
	char why[200];
	fs_yaml_init(&y);
	fs_diags_init(&d);
	int32_t r = fs_yaml_parse(&y, 0, "models.yaml", t, strlen(t), &d);
	CHECK(fs_adconfig_registry(&y, r, "m", NULL, f, 4, why, sizeof(why)) == 2 && !strcmp(f[1].name, "b.yaml") &&
	      f[1].dir == FS_REG_EITHER && f[1].line == 3);
	CHECK(fs_adconfig_registry(&y, r, "two", NULL, f, 4, why, sizeof(why)) == -1 && strstr(why, "config_id x, y"));
	CHECK(fs_adconfig_registry(&y, r, "two", "y", f, 4, why, sizeof(why)) == 2 && f[0].dir == FS_REG_AD &&
	      f[1].dir == FS_REG_USER);
	CHECK(fs_adconfig_registry(&y, r, "bad", NULL, f, 4, why, sizeof(why)) == -1 && strstr(why, "inside its configs"));
	CHECK(fs_adconfig_registry(&y, r, "none", NULL, f, 4, why, sizeof(why)) == -1 && strstr(why, "no entry for none"));
	CHECK(fs_adconfig_registry(&y, r, "m", NULL, f, 1, why, sizeof(why)) == -1 && strstr(why, "more than 1"));
	fs_yaml_release(&y);
	fs_diags_release(&d);
}

static void t_wants_check(void)
{
	const char *g = "%x : 4x8 : torch.bfloat16\n%r : 4x8 : torch.bfloat16\n%w : 8 : torch.bfloat16\n"
			"%add = aten.add.Tensor(%x : 4x8 : torch.bfloat16, %r : 4x8 : torch.bfloat16) : 4x8 : torch.bfloat16\n"
			"%n = auto_deploy.flashinfer_rms_norm.default(%add : 4x8 : torch.bfloat16, %w : 8 : torch.bfloat16, 1e-05)"
			" : 4x8 : torch.bfloat16\noutput %n\n";
	const char *cat = "[add_rmsnorm]\nkind = multi_output\nchain = add auto_deploy.flashinfer_rms_norm\n"
			  "transforms = fuse_add_rms_norm\nwants = fuse_add_rms_norm: add -> cast -> auto_deploy.flashinfer_rms_norm\n"
			  "[x]\ntransforms = t\nwants = u: a\nwants = t a\n";
	struct fs_scan *s = fs_scan_new();
	struct fs_catalog c;
	struct fs_diags d;
	char buf[400];
	fs_diags_init(&d);
	fs_scan_buffer(s, "g.txt", g, strlen(g));
	CHECK_EQ_U(s->diags.n_errors, 0);
	fs_catalog_init(&c, s);
	CHECK_EQ_U(fs_catalog_parse(&c, "cat.txt", cat, strlen(cat), &d), 2);
	CHECK(has(&d, 8, 9, "does not list") && has(&d, 9, 9, "wants is"));
	const struct fs_graph *gr = s->modules[0].graph;
	uint32_t nodes[] = {3, 4};
	CHECK(c.e[0].n_wants == 1 && c.e[0].wants[0].n_steps == 3);
	CHECK(fs_catalog_want_check(&c, &c.e[0].wants[0], gr, nodes, 2, buf, sizeof(buf)) == 0);
	CHECK(strstr(buf, "here add is read by auto_deploy.flashinfer_rms_norm, not cast") != NULL);
	fs_catalog_release(&c);
	fs_diags_release(&d);
	fs_scan_free(s);
}

#define TESTS(X)                  \
	X(t_reader_forms)         \
	X(t_reader_refuses)       \
	X(t_merge_later_wins)     \
	X(t_registry_entries)     \
	X(t_wants_check)

FS_TEST_MAIN()
