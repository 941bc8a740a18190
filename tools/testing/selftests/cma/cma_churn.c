// SPDX-License-Identifier: GPL-2.0
/*
 * cma_churn: readers and writers hammer a target whose address space keeps
 * changing under them, for a fixed time.
 *
 * Targets come one after the other.  Each maps a region of huge-page
 * aligned memory (MADV_HUGEPAGE), fills it with a pattern that is a function
 * of the address, and then churns until its time is up: munmap and map
 * again, mprotect, mremap away and back, MADV_DONTNEED (whole and part of
 * huge pages), mprotect of half a huge page (splits it), MADV_COLLAPSE,
 * fork (a child that writes its copy and exits).  Then it exits, execs (the
 * new image maps the region again, zero filled, and exits soon) or is killed.
 *
 * Reader and writer threads call process_vm_readv/writev on the current
 * target with random iovecs in the region.  The target fills it with one
 * pattern, writers store another (both functions of the address, never
 * zero), and the target marks each page it is about to change (a sequence
 * count, odd while it changes the page) and each page it may leave zero.
 * So every byte a reader gets must be one of the two patterns, or zero on
 * a page marked so; and a writer reads back what it wrote: on pages the
 * target left alone meanwhile, every byte must be the writers' pattern.
 * A result must be a count from 1 to the total asked, or -1 with EFAULT
 * or ESRCH; a short count stops at a remote page boundary or between
 * elements.  A target is reaped only once no thread may still use its
 * pid, so a pid is never reused under a thread.  At the end every child must have been
 * reaped; --check-pins compares nr_foll_pin_acquired and _released in
 * /proc/vmstat before and after (when nothing else pins pages).
 *
 * Usage: cma_churn [--seconds S] [--readers N] [--writers N] [--check-pins]
 * Defaults: 2 seconds, 2 readers, 2 writers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "cma_pins.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

#define CH_HUGE			(2UL << 20)	/* PMD size on x86 */
#define CH_REGION		(4 * CH_HUGE)
#define CH_MAX_WORKERS		16
#define CH_MAX_IOV		16
#define CH_MAX_LEN		(256UL << 10)	/* bytes per call, at most */
#define CH_LIFE_MS		150		/* a target's churn time, at most */
#define CH_PAGES		(CH_REGION / 4096)	/* pages of the region, at most */

/* Shared between this process, its threads and the targets (MAP_SHARED). */
struct ch_shared {
	int ready;		/* the current target has filled its region */
	int execing;		/* the current target is about to exec */
	unsigned int seq[CH_PAGES];	/* changes of each page: odd while one runs */
	unsigned char zap[CH_PAGES];	/* the page may hold zeros */
};

struct ch_worker {
	pthread_t th;
	int id;
	bool write;
	unsigned long long seed;
	unsigned long ops, bytes, shorts, efault, esrch, checked;
	int failed;		/* 0, or the line that failed */
	char why[200];
};

struct ch_stats {
	unsigned long targets, exits, execs, kills;
};

static size_t pg;
static char *region;		/* CH_REGION bytes, CH_HUGE aligned */
static char *spare;		/* CH_HUGE bytes where mremap moves things to */
static struct ch_shared *sh;
static struct ch_worker workers[CH_MAX_WORKERS];
static int nworkers;
static double deadline;
/* The run's length: counted from the first target that is ready. */
static double run_secs;

/* The target in use: its pid and generation, and what each worker is using. */
static pid_t cur_pid;
static unsigned long cur_gen;
static unsigned long busy[CH_MAX_WORKERS];

static double ch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long long ch_rnd(unsigned long long *s)
{
	unsigned long long z;

	*s += 0x9e3779b97f4a7c15ULL;
	z = *s;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t ch_below(unsigned long long *s, size_t n)
{
	return n ? (size_t)(ch_rnd(s) % n) : 0;
}

/* The pattern byte at @addr: never zero. */
static unsigned char ch_pat(unsigned long addr)
{
	return (unsigned char)((((unsigned int)addr * 0x9e3779b1u) >> 24) | 1);
}

/* The writers' pattern: never zero, and never the target's. */
static unsigned char ch_pat2(unsigned long addr)
{
	return ch_pat(addr) ^ 0x80;
}

static size_t ch_page_of(unsigned long addr)
{
	return (addr - (unsigned long)region) / pg;
}

/*
 * The target is about to change [@p, @p + @len) (@zero: it may leave zeros
 * there), or is done with it: called before and after, the pages' sequence
 * counts are odd while the change runs.
 */
static void ch_mark(char *p, size_t len, bool zero)
{
	size_t i, last = ch_page_of((unsigned long)p + len - 1);

	for (i = ch_page_of((unsigned long)p); i <= last && i < CH_PAGES; i++) {
		if (zero)
			__atomic_store_n(&sh->zap[i], 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&sh->seq[i], 1, __ATOMIC_SEQ_CST);
	}
}

static void ch_fill(char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = ch_pat((unsigned long)(p + i));
}

/* ---- the target ---------------------------------------------------------- */

/* Map @len bytes at @p afresh, huge-page advised; @fill: with the pattern. */
static void ch_map(char *p, size_t len, bool fill)
{
	if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED)
		return;
	madvise(p, len, MADV_HUGEPAGE);
	if (fill)
		ch_fill(p, len);
}

static void ch_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* One change of the region; the region is whole again when it returns. */
static void ch_churn_once(unsigned long long *s)
{
	size_t huge = ch_below(s, CH_REGION / CH_HUGE);
	char *h = region + huge * CH_HUGE;
	size_t off = ch_below(s, CH_HUGE / pg) * pg;
	size_t len = (1 + ch_below(s, 64)) * pg;
	pid_t child;

	if (off + len > CH_HUGE)
		len = CH_HUGE - off;
	switch (ch_below(s, 10)) {
	case 0:		/* split: mprotect half a huge page */
		mprotect(h, CH_HUGE / 2, PROT_READ);
		ch_sleep_us(ch_below(s, 200));
		mprotect(h, CH_HUGE / 2, PROT_READ | PROT_WRITE);
		break;
	case 1:		/* part of a huge page dropped */
		ch_mark(h + off, len, true);
		madvise(h + off, len, MADV_DONTNEED);
		ch_mark(h + off, len, false);
		break;
	case 2:		/* a whole huge page dropped, then touched again */
		ch_mark(h, CH_HUGE, true);
		madvise(h, CH_HUGE, MADV_DONTNEED);
		ch_fill(h + off, len);
		ch_mark(h, CH_HUGE, false);
		break;
	case 3:		/* unmapped for a while, then mapped again */
		ch_mark(h + off, len, true);
		munmap(h + off, len);
		ch_sleep_us(ch_below(s, 200));
		ch_map(h + off, len, ch_below(s, 2));
		ch_mark(h + off, len, false);
		break;
	case 4:		/* PROT_NONE for a while */
		mprotect(h + off, len, PROT_NONE);
		ch_sleep_us(ch_below(s, 200));
		mprotect(h + off, len, PROT_READ | PROT_WRITE);
		break;
	case 5:		/* moved away and back; not huge-page aligned half the time */
		if (ch_below(s, 2)) {
			off = 0;
			len = CH_HUGE;
		}
		ch_mark(h + off, len, false);
		if (mremap(h + off, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, spare) !=
		    MAP_FAILED) {
			ch_sleep_us(ch_below(s, 200));
			if (mremap(spare, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, h + off) ==
			    MAP_FAILED)
				ch_map(h + off, len, true);
			mmap(spare, CH_HUGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			     MAP_FIXED | MAP_NORESERVE, -1, 0);
		}
		ch_mark(h + off, len, false);
		break;
	case 6:		/* shrunk in place, the tail mapped again */
		ch_mark(h + CH_HUGE / 2, CH_HUGE / 2, true);
		if (mremap(h, CH_HUGE, CH_HUGE / 2, 0) != MAP_FAILED)
			ch_map(h + CH_HUGE / 2, CH_HUGE / 2, ch_below(s, 2));
		ch_mark(h + CH_HUGE / 2, CH_HUGE / 2, false);
		break;
	case 7:		/* collapsed into a huge page (khugepaged does it too) */
		madvise(h, CH_HUGE, MADV_COLLAPSE);
		break;
	case 8:		/* fork: the child writes its copy of the region, exits */
		child = fork();
		if (child == 0) {
			memset(h + off, 0x5a, len);
			ch_sleep_us(ch_below(s, 500));
			_exit(0);
		}
		break;
	default:	/* touched: faults pages in again */
		ch_mark(h + off, len, false);
		ch_fill(h + off, len);
		ch_mark(h + off, len, false);
		break;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void ch_target(unsigned long long seed, const char *self)
{
	unsigned long long s = seed;
	char arg[2][32];
	double until;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	ch_map(region, CH_REGION, true);
	/* The churn time counts from here: filling may be slow on a busy host. */
	until = ch_now() + (5 + ch_below(&s, CH_LIFE_MS)) / 1000.0;
	__atomic_store_n(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (ch_now() < until)
		ch_churn_once(&s);
	while (waitpid(-1, NULL, 0) > 0)
		;
	if (self && ch_below(&s, 3) == 0) {
		__atomic_store_n(&sh->execing, 1, __ATOMIC_SEQ_CST);
		snprintf(arg[0], sizeof(arg[0]), "%lu", (unsigned long)region);
		snprintf(arg[1], sizeof(arg[1]), "%llu", ch_rnd(&s));
		execl(self, self, "--exec-child", arg[0], arg[1], (char *)NULL);
	}
	_exit(0);
}

/* The image a target execs: maps the region again, zero filled, exits soon. */
static int ch_exec_child(const char *addr, const char *seed)
{
	unsigned long long s = strtoull(seed, NULL, 0);
	char *p = (char *)strtoul(addr, NULL, 0);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (mmap(p, CH_REGION, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == p) {
		madvise(p, CH_REGION, MADV_HUGEPAGE);
		memset(p, 0, CH_REGION / 2);
	}
	ch_sleep_us(1000 + ch_below(&s, 20000));
	return 0;
}

/* ---- readers and writers ------------------------------------------------- */

/* Record a worker's failure; it stops, and no longer holds its target. */
static void *ch_fail(struct ch_worker *w, int line, const char *fmt, long a, long b)
{
	__atomic_store_n(&busy[w->id], 0, __ATOMIC_SEQ_CST);
	w->failed = line;
	snprintf(w->why, sizeof(w->why), fmt, a, b);
	return NULL;
}

/* Take the current target: its pid, with busy[] set, or 0. */
static pid_t ch_take(struct ch_worker *w, unsigned long *gen)
{
	pid_t pid = __atomic_load_n(&cur_pid, __ATOMIC_SEQ_CST);

	*gen = __atomic_load_n(&cur_gen, __ATOMIC_SEQ_CST);
	if (!pid)
		return 0;
	__atomic_store_n(&busy[w->id], *gen, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cur_gen, __ATOMIC_SEQ_CST) != *gen ||
	    __atomic_load_n(&cur_pid, __ATOMIC_SEQ_CST) != pid) {
		__atomic_store_n(&busy[w->id], 0, __ATOMIC_SEQ_CST);
		return 0;
	}
	return pid;
}

/*
 * The remote address at which a transfer of the elements @rv stopped after
 * @n bytes, or 0 if it stopped between two elements (anywhere is fine).
 */
static unsigned long ch_stop_addr(const struct iovec *rv, unsigned int rn, size_t n)
{
	unsigned int i;

	for (i = 0; i < rn && n >= rv[i].iov_len; i++)
		n -= rv[i].iov_len;
	return i < rn && n ? (unsigned long)rv[i].iov_base + n : 0;
}

/*
 * Check the first @n bytes of @buf, read from @rv: each must be the
 * target's pattern or the writers', or zero on a page the target may
 * have zeroed.  With @seq0, the sequence counts from before the writes:
 * on a page that nothing changed since (even and equal now), each byte
 * must be the writers' pattern.  Returns the number of bytes so checked,
 * or -1 with @w failed.
 */
static int ch_check(struct ch_worker *w, const unsigned char *buf, const struct iovec *rv,
		    unsigned int rn, size_t n, const unsigned int *seq0)
{
	size_t i, done = 0, k;
	long strict = 0;

	for (i = 0; i < rn && done < n; i++) {
		for (k = 0; k < rv[i].iov_len && done < n; k++, done++) {
			unsigned long a = (unsigned long)rv[i].iov_base + k;
			size_t pi = ch_page_of(a);
			unsigned char b = buf[done];

			if (seq0 && !(seq0[pi] & 1) &&
			    __atomic_load_n(&sh->seq[pi], __ATOMIC_SEQ_CST) == seq0[pi]) {
				if (b == ch_pat2(a)) {
					strict++;
					continue;
				}
				ch_fail(w, __LINE__, "written byte at region+%ld reads 0x%lx",
					a - (unsigned long)region, b);
				return -1;
			}
			if (b == ch_pat(a) || b == ch_pat2(a) ||
			    (!b && __atomic_load_n(&sh->zap[pi], __ATOMIC_SEQ_CST)))
				continue;
			ch_fail(w, __LINE__, "read byte at region+%ld is 0x%lx",
				a - (unsigned long)region, b);
			return -1;
		}
	}
	return strict;
}

/* A writer's copy of the sequence counts, taken before it writes. */
static __thread unsigned int seq0[CH_PAGES];

static void *ch_worker_run(void *arg)
{
	struct ch_worker *w = arg;
	struct iovec lv[CH_MAX_IOV], rv[CH_MAX_IOV], rb;
	unsigned char *buf = malloc(CH_MAX_LEN), *back = malloc(CH_MAX_LEN);
	unsigned long gen, stop;
	long good;
	size_t total, i, done, n, len;
	unsigned int ln, rn;
	ssize_t ret;
	pid_t pid;

	if (!buf || !back)
		return ch_fail(w, __LINE__, "out of memory", 0, 0);
	while (ch_now() < deadline) {
		pid = ch_take(w, &gen);
		if (!pid) {
			sched_yield();
			continue;
		}
		rn = 1 + ch_below(&w->seed, CH_MAX_IOV);
		total = 0;
		for (i = 0; i < rn; i++) {
			len = 1 + ch_below(&w->seed, ch_below(&w->seed, 4) ? 4 * pg :
						       CH_MAX_LEN / CH_MAX_IOV);
			rv[i].iov_base = region + ch_below(&w->seed, CH_REGION - len + 1);
			rv[i].iov_len = len;
			total += len;
		}
		/* The local side: the same bytes, in up to CH_MAX_IOV pieces. */
		ln = 0;
		for (done = 0; done < total; done += n) {
			n = total - done;
			if (ln < CH_MAX_IOV - 1 && ch_below(&w->seed, 2))
				n = 1 + ch_below(&w->seed, n);
			lv[ln].iov_base = buf + done;
			lv[ln++].iov_len = n;
		}
		if (w->write) {
			/* The writers' pattern, in transfer order. */
			for (i = 0, done = 0; i < rn; i++) {
				for (n = 0; n < rv[i].iov_len; n++)
					buf[done + n] = ch_pat2((unsigned long)rv[i].iov_base + n);
				done += n;
			}
			if (__atomic_load_n(&sh->execing, __ATOMIC_SEQ_CST))
				goto next;
			for (i = 0; i < CH_PAGES; i++)
				seq0[i] = __atomic_load_n(&sh->seq[i], __ATOMIC_SEQ_CST);
		} else {
			memset(buf, 0xee, total);
		}
		ret = syscall(w->write ? __NR_process_vm_writev : __NR_process_vm_readv,
			      pid, lv, ln, rv, rn, 0UL);
		if (ret < 0) {
			if (errno == EFAULT)
				w->efault++;
			else if (errno == ESRCH)
				w->esrch++;
			else
				return ch_fail(w, __LINE__, "returned %ld, errno %ld", ret, errno);
			goto next;
		}
		/* No byte moved is an error, never a count of 0. */
		if (!ret || (size_t)ret > total)
			return ch_fail(w, __LINE__, "returned %ld, asked for %ld", ret, total);
		stop = (size_t)ret < total ? ch_stop_addr(rv, rn, ret) : 0;
		if (stop % pg)
			return ch_fail(w, __LINE__, "short count %ld ends in a page (region+%ld)",
				       ret, stop - (unsigned long)region);
		w->ops++;
		w->bytes += ret;
		w->shorts += (size_t)ret < total;
		if (__atomic_load_n(&sh->execing, __ATOMIC_SEQ_CST))
			goto next;
		if (!w->write) {
			if (ch_check(w, buf, rv, rn, ret, NULL) < 0)
				return NULL;
			goto next;
		}
		/* Read back what was written (one element at a time, in order). */
		for (i = 0, done = 0; i < rn && done < (size_t)ret; i++, done += n) {
			n = rv[i].iov_len < ret - done ? rv[i].iov_len : ret - done;
			rb.iov_base = back + done;
			rb.iov_len = n;
			rv[i].iov_len = n;
			if (syscall(__NR_process_vm_readv, pid, &rb, 1UL, &rv[i], 1UL, 0UL) !=
			    (ssize_t)n)
				break;
		}
		if (__atomic_load_n(&sh->execing, __ATOMIC_SEQ_CST))
			goto next;
		good = ch_check(w, back, rv, i, done, seq0);
		if (good < 0)
			return NULL;
		w->checked += good;
next:
		__atomic_store_n(&busy[w->id], 0, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&busy[w->id], 0, __ATOMIC_SEQ_CST);
	free(buf);
	free(back);
	return NULL;
}

/* ---- the driver ----------------------------------------------------------- */

/* Retire target @pid of generation @gen: once no worker uses it, reap it. */
static void ch_retire(pid_t pid, unsigned long gen)
{
	int i;

	__atomic_store_n(&cur_pid, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&cur_gen, gen + 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < nworkers; i++)
		while (__atomic_load_n(&busy[i], __ATOMIC_SEQ_CST) == gen)
			sched_yield();
	waitpid(pid, NULL, 0);
}

/* Whether @pid has exited (it is not reaped). */
static bool ch_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT))
		return true;
	return si.si_pid == pid;
}

static void ch_run_targets(unsigned long long *s, const char *self, struct ch_stats *st)
{
	unsigned long gen = 0;
	double t, kill_at;
	bool first = true;
	pid_t pid;

	while (ch_now() < deadline) {
		gen += 2;	/* odd values: no target; busy[] 0: idle */
		sh->ready = 0;
		sh->execing = 0;
		/* No worker uses the region now: a new target starts unchanged. */
		memset(sh->seq, 0, sizeof(sh->seq));
		memset(sh->zap, 0, sizeof(sh->zap));
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			ch_sleep_us(1000);
			continue;
		}
		if (!pid)
			ch_target(ch_rnd(s), self);
		st->targets++;
		t = ch_now();
		/*
		 * Workers get a target only once it has filled its region: a
		 * debug kernel under emulation may take many seconds, and a
		 * target published before then reads as zeros.
		 */
		while (!__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) && !ch_exited(pid) &&
		       ch_now() < t + 120)
			ch_sleep_us(100);
		if (!__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST)) {
			kill(pid, SIGKILL);
			ch_retire(pid, gen);
			continue;
		}
		/*
		 * A slow machine (a debug kernel under emulation) may take
		 * seconds to start the first target: the run's time counts
		 * from then, so that it always has time to transfer.
		 */
		if (first) {
			double end = ch_now() + run_secs;

			__atomic_store(&deadline, &end, __ATOMIC_SEQ_CST);
			first = false;
		}
		__atomic_store_n(&cur_gen, gen, __ATOMIC_SEQ_CST);
		__atomic_store_n(&cur_pid, pid, __ATOMIC_SEQ_CST);
		/* A fifth of the targets are killed in the middle of their life. */
		kill_at = ch_below(s, 5) ? t + 10 :
			  t + (5 + ch_below(s, CH_LIFE_MS)) / 1000.0;
		while (!ch_exited(pid)) {
			if (ch_now() >= kill_at) {
				kill(pid, SIGKILL);
				st->kills++;
				kill_at = t + 1e9;
			}
			ch_sleep_us(500);
		}
		if (sh->execing)
			st->execs++;
		else
			st->exits++;
		ch_retire(pid, gen);
	}
}

static int ch_read_pins(long long *acq, long long *rel)
{
	bool refreshed;
	int ret = cma_read_pins(acq, rel, &refreshed);

	if (!refreshed)
		ksft_print_msg("vm/stat_refresh could not be written\n");
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 't' },
		{ "readers", required_argument, NULL, 'r' },
		{ "writers", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 's' },
		{ "check-pins", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long long seed = 0, s;
	long long acq0 = 0, rel0 = 0, acq1 = 0, rel1 = 0;
	int opt, readers = 2, writers = 2, i, bad = 0;
	unsigned long ops = 0, shorts = 0, efault = 0, esrch = 0, checked = 0;
	unsigned long long bytes = 0;
	struct ch_stats st = { 0 };
	double secs = 2;
	bool pins = false;
	char *map, *self;
	pid_t left;

	if (argc == 4 && !strcmp(argv[1], "--exec-child"))
		return ch_exec_child(argv[2], argv[3]);
	while ((opt = getopt_long(argc, argv, "t:r:w:s:p", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			secs = atof(optarg);
			break;
		case 'r':
			readers = atoi(optarg);
			break;
		case 'w':
			writers = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			pins = true;
			break;
		default:
			printf("Usage: %s [--seconds S] [--readers N] [--writers N] [--seed N]\n"
			       "          [--check-pins]\n", argv[0]);
			return 2;
		}
	}
	if (readers < 0 || writers < 0 || readers + writers > CH_MAX_WORKERS ||
	    readers + writers < 1) {
		printf("1 to %d readers and writers in all\n", CH_MAX_WORKERS);
		return 2;
	}
	if (!seed)
		seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16);
	s = seed;

	ksft_print_header();
	ksft_set_plan(1);
	ksft_print_msg("cma_churn: %g s, %d readers, %d writers, seed %llu\n", secs, readers,
		       writers, seed);
	pg = (size_t)sysconf(_SC_PAGESIZE);
	if (syscall(__NR_process_vm_readv, getpid(), NULL, 0UL, NULL, 0UL, 0UL))
		ksft_exit_skip("process_vm_readv: %s\n", strerror(errno));
	if (pins && ch_read_pins(&acq0, &rel0))
		ksft_exit_skip("--check-pins: no nr_foll_pin_* in /proc/vmstat\n");

	/* Reserve the region and the spare area, huge-page aligned. */
	map = mmap(NULL, CH_REGION + 2 * CH_HUGE, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || sh == MAP_FAILED)
		ksft_exit_skip("mmap: %s\n", strerror(errno));
	region = (char *)(((unsigned long)map + CH_HUGE - 1) & ~(CH_HUGE - 1));
	spare = region + CH_REGION;
	self = realpath("/proc/self/exe", NULL);
	if (self && access(self, X_OK))
		self = NULL;
	/* Orphaned grandchildren come to us, to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	nworkers = readers + writers;
	run_secs = secs;
	/* Until the first target is ready (ch_run_targets() sets it again). */
	deadline = ch_now() + secs + 5;
	for (i = 0; i < nworkers; i++) {
		workers[i].id = i;
		workers[i].write = i >= readers;
		workers[i].seed = seed * 31 + i;
		if (pthread_create(&workers[i].th, NULL, ch_worker_run, &workers[i]))
			ksft_exit_fail_msg("pthread_create failed\n");
	}
	ch_run_targets(&s, self, &st);
	for (i = 0; i < nworkers; i++)
		pthread_join(workers[i].th, NULL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	left = waitpid(-1, NULL, WNOHANG);

	for (i = 0; i < nworkers; i++) {
		struct ch_worker *w = &workers[i];

		ksft_print_msg("%s %d: %lu calls, %lu short, errors %lu/%lu, %lu bytes verified\n",
			       w->write ? "writer" : "reader", i, w->ops, w->shorts,
			       w->efault, w->esrch, w->checked);
		if (w->failed) {
			ksft_print_msg("%s %d failed at line %d: %s\n",
				       w->write ? "writer" : "reader", i, w->failed, w->why);
			bad = 1;
		}
		ops += w->ops;
		shorts += w->shorts;
		efault += w->efault;
		esrch += w->esrch;
		checked += w->checked;
		bytes += w->bytes;
	}
	ksft_print_msg("targets %lu: %lu exited, %lu exec'd, %lu killed\n", st.targets,
		       st.exits, st.execs, st.kills);
	ksft_print_msg("calls %lu (%lu short), %llu bytes; EFAULT %lu, ESRCH %lu\n",
		       ops, shorts, bytes, efault, esrch);
	ksft_print_msg("writers' bytes read back where nothing else changed them: %lu\n",
		       checked);
	if (left != -1 || errno != ECHILD) {
		ksft_print_msg("children left unreaped\n");
		bad = 1;
	}
	if (pins) {
		if (ch_read_pins(&acq1, &rel1))
			ksft_exit_fail_msg("/proc/vmstat unreadable\n");
		ksft_print_msg("pins during the run: %lld acquired, %lld released\n",
			       acq1 - acq0, rel1 - rel0);
		if ((acq1 - rel1) != (acq0 - rel0)) {
			ksft_print_msg("pins outstanding: %+lld\n", (acq1 - rel1) - (acq0 - rel0));
			bad = 1;
		}
	}
	if (!ops) {
		ksft_print_msg("no transfer was made\n");
		bad = 1;
	}
	if (bad) {
		ksft_test_result_fail("cma_churn: seed %llu\n", seed);
		ksft_exit_fail();
	}
	ksft_test_result_pass("cma_churn: %lu calls on %lu targets, seed %llu\n", ops, st.targets,
			      seed);
	ksft_exit_pass();
}
