/* untraced tries clone(CLONE_UNTRACED|SIGCHLD): prints "EPERM" when the
   sandbox refuses it, "CLONED" when it got an untraced child. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
	long r = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
	if (r == 0) _exit(0);
	if (r < 0) { puts(errno == EPERM ? "EPERM" : "OTHER"); return 0; }
	waitpid(r, 0, 0);
	puts("CLONED");
	return 0;
}
