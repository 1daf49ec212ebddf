/*
 * main.c: fusescan's entry point and command table. `fusescan CMD ...` runs
 * a command; `fusescan PATH...` (first argument not a command) means discover.
 */
#include "cli.h"
#include "fusescan/base.h"

#include <string.h>

static const struct fs_command commands[] = {
	{"discover", fs_cmd_discover, "[options] PATH...",
	 "rank the unfused chains worth fusing, with kernels, evidence and advice (the default)"},
	{"diff", fs_cmd_diff, "[--log ad.log] A B | DIR",
	 "what changed between two dumps, or at every transform of a run"},
	{"fuse", fs_cmd_fuse, "--apply ID [options] PATH",
	 "apply approved rewrites: after-dump, diff, summary and renders (also: fusescan --apply ID PATH)"},
	{"match", fs_cmd_match, "[options] PATH...",
	 "count pattern matches per dump, explain near misses, gate CI on the counts"},
	{"render", fs_cmd_render, "[--node NAME | --candidate ID] [--hops K] -o FILE PATH",
	 "draw a site's neighbourhood, or a whole graph with repeated layers folded (.svg .png .dot)"},
	{"scan", fs_cmd_scan, "[options] PATH...",
	 "summarise every graph in dump files, run directories or directories of runs"},
	{"tune", fs_cmd_tune, "--apply ID... [options] PATH",
	 "time every tactic of each candidate's fused kernel on the GPU and update the tuning cache"},
};

enum { N_COMMANDS = sizeof(commands) / sizeof(commands[0]) };

static void usage(FILE *out)
{
	fprintf(out, "usage: fusescan [COMMAND] [options] PATH...\n\n"
		     "Finds what to fuse next in AutoDeploy / torch.export graph dumps.\n\ncommands:\n");
	for (int i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nWithout a command, discover runs on PATH... 'fusescan COMMAND --help' for options.\n");
}

static int run(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return FS_EXIT_INPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return FS_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("fusescan %s\n", FS_VERSION);
		return FS_EXIT_OK;
	}
	for (int i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(&commands[i], argc - 2, argv + 2);
	if (!strncmp(argv[1], "--apply", 7) || !strcmp(argv[1], "-a")) { /* fusescan --apply ID PATH */
		for (int i = 0; i < N_COMMANDS; i++)
			if (commands[i].run == fs_cmd_fuse)
				return fs_cmd_fuse(&commands[i], argc - 1, argv + 1);
	}
	return commands[0].run(&commands[0], argc - 1, argv + 1);
}

/* Every command's stdout is checked once it is done: a report cut short by
 * a full disk or a closed pipe is a failure, never a silent success. */
int main(int argc, char **argv)
{
	int rc = run(argc, argv);
	if (fs_stdout_check() != 0 || fclose(stdout) != 0)
		return rc ? rc : FS_EXIT_INPUT;
	return rc;
}
