/*
 * replay.c: runs the fuzz entry point over files given on the command line
 * (the seed corpus and any crash reproducers), so CI replays the corpus
 * under the sanitizers without libFuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		size_t cap = 1 << 16, len = 0, got;
		uint8_t *buf = malloc(cap);
		while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0)
			if ((len += got) == cap)
				buf = realloc(buf, cap *= 2);
		fclose(f);
		if (!buf)
			return 1;
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		n++;
	}
	printf("%d passed, 0 failed\n", n);
	return 0;
}
