/*
 * main.c: fusescan's entry point and command table. `fusescan CMD ...` runs
 * a command; `fusescan PATH...` (first argument not a command) means discover,
 * unless that argument is a word no file has: a mistyped command.
 */
#include "cli.h"
#include "fusescan/base.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static const struct fs_command commands[] = {
	{"discover", fs_cmd_discover, "[options] PATH...",
	 "rank the unfused chains worth fusing, with kernels, evidence and advice (the default)", NULL},
	{"diff", fs_cmd_diff, "[--log ad.log] A B | DIR",
	 "what changed between two dumps, or at every transform of a run", NULL},
	{"fuse", fs_cmd_fuse, "--apply ID [options] PATH",
	 "apply approved rewrites: after-dump, diff, summary and renders (also: fusescan --apply ID PATH)", NULL},
	{"match", fs_cmd_match, "[options] PATH...",
	 "count pattern matches per dump, explain near misses, gate CI on the counts", NULL},
	{"render", fs_cmd_render, "[--node NAME | --candidate ID] [--hops K] -o FILE PATH",
	 "draw a site's neighbourhood, or a whole graph with repeated layers folded (.svg .png .dot)", NULL},
	{"scan", fs_cmd_scan, "[options] PATH...",
	 "summarise every graph in dump files, run directories or directories of runs", NULL},
	{"tune", fs_cmd_tune, "--apply ID... [options] PATH",
	 "time every tactic of each candidate's fused kernel on the GPU and update the tuning cache", NULL},
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

/* A first argument that is no command and no file, and looks like a word
 * (letters, digits, '-', '_'; a path with a '/' or a '.' is left to discover,
 * which says it cannot open it and reports the other inputs): said, with the
 * command it most likely means, and nothing runs. 1 then, else 0. */
static int unknown_command(const char *word)
{
	static const char word_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
	struct stat st;
	if (word[0] == '-' || word[strspn(word, word_chars)] || lstat(word, &st) == 0 || errno != ENOENT)
		return 0;
	const char *names[N_COMMANDS];
	for (int i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	const char *near = fs_did_you_mean(word, strlen(word), names, N_COMMANDS);
	fprintf(stderr, "fusescan: unknown command '%s' (and no such file); %s%s%s\n", word, near ? "did you mean '" : "see '",
		near ? near : "fusescan --help", near ? "'?" : "'");
	return 1;
}

/* commands[i] run with argv[0], so that the commands a report prints call fusescan as the user did */
static int run_command(int i, const char *prog, int argc, char **argv)
{
	struct fs_command cmd = commands[i];
	cmd.prog = prog;
	return cmd.run(&cmd, argc, argv);
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
			return run_command(i, argv[0], argc - 2, argv + 2);
	if (!strncmp(argv[1], "--apply", 7) || !strcmp(argv[1], "-a")) { /* fusescan --apply ID PATH */
		for (int i = 0; i < N_COMMANDS; i++)
			if (commands[i].run == fs_cmd_fuse)
				return run_command(i, argv[0], argc - 1, argv + 1);
	}
	if (unknown_command(argv[1]))
		return FS_EXIT_INPUT;
	return run_command(0, argv[0], argc - 1, argv + 1);
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
