// SPDX-License-Identifier: GPL-2.0
/*
 * cma_fuzz: a seeded fuzzer for process_vm_readv(2) and process_vm_writev(2)
 * with a userspace reference model.
 *
 * Two "arenas" of FZ_PAGES pages each, framed by PROT_NONE guard pages: the
 * local one in this process, the remote one in a target that is forked once
 * and serves the whole run.  Every page of an arena has a kind: read-write
 * and filled, never touched (reads as zeros), read-only, PROT_NONE, or
 * unmapped.  A filled page holds a pattern that is a function of the address
 * and of the page's generation, and a shadow copy of each arena holds what it
 * must contain.  The layout of both arenas changes every so often.
 *
 * Each iteration draws random local and remote iovecs (valid, overlapping,
 * repeated, zero-length, in bad pages, outside the arenas, huge, with the top
 * bit set, more than IOV_MAX of them), random flags and a direction; the
 * model predicts the result and the exact bytes, the call is made, and the
 * pages the call could have changed and their neighbours are compared with
 * the shadow (both arenas in full every FZ_FULL_CHECK iterations).  Pages
 * written are then given a new generation, here directly and in the target
 * through /proc/PID/mem (which does not use the code under test).
 *
 * The model, in the kernel's order of checks:
 *   unknown flags: EINVAL;
 *   liovcnt > IOV_MAX: EINVAL; a local length > SSIZE_MAX: EINVAL;
 *   a local element that is not a valid user range (access_ok(), with the
 *   length capped at MAX_RW_COUNT first when it is the only element): EFAULT;
 *   a local total of zero: 0 (the total is capped at MAX_RW_COUNT);
 *   riovcnt > IOV_MAX: EINVAL; a remote length > SSIZE_MAX: EINVAL;
 *   a remote total of zero: 0; a bad pidfd: EBADF;
 *   then bytes move in iovec order, pairing the local and remote streams.
 * The transfer stops at the first remote page that cannot be accessed
 * (unmapped, PROT_NONE, read-only for writev): the count is exact.  It also
 * stops at a local byte that cannot be accessed; there the count may be lower
 * than the bytes before that byte, and destination bytes between the count
 * and that byte may hold their old or their new value.  No byte moved:
 * EFAULT.  PROCESS_VM_NOWAIT on resident or never touched anonymous memory
 * behaves as flags 0.
 *
 * Usage: cma_fuzz [--seed N] [--iterations N] [--seconds S] [--check-pins]
 *		   [--pin-slack N] [--no-shrink] [--verbose] [--mainline]
 *		   [--faults | --faults-all]
 * --mainline models mainline's truncation of liovcnt to an unsigned int, where
 * the man page and our kernel give EINVAL for any liovcnt above IOV_MAX.
 *
 * --faults: the kernel injects failures (failslab, fail_page_alloc,
 * fail_usercopy, set up through debugfs with the task filter by the caller).
 * Any call may then also fail early: accepted are the model's result, any
 * shorter count (the bytes reported moved must be exact, destination bytes
 * the model's transfer would have written past the count may be old or new),
 * and -1 with ENOMEM or EFAULT, except where the kernel decides before it
 * allocates or copies anything (unknown flags, liovcnt > IOV_MAX, liovcnt 0).
 * Bytes outside the requested ranges must not change, and --check-pins still
 * wants every pin released.  The fuzzer sets /proc/self/make-it-fail to 1
 * only around the calls under test, so that its own mmaps, forks and
 * /proc/PID/mem accesses are not failed; --faults-all leaves make-it-fail
 * as inherited.  Either way the fuzzer retries its own operations that fail.
 * Exit status: 0 pass, 1 mismatch, 4 (KSFT_SKIP) when it cannot run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	0x1UL
#endif
#ifndef PROCESS_VM_NOWAIT
#define PROCESS_VM_NOWAIT	0x2UL
#endif

#if defined(__x86_64__) && defined(__ILP32__)
#define FZ_NR(n)		(0x40000000 + (n))
#else
#define FZ_NR(n)		(n)
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open		FZ_NR(434)
#endif

#define FZ_IOV_MAX		1024	/* UIO_MAXIOV */
#define FZ_PAGES		48	/* pages in each arena, guards excluded */
#define FZ_GUARD		2	/* PROT_NONE pages on each side */
#define FZ_SPAN			(FZ_PAGES + 2 * FZ_GUARD)
#define FZ_FULL_CHECK		64	/* compare both arenas in full this often */
#define FZ_RELAYOUT		256	/* change the layouts this often */
#define FZ_SHRINK_TRIES		600
#define FZ_SHOW			24	/* elements shown of a long iovec */

enum fz_kind {
	FZ_RW,		/* read-write, filled */
	FZ_ZERO,	/* read-write, never touched (or reset to zeros) */
	FZ_RO,		/* read-only, filled */
	FZ_NONE,	/* PROT_NONE, filled before */
	FZ_HOLE,	/* unmapped */
};

static const char fz_kind_char[] = "wzrn.";

struct fz_arena {
	const char *name;	/* "L" or "R" */
	bool remote;
	uintptr_t base;		/* first page; guard pages on both sides */
	unsigned char kind[FZ_PAGES];
	unsigned int gen[FZ_PAGES];
	unsigned char dirty[FZ_PAGES];	/* written by the last call */
	unsigned char *shadow;	/* expected content */
	unsigned char *tol;	/* per byte: 1 alt[] allowed too, 2 anything */
	unsigned char *alt;
	unsigned char *buf;	/* what was read back from the target */
};

/* Shared with the target: the remote layout to apply. */
struct fz_mbox {
	unsigned char kind[FZ_PAGES];
	unsigned char redo[FZ_PAGES];
	unsigned int gen[FZ_PAGES];
	int ret;
};

struct fz_case {
	bool write;		/* process_vm_writev */
	unsigned long flags;
	int pidsel;		/* 0: pid, 1: pidfd, 2: a descriptor that is no pidfd */
	unsigned long ln, rn;
	bool lnull, rnull;	/* pass NULL for the arrays */
	struct iovec lv[FZ_IOV_MAX];
	struct iovec rv[FZ_IOV_MAX];
};

struct fz_chunk {
	uintptr_t dst, src;
	size_t len, off;	/* off: position in the transfer */
};

struct fz_expect {
	int err;		/* errno expected, or 0 */
	bool xfer;		/* bytes are to move (else the result is 0) */
	bool stop;		/* stopped by a fault before the end of either side */
	bool lfault;		/* stopped by a local fault: hi is an upper bound */
	bool exact;		/* decided before any allocation or user copy */
	size_t hi;		/* bytes the model moves */
	unsigned int nchunks;
	struct fz_chunk chunk[2 * FZ_IOV_MAX + 2];
};

struct fz_stats {
	unsigned long einval, efault, ebadf, zero, full, partial, lfault;
	unsigned long inj_enomem, inj_efault, inj_short;	/* --faults */
	unsigned long retries;	/* the fuzzer's own operations, --faults */
	unsigned long long bytes;
};

static size_t pg;
static size_t max_rw;			/* MAX_RW_COUNT */
static unsigned long long user_top;	/* last valid end of a local range */
static unsigned long flags_ok;		/* flags the kernel knows */
static struct fz_arena la = { .name = "L" }, ra = { .name = "R", .remote = true };
static struct fz_mbox *mb;
static pid_t tpid;
static int tcmd = -1, tack = -1, tmem = -1, tpidfd = -1;
static unsigned long long rng;
static unsigned int fz_gen_next = 1;
static struct fz_case fz_cur, fz_min, fz_try;
static struct fz_expect fz_exp;
static struct fz_stats st;
static char why[512];
static bool fz_infra;			/* why: the fuzzer's own operation failed */
static bool verbose;
static bool mainline;			/* model mainline's liovcnt truncation */
static bool faults;			/* --faults: failures are injected */
static int fz_mif = -1;			/* /proc/self/make-it-fail, with --faults */

/* ---- helpers ----------------------------------------------------------- */

static unsigned long long fz_rnd(void)
{
	unsigned long long z;

	rng += 0x9e3779b97f4a7c15ULL;
	z = rng;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t fz_below(size_t n)
{
	return n ? (size_t)(fz_rnd() % n) : 0;
}

static bool fz_pct(unsigned int pct)
{
	return fz_below(100) < pct;
}

static double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static ssize_t fz_rw(bool write, long pid, const struct iovec *lv, unsigned long ln,
		     const struct iovec *rv, unsigned long rn, unsigned long flags)
{
	return syscall(write ? __NR_process_vm_writev : __NR_process_vm_readv,
		       pid, lv, ln, rv, rn, flags);
}

/* Attempts for the fuzzer's own operations: more than one only with --faults. */
#define FZ_RETRIES		200

static int fz_tries(void)
{
	return faults ? FZ_RETRIES : 1;
}

/* Whether a failed operation of the fuzzer is to be tried again. */
static bool fz_again(int *tries)
{
	if (++*tries >= fz_tries())
		return false;
	st.retries++;
	if (*tries > 20)
		usleep(1000);
	return true;
}

/* With --faults, let failures be injected into this process or not. */
static void fz_inject(bool on)
{
	int tries = 0;

	if (fz_mif < 0)
		return;
	/* Writing make-it-fail copies from user memory: that can fail too. */
	while (write(fz_mif, on ? "1" : "0", 1) != 1 && fz_again(&tries))
		;
}

/* read() or write() of one byte on a pipe, retried with --faults. */
static int fz_pipe_byte(int fd, char *c, bool wr)
{
	int tries = 0;
	ssize_t r;

	for (;;) {
		r = wr ? write(fd, c, 1) : read(fd, c, 1);
		if (r == 1)
			return 0;
		if (r == 0 || !fz_again(&tries))
			return -1;
	}
}

/* The pattern of @len bytes at @addr for generation @gen; 0 gives zeros. */
static void fz_fill(unsigned char *p, size_t len, uintptr_t addr, unsigned int gen)
{
	unsigned int x = (unsigned int)addr * 0x9e3779b1u + gen * 0x85ebca77u;
	size_t i;

	if (!gen) {
		memset(p, 0, len);
		return;
	}
	for (i = 0; i < len; i++, x += 0x9e3779b1u)
		p[i] = x >> 24;
}

/* Give page @addr kind @kind, filled with generation @gen where it is filled. */
static int fz_setpage(uintptr_t addr, int kind, unsigned int gen)
{
	void *p = (void *)addr;
	int prot = PROT_READ | PROT_WRITE;

	if (kind == FZ_HOLE)
		return munmap(p, pg);
	if (mmap(p, pg, prot, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return -1;
	if (kind == FZ_ZERO)
		return 0;
	fz_fill(p, pg, addr, gen);
	if (kind == FZ_RO)
		prot = PROT_READ;
	else if (kind == FZ_NONE)
		prot = PROT_NONE;
	return prot == (PROT_READ | PROT_WRITE) ? 0 : mprotect(p, pg, prot);
}

/* fz_setpage(), retried with --faults: a new try redoes the page from scratch. */
static int fz_setpage_retry(uintptr_t addr, int kind, unsigned int gen)
{
	int tries = 0;

	while (fz_setpage(addr, kind, gen))
		if (!fz_again(&tries))
			return -1;
	return 0;
}

static void fz_shadow_page(struct fz_arena *a, unsigned int i)
{
	fz_fill(a->shadow + i * pg, pg, a->base + i * pg, a->kind[i] == FZ_ZERO ? 0 : a->gen[i]);
}

static bool fz_readable(const struct fz_arena *a, unsigned int i)
{
	return a->kind[i] == FZ_RW || a->kind[i] == FZ_ZERO || a->kind[i] == FZ_RO;
}

/* Whether the byte at @addr of @a can be read, or written if @wr. */
static bool fz_ok(const struct fz_arena *a, uintptr_t addr, bool wr)
{
	size_t i;

	if (addr < a->base || addr - a->base >= FZ_PAGES * pg)
		return false;
	i = (addr - a->base) / pg;
	return a->kind[i] == FZ_RW || a->kind[i] == FZ_ZERO || (a->kind[i] == FZ_RO && !wr);
}

/* How many of the @len bytes at @addr can be accessed, up to the first that cannot. */
static size_t fz_acc(const struct fz_arena *a, uintptr_t addr, size_t len, bool wr)
{
	size_t done = 0, step;

	while (done < len && fz_ok(a, addr, wr)) {
		step = ((addr | (pg - 1)) - addr) + 1;
		if (step > len - done)
			step = len - done;
		done += step;
		addr += step;
	}
	return done;
}

/* Whether [@base, @base + @len) passes access_ok(). */
static bool fz_user_range(uintptr_t base, size_t len)
{
	unsigned long long end = (unsigned long long)base + len;

	if (end < base)
		return false;
	return end <= user_top;
}

/* Whether @addr lies in the reservation of @a, guard pages included. */
static bool fz_in_span(const struct fz_arena *a, uintptr_t addr)
{
	return addr - (a->base - FZ_GUARD * pg) < FZ_SPAN * pg;
}

static void fz_addr_str(char *buf, size_t n, uintptr_t addr)
{
	const struct fz_arena *a = NULL;

	if (fz_in_span(&la, addr))
		a = &la;
	else if (fz_in_span(&ra, addr))
		a = &ra;
	if (a)
		snprintf(buf, n, "%s%+ld", a->name, (long)(addr - a->base));
	else
		snprintf(buf, n, "0x%llx", (unsigned long long)addr);
}

/* ---- the target -------------------------------------------------------- */

static void fz_target(int cmd, int ack, pid_t parent)
{
	unsigned int i;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	/* The local arena's addresses are unmapped in the target. */
	munmap((void *)(la.base - FZ_GUARD * pg), FZ_SPAN * pg);
	while (!fz_pipe_byte(cmd, &c, false) && c == 'L') {
		mb->ret = 0;
		for (i = 0; i < FZ_PAGES; i++) {
			if (!mb->redo[i])
				continue;
			if (fz_setpage_retry(ra.base + i * pg, mb->kind[i], mb->gen[i]))
				mb->ret = -1;
			mb->redo[i] = 0;
		}
		if (fz_pipe_byte(ack, &c, true))
			break;
	}
	_exit(0);
}

static int fz_target_start(void)
{
	int c[2], a[2], tries = 0;
	pid_t parent = getpid();

	for (;;) {
		mb = mmap(NULL, sizeof(*mb), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			  -1, 0);
		if (mb != MAP_FAILED)
			break;
		if (!fz_again(&tries))
			return -1;
	}
	while (pipe2(c, O_CLOEXEC))
		if (!fz_again(&tries))
			return -1;
	while (pipe2(a, O_CLOEXEC))
		if (!fz_again(&tries))
			return -1;
	fflush(stdout);
	fflush(stderr);
	while ((tpid = fork()) < 0)
		if (!fz_again(&tries))
			return -1;
	if (!tpid) {
		close(c[1]);
		close(a[0]);
		fz_target(c[0], a[1], parent);
	}
	close(c[0]);
	close(a[1]);
	tcmd = c[1];
	tack = a[0];
	return 0;
}

static void fz_target_stop(void)
{
	if (tpid <= 0)
		return;
	close(tcmd);
	close(tack);
	if (tmem >= 0)
		close(tmem);
	if (tpidfd >= 0)
		close(tpidfd);
	kill(tpid, SIGKILL);
	waitpid(tpid, NULL, 0);
	tpid = 0;
}

/* Apply the remote pages marked in mb->redo[]. */
static int fz_target_layout(void)
{
	char c = 'L';

	if (fz_pipe_byte(tcmd, &c, true) || fz_pipe_byte(tack, &c, false))
		return -1;
	return mb->ret;
}

/* ---- layouts ------------------------------------------------------------- */

static int fz_pick_kind(bool remote)
{
	static const unsigned char lw[] = { 76, 8, 6, 5, 5 };
	static const unsigned char rw[] = { 56, 14, 12, 9, 9 };
	const unsigned char *w = remote ? rw : lw;
	unsigned int r = fz_below(100), k;

	for (k = 0; k < FZ_HOLE; k++) {
		if (r < w[k])
			return k;
		r -= w[k];
	}
	return FZ_HOLE;
}

/* Set page @i of @a to @kind with a new generation (remote: in mb only). */
static int fz_set_kind(struct fz_arena *a, unsigned int i, int kind)
{
	a->kind[i] = kind;
	a->gen[i] = fz_gen_next++;
	fz_shadow_page(a, i);
	memset(a->tol + i * pg, 0, pg);
	a->dirty[i] = 0;
	if (!a->remote)
		return fz_setpage_retry(a->base + i * pg, kind, a->gen[i]);
	mb->kind[i] = kind;
	mb->gen[i] = a->gen[i];
	mb->redo[i] = 1;
	return 0;
}

/* Rebuild every page of both arenas, with the kinds they have. */
static int fz_rebuild(void)
{
	unsigned int i;

	for (i = 0; i < FZ_PAGES; i++)
		if (fz_set_kind(&la, i, la.kind[i]) || fz_set_kind(&ra, i, ra.kind[i]))
			return -1;
	return fz_target_layout();
}

/*
 * Change a few pages of each arena.  Remote pages that were never touched and
 * have been written since are made untouched again.
 */
static int fz_relayout(void)
{
	unsigned int n, i;

	for (n = 1 + fz_below(6); n; n--)
		if (fz_set_kind(&la, fz_below(FZ_PAGES), fz_pick_kind(false)))
			return -1;
	for (n = 1 + fz_below(8); n; n--)
		fz_set_kind(&ra, fz_below(FZ_PAGES), fz_pick_kind(true));
	for (i = 0; i < FZ_PAGES; i++)
		if (ra.kind[i] == FZ_ZERO && !mb->redo[i])
			fz_set_kind(&ra, i, FZ_ZERO);
	return fz_target_layout();
}

static int fz_arena_init(struct fz_arena *a)
{
	size_t len = FZ_PAGES * pg;
	int tries = 0;
	char *map;

	for (;;) {
		map = mmap(NULL, FZ_SPAN * pg, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map != MAP_FAILED)
			break;
		if (!fz_again(&tries))
			return -1;
	}
	a->base = (uintptr_t)map + FZ_GUARD * pg;
	for (;;) {
		if (!a->shadow)
			a->shadow = malloc(len);
		if (!a->tol)
			a->tol = calloc(len, 1);
		if (!a->alt)
			a->alt = calloc(len, 1);
		if (!a->buf)
			a->buf = malloc(len);
		if (a->shadow && a->tol && a->alt && a->buf)
			return 0;
		if (!fz_again(&tries))
			return -1;
	}
}

/* ---- reading and writing the target ------------------------------------ */

/*
 * Through /proc/PID/mem; with --faults a failed or short access is retried
 * from where it stopped.
 */
static int fz_tio(bool wr, uintptr_t addr, void *buf, size_t len)
{
	int tries = 0;
	ssize_t r;

	if (!faults) {
		r = wr ? pwrite64(tmem, buf, len, (off64_t)addr) :
			 pread64(tmem, buf, len, (off64_t)addr);
		return r == (ssize_t)len ? 0 : -1;
	}
	while (len) {
		r = wr ? pwrite64(tmem, buf, len, (off64_t)addr) :
			 pread64(tmem, buf, len, (off64_t)addr);
		if (r > 0) {
			addr += r;
			buf = (char *)buf + r;
			len -= r;
			continue;
		}
		if (!fz_again(&tries))
			return -1;
	}
	return 0;
}

static int fz_tread(uintptr_t addr, void *buf, size_t len)
{
	return fz_tio(false, addr, buf, len);
}

static int fz_twrite(uintptr_t addr, const void *buf, size_t len)
{
	return fz_tio(true, addr, (void *)buf, len);
}

/* ---- the model ------------------------------------------------------------ */

static void fz_model(const struct fz_case *c, struct fz_expect *e)
{
	static size_t llen[FZ_IOV_MAX];
	const struct fz_arena *lo = &la, *re = &ra;
	size_t total = 0, len, off = 0, loff = 0, roff = 0, n, lok, rok, m;
	unsigned long i, li, ri, ln = c->ln;

	memset(e, 0, offsetof(struct fz_expect, chunk));
	/* Decided before anything is allocated or copied from the caller. */
	e->exact = true;
	if (c->flags & ~flags_ok)
		goto einval;
	/* Mainline passes liovcnt to import_iovec() as an unsigned int. */
	if (mainline)
		ln = (unsigned int)ln;
	if (ln > FZ_IOV_MAX)
		goto einval;
	e->exact = !ln;
	if (ln && c->lnull)
		goto efault;
	for (i = 0; i < ln; i++)
		if (c->lv[i].iov_len > SSIZE_MAX)
			goto einval;
	for (i = 0; i < ln; i++) {
		len = c->lv[i].iov_len;
		/* A single element is capped before access_ok(), others after. */
		if (ln == 1 && len > max_rw)
			len = max_rw;
		if (!fz_user_range((uintptr_t)c->lv[i].iov_base, len))
			goto efault;
		if (len > max_rw - total)
			len = max_rw - total;
		total += len;
		llen[i] = len;
	}
	if (!total)
		return;
	if (c->rn > FZ_IOV_MAX)
		goto einval;
	if (c->rn && c->rnull)
		goto efault;
	total = 0;
	for (i = 0; i < c->rn; i++) {
		if (c->rv[i].iov_len > SSIZE_MAX)
			goto einval;
		total |= c->rv[i].iov_len;	/* only whether any is nonzero */
	}
	if (!total)
		return;
	if (c->pidsel == 2) {
		e->err = EBADF;
		return;
	}

	e->xfer = true;
	li = 0;
	ri = 0;
	while (li < ln && ri < c->rn) {
		uintptr_t la_ = (uintptr_t)c->lv[li].iov_base + loff;
		uintptr_t ra_ = (uintptr_t)c->rv[ri].iov_base + roff;

		if (loff == llen[li]) {
			li++;
			loff = 0;
			continue;
		}
		if (roff == c->rv[ri].iov_len) {
			ri++;
			roff = 0;
			continue;
		}
		n = llen[li] - loff;
		if (n > c->rv[ri].iov_len - roff)
			n = c->rv[ri].iov_len - roff;
		/* readv writes the local side, writev the remote one */
		lok = fz_acc(lo, la_, n, !c->write);
		rok = fz_acc(re, ra_, n, c->write);
		m = lok < rok ? lok : rok;
		if (m) {
			struct fz_chunk *ch = &e->chunk[e->nchunks++];

			ch->dst = c->write ? ra_ : la_;
			ch->src = c->write ? la_ : ra_;
			ch->len = m;
			ch->off = off;
			off += m;
		}
		if (m < n) {
			e->stop = true;
			e->lfault = lok < rok;
			break;
		}
		loff += n;
		roff += n;
	}
	e->hi = off;
	return;
einval:
	e->err = EINVAL;
	return;
efault:
	e->err = EFAULT;
}

/* Put the first @got bytes of the model's transfer into the shadow. */
static void fz_apply(const struct fz_expect *e, bool write, size_t got)
{
	struct fz_arena *d = write ? &ra : &la, *s = write ? &la : &ra;
	unsigned int k;
	size_t i, o, n;

	for (k = 0; k < e->nchunks; k++) {
		const struct fz_chunk *ch = &e->chunk[k];
		size_t dof = ch->dst - d->base, sof = ch->src - s->base;

		n = ch->off < got ? got - ch->off : 0;
		if (n > ch->len)
			n = ch->len;
		memcpy(d->shadow + dof, s->shadow + sof, n);
		/* Bytes past the count, before a local fault: old or new. */
		for (i = n; i < ch->len; i++) {
			o = dof + i;
			if (d->tol[o] && d->alt[o] != s->shadow[sof + i])
				d->tol[o] = 2;
			else if (!d->tol[o])
				d->tol[o] = 1;
			d->alt[o] = s->shadow[sof + i];
		}
		for (i = dof / pg; i <= (dof + ch->len - 1) / pg; i++)
			d->dirty[i] = 1;
	}
}

/* ---- checking --------------------------------------------------------------- */

/*
 * Compare pages [@p0, @p1) of @a with the shadow.  Tolerated differences are
 * taken into the shadow.  Returns 0, or -1 with the first difference in why.
 */
static int fz_compare(struct fz_arena *a, unsigned int p0, unsigned int p1)
{
	const unsigned char *have;
	size_t off = p0 * pg, len = (p1 - p0) * pg, i;

	if (!a->remote) {
		have = (const unsigned char *)a->base + off;
	} else {
		if (fz_tread(a->base + off, a->buf + off, len)) {
			fz_infra = true;
			snprintf(why, sizeof(why), "cannot read target pages %u-%u: %s", p0,
				 p1 - 1, strerror(errno));
			return -1;
		}
		have = a->buf + off;
	}
	if (!memcmp(have, a->shadow + off, len))
		return 0;
	for (i = 0; i < len; i++) {
		size_t o = off + i;

		if (have[i] == a->shadow[o])
			continue;
		if (a->tol[o] == 2 || (a->tol[o] == 1 && have[i] == a->alt[o])) {
			a->shadow[o] = have[i];
			continue;
		}
		snprintf(why, sizeof(why),
			 "%s byte %s+%zu (page %zu, kind '%c') is 0x%02x, model: 0x%02x%s",
			 a->remote ? "remote" : "local", a->name, o, o / pg,
			 fz_kind_char[a->kind[o / pg]], have[i], a->shadow[o],
			 a->tol[o] ? " (or the new value)" : "");
		return -1;
	}
	return 0;
}

/* Compare the readable pages of @a flagged in @want[]. */
static int fz_check(struct fz_arena *a, const unsigned char *want)
{
	unsigned int i = 0, j;

	while (i < FZ_PAGES) {
		if (!want[i] || !fz_readable(a, i)) {
			i++;
			continue;
		}
		for (j = i; j < FZ_PAGES && want[j] && fz_readable(a, j); j++)
			;
		if (fz_compare(a, i, j))
			return -1;
		i = j;
	}
	return 0;
}

/* Compare the dirty pages of @a and their neighbours, or all if @all. */
static int fz_check_dirty(struct fz_arena *a, bool all)
{
	unsigned char want[FZ_PAGES];
	unsigned int i;

	memset(want, all, sizeof(want));
	for (i = 0; i < FZ_PAGES; i++) {
		if (!a->dirty[i])
			continue;
		want[i] = 1;
		if (i)
			want[i - 1] = 1;
		if (i + 1 < FZ_PAGES)
			want[i + 1] = 1;
	}
	return fz_check(a, want);
}

/* Give the dirty pages of @a a new generation, in the shadow and in memory. */
static int fz_reset_dirty(struct fz_arena *a)
{
	unsigned int i = 0, j;

	while (i < FZ_PAGES) {
		if (!a->dirty[i]) {
			i++;
			continue;
		}
		for (j = i; j < FZ_PAGES && a->dirty[j]; j++) {
			a->dirty[j] = 0;
			a->gen[j] = fz_gen_next++;
			fz_shadow_page(a, j);
			memset(a->tol + j * pg, 0, pg);
		}
		if (!a->remote)
			memcpy((void *)(a->base + i * pg), a->shadow + i * pg, (j - i) * pg);
		else if (fz_twrite(a->base + i * pg, a->shadow + i * pg, (j - i) * pg))
			return -1;
		i = j;
	}
	return 0;
}

/* Count the outcome @got of a call that went as the model said. */
static void fz_count_outcome(const struct fz_expect *e, size_t got)
{
	if (e->err)
		st.einval += e->err == EINVAL;
	st.efault += e->err == EFAULT || (e->xfer && !got);
	st.ebadf += e->err == EBADF;
	st.zero += !e->err && !e->xfer;
	st.lfault += e->xfer && e->lfault;
	if (e->xfer && got && !e->lfault) {
		if (e->stop)
			st.partial++;
		else
			st.full++;
	}
}

/*
 * Run case @c and check the result and both arenas.  Returns 0 when all
 * matched the model, else 1 with the difference in why.
 */
static int fz_run_case(const struct fz_case *c, bool full)
{
	struct fz_expect *e = &fz_exp;
	struct fz_arena *d = c->write ? &ra : &la;
	long pid = c->pidsel == 0 ? tpid : c->pidsel == 1 ? tpidfd : tmem;
	bool inj = false;
	ssize_t ret;
	size_t got;
	int err, bad = 0;

	fz_model(c, e);
	fz_inject(true);
	errno = 0;
	ret = fz_rw(c->write, pid, c->lnull ? NULL : c->lv, c->ln, c->rnull ? NULL : c->rv,
		    c->rn, c->flags);
	err = ret < 0 ? errno : 0;
	fz_inject(false);
	got = ret > 0 ? (size_t)ret : 0;

	if (faults && !e->exact && ret == -1 && (err == ENOMEM || err == EFAULT)) {
		/* An allocation or a user copy failed before any byte moved. */
		inj = err != e->err && !(e->xfer && !e->hi && err == EFAULT);
		if (e->xfer)
			fz_apply(e, c->write, 0);
	} else if (e->err) {
		bad = ret != -1 || err != e->err;
	} else if (!e->xfer) {
		bad = ret != 0;
	} else {
		/* With --faults, any count up to the model's. */
		bad = ret == 0 || (ret < 0 && err != EFAULT) || got > e->hi ||
		      (!e->lfault && !faults && got != e->hi);
		if (!bad)
			fz_apply(e, c->write, got);
	}
	if (bad) {
		snprintf(why, sizeof(why), "returned %zd (errno %d %s), model: %s%zd%s", ret, err,
			 err ? strerror(err) : "", e->err ? "errno " : "",
			 e->err ? (ssize_t)e->err : e->xfer ? (ssize_t)e->hi : 0,
			 e->xfer && !e->lfault && !e->hi ? " bytes, that is EFAULT" :
			 e->lfault ? " bytes at most (local fault)" : e->xfer ? " bytes" : "");
		return 1;
	}

	if (inj) {
		st.inj_enomem += err == ENOMEM;
		st.inj_efault += err == EFAULT;
	} else if (faults && got && got < e->hi && !e->lfault) {
		st.inj_short++;
	} else {
		fz_count_outcome(e, got);
	}
	st.bytes += got;

	if (fz_check_dirty(d, full) || (full && fz_check_dirty(d == &la ? &ra : &la, true)))
		return 1;
	if (fz_reset_dirty(d)) {
		fz_infra = true;
		snprintf(why, sizeof(why), "cannot reset target pages: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/* ---- drawing a case ---------------------------------------------------------- */

static uintptr_t fz_weird_addr(const struct fz_arena *other)
{
	switch (fz_below(5)) {
	case 0:			/* the NULL page */
		return fz_below(pg);
	case 1:			/* the last page of the address space */
		return (uintptr_t)0 - pg + fz_below(pg);
	case 2:			/* the other side's arena: unmapped here */
		return other->base + fz_below(FZ_PAGES * pg);
	case 3:			/* just past the user address space, where there is one */
		if (user_top < UINTPTR_MAX)
			return (uintptr_t)user_top + 1 + fz_below(2 * pg);
		return fz_below(pg);
	default:		/* kernel space on 64-bit */
		if (sizeof(uintptr_t) == 8)
			return (uintptr_t)(0xffff800000000000ULL + fz_below(1 << 30));
		return (uintptr_t)0 - fz_below(pg);
	}
}

static size_t fz_huge_len(void)
{
	switch (fz_below(7)) {
	case 0:
		return SSIZE_MAX;
	case 1:
		return SSIZE_MAX - fz_below(2 * pg);
	case 2:			/* top bit set */
		return (size_t)SSIZE_MAX + 1 + fz_below(2 * pg);
	case 3:
		return SIZE_MAX - fz_below(2);
	case 4:
		return max_rw - pg + fz_below(3 * pg);
	case 5:
		return (size_t)1 << (16 + fz_below(14));
	default:
		return (size_t)1 << (sizeof(size_t) * 8 - 1 - fz_below(3));
	}
}

static size_t fz_len(bool small)
{
	unsigned int r = fz_below(100);

	if (small)
		return r < 5 ? 0 : 1 + fz_below(r < 70 ? 16 : 256);
	if (r < 4)
		return 0;
	if (r < 28)
		return 1 + fz_below(16);
	if (r < 62)
		return 1 + fz_below(pg);
	if (r < 88)
		return 1 + fz_below(4 * pg);
	return 1 + fz_below(FZ_PAGES * pg);
}

/*
 * An address in or around @a: pages -1 and FZ_PAGES are guards, and so is
 * the page on the far side of each of them (an overlapping element may
 * reach 64 bytes into it).
 */
static uintptr_t fz_arena_addr(const struct fz_arena *a)
{
	uintptr_t page = a->base + (fz_below(FZ_PAGES + 2) - 1) * pg;

	switch (fz_below(8)) {
	case 0:
		return page;
	case 1:
		return page + pg - 1 - fz_below(16);
	default:
		return page + fz_below(pg);
	}
}

/* An element of @a that can be accessed (read, or written if @wr) in full. */
static void fz_clean_elem(struct iovec *v, const struct fz_arena *a, bool wr, bool small)
{
	unsigned int tries, p;
	uintptr_t base, end;
	size_t len;

	for (tries = 0; tries < 8; tries++) {
		p = fz_below(FZ_PAGES);
		base = a->base + p * pg + fz_below(pg);
		if (!fz_ok(a, base, wr))
			continue;
		end = base + fz_acc(a, base, FZ_PAGES * pg, wr);
		len = fz_len(small);
		if (len > end - base)
			len = fz_below(end - base + 1);
		v->iov_base = (void *)base;
		v->iov_len = len;
		return;
	}
	v->iov_base = (void *)a->base;
	v->iov_len = 0;
}

/*
 * Draw @n elements on the side of @a.  @clean: only elements that can be
 * accessed in full (needs write access if @wr); @weird: percentage of
 * elements with odd addresses or lengths; @small: short lengths.
 */
static void fz_draw_side(struct iovec *v, unsigned long n, const struct fz_arena *a,
			 const struct fz_arena *other, bool wr, bool clean, unsigned int weird,
			 bool small)
{
	unsigned long i;
	unsigned int r;

	for (i = 0; i < n; i++) {
		r = fz_below(100);
		if (i && r < 6) {			/* repeated */
			v[i] = v[fz_below(i)];
		} else if (i && r < 14) {		/* overlapping a previous one */
			uintptr_t b = (uintptr_t)v[fz_below(i)].iov_base;

			if (!fz_in_span(a, b))
				b = fz_arena_addr(a);
			v[i].iov_base = (void *)(b + fz_below(129) - 64);
			v[i].iov_len = fz_len(true);
		} else if (r < 18) {			/* zero length, anywhere */
			v[i].iov_base = fz_pct(80) ? (void *)fz_arena_addr(a) :
				(void *)fz_weird_addr(other);
			v[i].iov_len = 0;
		} else if (clean) {
			fz_clean_elem(&v[i], a, wr, small);
		} else {
			v[i].iov_base = (void *)fz_arena_addr(a);
			v[i].iov_len = fz_len(small);
		}
		if (clean && fz_acc(a, (uintptr_t)v[i].iov_base, v[i].iov_len, wr) <
		    v[i].iov_len)
			fz_clean_elem(&v[i], a, wr, small);
		if (weird && fz_pct(weird)) {
			r = fz_below(100);
			if (r < 50)
				v[i].iov_len = fz_huge_len();
			else if (r < 85)
				v[i].iov_base = (void *)fz_weird_addr(other);
			else if (user_top < UINTPTR_MAX && (uintptr_t)v[i].iov_base <= user_top)
				/* ending around the end of the user address space */
				v[i].iov_len = user_top - (uintptr_t)v[i].iov_base +
					       fz_below(3) - 1;
		}
	}
}

static unsigned long fz_count(void)
{
	unsigned int r = fz_below(1000);

	if (r < 12)
		return 0;
	if (r < 300)
		return 1;
	if (r < 600)
		return 2 + fz_below(3);
	if (r < 850)
		return 5 + fz_below(12);
	if (r < 945)
		return 17 + fz_below(112);
	if (r < 992)
		return 129 + fz_below(FZ_IOV_MAX - 128);
	switch (fz_below(5)) {
	case 0:
		return FZ_IOV_MAX + 1;
	case 4:			/* wraps to a small unsigned int */
		if (sizeof(long) > 4)
			return (unsigned long)(0x100000000ULL + fz_below(3));
		return FZ_IOV_MAX + 1;
	case 1:
		return FZ_IOV_MAX + 1 + fz_below(8192);
	case 2:
		return ULONG_MAX;
	default:
		return ULONG_MAX / 2 + 1;
	}
}

static unsigned long fz_draw_flags(struct fz_case *c)
{
	unsigned int r = fz_below(100);
	unsigned long f;

	c->pidsel = 0;
	if (r < 80)
		return 0;
	if (r < 90)
		return PROCESS_VM_NOWAIT;
	if (r < 95) {
		f = PROCESS_VM_PIDFD | (fz_pct(50) ? PROCESS_VM_NOWAIT : 0);
		if (flags_ok & PROCESS_VM_PIDFD)
			c->pidsel = fz_pct(85) ? 1 : 2;
		return f;
	}
	if (fz_pct(10))
		return ~0UL;
	f = 1UL << (2 + fz_below(sizeof(long) * 8 - 2));
	return f | (fz_rnd() & 3);
}

static void fz_draw(struct fz_case *c)
{
	bool weird = fz_pct(4), lclean = fz_pct(88), lsmall, rsmall;
	unsigned long ln, rn;

	c->write = fz_pct(50);
	c->flags = fz_draw_flags(c);
	c->ln = fz_count();
	c->rn = fz_count();
	c->lnull = fz_pct(1);
	c->rnull = fz_pct(1);
	ln = c->ln > FZ_IOV_MAX ? FZ_IOV_MAX : c->ln;
	rn = c->rn > FZ_IOV_MAX ? FZ_IOV_MAX : c->rn;
	lsmall = ln > 64 || (rn > 64 && fz_pct(50));
	rsmall = rn > 64 || (ln > 64 && fz_pct(50));
	fz_draw_side(c->lv, ln, &la, &ra, !c->write, lclean, weird ? 10 : 0, lsmall);
	fz_draw_side(c->rv, rn, &ra, &la, c->write, false, weird ? 10 : 0, rsmall);
	/* Now and then one large remote element over much of the arena. */
	if (rn && fz_pct(2)) {
		c->rv[0].iov_base = (void *)(ra.base + fz_below(4) * pg + fz_below(pg));
		c->rv[0].iov_len = (FZ_PAGES - 4) * pg + fz_below(4 * pg);
	}
}

/* ---- reporting and shrinking ----------------------------------------------- */

static void fz_print_side(const char *side, const struct iovec *v, unsigned long n, bool all)
{
	unsigned long i, shown = n > FZ_IOV_MAX ? FZ_IOV_MAX : n;
	char addr[48];

	if (!all && shown > FZ_SHOW)
		shown = FZ_SHOW;
	for (i = 0; i < shown; i++) {
		fz_addr_str(addr, sizeof(addr), (uintptr_t)v[i].iov_base);
		ksft_print_msg("  %s[%lu] = { %s, %zu (0x%zx) }\n", side, i, addr, v[i].iov_len,
			       v[i].iov_len);
	}
	if (shown < n && n <= FZ_IOV_MAX)
		ksft_print_msg("  ... %lu more\n", n - shown);
}

static void fz_print_layout(const struct fz_arena *a)
{
	char s[FZ_PAGES + 1];
	unsigned int i;

	for (i = 0; i < FZ_PAGES; i++)
		s[i] = fz_kind_char[a->kind[i]];
	s[FZ_PAGES] = 0;
	ksft_print_msg("  %s = 0x%llx, pages (w rw, z untouched, r ro, n none, . hole): |%s|\n",
		       a->name, (unsigned long long)a->base, s);
}

static void fz_print_case(const struct fz_case *c)
{
	static const char * const pids[] = { "pid", "pidfd", "not a pidfd" };

	ksft_print_msg("  %s, flags 0x%lx, %s, liovcnt %lu%s, riovcnt %lu%s, page %zu\n",
		       c->write ? "process_vm_writev" : "process_vm_readv", c->flags,
		       pids[c->pidsel], c->ln, c->lnull ? " (lvec NULL)" : "", c->rn,
		       c->rnull ? " (rvec NULL)" : "", pg);
	fz_print_side("local", c->lv, c->ln, verbose);
	fz_print_side("remote", c->rv, c->rn, verbose);
	fz_print_layout(&la);
	fz_print_layout(&ra);
}

static void fz_drop(struct iovec *v, unsigned long *n, unsigned long i)
{
	memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
	(*n)--;
}

/* Whether @c, run from freshly rebuilt arenas, still fails. */
static bool fz_fails(const struct fz_case *c)
{
	if (fz_rebuild())
		return false;
	return fz_run_case(c, true) != 0;
}

/* Remove elements and flags from the failing case @c while it keeps failing. */
static void fz_shrink(struct fz_case *c)
{
	unsigned int tries = 0, side;
	bool progress = true;
	unsigned long i, *n;

	while (progress && tries < FZ_SHRINK_TRIES) {
		progress = false;
		for (side = 0; side < 2; side++) {
			n = side ? &c->rn : &c->ln;
			if (*n > FZ_IOV_MAX)
				continue;
			for (i = *n; i-- > 0 && tries < FZ_SHRINK_TRIES; tries++) {
				fz_try = *c;
				if (side)
					fz_drop(fz_try.rv, &fz_try.rn, i);
				else
					fz_drop(fz_try.lv, &fz_try.ln, i);
				if (!fz_fails(&fz_try))
					continue;
				*c = fz_try;
				progress = true;
			}
		}
		if (c->flags && tries < FZ_SHRINK_TRIES) {
			fz_try = *c;
			fz_try.flags = 0;
			fz_try.pidsel = 0;
			tries++;
			if (fz_fails(&fz_try)) {
				*c = fz_try;
				progress = true;
			}
		}
	}
}

/* ---- pin balance ----------------------------------------------------------- */

static int fz_read_pins(long long *acq, long long *rel, bool *refreshed)
{
	int tries = 0;

	while (cma_read_pins(acq, rel, refreshed))
		if (!fz_again(&tries))
			return -1;
	return 0;
}

/* ---- main ------------------------------------------------------------------- */

static void fz_usage(const char *prog)
{
	printf("Usage: %s [--seed N] [--iterations N] [--seconds S] [--check-pins]\n"
	       "          [--pin-slack N] [--no-shrink] [--verbose] [--mainline]\n"
	       "          [--faults | --faults-all]\n"
	       "Defaults: a seed from the clock, 100000 iterations, at most 120 seconds.\n"
	       "--mainline: expect liovcnt to be truncated to 32 bits, as mainline does\n"
	       "(the man page and our kernel: EINVAL for liovcnt > IOV_MAX).\n"
	       "--faults: the kernel injects allocation and user copy failures (enabled\n"
	       "by the caller in debugfs, with task-filter): accept early ENOMEM/EFAULT\n"
	       "and short counts; make-it-fail is set only around the calls under test.\n"
	       "--faults-all: the same, but leave make-it-fail as inherited.\n",
	       prog);
}

/*
 * Whether local iovecs @v pass access_ok().  With failures injected here
 * (--faults-all) a failure is asked again: an injected one does not repeat
 * every time.
 */
static bool fz_probe(const struct iovec *v)
{
	int tries = faults && fz_mif < 0 ? 12 : 1;

	while (tries--)
		if (!fz_rw(false, getpid(), v, 2, NULL, 0, 0))
			return true;
	return false;
}

/*
 * --faults: have failures injected only into the calls under test.  The
 * caller may have set make-it-fail already, so writing it can fail at first.
 */
static void fz_faults_narrow(void)
{
	int tries = 0;

	while ((fz_mif = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC)) < 0 &&
	       errno != ENOENT && fz_again(&tries))
		;
	fz_inject(false);
}

/* The highest end of a local range that passes access_ok(), found by asking. */
static unsigned long long fz_probe_top(void)
{
	struct iovec v[2] = { { (void *)la.base, 0 }, { (void *)la.base, 0 } };
	size_t lo = 0, hi = SSIZE_MAX, mid;

	v[0].iov_len = SSIZE_MAX;
	if (fz_probe(v))
		return ULLONG_MAX;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		v[0].iov_len = mid;
		if (!fz_probe(v))
			hi = mid;
		else
			lo = mid;
	}
	return (unsigned long long)la.base + lo;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 't' },
		{ "check-pins", no_argument, NULL, 'p' },
		{ "pin-slack", required_argument, NULL, 'k' },
		{ "no-shrink", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "mainline", no_argument, NULL, 'm' },
		{ "faults", no_argument, NULL, 'f' },
		{ "faults-all", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long long seed = 0, iters = 100000, it;
	long long acq0 = 0, rel0 = 0, acq1 = 0, rel1 = 0, slack = 0, diff;
	bool have_seed = false, pins = false, shrink = true, faults_all = false, ref0, ref1;
	double secs = 120, t0, el;
	char path[64];
	unsigned int i;
	int opt, tries = 0;

	while ((opt = getopt_long(argc, argv, "s:i:t:pk:nvmfFh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 'i':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'p':
			pins = true;
			break;
		case 'k':
			slack = strtoll(optarg, NULL, 0);
			break;
		case 'n':
			shrink = false;
			break;
		case 'v':
			verbose = true;
			break;
		case 'm':
			mainline = true;
			break;
		case 'f':
			faults = true;
			break;
		case 'F':
			faults = true;
			faults_all = true;
			break;
		case 'h':
			fz_usage(argv[0]);
			return 0;
		default:
			fz_usage(argv[0]);
			return 2;
		}
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((unsigned long long)ts.tv_sec * 1000003ULL ^ ts.tv_nsec ^
			(unsigned long long)getpid() << 20) % 1000000000000ULL;
	}
	rng = seed;
	if (faults && !faults_all)
		fz_faults_narrow();

	ksft_print_header();
	ksft_set_plan(1);
	ksft_print_msg("cma_fuzz: seed %llu (replay: --seed %llu), up to %llu iterations, %g s\n",
		       seed, seed, iters, secs);
	if (faults)
		ksft_print_msg("fault injection mode: %s\n",
			       fz_mif >= 0 ? "make-it-fail set around the calls under test" :
			       faults_all ? "make-it-fail as inherited" :
			       "no /proc/self/make-it-fail: failures only if injected for all tasks");

	pg = (size_t)sysconf(_SC_PAGESIZE);
	max_rw = INT_MAX & ~(pg - 1);
	if (fz_rw(false, getpid(), NULL, 0, NULL, 0, 0))
		ksft_exit_skip("process_vm_readv: %s\n", strerror(errno));
	if (fz_rw(false, 0, NULL, 0, NULL, 0, PROCESS_VM_PIDFD) == 0)
		flags_ok |= PROCESS_VM_PIDFD;
	if (fz_rw(false, 0, NULL, 0, NULL, 0, PROCESS_VM_NOWAIT) == 0)
		flags_ok |= PROCESS_VM_NOWAIT;
	ksft_print_msg("flags known to the kernel: 0x%lx\n", flags_ok);
	if (sizeof(long) > 4 &&
	    !fz_rw(false, getpid(), NULL, (unsigned long)(1ULL << 32), NULL, 0, 0))
		ksft_print_msg("the kernel truncates liovcnt to 32 bits%s\n",
			       mainline ? "" : " (expect a mismatch; --mainline models it)");

	if (pins && fz_read_pins(&acq0, &rel0, &ref0))
		ksft_exit_skip("--check-pins: no nr_foll_pin_* in /proc/vmstat\n");

	if (fz_arena_init(&la) || fz_arena_init(&ra))
		ksft_exit_skip("cannot map the arenas: %s\n", strerror(errno));
	user_top = fz_probe_top();
	ksft_print_msg("local ranges end at or below 0x%llx (access_ok)\n", user_top);
	for (i = 0; i < FZ_PAGES; i++) {
		la.kind[i] = fz_pick_kind(false);
		ra.kind[i] = fz_pick_kind(true);
	}
	if (fz_target_start())
		ksft_exit_skip("cannot start the target: %s\n", strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/mem", tpid);
	while ((tmem = open(path, O_RDWR | O_CLOEXEC)) < 0 && fz_again(&tries))
		;
	if (tmem < 0) {
		fz_target_stop();
		ksft_exit_skip("cannot open %s: %s\n", path, strerror(errno));
	}
	if (flags_ok & PROCESS_VM_PIDFD) {
		while ((tpidfd = syscall(__NR_pidfd_open, tpid, 0)) < 0 && fz_again(&tries))
			;
		if (tpidfd < 0)
			flags_ok &= ~PROCESS_VM_PIDFD;
	}
	if (fz_rebuild() || fz_check_dirty(&ra, true)) {
		fz_target_stop();
		ksft_exit_skip("cannot set up the target's arena (%s)\n", why);
	}

	t0 = fz_now();
	for (it = 0; it < iters; it++) {
		if ((it & 255) == 0 && it && secs > 0 && fz_now() - t0 >= secs)
			break;
		if (it && it % FZ_RELAYOUT == 0 && fz_relayout()) {
			snprintf(why, sizeof(why), "cannot change the layout: %s", strerror(errno));
			goto fail_infra;
		}
		fz_draw(&fz_cur);
		if (fz_run_case(&fz_cur, (it + 1) % FZ_FULL_CHECK == 0))
			goto mismatch;
	}
	if (fz_check_dirty(&la, true) || fz_check_dirty(&ra, true)) {
		fz_cur.ln = 0;
		fz_cur.rn = 0;
		goto mismatch;
	}
	el = fz_now() - t0;
	fz_target_stop();

	ksft_print_msg("%llu iterations in %.1f s (%.0f/s), seed %llu\n", it, el,
		       el > 0 ? it / el : 0.0, seed);
	ksft_print_msg("outcomes: EINVAL %lu, EFAULT %lu, EBADF %lu, 0 %lu\n", st.einval,
		       st.efault, st.ebadf, st.zero);
	ksft_print_msg("transfers: full %lu, partial %lu, local fault %lu; %llu bytes moved\n",
		       st.full, st.partial, st.lfault, st.bytes);
	if (faults) {
		ksft_print_msg("failed early (injected): ENOMEM %lu, EFAULT %lu; cut short %lu\n",
			       st.inj_enomem, st.inj_efault, st.inj_short);
		ksft_print_msg("the fuzzer's own operations retried: %lu\n", st.retries);
		if (!st.inj_enomem && !st.inj_efault && !st.inj_short)
			ksft_print_msg("no injected failure seen: is fault injection enabled?\n");
	}
	if (pins) {
		if (fz_read_pins(&acq1, &rel1, &ref1))
			ksft_exit_skip("--check-pins: /proc/vmstat unreadable\n");
		if (!ref0 || !ref1)
			ksft_print_msg("vm/stat_refresh not writable: counters may lag\n");
		diff = (acq1 - rel1) - (acq0 - rel0);
		ksft_print_msg("pins during the run: %lld acquired, %lld released\n",
			       acq1 - acq0, rel1 - rel0);
		ksft_print_msg("pins outstanding: %+lld (slack %lld)\n", diff, slack);
		if (diff > slack || diff < -slack) {
			ksft_test_result_fail("cma_fuzz: pins leaked (seed %llu)\n", seed);
			ksft_exit_fail();
		}
	}
	ksft_test_result_pass("cma_fuzz: %llu iterations, seed %llu\n", it, seed);
	ksft_exit_pass();

mismatch:
	if (fz_infra) {
		ksft_print_msg("the fuzzer failed, not the kernel under test:\n");
		goto fail_infra;
	}
	ksft_print_msg("MISMATCH: seed %llu, iteration %llu\n", seed, it);
	ksft_print_msg("replay: --seed %llu --iterations %llu\n", seed, it + 1);
	ksft_print_msg("  %s\n", why);
	fz_print_case(&fz_cur);
	if (shrink && (fz_cur.ln || fz_cur.rn)) {
		fz_min = fz_cur;
		fz_shrink(&fz_min);
		if (fz_fails(&fz_min)) {
			ksft_print_msg("smallest failing case found, run from fresh arenas:\n");
			ksft_print_msg("  %s\n", why);
			fz_print_case(&fz_min);
		} else {
			ksft_print_msg("the case does not fail again from fresh arenas\n");
		}
	}
	goto out_fail;
fail_infra:
	ksft_print_msg("%s\n", why);
out_fail:
	fz_target_stop();
	ksft_test_result_fail("cma_fuzz: seed %llu, iteration %llu\n", seed, it);
	ksft_exit_fail();
}
