/*
 * text.h (private to fuse/): the growing string the generators print into
 * and the escapers of what they write (fusescan/escape.h), and the line a
 * phase of a run says as it begins.
 *
 *   struct fs_text t = {0};
 *   fs_text_put(&t, "%s(%d)", name, n);   // t.s, NUL-terminated; free(t.s)
 *   fs_progress_say(o->progress, "compiling %u kernels", n);
 */
#ifndef FUSESCAN_TEXT_H
#define FUSESCAN_TEXT_H

#include "fusescan/escape.h"

struct fs_progress;
/* Says one line (at most 255 bytes) through p (fusescan/site_types.h); nothing when p is NULL. */
void fs_progress_say(const struct fs_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
