/* execargs: execs PROG with an argv made here, what no shell can pass.
   Usage: execargs PROG none     argc 0 (the kernel then passes one "")
          execargs PROG empty    argv "", "x", "", ""
          execargs PROG bytes N  argv PROG then strings of 'a' (131071 at
                                 most), N bytes in all with their NULs
   The soft stack limit is raised to the hard one first (argv over 2 MiB
   needs a stack limit over 8 MiB). Exits 3 when the exec fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
int main(int argc, char **argv) {
	if (argc < 3) return 2;
	char *prog = argv[1];
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_STACK, &rl);
	}
	char *none[] = {0};
	char *empty[] = {"", "x", "", "", 0};
	char **av = none;
	if (strcmp(argv[2], "empty") == 0) av = empty;
	if (strcmp(argv[2], "bytes") == 0 && argc > 3) {
		long left = atol(argv[3]) - (long)strlen(prog) - 1;
		static char big[131072];
		memset(big, 'a', sizeof big - 1);
		av = calloc(64, sizeof *av); /* 6 MiB at most: 48 strings */
		int n = 0;
		av[n++] = prog;
		while (left > 0 && n < 62) {
			long c = left < (long)sizeof big ? left : (long)sizeof big;
			av[n++] = big + sizeof big - c; /* c-1 'a's and the NUL */
			left -= c;
		}
		av[n] = 0;
	}
	execve(prog, av, (char *[]){"PATH=/usr/bin:/bin", 0});
	perror("execve");
	return 3;
}
