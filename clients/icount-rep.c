// SPDX-License-Identifier: GPL-2.0
/*
 * clients/icount-rep.c: how QEMU's -icount clock counts a rep-prefixed
 * string copy.  Run in a VM booted with -icount shift=0,sleep=off, where
 * the guest's clock advances 1 ns per guest instruction:
 *
 *   gcc -O2 -o build/bin/icount-rep clients/icount-rep.c
 *   VM_QEMU_ARGS="-icount shift=0,sleep=off" vm/run --hostfs --smp 1 -- \
 *       "$PWD/build/bin/icount-rep"
 *
 * It times (CLOCK_MONOTONIC) a loop of a known number of instructions,
 * then `rep movsb` and `rep movsq` copies of several sizes, and prints
 * guest ns per loop instruction, per byte (movsb) and per 8-byte word
 * (movsq).  If each iteration of a rep copy counts as one instruction,
 * all three come out near 1; if the whole copy counted once, the copy
 * figures would be near 0.  Natively the figures are just time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* n iterations of two instructions (dec, jnz) */
static void spin(uint64_t n)
{
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

static void movsb(void *d, const void *s, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static void movsq(void *d, const void *s, size_t n)
{
	__asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

/* the smallest of 3 timings, to leave out a timer interrupt or two */
#define BEST(expr) ({							\
	double best_ = 1e30;						\
	for (int r_ = 0; r_ < 3; r_++) {				\
		double t0_ = now_ns();					\
		expr;							\
		double t_ = now_ns() - t0_;				\
		if (t_ < best_)						\
			best_ = t_;					\
	}								\
	best_; })

int main(void)
{
	static const size_t sizes[] = { 1 << 20, 4 << 20, 16 << 20 };
	const size_t max = 16 << 20;
	char *s = malloc(max), *d = malloc(max);
	uint64_t loops = 10000000;

	if (!s || !d) {
		perror("malloc");
		return 1;
	}
	memset(s, 1, max);	/* fault both buffers in before timing */
	memset(d, 2, max);
	printf("ICOUNT-REP loop insns=%llu ns_per_insn=%.4f\n",
	       (unsigned long long)(2 * loops),
	       BEST(spin(loops)) / (2.0 * loops));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		double b = BEST(movsb(d, s, n));
		double q = BEST(movsq(d, s, n / 8));

		if (memcmp(d, s, n)) {
			fprintf(stderr, "icount-rep: copy of %zu bytes wrong\n", n);
			return 1;
		}
		printf("ICOUNT-REP bytes=%zu movsb_ns_per_byte=%.4f movsq_ns_per_word=%.4f\n",
		       n, b / n, q / (n / 8));
	}
	return 0;
}
