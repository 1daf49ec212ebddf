/*
 * diag.h: diagnostics collected by parsers and loaders. Libraries record and
 * continue; only the CLI prints (fs_diag_print) and picks the exit code.
 *
 *   struct fs_diags d; fs_diags_init(&d);
 *   fs_diag_add(&d, FS_ERROR, "a.txt", 3, 7, line_text, line_len, "bad %s", "x");
 *   if (d.n_errors) ... fs_diags_print(&d, stderr);
 *   fs_diags_release(&d);
 */
#ifndef FUSESCAN_DIAG_H
#define FUSESCAN_DIAG_H

#include <stdint.h>
#include <stdio.h>

enum fs_severity { FS_NOTE, FS_WARNING, FS_ERROR };

struct fs_diag {
	enum fs_severity severity;
	char *file;       /* owned */
	uint32_t line;    /* 1-based; 0 = the file as a whole */
	uint32_t col;     /* 1-based byte column */
	char *message;    /* owned */
	char *excerpt;    /* owned: a window of the offending line, or NULL */
	uint32_t caret;   /* 0-based offset of the column inside excerpt */
};

struct fs_diags {
	struct fs_diag *v;
	uint32_t n, cap;
	uint32_t n_errors, n_warnings;
};

void fs_diags_init(struct fs_diags *d);
/* Records a diagnostic. `text`/`text_len` is the whole offending line (may be
 * NULL); only a window around `col` is kept, so huge lines stay cheap. */
void fs_diag_add(struct fs_diags *d, enum fs_severity sev, const char *file,
		 uint32_t line, uint32_t col, const char *text, size_t text_len,
		 const char *fmt, ...) __attribute__((format(printf, 8, 9)));
/* "file:line:col: error: message", then the excerpt and a caret line. */
void fs_diag_print(const struct fs_diag *g, FILE *out);
void fs_diags_print(const struct fs_diags *d, FILE *out);
void fs_diags_release(struct fs_diags *d);
/* The message of the last error recorded, or "": what a result that keeps
 * a failure's reason (a refusal, a skip) copies. */
const char *fs_diags_last(const struct fs_diags *d);
/* Rewords the last diagnostic in place (its file, line and severity kept),
 * so a caller that adds context still leaves one: fmt may read the old
 * message, fs_diags_last(d). */
void fs_diag_reword(struct fs_diags *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
