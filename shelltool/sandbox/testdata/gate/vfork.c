/* vfork+exec: vfork, then execv(argv[1], argv+1) in the child; exits with
   the child's status as a shell reports it (128+signal). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
	if (argc < 2) return 2;
	pid_t p = vfork();
	if (p == 0) { execv(argv[1], argv + 1); _exit(127); }
	int st;
	if (waitpid(p, &st, 0) < 0) return 3;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}
