/*
 * scaffold.h: the AutoDeploy transform that would ship an applied fusion
 * (`fusescan --apply ID --emit OPS --scaffold DIR`). Per approval:
 *
 *   DIR/fuse_<name>.py       the transform module in AutoDeploy's form
 *                            (@TransformRegistry.register("fuse_<name>"),
 *                            one search / replacement pair per kernel the
 *                            sites need, written from the dump's ops and
 *                            literals; the replacement calls the emitted op),
 *                            and find_sites(gm): the search functions on a
 *                            graph with torch.fx, where TensorRT-LLM is absent
 *   DIR/test_fuse_<name>.py  a micrograph that must fuse and one that must not
 *                            (an intermediate with a second consumer)
 *   DIR/fuse_<name>.md       AutoDeploy's iteration note, filled with
 *                            fusescan's evidence
 *   DIR/fuse_<name>.sites.json  every site fusescan found for it in the dump
 *                            (node names, file order): what the search
 *                            functions must match on the dump's graph
 * and DIR/default.yaml: every transform's entry (its stage, enabled: false),
 * opening with FS_SCAFFOLD_YAML_HEAD (so a default.yaml fusescan did not
 * write is told apart and never replaced: cli/cmd_fuse.c).
 *
 *   struct fs_scaffold sc = {.name = "rmsnorm", ...};
 *   if (fs_scaffold_write(scan, graph, &sc, 1, "out/scaffold", why, sizeof(why)))
 *       fprintf(stderr, "%s\n", why);
 */
#ifndef FUSESCAN_SCAFFOLD_H
#define FUSESCAN_SCAFFOLD_H

#include "fusescan/rewrite.h"
#include "fusescan/scan.h"

#define FS_SCAFFOLD_YAML_HEAD "# fusescan --scaffold: "

#include <stddef.h>

/* One kernel of an approval: the first site it serves, and its op. */
struct fs_scaffold_variant {
	const struct fs_site *site;
	uint32_t n_sites;           /* sites its op replaces */
	char op[48];                /* the emitted op's name (fs_...), or "" when none was emitted */
	char verdict[160];          /* the numerics verdict of its site, in words */
};

struct fs_scaffold {
	const char *name;           /* candidate or pattern name: the transform is fuse_<name> */
	const char *id;             /* discovery's candidate id, or the pattern's name */
	const char *recommendation; /* discovery's recommendation, or "" for a pattern */
	const char *kernel;         /* the existing kernel the catalog names, or "" */
	int existing;               /* discovery recommends the existing kernel */
	int gelu_tanh;              /* gelu is the tanh approximation */
	const char *dump;           /* the dump's path */
	const char *ops_dir;        /* where the emitted ops are (--emit) */
	const struct fs_site *all;  /* every site of the approval in the dump */
	uint32_t sites;
	uint32_t fused, skipped;    /* after the rewrite: its fused nodes, its sites skipped */
	int64_t tokens;             /* the sizes the programs are bound at */
	struct fs_scaffold_variant *v;
	uint32_t n;
};

/* Writes the files above atomically; 0, or -1 with the reason in why. */
int fs_scaffold_write(const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc, uint32_t n,
		      const char *dir, char *why, size_t why_n);

#endif
