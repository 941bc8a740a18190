// SPDX-License-Identifier: GPL-2.0
/*
 * strace-target: a few system calls whose arguments strace must read from
 * this process's memory: a 5000-byte write() from a buffer that crosses a
 * page boundary, an openat() path that crosses one too, a nanosleep()
 * timespec and a uname() result.  clients/strace.sh checks strace's
 * decoding of each against what the kernel saw (the write's bytes on
 * stdout, the fixed values here).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define PATH "/nonexistent/cma-strace-path-crossing-a-page-boundary"

int main(void)
{
	static const char alpha[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 1234567 };
	struct utsname u;
	char *buf, *path;

	if (p == MAP_FAILED)
		return 2;
	/* 5000 bytes from offset 4000: the buffer spans pages 0 and 1. */
	buf = p + 4000;
	memcpy(buf, "cma-strace:", 11);
	for (int i = 11; i < 4999; i++)
		buf[i] = alpha[(i * 7) % (sizeof(alpha) - 1)];
	buf[4999] = '\n';
	if (write(1, buf, 5000) != 5000)
		return 3;
	/* The path starts 20 bytes before the end of page 1. */
	path = p + 2 * 4096 - 20;
	strcpy(path, PATH);
	if (syscall(SYS_openat, AT_FDCWD, path, O_RDONLY) != -1)
		return 4;
	if (syscall(SYS_nanosleep, &ts, NULL))
		return 5;
	if (uname(&u))
		return 6;
	printf("uname: %s\n", u.sysname);
	return 0;
}
