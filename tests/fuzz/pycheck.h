/*
 * pycheck.h: a small Python 3 lexer for the fuzz targets over generated code
 * (fuzz_writers.c): says whether a text is Python whose every string literal
 * is closed and escaped validly, whose numbers are Python literals, whose
 * brackets balance and which holds nothing else (ASCII, no character Python
 * does not tokenize), and gives its skeleton: each line's indentation and
 * its tokens, an identifier as "I" (or itself), a number "N", a string "S".
 * Two texts written from one graph whose names alone differ must have one
 * skeleton: a name that became code would add tokens. On a "v<k> = ..."
 * line (the scaffold's chain) every identifier not after '.' must be a
 * value (v<k>, in<k>) or one of the few names a literal or dtype is written
 * with.
 *
 *   struct fs_text sk = {0};
 *   if (py_check(text, 0, &sk) != 0) abort();
 */
#ifndef FUSESCAN_PYCHECK_H
#define FUSESCAN_PYCHECK_H

#include "fusescan/escape.h"

#include <string.h>

static int py_idc(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int py_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int py_hexes(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (!py_hex(s[i]))
			return 0;
	return 1;
}

/* the escape at s (after its backslash) in a str literal: its length, or 0 where Python refuses or warns */
static size_t py_escape(const char *s, int triple)
{
	if (strchr("\\'\"abfnrtv", *s) && *s)
		return 1;
	if (*s >= '0' && *s <= '7')
		return 1;
	if (*s == '\n')
		return triple ? 1 : 0;
	if (*s == 'x')
		return py_hexes(s + 1, 2) ? 3 : 0;
	if (*s == 'u')
		return py_hexes(s + 1, 4) ? 5 : 0;
	if (*s == 'U')
		return py_hexes(s + 1, 8) ? 9 : 0;
	if (*s == 'N' && s[1] == '{') {
		const char *e = strchr(s, '}');
		return e && !memchr(s, '\n', (size_t)(e - s)) ? (size_t)(e - s) + 1 : 0;
	}
	return 0;
}

/* a string literal at s (its quote), raw or not: its length, or 0 where it is not closed or an escape is bad */
static size_t py_string(const char *s, int raw)
{
	char q = s[0];
	int triple = s[1] == q && s[2] == q;
	const char *c = s + (triple ? 3 : 1);
	for (;;) {
		if (!*c || (!triple && *c == '\n'))
			return 0;
		if (*c == '\\') {
			size_t k = raw ? (c[1] ? 1 : 0) : py_escape(c + 1, triple);
			if (!k)
				return 0;
			c += 1 + k;
			continue;
		}
		if (*c == q && (!triple || (c[1] == q && c[2] == q)))
			return (size_t)(c - s) + (triple ? 3 : 1);
		c++;
	}
}

/* a string's prefix (r, b, u, f and their pairs): 1 and *raw, or 0 */
static int py_prefix(const char *s, size_t n, int *raw)
{
	static const char *const ok[] = {"r", "b", "u", "f", "rb", "br", "fr", "rf", NULL};
	char low[3] = "";
	for (size_t i = 0; i < n && i < 2; i++)
		low[i] = (char)(s[i] | 0x20);
	*raw = memchr(low, 'r', 2) != NULL;
	for (const char *const *w = ok; *w && n <= 2; w++)
		if (!strcmp(*w, low))
			return 1;
	return 0;
}

/* a number at s: its length, or 0 where it is no Python literal (0x1p-3, 1e, 1.2.3) */
static size_t py_number(const char *s)
{
	const char *c = s;
	if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X')) {
		for (c += 2; py_hex(*c) || *c == '_'; c++)
			;
		return c > s + 2 && !py_idc(*c) && *c != '.' ? (size_t)(c - s) : 0;
	}
	while (*c >= '0' && *c <= '9')
		c++;
	if (*c == '.')
		for (c++; *c >= '0' && *c <= '9'; c++)
			;
	if (*c == 'e' || *c == 'E') {
		c += c[1] == '-' || c[1] == '+' ? 2 : 1;
		if (!(*c >= '0' && *c <= '9'))
			return 0;
		while (*c >= '0' && *c <= '9')
			c++;
	}
	if (*c == 'j' || *c == 'J')
		c++;
	return py_idc(*c) || *c == '.' ? 0 : (size_t)(c - s);
}

/* on a chain line ("    v<k> = ..."), the identifiers allowed not after '.' */
static int py_chain_ident(const char *s, size_t n)
{
	static const char *const ok[] = {"torch", "operator", "True", "False", "None", "float", "dtype", NULL};
	if ((s[0] == 'v' && n > 1) || (n > 2 && s[0] == 'i' && s[1] == 'n')) {
		size_t k = s[0] == 'v' ? 1 : 2;
		while (k < n && s[k] >= '0' && s[k] <= '9')
			k++;
		if (k == n)
			return 1;
	}
	for (const char *const *w = ok; *w; w++)
		if (strlen(*w) == n && !strncmp(*w, s, n))
			return 1;
	return 0;
}

static int py_chain_line(const char *s)
{
	if (strncmp(s, "    v", 5) || !(s[5] >= '0' && s[5] <= '9'))
		return 0;
	s += 5;
	while (*s >= '0' && *s <= '9')
		s++;
	return !strncmp(s, " = ", 3);
}

struct py_lex {
	const char *c;
	int depth, chain, after_dot, ids;
	struct fs_text *sk;
};

/* one token at x->c (not a space or line break): 0, or -1 where Python would not take it */
static int py_token(struct py_lex *x)
{
	const char *c = x->c;
	size_t n;
	int raw = 0;
	if (py_idc(*c) && !(*c >= '0' && *c <= '9')) {
		for (n = 0; py_idc(c[n]); n++)
			;
		if (c[n] == '"' || c[n] == '\'') {
			size_t k;
			if (!py_prefix(c, n, &raw) || !(k = py_string(c + n, raw)))
				return -1;
			fs_text_put(x->sk, " S");
			x->c += n + k, x->after_dot = 0;
			return 0;
		}
		if (x->chain && !x->after_dot && !py_chain_ident(c, n))
			return -1;
		fs_text_put(x->sk, x->ids ? " %.*s" : " I", (int)n, c);
	} else if ((*c >= '0' && *c <= '9') || (*c == '.' && c[1] >= '0' && c[1] <= '9')) {
		if (!(n = py_number(c)))
			return -1;
		fs_text_put(x->sk, " N");
	} else if (*c == '"' || *c == '\'') {
		if (!(n = py_string(c, 0)))
			return -1;
		fs_text_put(x->sk, " S");
	} else if (*c && strchr("()[]{}:,.;=+-*/%<>!&|^~@", *c)) {
		x->depth += strchr("([{", *c) ? 1 : strchr(")]}", *c) ? -1 : 0;
		if (x->depth < 0)
			return -1;
		fs_text_put(x->sk, " %c", *c);
		n = 1;
	} else
		return -1;
	x->after_dot = *c == '.' && n == 1;
	x->c += n;
	return 0;
}

/* text as Python: 0 and its skeleton appended to sk (identifiers kept with ids), or -1 */
static int py_check(const char *text, int ids, struct fs_text *sk)
{
	for (const char *c = text; *c; c++)
		if (!((*c >= 0x20 && *c < 0x7f) || *c == '\n'))
			return -1;
	struct py_lex x = {text, 0, 0, 0, ids, sk};
	int line_start = 1;
	while (*x.c) {
		if (line_start && x.depth == 0) {
			size_t ind = strspn(x.c, " ");
			x.chain = py_chain_line(x.c);
			if (x.c[ind] && x.c[ind] != '\n' && x.c[ind] != '#')
				fs_text_put(sk, "\n%zu:", ind);
		}
		line_start = 0;
		if (*x.c == ' ')
			x.c++;
		else if (*x.c == '\n')
			x.c++, line_start = 1;
		else if (*x.c == '#')
			x.c += strcspn(x.c, "\n");
		else if (py_token(&x))
			return -1;
	}
	return x.depth == 0 ? 0 : -1;
}

#endif
