/*
 * adconfig.h: AutoDeploy's effective config. A reader for the YAML subset
 * AD's config files are written in (match/yaml.c: block mappings and
 * sequences, flow lists and maps on one line, plain and quoted scalars,
 * comments), and the layers AD merges (match/adconfig.c): the mode's default
 * file, a registry model's files, the user's files, each deep-merged over
 * the ones before it (mappings merge key by key, anything else is replaced:
 * OmegaConf.merge, as utils/_config.py calls it).
 *
 *   struct fs_adconfig a; fs_adconfig_init(&a);
 *   fs_adconfig_add_file(&a, "config/default.yaml", FS_LAYER_DEFAULT, NULL, &diags);
 *   fs_adconfig_add_file(&a, "mine.yaml", FS_LAYER_USER, NULL, &diags);
 *   fs_adconfig_merge(&a);
 *   struct fs_adsetting s;
 *   if (fs_adconfig_transform(&a, "fuse_gemms", &s) && s.enabled == 0) ...
 *   fs_adconfig_release(&a);
 */
#ifndef FUSESCAN_ADCONFIG_H
#define FUSESCAN_ADCONFIG_H

#include <stdint.h>

#include "fusescan/base.h"
#include "fusescan/diag.h"

/* ---- the YAML reader (match/yaml.c) ---- */

enum fs_ykind { FS_Y_NULL, FS_Y_SCALAR, FS_Y_MAP, FS_Y_SEQ };

/* Bounds of one document: deeper nesting, more nodes or a longer scalar is
 * an error (file:line:col), so untrusted text stays cheap. */
enum { FS_YAML_DEPTH = 32, FS_YAML_NODES = 1 << 18, FS_YAML_SCALAR = 4096 };

struct fs_ynode {
	uint8_t kind;         /* enum fs_ykind */
	uint8_t quoted;       /* a quoted scalar (never a boolean or null) */
	uint16_t layer;       /* the document it came from */
	uint32_t line, col;   /* where it starts (a mapping's child: its key) */
	const char *key;      /* a mapping's child: its key; else NULL */
	const char *text;     /* a scalar's value, unquoted */
	const char *comment;  /* the comment ending its line, '#' and spaces off, or NULL */
	int32_t first, next;  /* first child, next sibling (-1: none) */
	int32_t replaced;     /* a merged node: the one it replaced, or -1 */
};

/* Nodes of every document read into it, in one pool. */
struct fs_yaml {
	struct fs_arena arena;
	struct fs_ynode *v;
	uint32_t n, cap;
};

void fs_yaml_init(struct fs_yaml *y);
/* Parses one document: its root's index (a null node for an empty one), or
 * -1 after the errors (file:line:col) went to d. */
int32_t fs_yaml_parse(struct fs_yaml *y, uint16_t layer, const char *name, const char *text, size_t len,
		      struct fs_diags *d);
/* A mapping's child by key, or -1. */
int32_t fs_yaml_get(const struct fs_yaml *y, int32_t map, const char *key);
/* A scalar as YAML 1.1 reads a boolean (true, False, yes, off, ...): 1 or 0;
 * -1 when it is none. */
int fs_yaml_bool(const struct fs_ynode *n);
void fs_yaml_release(struct fs_yaml *y);

/* ---- the layers (match/adconfig.c) ---- */

enum fs_layer_kind {
	FS_LAYER_DEFAULT,  /* the tree's config/default.yaml */
	FS_LAYER_REGISTRY, /* a file the model registry lists for --model */
	FS_LAYER_USER,     /* --ad-config */
};

struct fs_adlayer {
	char *path;
	uint8_t kind;      /* enum fs_layer_kind */
	int32_t root;
};

struct fs_adconfig {
	struct fs_yaml y;
	struct fs_adlayer *layers;
	uint32_t n_layers, cap_layers;
	int32_t merged;    /* fs_adconfig_merge's root, -1 before */
	uint8_t has_default; /* a FS_LAYER_DEFAULT layer was read */
};

/* A transform as the merged layers leave it. */
struct fs_adsetting {
	int8_t enabled;        /* 1, 0, or -1: no layer states it (AD then runs it) */
	uint32_t layer, line;  /* the layer and line that set it (the name's line when unstated) */
	const char *why;       /* the comment on that line (AD's reason for a default), or NULL */
	int8_t was;            /* what an earlier layer stated (1, 0), -1 if none */
	uint32_t was_layer, was_line;
};

void fs_adconfig_init(struct fs_adconfig *a);
/* Reads and parses one layer; 0, or -1 after the diagnostics. */
int fs_adconfig_add_file(struct fs_adconfig *a, const char *path, enum fs_layer_kind kind, const char *shown,
			 struct fs_diags *d);
int fs_adconfig_add_text(struct fs_adconfig *a, const char *path, const char *text, size_t len,
			 enum fs_layer_kind kind, struct fs_diags *d);
/* Deep-merges every layer in order (later wins). */
void fs_adconfig_merge(struct fs_adconfig *a);
/* Whether the merged `transforms:` lists t (*s filled then). */
int fs_adconfig_transform(const struct fs_adconfig *a, const char *t, struct fs_adsetting *s);
void fs_adconfig_release(struct fs_adconfig *a);

/* A model registry's models.yaml (root: its parsed document): the files it
 * lists for one model, in merge order: `yaml_extra`, or `ad_defaults` then
 * `user_configs`. config_id picks among a model's entries (NULL: the only
 * one, or the one whose config_id is "default", as AD picks). */
enum fs_regdir { FS_REG_EITHER, FS_REG_AD, FS_REG_USER };
struct fs_regfile {
	const char *name;  /* a file name, as listed (in y's arena) */
	uint8_t dir;       /* enum fs_regdir: where AD looks for it */
	uint32_t line;
};
/* The number of files (at most max) into out; -1 with a sentence in why. */
int fs_adconfig_registry(const struct fs_yaml *y, int32_t root, const char *model, const char *config_id,
			 struct fs_regfile *out, uint32_t max, char *why, size_t why_n);

#endif
