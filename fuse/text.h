/*
 * text.h (private to fuse/): a growing string the generators print into.
 *
 *   struct fs_text t = {0};
 *   fs_text_put(&t, "%s(%d)", name, n);   // t.s, NUL-terminated; free(t.s)
 */
#ifndef FUSESCAN_TEXT_H
#define FUSESCAN_TEXT_H

#include <stddef.h>

struct fs_text {
	char *s;
	size_t n, cap;
};

void fs_text_put(struct fs_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
