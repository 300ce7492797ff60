/* attack MODE ARGS...: ways to exec a program the exec gate must still see.
   thread PATH ARG...   a non-leader thread execs PATH (argv = PATH ARG...)
   argc0 PATH           execve(PATH, {NULL})
   deleted SRC COPY ARG execveat of an fd of a copy of SRC, unlinked first
   emptypath PATH ARG   execveat(O_PATH fd, "", AT_EMPTY_PATH)
   threadvfork PATH ARG a non-leader thread vforks and the child execs */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static char **targv;
static void *texec(void *x) { (void)x; execv(targv[0], targv); perror("execv"); _exit(127); }
static void *tvfork(void *x) {
	(void)x;
	pid_t p = vfork();
	if (p == 0) { execv(targv[0], targv); _exit(127); }
	int st; waitpid(p, &st, 0);
	printf("child status %d\n", st);
	exit(0);
}
int main(int argc, char **argv) {
	if (argc < 3) return 2;
	const char *m = argv[1];
	extern char **environ;
	if (!strcmp(m, "thread") || !strcmp(m, "threadvfork")) {
		targv = argv + 2;
		pthread_t t;
		pthread_create(&t, 0, !strcmp(m, "thread") ? texec : tvfork, 0);
		for (;;) pause();
	}
	if (!strcmp(m, "argc0")) {
		char *av[] = {0};
		syscall(SYS_execve, argv[2], av, environ);
		perror("execve"); return 127;
	}
	if (!strcmp(m, "deleted")) {
		int in = open(argv[2], O_RDONLY), out = open(argv[3], O_CREAT|O_WRONLY|O_TRUNC, 0755);
		char b[65536]; ssize_t n;
		while ((n = read(in, b, sizeof b)) > 0) write(out, b, n);
		close(out);
		int fd = open(argv[3], O_RDONLY|O_CLOEXEC);
		unlink(argv[3]);
		syscall(SYS_execveat, fd, "", argv + 4, environ, AT_EMPTY_PATH);
		perror("execveat"); return 127;
	}
	if (!strcmp(m, "emptypath")) {
		int fd = open(argv[2], O_PATH|O_CLOEXEC);
		syscall(SYS_execveat, fd, "", argv + 3, environ, AT_EMPTY_PATH);
		perror("execveat"); return 127;
	}
	return 2;
}
