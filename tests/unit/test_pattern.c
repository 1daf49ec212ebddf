/*
 * test_pattern.c: the pattern-file parser: every statement, variants, and
 * the file:line:col diagnostics (PCRE2's message and offset for a bad regex);
 * and matcher corner cases that the library fixtures do not reach.
 */
#include "fusescan/pattern.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static int diag_has(const struct fs_diags *d, uint32_t line, uint32_t col, const char *text)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->v[i].line == line && d->v[i].col == col && strstr(d->v[i].message, text))
			return 1;
	fprintf(stderr, "  want %u:%u '%s'; got:\n", line, col, text);
	fs_diags_print(d, stderr);
	return 0;
}

static uint32_t parse(struct fs_patlib *l, struct fs_diags *d, const char *text)
{
	return fs_patlib_parse(l, "t.pat", text, strlen(text), d);
}

static void t_statements(void)
{
	struct fs_patlib l;
	struct fs_diags d;
	fs_patlib_init(&l);
	fs_diags_init(&d);
	CHECK_EQ_U(parse(&l, &d,
			 "# a comment\n"
			 "pattern p\n"
			 "description two ops\n"
			 "replace ns.op.default\n"
			 "catalog e\n"
			 "input x dtype=bf16|fp16 rank=2\n"
			 "optional c aten\\.to\\.dtype (x, ...)   # trailing comment\n"
			 "node a aten\\.(mul|div)\\.Tensor (c, $s, [1, _], True, None, torch.float32, 'str') commutative shared\n"
			 "node b aten\\.neg\\.default (a)\n"
			 "output b\n"
			 "where $s in [0.5, 2]\n"
			 "where dim(b, -1) == 2 * dim(x, -1) + 1\n"
			 "where dim(x, 0) == 4\n"
			 "where rank(b) == 2\n"),
		   0);
	CHECK_EQ_U(l.n, 1);
	const struct fs_pattern *p = &l.v[0];
	CHECK_STR(p->name, "p");
	CHECK_STR(p->replace, "ns.op.default");
	CHECK_EQ_U(p->n_nodes, 4);
	CHECK_EQ_U(p->n_ops, 3);
	CHECK_EQ_U(p->nodes[0].rank, 2);
	CHECK(p->nodes[0].dtypes == ((1ull << FS_DT_BF16) | (1ull << FS_DT_F16)));
	CHECK_EQ_U(p->nodes[1].kind, FS_PN_OPTIONAL);
	CHECK(p->nodes[2].flags & FS_PF_COMMUTATIVE);
	CHECK(p->nodes[2].flags & FS_PF_SHARED);
	CHECK_EQ_U(p->nodes[2].n_args, 9); /* c, $s, [1, _] (3), True, None, dtype, 'str' */
	CHECK_EQ_U(p->nodes[2].args[2].kind, FS_PA_LIST);
	CHECK_EQ_U(p->nodes[2].args[2].span, 3);
	CHECK_EQ_U(p->n_vars, 1);
	CHECK_EQ_U(p->n_where, 4);
	CHECK_EQ_U(p->where[1].k, 2);
	CHECK_EQ_U(p->where[1].c, 1);
	CHECK_EQ_U(p->where[2].b, UINT32_MAX);
	CHECK_EQ_U(p->n_outputs, 1);
	fs_patlib_release(&l);
	fs_diags_release(&d);
}

static void t_variants(void)
{
	struct fs_patlib l;
	struct fs_diags d;
	fs_patlib_init(&l);
	fs_diags_init(&d);
	CHECK_EQ_U(parse(&l, &d,
			 "pattern v\nreplace r\n"
			 "variant one\ninput x\nnode a aten\\.abs\\.default (x)\noutput a\n"
			 "variant two\ninput y\nnode b aten\\.neg\\.default (y)\noutput b\n"),
		   0);
	CHECK_EQ_U(l.n, 2);
	CHECK_STR(l.v[0].variant, "one");
	CHECK_STR(l.v[1].variant, "two");
	CHECK_STR(l.v[1].name, "v");
	CHECK_STR(l.v[1].replace, "r");
	CHECK(fs_patlib_find(&l, "v") == 0);
	/* a second file with the same name is an error */
	CHECK_EQ_U(parse(&l, &d, "pattern v\ninput x\nnode a aten\\.abs\\.default (x)\noutput a\n"), 1);
	CHECK(diag_has(&d, 1, 1, "defined twice"));
	fs_patlib_release(&l);
	fs_diags_release(&d);
}

static void t_errors(void)
{
	static const struct {
		const char *text;
		uint32_t line, col;
		const char *msg;
	} cases[] = {
		{"input x\n", 1, 1, "starts with 'pattern NAME'"},
		{"pattern p\nfrobnicate\n", 2, 1, "unknown statement"},
		{"pattern p\ninput x\nnode a aten\\.(abs (x)\noutput a\n", 3, 18, "missing closing parenthesis (PCRE2, offset 10)"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (y)\noutput a\n", 3, 28, "unknown node 'y'"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default x\noutput a\n", 3, 27, "expected '('"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x, 1\noutput a\n", 3, 32, "expected ',' or ')'"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x) fast\noutput a\n", 3, 31, "unknown flag"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x) dtype=fp7\noutput a\n", 3, 37, "unknown dtype"},
		{"pattern p\ninput x\ninput x\n", 3, 7, "defined twice"},
		{"pattern p\ninput x\noptional c aten\\.to\\.dtype (1)\n", 3, 10, "must name a node"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x)\n", 1, 1, "no 'output' line"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x)\noutput x\n", 4, 8, "must be an op node"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x)\nnode b aten\\.neg\\.default (x)\noutput a\n", 4, 1, "node 'b' is not used"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x)\noutput a\nwhere $e in [1, 2]\n", 5, 1, "$e is constrained but never captured"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x)\noutput a\nwhere $e in [1 2]\n", 5, 16, "expected ','"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default (x)\noutput a\nwhere dim(q, 0) == 1\n", 5, 11, "unknown node in dim()"},
		{"pattern p\ninput x\nnode a aten\\.abs\\.default ('x)\noutput a\n", 3, 28, "unterminated string"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_patlib l;
		struct fs_diags d;
		fs_patlib_init(&l);
		fs_diags_init(&d);
		CHECK(parse(&l, &d, cases[i].text) > 0);
		CHECK_EQ_U(l.n, 0);
		CHECK(diag_has(&d, cases[i].line, cases[i].col, cases[i].msg));
		fs_patlib_release(&l);
		fs_diags_release(&d);
	}
}

/* optional present vs absent, variables shared between nodes, list arguments */
static void t_matcher_corners(void)
{
	struct fs_patlib l;
	struct fs_diags d;
	fs_patlib_init(&l);
	fs_diags_init(&d);
	CHECK_EQ_U(parse(&l, &d,
			 "pattern p\ninput x\noptional c aten\\.to\\.dtype (x, ...)\n"
			 "node a aten\\.add\\.Tensor (c, $v)\nnode b aten\\.mul\\.Tensor (a, $v)\noutput b\n"),
		   0);
	const char *g = "%x : 4 : torch.float32\n"
			"%c = aten.to.dtype(%x : 4 : torch.float32, torch.float32) : 4 : torch.float32\n"
			"%a = aten.add.Tensor(%c : 4 : torch.float32, 2) : 4 : torch.float32\n"
			"%b = aten.mul.Tensor(%a : 4 : torch.float32, 2) : 4 : torch.float32\n" /* $v = 2 twice */
			"%a2 = aten.add.Tensor(%x : 4 : torch.float32, 3) : 4 : torch.float32\n"
			"%b2 = aten.mul.Tensor(%a2 : 4 : torch.float32, 3) : 4 : torch.float32\n" /* no cast */
			"%a3 = aten.add.Tensor(%x : 4 : torch.float32, 3) : 4 : torch.float32\n"
			"%b3 = aten.mul.Tensor(%a3 : 4 : torch.float32, 4) : 4 : torch.float32\n" /* $v differs */
			"output %b, %b2, %b3\n";
	struct fs_scan *s = fs_scan_new();
	fs_scan_buffer(s, "g.txt", g, strlen(g));
	struct fs_matches m;
	fs_match_pattern(&l.v[0], s, s->modules[0].graph, &m);
	CHECK_EQ_U(m.n, 2);
	CHECK_EQ_U(m.v[0].bind[1], 1);          /* c present */
	CHECK_EQ_U(m.v[1].bind[1], UINT32_MAX); /* c absent */
	CHECK_EQ_U(m.n_miss, 1);                /* b3: $v differs */
	CHECK_EQ_U(m.miss[0].cause, FS_MISS_LITERAL);
	fs_matches_release(&m);
	fs_scan_free(s);
	fs_patlib_release(&l);
	fs_diags_release(&d);
}

#define TESTS(X)             \
	X(t_statements)      \
	X(t_variants)        \
	X(t_errors)          \
	X(t_matcher_corners)

FS_TEST_MAIN()
