// SPDX-License-Identifier: GPL-2.0
/*
 * selfread: a process reads its own memory with process_vm_readv(), one
 * contiguous element of SIZE on 4 KiB pages, COUNT calls timed together.
 * Timing many calls at once keeps the cost of reading the clock out of the
 * figure: under User-Mode Linux every clock read and every system call is
 * trapped with ptrace, so per-call timestamps (as cmabench's call_us) carry
 * tens of microseconds of noise.  The data is checked after the loop.
 *
 *   selfread [-k KIB] [-n COUNT] [-r RUNS]   (defaults 16384, 60, 3)
 *
 * Prints one line per run: "selfread KIB COUNT GB/s us-per-call".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE	15
#endif

static char *region(size_t len, int fill)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("selfread: mmap");
		exit(1);
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, fill, len);
	return p;
}

int main(int argc, char **argv)
{
	size_t kib = 16384, len, i;
	int count = 60, runs = 3, opt, r;

	while ((opt = getopt(argc, argv, "k:n:r:")) != -1) {
		switch (opt) {
		case 'k': kib = strtoul(optarg, NULL, 0); break;
		case 'n': count = atoi(optarg); break;
		case 'r': runs = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: selfread [-k KIB] [-n COUNT] [-r RUNS]\n");
			return 2;
		}
	}
	if (!kib || count < 1 || runs < 1) {
		fprintf(stderr, "selfread: bad arguments\n");
		return 2;
	}
	len = kib << 10;
	char *src = region(len, 0), *dst = region(len, 0);

	for (i = 0; i < len; i++)
		src[i] = (char)(i * 131 + 7);
	for (r = 0; r < runs; r++) {
		struct iovec l = { dst, len }, rv = { src, len };
		struct timespec a, b;
		double s;
		int c;

		memset(dst, 0, len);
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (c = 0; c < count; c++) {
			if (process_vm_readv(getpid(), &l, 1, &rv, 1, 0) != (ssize_t)len) {
				perror("selfread: process_vm_readv");
				return 1;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (memcmp(src, dst, len)) {
			fprintf(stderr, "selfread: data mismatch\n");
			return 1;
		}
		s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		printf("selfread %zu %d %.3f %.1f\n", kib, count, (double)len * count / s / 1e9,
		       s / count * 1e6);
	}
	return 0;
}
