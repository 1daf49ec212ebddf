/*
 * test_escape.c: the escapers of every generated language (fusescan/escape.h):
 * Python string bodies are ASCII with quotes, backslashes and controls
 * escaped; floats are Python literals that read back exactly; XML carries no
 * raw markup, control or invalid byte; a Markdown code span holds any
 * backticks and pipes; JSON printing leaves no invalid UTF-8.
 */
#include "fusescan/escape.h"
#include "harness.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

static char *esc(void (*f)(struct fs_text *, const char *), const char *s)
{
	struct fs_text t = {0};
	f(&t, s);
	return t.s;
}

#define CHECK_ESC(f, in, want)        \
	do {                          \
		char *got_ = esc(f, in); \
		CHECK_STR(got_, want); \
		free(got_);           \
	} while (0)

static void t_py(void)
{
	CHECK_ESC(fs_esc_py, "x\"+str(open(\"/tmp/m\",\"w\"))+\"", "x\\\"+str(open(\\\"/tmp/m\\\",\\\"w\\\"))+\\\"");
	CHECK_ESC(fs_esc_py, "a\\b'\n\"\"\"", "a\\\\b\\'\\x0a\\\"\\\"\\\"");
	CHECK_ESC(fs_esc_py, "\xc3\xa9\xf0\x9f\x98\x80\xff", "\\u00e9\\U0001f600\\ufffd");
	CHECK_ESC(fs_esc_py, "", "");
	CHECK(fs_py_ident("x_1") && !fs_py_ident("lambda") && !fs_py_ident("1x") && !fs_py_ident("a.b") && !fs_py_ident(""));
	CHECK(fs_py_reserved("tuple") && fs_py_reserved("None") && !fs_py_reserved("x"));
}

static void t_py_float(void)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {{1e-06, "1e-06"}, {0.5, "0.5"}, {2.0, "2.0"}, {0x1p-5, "0.03125"}, {-0.0, "-0.0"}, {1e16, "1e+16"},
		     {123456789012345.0, "123456789012345.0"}, {0.0001, "0.0001"}, {1.5e-5, "1.5e-05"}, {0.1, "0.1"},
		     {1.0 / 3, "0.3333333333333333"}, {INFINITY, "float('inf')"}, {-INFINITY, "float('-inf')"},
		     {NAN, "float('nan')"}, {1e300, "1e+300"}, {12.5, "12.5"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_text t = {0};
		fs_esc_py_float(&t, cases[i].v);
		CHECK_STR(t.s, cases[i].want);
		free(t.s);
	}
}

static void t_xml(void)
{
	CHECK_ESC(fs_esc_xml, "a\"/><testcase name=\"x", "a&quot;/&gt;&lt;testcase name=&quot;x");
	CHECK_ESC(fs_esc_xml, "\x01\n\xef\xbf\xbe\xc0", "\xef\xbf\xbd&#10;\xef\xbf\xbd\xef\xbf\xbd");
}

static void md_table(struct fs_text *t, const char *s)
{
	fs_esc_md_code(t, s, 1);
}

static void t_md(void)
{
	CHECK_ESC(md_table, "rmsnorm", "`rmsnorm`");
	CHECK_ESC(md_table, "a|b``c", "```a\\|b``c```");
	CHECK_ESC(md_table, "`x", "`` `x ``");
	CHECK_ESC(md_table, "a\nb", "`a\xef\xbf\xbd" "b`");
	CHECK_ESC(fs_esc_md_text, "<img src=x>[l](u)|`", "&lt;img src=x>\\[l\\](u)\\|\\`");
}

static void t_json(void)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "name", "bad\xff\xfe");
	cJSON_AddItemToObject(j, "k\xc3", cJSON_CreateString("ok"));
	char *s = fs_json_print(j);
	CHECK(s && fs_utf8_valid(s) && strstr(s, "bad\xef\xbf\xbd\xef\xbf\xbd"));
	free(s);
	cJSON_Delete(j);
	CHECK(!fs_utf8_valid("\xed\xa0\x80") && !fs_utf8_valid("\xc0\xaf") && fs_utf8_valid("\xe2\x82\xac"));
}

#define TESTS(X) X(t_py) X(t_py_float) X(t_xml) X(t_md) X(t_json)
FS_TEST_MAIN()
