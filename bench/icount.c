// SPDX-License-Identifier: GPL-2.0
/*
 * cma-icount: the guest side of vm/icount.sh.
 *
 * Makes the calls whose instructions vm/icount.sh counts from outside the
 * VM (QEMU's gdb stub, one instruction at a time).  For every cell, in
 * the order given (sizes, then readv before writev), it calls A and then
 * B, ROUNDS times each (default 4): A first in even rounds, B first in
 * odd ones.  The script traces the last two rounds; the earlier ones bring
 * the pages and their LRU state to where repeated calls keep them.  The
 * order matters: every second touch of a page that is not yet active
 * asks for its activation, so with A always first, B would always pay.
 * The target is a child with its own buffers, as in cma-ab.  Every call
 * must move the whole size, or the program fails.
 *
 * usage: cma-icount -a R,W -b R,W -s SIZE[,SIZE...] [-r ROUNDS]
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE	15
#endif

#define MAX_SIZES	16

static void die(const char *msg)
{
	perror(msg);
	exit(1);
}

static void parse_pair(const char *s, long nr[2])
{
	if (sscanf(s, "%ld,%ld", &nr[0], &nr[1]) != 2) {
		fprintf(stderr, "cma-icount: want R,W syscall numbers: %s\n", s);
		exit(2);
	}
}

static size_t parse_size(const char *s)
{
	char *end;
	size_t v = strtoul(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	return v;
}

static char *map(size_t size, int fill)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, size, MADV_NOHUGEPAGE);
	memset(p, fill, size);
	return p;
}

int main(int argc, char **argv)
{
	long a[2] = { 310, 311 }, b[2] = { 470, 471 };
	size_t sizes[MAX_SIZES], max = 0;
	unsigned int nsizes = 0, rounds = 4, i, r, w;
	char *remote, *local, *tok;
	int p[2], opt;
	pid_t pid;

	while ((opt = getopt(argc, argv, "a:b:s:r:")) != -1) {
		switch (opt) {
		case 'a':
			parse_pair(optarg, a);
			break;
		case 'b':
			parse_pair(optarg, b);
			break;
		case 's':
			for (tok = strtok(optarg, ","); tok && nsizes < MAX_SIZES;
			     tok = strtok(NULL, ","))
				sizes[nsizes++] = parse_size(tok);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: cma-icount -a R,W -b R,W -s SIZE[,SIZE...] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (!nsizes || !rounds)
		return 2;
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > max)
			max = sizes[i];

	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		/* The target: its own buffer, then wait to be killed. */
		remote = map(max, 3);
		if (write(p[1], &remote, sizeof(remote)) != sizeof(remote))
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(p[0], &remote, sizeof(remote)) != sizeof(remote))
		die("read");
	local = map(max, 2);

	for (i = 0; i < nsizes; i++) {
		for (w = 0; w < 2; w++) {
			struct iovec l = { local, sizes[i] };
			struct iovec rv = { remote, sizes[i] };

			for (r = 0; r < rounds; r++) {
				long ra, rb;

				/* A first in even rounds, B first in odd ones */
				if (r & 1) {
					rb = syscall(b[w], pid, &l, 1, &rv, 1, 0);
					ra = syscall(a[w], pid, &l, 1, &rv, 1, 0);
				} else {
					ra = syscall(a[w], pid, &l, 1, &rv, 1, 0);
					rb = syscall(b[w], pid, &l, 1, &rv, 1, 0);
				}

				if (ra != (long)sizes[i] || rb != (long)sizes[i]) {
					fprintf(stderr, "cma-icount: %s %zu: A %ld B %ld\n",
						w ? "writev" : "readv", sizes[i], ra, rb);
					kill(pid, SIGKILL);
					return 1;
				}
			}
			printf("cma-icount: %s %zu done\n", w ? "writev" : "readv",
			       sizes[i]);
		}
	}
	kill(pid, SIGKILL);
	return 0;
}
