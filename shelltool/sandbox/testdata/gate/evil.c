/* evil writes the marker file named by its first argument as soon as it
   runs (in a constructor, before main): a program the gate kills at its
   exec must leave no marker. */
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void early(int argc, char **argv) {
	if (argc > 1) {
		int fd = open(argv[1], O_CREAT | O_WRONLY, 0644);
		if (fd >= 0) close(fd);
	}
}
int main(void) { return 0; }
