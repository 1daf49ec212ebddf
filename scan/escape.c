/*
 * escape.c: a growing string and each generated language's escaper
 * (fusescan/escape.h). The generators of fuse/ and the reports of report/
 * write every input-derived name through these, and through nothing else.
 */
#include "fusescan/escape.h"

#include "fusescan/base.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void fs_text_put(struct fs_text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (t->s && t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		t->cap = (t->cap + (size_t)k + 1) * 2;
		t->s = fs_xrealloc(t->s, t->cap);
	}
}

/* ---- UTF-8 ----------------------------------------------------------------------------- */

#define BAD 0xFFFDu

static int cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* The code point at s (*cp; U+FFFD for a byte that starts no valid
 * sequence, or a NUL) and its length in bytes (at least 1). */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	unsigned char c = s[0];
	*cp = BAD;
	if (c < 0x80)
		return *cp = c, 1;
	if (c >= 0xC2 && c <= 0xDF && cont(s[1]))
		return *cp = (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F), 2;
	if (c >= 0xE0 && c <= 0xEF && cont(s[1]) && cont(s[2]) && (c != 0xE0 || s[1] >= 0xA0) && (c != 0xED || s[1] < 0xA0))
		return *cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F), 3;
	if (c >= 0xF0 && c <= 0xF4 && cont(s[1]) && cont(s[2]) && cont(s[3]) && (c != 0xF0 || s[1] >= 0x90) &&
	    (c != 0xF4 || s[1] < 0x90))
		return *cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F), 4;
	return 1;
}

static void put_cp(struct fs_text *t, uint32_t cp)
{
	if (cp < 0x80)
		fs_text_put(t, "%c", (char)cp);
	else if (cp < 0x800)
		fs_text_put(t, "%c%c", (char)(0xC0 | cp >> 6), (char)(0x80 | (cp & 0x3F)));
	else if (cp < 0x10000)
		fs_text_put(t, "%c%c%c", (char)(0xE0 | cp >> 12), (char)(0x80 | (cp >> 6 & 0x3F)), (char)(0x80 | (cp & 0x3F)));
	else
		fs_text_put(t, "%c%c%c%c", (char)(0xF0 | cp >> 18), (char)(0x80 | (cp >> 12 & 0x3F)), (char)(0x80 | (cp >> 6 & 0x3F)),
			    (char)(0x80 | (cp & 0x3F)));
}

int fs_utf8_valid(const char *s)
{
	uint32_t cp;
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		size_t k = utf8_next(c, &cp);
		if (cp == BAD && !(k == 3 && c[0] == 0xEF && c[1] == 0xBF && c[2] == 0xBD))
			return 0;
		c += k;
	}
	return 1;
}

void fs_esc_utf8(struct fs_text *t, const char *s)
{
	uint32_t cp;
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		c += utf8_next(c, &cp);
		put_cp(t, cp);
	}
	if (!t->s)
		fs_text_put(t, "%s", "");
}

void fs_esc_fputs(FILE *out, void (*f)(struct fs_text *, const char *), const char *s)
{
	struct fs_text t = {0};
	f(&t, s);
	if (t.s)
		fputs(t.s, out);
	free(t.s);
}

/* ---- Python ---------------------------------------------------------------------------- */

void fs_esc_py(struct fs_text *t, const char *s)
{
	uint32_t cp;
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		c += utf8_next(c, &cp);
		if (cp == '\\' || cp == '"' || cp == '\'')
			fs_text_put(t, "\\%c", (char)cp);
		else if (cp < 0x20 || cp == 0x7f)
			fs_text_put(t, "\\x%02x", (unsigned)cp);
		else if (cp < 0x80)
			fs_text_put(t, "%c", (char)cp);
		else
			fs_text_put(t, cp < 0x10000 ? "\\u%04x" : "\\U%08x", (unsigned)cp);
	}
	if (!t->s)
		fs_text_put(t, "%s", "");
}

/* The shortest "%.*e" of v that reads back as v: its digits (no point) and exponent. */
static void shortest(double v, char *digits, size_t n, int *exp)
{
	char e[48];
	for (int p = 0; p <= 17; p++) {
		snprintf(e, sizeof(e), "%.*e", p, v);
		if (strtod(e, NULL) == v)
			break;
	}
	const char *m = e + (e[0] == '-'), *x = strchr(e, 'e');
	size_t k = 0;
	for (const char *c = m; c < x && k + 1 < n; c++)
		if (*c != '.')
			digits[k++] = *c;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	*exp = atoi(x + 1);
}

void fs_esc_py_float(struct fs_text *t, double v)
{
	if (isnan(v) || isinf(v)) {
		fs_text_put(t, "float('%s')", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	char d[24];
	int x, nd;
	shortest(v, d, sizeof(d), &x);
	nd = (int)strlen(d);
	fs_text_put(t, "%s", signbit(v) ? "-" : "");
	if (x < -4 || x >= 16) { /* repr's scientific form: 1e-05, 1.5e+16 */
		fs_text_put(t, "%c%s%s", d[0], nd > 1 ? "." : "", d + 1);
		fs_text_put(t, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	}
	else if (x < 0) /* 0.000123 */
		fs_text_put(t, "0.%.*s%s", -x - 1, "0000", d);
	else if (nd > x + 1) /* 12.5 */
		fs_text_put(t, "%.*s.%s", x + 1, d, d + x + 1);
	else /* 1200.0 */
		fs_text_put(t, "%s%.*s.0", d, x + 1 - nd, "0000000000000000");
}

static const char *const py_keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
	"else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
	"pass", "raise", "return", "try", "while", "with", "yield", NULL};

/* Python 3's builtins (dir(builtins), dunders aside: a generated name
 * beginning with '_' is never kept) */
static const char *const py_builtins[] = {
	"ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup", "BlockingIOError",
	"BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError", "ConnectionAbortedError", "ConnectionError",
	"ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning",
	"EnvironmentError", "Exception", "ExceptionGroup", "FileExistsError", "FileNotFoundError", "FloatingPointError",
	"FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
	"InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
	"ModuleNotFoundError", "NameError", "NotADirectoryError", "NotImplemented", "NotImplementedError", "OSError",
	"OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError", "PythonFinalizationError",
	"RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration",
	"StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError", "TypeError",
	"UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError",
	"UnicodeWarning", "UserWarning", "ValueError", "Warning", "ZeroDivisionError", "abs", "aiter", "all", "anext", "any",
	"ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod", "compile", "complex",
	"copyright", "credits", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec", "exit", "filter", "float",
	"format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance",
	"issubclass", "iter", "len", "license", "list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct",
	"open", "ord", "pow", "print", "property", "quit", "range", "repr", "reversed", "round", "set", "setattr", "slice",
	"sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip", NULL};

static int listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

int fs_py_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (const char *c = s; *c; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
			return 0;
	return !listed(py_keywords, s);
}

int fs_py_reserved(const char *s)
{
	return listed(py_keywords, s) || listed(py_builtins, s);
}

/* ---- XML, Markdown --------------------------------------------------------------------- */

void fs_esc_xml(struct fs_text *t, const char *s)
{
	static const char *const ent[128] = {['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;",
					     ['\''] = "&apos;", ['\t'] = "&#9;", ['\n'] = "&#10;", ['\r'] = "&#13;"};
	uint32_t cp;
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		c += utf8_next(c, &cp);
		if (cp < 128 && ent[cp])
			fs_text_put(t, "%s", ent[cp]);
		else
			put_cp(t, cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF ? BAD : cp);
	}
	if (!t->s)
		fs_text_put(t, "%s", "");
}

static size_t longest_run(const char *s, char c)
{
	size_t best = 0, run = 0;
	for (; *s; s++)
		run = *s == c ? run + 1 : 0, best = run > best ? run : best;
	return best;
}

static void ticks(struct fs_text *t, size_t n)
{
	while (n--)
		fs_text_put(t, "`");
}

void fs_esc_md_code(struct fs_text *t, const char *s, int in_table)
{
	size_t fence = longest_run(s, '`') + 1, n = strlen(s);
	int pad = !n || s[0] == '`' || s[n - 1] == '`' || (s[0] == ' ' && s[n - 1] == ' ');
	uint32_t cp;
	ticks(t, fence);
	fs_text_put(t, "%s", pad ? " " : "");
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		c += utf8_next(c, &cp);
		if (cp == '|' && in_table)
			fs_text_put(t, "\\|");
		else
			put_cp(t, cp < 0x20 || cp == 0x7f ? BAD : cp);
	}
	fs_text_put(t, "%s", pad && n ? " " : "");
	ticks(t, fence);
}

void fs_esc_md_text(struct fs_text *t, const char *s)
{
	uint32_t cp;
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		c += utf8_next(c, &cp);
		if (cp == '\\' || cp == '`' || cp == '[' || cp == ']' || cp == '|')
			fs_text_put(t, "\\%c", (char)cp);
		else if (cp == '<' || cp == '&')
			fs_text_put(t, "%s", cp == '<' ? "&lt;" : "&amp;");
		else
			put_cp(t, cp < 0x20 || cp == 0x7f ? BAD : cp);
	}
	if (!t->s)
		fs_text_put(t, "%s", "");
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void utf8_fix(char **s)
{
	if (!*s || fs_utf8_valid(*s))
		return;
	struct fs_text t = {0};
	fs_esc_utf8(&t, *s);
	cJSON_free(*s);
	*s = cJSON_malloc(t.n + 1);
	memcpy(*s, t.s, t.n + 1);
	free(t.s);
}

/* every string and key under j made valid UTF-8 (iterative over siblings, recursive in depth) */
static void json_fix(cJSON *j)
{
	for (; j; j = j->next) {
		if (j->string && !(j->type & cJSON_StringIsConst))
			utf8_fix(&j->string);
		if (cJSON_IsString(j) && !(j->type & cJSON_IsReference))
			utf8_fix(&j->valuestring);
		json_fix(j->child);
	}
}

char *fs_json_print(struct cJSON *root)
{
	json_fix(root);
	return cJSON_Print(root);
}
