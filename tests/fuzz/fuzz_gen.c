/*
 * fuzz_gen.c: libFuzzer target for the escapers every generated language
 * goes through (fusescan/escape.h), as the scaffold, --emit, JSON, JUnit and
 * Markdown writers call them: the bytes as a name (Python string body, XML,
 * Markdown code span and text, UTF-8, a cJSON string printed) and their
 * first 8 as a double (a Python float literal). Aborts where an output
 * breaks its language's rule: Python not ASCII or a quote unescaped, any
 * output not valid UTF-8, XML with a raw '<' or a control character, a code
 * span holding a line break. Replayed over tests/fuzz/corpus_gen by ctest.
 */
#include "fusescan/escape.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int ok)
{
	if (!ok)
		abort();
}

static void check_py(const char *s)
{
	for (const char *c = s; *c; c++) {
		must((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f);
		if (*c == '\\')
			must(*++c != '\0');
		else
			must(*c != '"' && *c != '\'');
	}
}

static void run(void (*f)(struct fs_text *, const char *), const char *in, void (*check)(const char *))
{
	struct fs_text t = {0};
	f(&t, in);
	must(t.s && fs_utf8_valid(t.s));
	if (check)
		check(t.s);
	free(t.s);
}

static void check_xml(const char *s)
{
	for (const char *c = s; *c; c++)
		must(*c != '<' && *c != '>' && *c != '"' && (unsigned char)*c >= 0x20);
}

static void check_line(const char *s)
{
	must(!strchr(s, '\n') && !strchr(s, '\r'));
}

static void md_table(struct fs_text *t, const char *s)
{
	fs_esc_md_code(t, s, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1);
	memcpy(in, data, size);
	in[size] = '\0';
	run(fs_esc_py, in, check_py);
	run(fs_esc_xml, in, check_xml);
	run(md_table, in, check_line);
	run(fs_esc_md_text, in, check_line);
	run(fs_esc_utf8, in, NULL);
	double v = 0;
	memcpy(&v, data, size < sizeof(v) ? size : sizeof(v));
	struct fs_text t = {0};
	fs_esc_py_float(&t, v);
	must(t.s && (strchr(t.s, '.') || strchr(t.s, 'e') || strstr(t.s, "float('")));
	free(t.s);
	cJSON *j = cJSON_CreateString(in);
	char *text = fs_json_print(j);
	must(text && fs_utf8_valid(text));
	free(text);
	cJSON_Delete(j);
	free(in);
	return 0;
}
