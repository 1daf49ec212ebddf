/*
 * escape.h: a growing string, and the one way each language fusescan
 * generates takes text from an input (a name, a path, a literal), so that
 * no input becomes code or markup: Python, XML (and HTML), Markdown and
 * JSON. Used by report/ and fuse/ (scan/escape.c).
 *
 *   struct fs_text t = {0};
 *   fs_text_put(&t, "CANDIDATE = \"");
 *   fs_esc_py(&t, name);                 // t.s: CANDIDATE = "x\"+str(...)"
 *   fs_text_put(&t, "\"\n");
 *   free(t.s);
 *
 * Every escaper writes valid UTF-8 (Python: ASCII) whatever it is given:
 * a byte that is no part of a valid UTF-8 sequence reads as U+FFFD.
 */
#ifndef FUSESCAN_ESCAPE_H
#define FUSESCAN_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

struct fs_text {
	char *s; /* NUL-terminated, malloc'd (free(t.s)); NULL until the first put */
	size_t n, cap;
};

void fs_text_put(struct fs_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The body of a Python string literal, ASCII only: \ " ' escaped, control
 * characters \xNN, other characters \uXXXX / \UXXXXXXXX. Safe between "..."
 * '...' or """...""" (never an f-string), and inert in a # comment. */
void fs_esc_py(struct fs_text *t, const char *s);
/* v as a Python float literal: the shortest decimal that reads back as v
 * (repr's form: 1e-06, 0.5, 2.0), float('inf'), float('-inf'), float('nan'). */
void fs_esc_py_float(struct fs_text *t, double v);
/* s matches [A-Za-z_][A-Za-z0-9_]* and is no Python keyword. */
int fs_py_ident(const char *s);
/* s is a Python keyword or the name of a builtin (reserved for generated identifiers). */
int fs_py_reserved(const char *s);

/* XML (and HTML) text or attribute value: & < > " ' as entities, \t \n \r as
 * character references; characters XML cannot hold (other controls,
 * U+FFFE, U+FFFF) as U+FFFD. */
void fs_esc_xml(struct fs_text *t, const char *s);

/* s as one Markdown code span, its backticks included (a fence longer than
 * any run of backticks in s); line breaks and controls as U+FFFD; in_table:
 * '|' escaped, so it stays in its cell. */
void fs_esc_md_code(struct fs_text *t, const char *s, int in_table);
/* s as Markdown text: \ ` [ ] | and HTML's < & backslash-escaped or as
 * entities; line breaks and controls as U+FFFD. */
void fs_esc_md_text(struct fs_text *t, const char *s);

/* s with each invalid UTF-8 byte as U+FFFD. */
void fs_esc_utf8(struct fs_text *t, const char *s);
int fs_utf8_valid(const char *s);

/* The escapers into a FILE (report/): f(t, s) written to out. */
void fs_esc_fputs(FILE *out, void (*f)(struct fs_text *, const char *), const char *s);

struct cJSON;
/* cJSON_Print (cJSON escapes quotes and controls) of root, after every
 * string and key in it is made valid UTF-8: malloc'd, or NULL. */
char *fs_json_print(struct cJSON *root);

#endif
