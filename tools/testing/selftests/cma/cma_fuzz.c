// SPDX-License-Identifier: GPL-2.0
/*
 * cma_fuzz: a seeded fuzzer for process_vm_readv(2) and process_vm_writev(2)
 * with a userspace reference model.
 *
 * Three "arenas" of --pages pages each (48 by default), framed by PROT_NONE
 * guard pages: the local one (L) in this process, the remote one (R) in a
 * target that is forked once and serves the whole run, and a third (S) in
 * this process, for cases where the caller is its own target.  Every page of
 * an arena has a kind: read-write and filled, never touched (reads as zeros),
 * read-only, PROT_NONE, or unmapped; and a memory that backs it: private
 * anonymous, MAP_SHARED or MAP_PRIVATE of a regular file, a memfd, shared
 * anonymous, or a 2 MiB block of anonymous memory with MADV_HUGEPAGE (THP,
 * where the arena has such blocks; half of them get pages mapped over).
 * A filled page holds a pattern that is a function of the address and of the
 * page's generation, and a shadow copy of each arena holds what it must
 * contain.  The layout of the arenas changes every so often.
 *
 * Each iteration draws random local and remote iovecs (valid, overlapping,
 * repeated, zero-length, in bad pages, outside the arenas, huge, with the top
 * bit set, more than IOV_MAX of them), random flags and a direction; one case
 * in ten targets the caller itself (pid == getpid(), the remote iovecs in S,
 * or in L itself: see fz_overlap_ok() for what the model can say there).  The
 * model predicts the result and the exact bytes, the call is made, and the
 * pages the call could have changed, the pages every element names (read
 * side too: every byte outside the transfer must be unchanged) and their
 * neighbours are compared with the shadow; where a readv names more than 64
 * pages of the target, those are left to the full compare.  All arenas are
 * compared in full before each change of layout, at the end, and every 64
 * iterations (every 64 per 256 pages of arena), and so are the files under
 * MAP_PRIVATE pages, which must keep what was written to them.  Pages written
 * are then given a new generation, here directly and in the target through
 * /proc/PID/mem (which does not use the code under test).
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
 * stops at the first local byte that cannot be accessed, and there too the
 * count is exact: every byte before it moved (x86's user copies stop at the
 * faulting byte, and the calls report what they copied).  No byte moved:
 * EFAULT, and only then.  Only failures injected with --faults may stop a
 * transfer earlier; destination bytes between such a count and the model's
 * may hold their old or their new value.  PROCESS_VM_NOWAIT on resident or
 * never touched anonymous memory behaves as flags 0.
 *
 * Usage: cma_fuzz [--seed N] [--iterations N] [--seconds S] [--check-pins]
 *		   [--pin-slack N] [--no-shrink] [--verbose] [--mainline]
 *		   [--faults | --faults-all] [--pages N] [--shapes]
 * --pages N: pages per arena, 8 to 4096 (default 48; with --shapes 2048).
 * With 4 KiB pages and 512 pages or more, an arena starts on a 2 MiB
 * boundary and about a third of its 2 MiB blocks start as THP blocks.
 *
 * --shapes aims at the kernel's choice of remote pages to pin per lock hold
 * (a window of later elements' pages, up to 64 pages behind or ahead of the
 * current page; its limits are listed above fz_windows(), which counts the
 * cases that reach each).  Three cases in four then get a structured remote
 * vector of up to IOV_MAX elements of 1 byte to a few pages (or of 64 pages),
 * the rest are drawn as above:
 *   stride, reverse: a constant stride (sub-page, 1 or 2 pages, a page or two
 *     and a little, many pages, just under a page multiple), up or down;
 *   jitter: a stride with random jitter;
 *   sparse: every k-th page (k 1-4) of a range of up to 700 pages, each
 *     visited in turn in a shuffled order (a gather when the range is small);
 *   alternate: between two areas 2 to 2000 pages apart (15-17 and 63-65
 *     among them), ahead or behind, standing or walking;
 *   mix: a walk of near steps and random far jumps;
 *   run: small elements back to back (or with small gaps) over 256 to 1024
 *     pages, 63-65 among them: windows up to and past 64 pages;
 *   excursion: a near run with blocks of 31-34 (or 1-64) elements far ahead,
 *     inside the map or behind it;
 *   behind: blocks of elements going down, or up with each block starting 1
 *     to 200 pages behind where the last one ended (look-behind);
 *   edge: runs of elements 1-4 pages apart, dense enough for one window, to
 *     63 pages behind or ahead of the first, then one 0-2 pages past that
 *     (the largest window, the farthest look-behind, one page too many);
 *     or elements of 64 pages, less or plus a page or a byte;
 *   scatter: 7-9 or 15-17 elements each 64 pages from the last (windows of
 *     one element each), then a group of near ones (one window for them).
 * Shapes are placed at random in the arena (now and then just over one of its
 * ends, into the guard pages), wrapped around it when larger; one case in
 * seven chains two or three shapes; a few get zero-length elements or one
 * odd element.  The local side is mostly a few elements that can take all the
 * bytes (or fewer, so that it ends first), else a shape too, or drawn as
 * above.  The layouts keep long runs of good pages: only a few bad ones,
 * half of them made good again at each change.  Nearly half of the cases make
 * 1-3 remote pages bad for that case only (PROT_NONE, unmapped, read-only, or
 * untouched so not present): pages that an element touches, or any page
 * between the lowest and the highest element, often one that no element
 * touches (a window must not fail on those).  The model is the same.
 *
 * --mainline models mainline's truncation of liovcnt to an unsigned int, where
 * the man page and our kernel give EINVAL for any liovcnt above IOV_MAX.
 * Without it the kernel must know PROCESS_VM_PIDFD and PROCESS_VM_NOWAIT,
 * as ours does; with it a kernel that rejects a flag is modelled as such.
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
#define FZ_PAGES		48	/* pages in each arena, guards excluded: default */
#define FZ_PAGES_SHAPES		2048	/* the default with --shapes */
#define FZ_PAGES_MAX		4096
#define FZ_GUARD		2	/* PROT_NONE pages on each side */
#define FZ_SPAN			(fz_pages + 2 * FZ_GUARD)
#define FZ_FULL_CHECK		64	/* compare both arenas in full this often... */
#define FZ_FULL_PAGES		256	/* ...per this many pages of arena (or fewer) */
#define FZ_RELAYOUT		256	/* change the layouts this often */
#define FZ_SHRINK_TRIES		600
#define FZ_SHOW			24	/* elements shown of a long iovec */
#define FZ_ROW			64	/* pages shown per line of a layout */
#define FZ_READ_BACK		64	/* target pages read back after a readv, at most */
#define FZ_THP_BYTES		(2UL << 20)	/* a THP block, with 4 KiB pages */

enum fz_kind {
	FZ_RW,		/* read-write, filled */
	FZ_ZERO,	/* read-write, never touched (or reset to zeros) */
	FZ_RO,		/* read-only, filled */
	FZ_NONE,	/* PROT_NONE, filled before */
	FZ_HOLE,	/* unmapped */
};

static const char fz_kind_char[] = "wzrn.";

/*
 * What memory backs a page: private anonymous; MAP_SHARED or MAP_PRIVATE of
 * a regular file (O_TMPFILE in $TMPDIR or /tmp: tmpfs in the VM, the host's
 * disk natively); MAP_SHARED of a memfd (shmem); MAP_SHARED|MAP_ANONYMOUS
 * (shmem too); or private anonymous in a 2 MiB block with MADV_HUGEPAGE (THP).
 * The file and the memfd are the arena's own, page i at offset i pages.  A
 * MAP_PRIVATE file page is written through the file and only read through
 * the mapping, so that reads come from the page cache and writes COW: the
 * file must keep what it had.  An untouched page of a file or memfd is a
 * hole punched in it.
 */
enum fz_back {
	FZ_B_ANON,
	FZ_B_FSHARED,
	FZ_B_FPRIV,
	FZ_B_MEMFD,
	FZ_B_SHANON,
	FZ_B_THP,
	FZ_B_NR
};

static const char fz_back_char[] = "afpmst";

/*
 * The kernel pins a window of remote pages per lock hold, chosen by looking
 * ahead at later remote elements; these shapes are where such logic is weak.
 */
enum fz_shape {
	FZ_SH_STRIDE,		/* a constant stride, upwards */
	FZ_SH_REVERSE,		/* a constant stride, downwards */
	FZ_SH_JITTER,		/* a stride with random jitter */
	FZ_SH_SPARSE,		/* a shuffled set of pages over a range */
	FZ_SH_ALTERNATE,	/* between two areas, near or far apart */
	FZ_SH_MIX,		/* near and far steps at random */
	FZ_SH_RUN,		/* small elements back to back over up to 1024 pages */
	FZ_SH_EXCURSION,	/* a run with blocks of far elements in it */
	FZ_SH_BEHIND,		/* blocks, each starting behind where the last one was */
	FZ_SH_EDGE,		/* pairs at the window's limits: 64 pages apart, +-1 page */
	FZ_SH_SCATTER,		/* 64 pages apart in turn, then a dense group */
	FZ_SH_NR
};

static const char * const fz_shape_name[] = {
	"stride", "reverse", "jitter", "sparse", "alternate", "mix", "run", "excursion",
	"behind", "edge", "scatter",
};

struct fz_arena {
	const char *name;	/* "L", "R" or "S" */
	bool remote;
	uintptr_t base;		/* first page; guard pages on both sides */
	int ffd, mfd;		/* its regular file and its memfd */
	unsigned char *kind;
	unsigned char *back;	/* enum fz_back */
	unsigned int *fgen;	/* FZ_B_FPRIV: the generation its file page holds */
	unsigned char *want;	/* pages to compare after this case */
	unsigned int *gen;
	unsigned char *dirty;	/* written by the last call */
	unsigned char *shadow;	/* expected content */
	unsigned char *tol;	/* per byte: 1 alt[] allowed too, 2 anything */
	unsigned char *alt;
	unsigned char *buf;	/* what was read back from the target */
};

/* Shared with the target: the remote layout to apply (arrays of fz_pages). */
struct fz_mbox {
	unsigned int *gen;
	unsigned char *kind;
	unsigned char *back;
	unsigned char *redo;	/* 1: the page, 2: a THP block from here */
	int ret;
};

struct fz_case {
	bool write;		/* process_vm_writev */
	unsigned long flags;
	int pidsel;		/* 0: pid, 1: pidfd, 2: a descriptor that is no pidfd */
	unsigned long ln, rn;
	bool lnull, rnull;	/* pass NULL for the arrays */
	int self;		/* the caller is the target: 1 remote in S, 2 in L */
	char lshape[128], rshape[128];	/* --shapes: how the vectors were drawn */
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
	bool lfault;		/* stopped by a local fault (counted apart) */
	bool exact;		/* decided before any allocation or user copy */
	size_t hi;		/* bytes the model moves */
	size_t ltot;		/* the local total, capped */
	unsigned int nchunks;
	struct fz_chunk chunk[2 * FZ_IOV_MAX + 2];
};

struct fz_stats {
	unsigned long einval, efault, ebadf, zero, full, partial, lfault;
	unsigned long inj_enomem, inj_efault, inj_short;	/* --faults */
	unsigned long retries;	/* the fuzzer's own operations, --faults */
	unsigned long shaped, sh_full, sh_partial, sh_efault, sh_inj;	/* --shapes */
	unsigned long sh_kind[FZ_SH_NR];
	unsigned long sh_wide[2];	/* moved bytes over more than 128, 512 pages */
	unsigned long self[3];		/* cases by target: another process, S, L */
	unsigned long moved_back[FZ_B_NR];	/* cases that moved bytes in such pages */
	unsigned long thp_blocks;	/* THP blocks set up */
	unsigned long file_checks;	/* MAP_PRIVATE file pages found unchanged */
	unsigned long long bytes;
};

static size_t pg;
static size_t max_rw;			/* MAX_RW_COUNT */
static unsigned long long user_top;	/* last valid end of a local range */
static unsigned long flags_ok;		/* flags the kernel knows */
static struct fz_arena la = { .name = "L" }, ra = { .name = "R", .remote = true };
static struct fz_arena sa = { .name = "S" };	/* the caller as its own target */
static size_t fz_blk;			/* pages in a THP block: 2 MiB */
static int spidfd = -1;			/* a pidfd of this process */
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
static unsigned int fz_pages = FZ_PAGES;	/* --pages */
static unsigned char *fz_want;		/* fz_check_dirty(): pages to compare */
static bool shapes;			/* --shapes */
static bool fz_redo;			/* remote pages to be redone by the target */

/* Remote pages made bad for one case, restored before the next one is drawn. */
#define FZ_INJ_MAX		4
static struct {
	struct fz_arena *a;
	unsigned int page;
	unsigned char kind;
} fz_inj[FZ_INJ_MAX];
static unsigned int fz_ninj;

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

/*
 * Put generation @gen of page @i of @a into its file @fd (0: punch a hole,
 * or write zeros where holes cannot be punched).
 */
static int fz_file_page(const struct fz_arena *a, int fd, unsigned int i, unsigned int gen)
{
	static unsigned char *buf;
	off_t off = (off_t)i * pg;

	if (!buf)
		buf = malloc(pg);
	if (!buf)
		return -1;
	if (!gen && !fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, pg))
		return 0;
	fz_fill(buf, pg, a->base + i * pg, gen);
	return pwrite(fd, buf, pg, off) == (ssize_t)pg ? 0 : -1;
}

/*
 * Give page @i of @a kind @kind and backing @back, filled with generation
 * @gen where it is filled.
 */
static int fz_setpage(const struct fz_arena *a, unsigned int i, int kind, unsigned int gen,
		      int back)
{
	uintptr_t addr = a->base + i * pg;
	void *p = (void *)addr;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_FIXED | MAP_SHARED, fd = -1;

	if (kind == FZ_HOLE)
		return munmap(p, pg);
	if (back == FZ_B_FSHARED || back == FZ_B_FPRIV)
		fd = a->ffd;
	else if (back == FZ_B_MEMFD)
		fd = a->mfd;
	if (back == FZ_B_ANON || back == FZ_B_THP || back == FZ_B_FPRIV)
		flags = MAP_FIXED | MAP_PRIVATE;
	if (fd < 0)
		flags |= MAP_ANONYMOUS;
	/* A MAP_PRIVATE file page gets its data through the file. */
	if (fd >= 0 && fz_file_page(a, fd, i, back == FZ_B_FPRIV && kind != FZ_ZERO ? gen : 0))
		return -1;
	if (mmap(p, pg, prot, flags, fd, fd >= 0 ? (off_t)i * pg : 0) == MAP_FAILED)
		return -1;
	if (kind == FZ_ZERO)
		return 0;
	if (back != FZ_B_FPRIV)
		fz_fill(p, pg, addr, gen);
	if (kind == FZ_RO)
		prot = PROT_READ;
	else if (kind == FZ_NONE)
		prot = PROT_NONE;
	return prot == (PROT_READ | PROT_WRITE) ? 0 : mprotect(p, pg, prot);
}

/*
 * fz_setpage(), retried with --faults: a new try redoes the page from scratch.
 * With @block, the fz_blk pages from @i on instead: anonymous memory that
 * may be huge (MADV_HUGEPAGE), every page read-write with its generation.
 */
static int fz_setpage_retry(const struct fz_arena *a, unsigned int i, int kind,
			    const unsigned int *gen, int back, bool block)
{
	int tries = 0;
	size_t k;
	void *p;

	if (!block) {
		while (fz_setpage(a, i, kind, gen[i], back))
			if (!fz_again(&tries))
				return -1;
		return 0;
	}
	p = (void *)(a->base + i * pg);
	while (mmap(p, fz_blk * pg, PROT_READ | PROT_WRITE,
		    MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		if (!fz_again(&tries))
			return -1;
	madvise(p, fz_blk * pg, MADV_HUGEPAGE);
	for (k = 0; k < fz_blk; k++)
		fz_fill((unsigned char *)p + k * pg, pg, a->base + (i + k) * pg, gen[i + k]);
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

	if (addr < a->base || addr - a->base >= fz_pages * pg)
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
	long off;

	if (fz_in_span(&la, addr))
		a = &la;
	else if (fz_in_span(&ra, addr))
		a = &ra;
	else if (fz_in_span(&sa, addr))
		a = &sa;
	off = a ? (long)(addr - a->base) : 0;
	if (a && fz_pages > FZ_PAGES)
		snprintf(buf, n, "%s%+ld (page %ld)", a->name, off,
			 off < 0 ? -((long)pg - 1 - off) / (long)pg : off / (long)pg);
	else if (a)
		snprintf(buf, n, "%s%+ld", a->name, off);
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
	munmap((void *)(sa.base - FZ_GUARD * pg), FZ_SPAN * pg);
	while (!fz_pipe_byte(cmd, &c, false) && c == 'L') {
		mb->ret = 0;
		for (i = 0; i < fz_pages; i++) {
			if (!mb->redo[i])
				continue;
			if (fz_setpage_retry(&ra, i, mb->kind[i], mb->gen, mb->back[i],
					     mb->redo[i] == 2))
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
	size_t len = sizeof(*mb) + fz_pages * (sizeof(*mb->gen) + 3);
	int c[2], a[2], tries = 0;
	pid_t parent = getpid();

	for (;;) {
		mb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (mb != MAP_FAILED)
			break;
		if (!fz_again(&tries))
			return -1;
	}
	/* Mapped before the fork: the same addresses in the target. */
	mb->gen = (unsigned int *)(mb + 1);
	mb->kind = (unsigned char *)(mb->gen + fz_pages);
	mb->back = mb->kind + fz_pages;
	mb->redo = mb->back + fz_pages;
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

	fz_redo = false;
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

/* --shapes: mostly good pages, and a few bad ones. */
static int fz_pick_good(void)
{
	return fz_pct(80) ? FZ_RW : FZ_ZERO;
}

static int fz_pick_bad(void)
{
	return FZ_RO + fz_below(3);
}

/* Whether page @i of @a can be read and written. */
static bool fz_good(const struct fz_arena *a, unsigned int i)
{
	return a->kind[i] == FZ_RW || a->kind[i] == FZ_ZERO;
}

static int fz_pick_back(void);

/*
 * The layouts at the start: backings in runs of up to 64 pages, and about
 * one 2 MiB block in three a THP block where the arenas have such blocks.
 */
static void fz_first_layout(void)
{
	struct fz_arena *a;
	unsigned int i, n, k, side;
	int b = FZ_B_ANON;

	for (side = 0; side < 3; side++) {
		a = side == 0 ? &la : side == 1 ? &ra : &sa;
		for (i = 0, n = 0; i < fz_pages; i++, n--) {
			if (!n) {
				n = 1 + fz_below(64);
				b = fz_pick_back();
			}
			a->back[i] = b;
			if (shapes)
				a->kind[i] = fz_pick_good();
			else
				a->kind[i] = fz_pick_kind(side != 0);
		}
		for (n = shapes ? fz_below(side ? 9 : 3) : 0; n; n--)
			a->kind[fz_below(fz_pages)] = fz_pick_bad();
		for (i = 0; fz_blk && i + fz_blk <= fz_pages; i += fz_blk) {
			if (!fz_pct(33))
				continue;
			for (k = i; k < i + fz_blk; k++) {
				a->kind[k] = FZ_RW;
				a->back[k] = FZ_B_THP;
			}
		}
	}
}

/* A backing for pages: anonymous memory half of the time. */
static int fz_pick_back(void)
{
	static const unsigned char w[FZ_B_THP] = { 52, 12, 12, 12, 12 };
	unsigned int r = fz_below(100), b;

	/* Not FZ_B_THP: THP blocks are made whole by fz_set_block(). */
	for (b = 0; b < FZ_B_THP - 1; b++) {
		if (r < w[b])
			break;
		r -= w[b];
	}
	return b;
}

/* Note the new content of page @i of @a, whose kind and backing are set. */
static void fz_new_gen(struct fz_arena *a, unsigned int i)
{
	a->gen[i] = fz_gen_next++;
	a->fgen[i] = a->back[i] == FZ_B_FPRIV && a->kind[i] != FZ_ZERO ? a->gen[i] : 0;
	fz_shadow_page(a, i);
	memset(a->tol + i * pg, 0, pg);
	a->dirty[i] = 0;
}

/*
 * Set page @i of @a to @kind with a new generation (remote: in mb only); it
 * keeps its backing mostly, and takes one drawn afresh now and then.
 */
static int fz_set_kind(struct fz_arena *a, unsigned int i, int kind)
{
	a->kind[i] = kind;
	if (fz_pct(20))
		a->back[i] = fz_pick_back();
	fz_new_gen(a, i);
	if (!a->remote)
		return fz_setpage_retry(a, i, kind, a->gen, a->back[i], false);
	mb->kind[i] = kind;
	mb->gen[i] = a->gen[i];
	mb->back[i] = a->back[i];
	mb->redo[i] = 1;
	fz_redo = true;
	return 0;
}

/*
 * Make the fz_blk pages from @i (a multiple of fz_blk) of @a one block of
 * anonymous memory that may be huge, every page read-write and filled.
 * Half of the blocks then get 1 to 32 pages mapped over with new ones: the
 * huge page is then mapped by page table entries, and pages that follow
 * each other in the range are not all of its folio.
 */
static int fz_set_block(struct fz_arena *a, unsigned int i)
{
	unsigned int k, n;
	int ret;

	for (k = i; k < i + fz_blk; k++) {
		a->kind[k] = FZ_RW;
		a->back[k] = FZ_B_THP;
		fz_new_gen(a, k);
		if (a->remote) {
			mb->kind[k] = FZ_RW;
			mb->gen[k] = a->gen[k];
			mb->back[k] = FZ_B_THP;
			mb->redo[k] = 0;
		}
	}
	st.thp_blocks++;
	if (!a->remote) {
		ret = fz_setpage_retry(a, i, FZ_RW, a->gen, FZ_B_THP, true);
	} else {
		mb->redo[i] = 2;
		fz_redo = true;
		ret = 0;
	}
	for (n = fz_pct(50) ? 1 + fz_below(32) : 0; n && !ret; n--)
		ret = fz_set_kind(a, i + 1 + fz_below(fz_blk - 2), fz_pct(80) ? FZ_RW : FZ_ZERO);
	return ret;
}

/* Whether the fz_blk pages from @i of @a are a THP block, all read-write. */
static bool fz_is_block(const struct fz_arena *a, unsigned int i)
{
	unsigned int k;

	for (k = i; k < i + fz_blk; k++)
		if (a->back[k] != FZ_B_THP || a->kind[k] != FZ_RW)
			return false;
	return true;
}

/* Rebuild every page of the arenas, with the kinds and backings they have. */
static int fz_rebuild(void)
{
	struct fz_arena *a;
	unsigned int i, side;
	int ret = 0;

	for (side = 0; side < 3; side++) {
		a = side == 0 ? &la : side == 1 ? &ra : &sa;
		for (i = 0; i < fz_pages; i++) {
			if (fz_blk && i % fz_blk == 0 && fz_is_block(a, i)) {
				ret |= fz_set_block(a, i);
				i += fz_blk - 1;
				continue;
			}
			fz_new_gen(a, i);
			if (!a->remote) {
				ret |= fz_setpage_retry(a, i, a->kind[i], a->gen, a->back[i],
							false);
				continue;
			}
			mb->kind[i] = a->kind[i];
			mb->gen[i] = a->gen[i];
			mb->back[i] = a->back[i];
			mb->redo[i] = 1;
		}
	}
	if (ret)
		return -1;
	return fz_target_layout();
}

/*
 * Change a few pages of each arena.  Remote pages that were never touched and
 * have been written since are made untouched again.
 */
static int fz_relayout(void)
{
	unsigned int n, i, side;
	struct fz_arena *a;

	/*
	 * --shapes: long transfers need long runs of good pages.  Half of the
	 * bad pages are made good, a few pages change between read-write and
	 * untouched, and a few new bad pages appear (fewer in the local arena).
	 */
	for (side = 0; fz_blk && side < 3; side++) {
		a = side == 0 ? &la : side == 1 ? &ra : &sa;
		if (fz_pct(25) && fz_set_block(a, fz_below(fz_pages / fz_blk) * fz_blk))
			return -1;
	}
	for (side = 0; shapes && side < 3; side++) {
		a = side == 0 ? &la : side == 1 ? &ra : &sa;
		for (i = 0; i < fz_pages; i++)
			if (!fz_good(a, i) && fz_pct(50) && fz_set_kind(a, i, fz_pick_good()))
				return -1;
		for (n = fz_below(16); n; n--)
			if (fz_set_kind(a, fz_below(fz_pages), fz_pick_good()))
				return -1;
		for (n = fz_below(side ? 5 : 2); n; n--)
			if (fz_set_kind(a, fz_below(fz_pages), fz_pick_bad()))
				return -1;
	}
	for (n = shapes ? 0 : 1 + fz_below(6); n; n--)
		if (fz_set_kind(&la, fz_below(fz_pages), fz_pick_kind(false)))
			return -1;
	for (n = shapes ? 0 : 1 + fz_below(8); n; n--)
		fz_set_kind(&ra, fz_below(fz_pages), fz_pick_kind(true));
	for (n = shapes ? 0 : 1 + fz_below(8); n; n--)
		if (fz_set_kind(&sa, fz_below(fz_pages), fz_pick_kind(true)))
			return -1;
	for (i = 0; i < fz_pages; i++)
		if (ra.kind[i] == FZ_ZERO && !mb->redo[i])
			fz_set_kind(&ra, i, FZ_ZERO);

	return fz_target_layout();
}

/* A file of the arena's size: O_TMPFILE in @dir, or a memfd. */
static int fz_arena_file(const char *dir)
{
	int fd = -1, tries = 0;

	for (;;) {
		if (dir)
			fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = memfd_create("cma_fuzz", MFD_CLOEXEC);
		if (fd >= 0 && !ftruncate(fd, (off_t)fz_pages * pg))
			return fd;
		if (fd >= 0)
			close(fd);
		if (!fz_again(&tries))
			return -1;
	}
}

static int fz_arena_init(struct fz_arena *a)
{
	size_t len = fz_pages * pg, align = fz_blk * pg, head;
	const char *dir = getenv("TMPDIR");
	int tries = 0;
	char *map;

	/* With THP blocks, the arena starts on a 2 MiB boundary. */
	for (;;) {
		map = mmap(NULL, FZ_SPAN * pg + align, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map != MAP_FAILED)
			break;
		if (!fz_again(&tries))
			return -1;
	}
	a->base = (uintptr_t)map + FZ_GUARD * pg;
	if (align) {
		head = (align - a->base % align) % align;
		a->base += head;
		if (head)
			munmap(map, head);
		if (align - head)
			munmap(map + head + FZ_SPAN * pg, align - head);
	}
	a->ffd = fz_arena_file(dir && *dir ? dir : "/tmp");
	a->mfd = fz_arena_file(NULL);
	if (a->ffd < 0 || a->mfd < 0)
		return -1;
	for (;;) {
		if (!a->shadow)
			a->shadow = malloc(len);
		if (!a->tol)
			a->tol = calloc(len, 1);
		if (!a->alt)
			a->alt = calloc(len, 1);
		if (!a->buf)
			a->buf = malloc(len);
		if (!a->kind)
			a->kind = calloc(fz_pages, 1);
		if (!a->gen)
			a->gen = calloc(fz_pages, sizeof(*a->gen));
		if (!a->dirty)
			a->dirty = calloc(fz_pages, 1);
		if (!a->back)
			a->back = calloc(fz_pages, 1);
		if (!a->fgen)
			a->fgen = calloc(fz_pages, sizeof(*a->fgen));
		if (!a->want)
			a->want = calloc(fz_pages, 1);
		if (!fz_want)
			fz_want = malloc(fz_pages);
		if (a->shadow && a->tol && a->alt && a->buf && a->kind && a->gen && a->dirty &&
		    a->back && a->fgen && a->want && fz_want)
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

/* The arena that the remote iovecs of @c are drawn in. */
static struct fz_arena *fz_rarena(const struct fz_case *c)
{
	return c->self == 1 ? &sa : c->self == 2 ? &la : &ra;
}

/* The arena whose addresses are not accessible in the target of @c. */
static struct fz_arena *fz_oarena(const struct fz_case *c)
{
	return c->self ? &ra : &la;
}

static void fz_model(const struct fz_case *c, struct fz_expect *e)
{
	static size_t llen[FZ_IOV_MAX];
	const struct fz_arena *lo = &la, *re = fz_rarena(c);
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
	e->ltot = total;
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

/*
 * Put the first @got bytes of the model's transfer into the shadow, chunk
 * after chunk: where the caller is its own target, a chunk reads what an
 * earlier one wrote (no chunk overlaps itself: fz_overlap_ok()).
 */
static void fz_apply(const struct fz_case *c, const struct fz_expect *e, size_t got)
{
	bool write = c->write;
	struct fz_arena *d = write ? fz_rarena(c) : &la, *s = write ? &la : fz_rarena(c);
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

	while (i < fz_pages) {
		if (!want[i] || !fz_readable(a, i)) {
			i++;
			continue;
		}
		for (j = i; j < fz_pages && want[j] && fz_readable(a, j); j++)
			;
		if (fz_compare(a, i, j))
			return -1;
		i = j;
	}
	return 0;
}

/*
 * Mark in @a->want the pages of @a that the @n elements of @v name, with a
 * page more on each side: the pages whose every byte outside the model's
 * transfer must be unchanged after the call, read side or written side.
 */
static void fz_mark(struct fz_arena *a, const struct iovec *v, unsigned long n)
{
	uintptr_t lo, hi, end = a->base + fz_pages * pg;
	size_t p0, p1;
	unsigned long i;

	for (i = 0; i < n && i < FZ_IOV_MAX; i++) {
		if (!v[i].iov_len)
			continue;
		lo = (uintptr_t)v[i].iov_base;
		hi = lo + (v[i].iov_len - 1);
		if (hi < lo)
			hi = UINTPTR_MAX;
		if (hi < a->base || lo >= end)
			continue;
		p0 = lo < a->base ? 0 : (lo - a->base) / pg;
		p1 = hi >= end ? fz_pages - 1 : (hi - a->base) / pg;
		p0 -= p0 > 0;
		p1 += p1 + 1 < fz_pages;
		memset(a->want + p0, 1, p1 - p0 + 1);
	}
}

/*
 * Drop the marks of @a if there are more than @max, but those of the pages
 * made bad for this case.
 */
static void fz_mark_cap(struct fz_arena *a, unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < fz_pages; i++)
		n += a->want[i];
	if (n <= max)
		return;
	memset(a->want, 0, fz_pages);
	for (i = 0; i < fz_ninj; i++)
		if (fz_inj[i].a == a)
			a->want[fz_inj[i].page] = 1;
}

/*
 * Compare the dirty pages of @a and their neighbours and the pages marked in
 * @a->want, or all if @all; the marks are cleared.
 */
static int fz_check_dirty(struct fz_arena *a, bool all)
{
	unsigned char *want = fz_want;
	unsigned int i;

	memset(want, all, fz_pages);
	for (i = 0; i < fz_pages; i++) {
		want[i] |= a->want[i];
		if (!a->dirty[i])
			continue;
		want[i] = 1;
		if (i)
			want[i - 1] = 1;
		if (i + 1 < fz_pages)
			want[i + 1] = 1;
	}
	memset(a->want, 0, fz_pages);
	return fz_check(a, want);
}

/*
 * The file pages that @a maps MAP_PRIVATE must hold what was written to the
 * file: what the caller writes into them is the mapping's own copy.
 */
static int fz_check_files(struct fz_arena *a)
{
	static unsigned char *fbuf, *pat;
	unsigned int i;
	size_t k;

	if (!fbuf)
		fbuf = malloc(fz_pages * pg);
	if (!pat)
		pat = malloc(pg);
	if (!fbuf || !pat)
		return 0;
	for (i = 0; i < fz_pages && a->back[i] != FZ_B_FPRIV; i++)
		;
	if (i == fz_pages)
		return 0;
	if (pread(a->ffd, fbuf, fz_pages * pg, 0) != (ssize_t)(fz_pages * pg)) {
		fz_infra = true;
		snprintf(why, sizeof(why), "cannot read the file of %s: %s", a->name,
			 strerror(errno));
		return -1;
	}
	for (; i < fz_pages; i++) {
		if (a->back[i] != FZ_B_FPRIV || a->kind[i] == FZ_HOLE)
			continue;
		fz_fill(pat, pg, a->base + i * pg, a->fgen[i]);
		for (k = 0; k < pg && fbuf[i * pg + k] == pat[k]; k++)
			;
		if (k < pg) {
			snprintf(why, sizeof(why),
				 "the file under MAP_PRIVATE page %u of %s changed: byte %zu is 0x%02x, was 0x%02x",
				 i, a->name, k, fbuf[i * pg + k], pat[k]);
			return -1;
		}
		st.file_checks++;
	}
	return 0;
}

/*
 * After a call: the pages of every arena that fz_check_dirty() wants, or all
 * of them and the files under their MAP_PRIVATE pages if @full.
 */
static int fz_check_all(bool full)
{
	return fz_check_dirty(&la, full) || fz_check_dirty(&ra, full) ||
	       fz_check_dirty(&sa, full) ||
	       (full && (fz_check_files(&la) || fz_check_files(&ra) || fz_check_files(&sa)));
}

/* Give the dirty pages of @a a new generation, in the shadow and in memory. */
static int fz_reset_dirty(struct fz_arena *a)
{
	unsigned int i = 0, j;

	while (i < fz_pages) {
		if (!a->dirty[i]) {
			i++;
			continue;
		}
		for (j = i; j < fz_pages && a->dirty[j]; j++) {
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

/* ---- window coverage ------------------------------------------------------ */

/*
 * The limits of our kernel's windows (mm/process_vm_access.c), as there:
 *   a window spans at most 64 pages (PVM_SPAN_PAGES): it reaches up to 63
 *   pages behind the page the copy resumes at (look-behind), or ahead of
 *   it (look-ahead), and takes the later elements in order while their
 *   pages fit that span with the pages taken so far; an element of 64
 *   pages or more gets windows of its own;
 *   past 16 pages (PVM_STACK_PAGES) a window's page array is allocated;
 *   a call looks at no more than 4 elements per remote element
 *   (PVM_LOOKS_PER_SEG).
 * fz_windows() chooses windows over a case's remote iovecs as those rules
 * do, up to the bytes the call moved, and counts the cases in which each
 * limit was reached: the seed's run prints them.  A window serves every
 * page of its span that an element reaches (a page not pinned with the
 * window is pinned when the copy gets there), and the copy takes a new
 * window at the first page outside it.  A page that cannot be pinned ends
 * a window early in the kernel, not here, so the counts are a measure of
 * reach, no part of the model.
 */
#define FZ_WIN_PAGES		64
#define FZ_WIN_STACK_PAGES	16
#define FZ_WIN_LOOKS		4

enum fz_wev {
	FZ_W_AHEAD,		/* a window held a later element's pages */
	FZ_W_BEHIND,		/* ... pages below the current one */
	FZ_W_BEHIND_MAX,	/* ... 63 pages below it */
	FZ_W_LARGEST,		/* a window spanned 64 pages */
	FZ_W_SPAN_AHEAD,	/* look-ahead stopped: 64-page span, element above */
	FZ_W_SPAN_BEHIND,	/* look-ahead stopped: 64-page span, element below */
	FZ_W_OWN_LARGE,		/* an element of 64 pages or more, in windows of its own */
	FZ_W_STACK,		/* a window past the on-stack array (16 pages) */
	FZ_W_LOOKS,		/* the call's looks ran out */
	FZ_W_NR
};

static const char * const fz_wev_name[] = {
	"look-ahead", "look-behind", "look-behind to 63 pages", "window of 64 pages",
	"stop at 64 pages ahead", "stop at 64 pages behind", "element >= 64 pages",
	"window > 16 pages", "looks ran out",
};

static unsigned long fz_wev_cases[FZ_W_NR];

struct fz_wsim {
	const struct fz_case *c;
	unsigned long first, span, looks, maxp;
	bool ev[FZ_W_NR];
};

/* Whether page @p is in the window. */
static bool fz_w_has(const struct fz_wsim *w, unsigned long p)
{
	return p - w->first < w->span;
}

/* Choose the window for element @seg at @addr, @len bytes left, @left to go. */
static void fz_w_choose(struct fz_wsim *w, unsigned long seg, uintptr_t addr, size_t len,
			size_t left)
{
	const struct fz_case *c = w->c;
	unsigned long cur = addr / pg, lo = cur, hi, p0, p1, nlo, nhi;
	bool joined = false;
	uintptr_t last;

	len = len < left ? len : left;
	left -= len;
	last = addr + (len - 1);
	hi = last < addr ? cur + w->maxp : last / pg + 1;
	if (hi - lo >= w->maxp) {
		w->ev[FZ_W_OWN_LARGE] = true;
		hi = lo + w->maxp;
	}
	for (seg++; seg < c->rn && left && w->looks; seg++, w->looks--) {
		len = c->rv[seg].iov_len < left ? c->rv[seg].iov_len : left;
		if (!len)
			continue;
		addr = (uintptr_t)c->rv[seg].iov_base;
		last = addr + (len - 1);
		if (last < addr)
			break;
		p0 = addr / pg;
		p1 = last / pg;
		nlo = p0 < lo ? p0 : lo;
		nhi = p1 + 1 > hi ? p1 + 1 : hi;
		if (nhi - nlo > w->maxp) {
			w->ev[p0 < lo ? FZ_W_SPAN_BEHIND : FZ_W_SPAN_AHEAD] = true;
			break;
		}
		joined = true;
		left -= len;
		lo = nlo;
		hi = nhi;
	}
	w->ev[FZ_W_LOOKS] |= !w->looks;
	w->ev[FZ_W_AHEAD] |= joined;
	w->ev[FZ_W_BEHIND] |= lo < cur;
	w->ev[FZ_W_BEHIND_MAX] |= cur - lo == w->maxp - 1;
	w->ev[FZ_W_LARGEST] |= hi - lo == w->maxp;
	w->ev[FZ_W_STACK] |= hi - lo > FZ_WIN_STACK_PAGES;
	w->first = lo;
	w->span = hi - lo;
}

/* Choose windows for the first @got bytes of case @c, and count the limits reached. */
static void fz_windows(const struct fz_case *c, const struct fz_expect *e, size_t got)
{
	struct fz_wsim w = { .c = c };
	size_t left = e->ltot, len, n, step;
	unsigned long seg, k;
	uintptr_t addr;

	if (!got || c->rn > FZ_IOV_MAX)
		return;
	w.maxp = FZ_WIN_PAGES;
	w.looks = c->rn * FZ_WIN_LOOKS;
	for (seg = 0; seg < c->rn && got; seg++) {
		addr = (uintptr_t)c->rv[seg].iov_base;
		len = c->rv[seg].iov_len < left ? c->rv[seg].iov_len : left;
		while (len && got) {
			if (!fz_w_has(&w, addr / pg))
				fz_w_choose(&w, seg, addr, len, left);
			for (n = 1; fz_w_has(&w, addr / pg + n) &&
			     n < (addr % pg + len + pg - 1) / pg; n++)
				;
			step = n * pg - addr % pg;
			step = step < len ? step : len;
			step = step < got ? step : got;
			addr += step;
			len -= step;
			left -= step;
			got -= step;
		}
	}
	for (k = 0; k < FZ_W_NR; k++)
		fz_wev_cases[k] += w.ev[k];
}

/* Count the backings of the remote pages that the first @got bytes moved in. */
static void fz_count_back(const struct fz_case *c, const struct fz_expect *e, size_t got)
{
	const struct fz_arena *a = fz_rarena(c);
	bool seen[FZ_B_NR] = { false };
	unsigned int k, b;
	uintptr_t r;
	size_t n, p;

	fz_windows(c, e, got);
	for (k = 0; k < e->nchunks && e->chunk[k].off < got; k++) {
		r = c->write ? e->chunk[k].dst : e->chunk[k].src;
		n = got - e->chunk[k].off < e->chunk[k].len ? got - e->chunk[k].off :
							    e->chunk[k].len;
		for (p = (r - a->base) / pg; p <= (r + n - 1 - a->base) / pg; p++)
			seen[a->back[p]] = true;
	}
	for (b = 0; b < FZ_B_NR; b++)
		st.moved_back[b] += seen[b];
}

/* From the lowest to the highest remote page that the first @got bytes moved in. */
static size_t fz_span(const struct fz_case *c, const struct fz_expect *e, size_t got)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0, b;
	unsigned int k;

	for (k = 0; k < e->nchunks && e->chunk[k].off < got; k++) {
		b = c->write ? e->chunk[k].dst : e->chunk[k].src;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	return lo <= hi ? (hi - lo) / pg + 1 : 0;
}

/* Count the outcome @got of a call that went as the model said. */
static void fz_count_outcome(const struct fz_case *c, const struct fz_expect *e, size_t got)
{
	size_t span;

	if (e->err)
		st.einval += e->err == EINVAL;
	st.efault += e->err == EFAULT || (e->xfer && !got);
	st.ebadf += e->err == EBADF;
	st.zero += !e->err && !e->xfer;
	st.lfault += e->xfer && e->lfault;
	if (c->rshape[0] && e->xfer) {
		st.sh_efault += !got;
		st.sh_full += got && !e->stop;
		st.sh_partial += got && e->stop;
		span = fz_span(c, e, got);
		st.sh_wide[0] += span > 128;
		st.sh_wide[1] += span > 512;
	}
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
	long pid = c->pidsel == 0 ? tpid : c->pidsel == 1 ? tpidfd : tmem;
	bool inj = false;
	ssize_t ret;
	size_t got;
	int err, bad = 0;

	if (c->self)
		pid = c->pidsel == 0 ? getpid() : c->pidsel == 1 ? spidfd : tmem;
	fz_model(c, e);
	/*
	 * The requested pages are compared after the call, on both sides;
	 * reading the target back costs more, so where readv names more than
	 * FZ_READ_BACK of its pages they are left to the full compare before
	 * the next layout (or at the end).
	 */
	fz_mark(&la, c->lv, c->ln);
	fz_mark(fz_rarena(c), c->rv, c->rn);
	if (!c->self && !c->write)
		fz_mark_cap(&ra, FZ_READ_BACK);
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
			fz_apply(c, e, 0);
	} else if (e->err) {
		bad = ret != -1 || err != e->err;
	} else if (!e->xfer) {
		bad = ret != 0;
	} else {
		/*
		 * The model's count, local fault or not, or EFAULT if that is
		 * 0; with --faults, any count up to the model's.
		 */
		bad = ret == 0 || (ret < 0 && err != EFAULT) || got > e->hi ||
		      (!faults && got != e->hi);
		if (!bad)
			fz_apply(c, e, got);
	}
	if (bad) {
		snprintf(why, sizeof(why), "returned %zd (errno %d %s), model: %s%zd%s", ret, err,
			 err ? strerror(err) : "", e->err ? "errno " : "",
			 e->err ? (ssize_t)e->err : e->xfer ? (ssize_t)e->hi : 0,
			 e->xfer && !e->hi ? " bytes, that is EFAULT" :
			 e->lfault ? " bytes (stopped by a local fault)" : e->xfer ? " bytes" : "");
		return 1;
	}

	if (inj) {
		st.inj_enomem += err == ENOMEM;
		st.inj_efault += err == EFAULT;
	} else if (faults && got && got < e->hi) {
		st.inj_short++;
	} else {
		fz_count_outcome(c, e, got);
	}
	st.bytes += got;

	fz_count_back(c, e, got);
	if (fz_check_all(full))
		return 1;
	if (fz_reset_dirty(&la) || fz_reset_dirty(&ra) || fz_reset_dirty(&sa)) {
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
		return other->base + fz_below(fz_pages * pg);
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
	return 1 + fz_below(fz_pages * pg);
}

/*
 * An address in or around @a: pages -1 and fz_pages are guards, and so is
 * the page on the far side of each of them (an overlapping element may
 * reach 64 bytes into it).
 */
static uintptr_t fz_arena_addr(const struct fz_arena *a)
{
	uintptr_t page = a->base + (fz_below(fz_pages + 2) - 1) * pg;

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
		p = fz_below(fz_pages);
		base = a->base + p * pg + fz_below(pg);
		if (!fz_ok(a, base, wr))
			continue;
		end = base + fz_acc(a, base, fz_pages * pg, wr);
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

	c->lshape[0] = 0;
	c->rshape[0] = 0;
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
	fz_draw_side(c->rv, rn, fz_rarena(c), fz_oarena(c), c->write, false, weird ? 10 : 0,
		     rsmall);
	/* Now and then one large remote element over much of the arena. */
	if (rn && fz_pct(2)) {
		c->rv[0].iov_base = (void *)(fz_rarena(c)->base + fz_below(4) * pg + fz_below(pg));
		c->rv[0].iov_len = (fz_pages - 4) * pg + fz_below(4 * pg);
	}
}

/*
 * Where the remote iovecs lie in the caller's own local arena (c->self 2), a
 * case is kept only if the model can say exactly what it does.  The kernel
 * copies chunk after chunk, so a chunk reads what an earlier one wrote; but
 * no chunk may overlap itself (in what order one copy moves its bytes is
 * not the model's to know), and for readv no destination page may be one
 * for which a read pin can hold another page than the one the local write
 * lands in: a never touched private page (the pin holds the zero page) or a
 * MAP_PRIVATE file page (its page cache page, until the write copies it).
 * GUP and the write fault disagree there, in mainline as in ours.
 */
static bool fz_overlap_ok(const struct fz_case *c)
{
	struct fz_expect *e = &fz_exp;
	unsigned int k;
	size_t p;

	fz_model(c, e);
	for (k = 0; k < e->nchunks; k++) {
		const struct fz_chunk *ch = &e->chunk[k];

		if (ch->src < ch->dst + ch->len && ch->dst < ch->src + ch->len)
			return false;
		if (c->write)
			continue;
		for (p = (ch->dst - la.base) / pg; p <= (ch->dst + ch->len - 1 - la.base) / pg;
		     p++)
			if (la.back[p] == FZ_B_FPRIV ||
			    (la.kind[p] == FZ_ZERO &&
			     (la.back[p] == FZ_B_ANON || la.back[p] == FZ_B_THP)))
				return false;
	}
	return true;
}

/* ---- structured remote vectors (--shapes) ------------------------------------ */

static long long fz_off[FZ_IOV_MAX];	/* offsets of a shape, before placement */

struct fz_lens {
	unsigned int mode;
	size_t fixed;		/* the same length for every element, or 0 */
};

static const char * const fz_lens_name[] = {
	"1", "1-64", "to a page", "a page", "to 3 pages", "mixed",
};

static size_t fz_shape_len1(unsigned int mode)
{
	switch (mode) {
	case 0:
		return 1;
	case 1:
		return 1 + fz_below(64);
	case 2:
		return 1 + fz_below(pg);
	case 3:
		return pg;
	case 4:
		return 1 + fz_below(3 * pg);
	default:
		return fz_shape_len1(fz_below(5));
	}
}

static void fz_lens_init(struct fz_lens *l)
{
	l->mode = fz_below(6);
	l->fixed = fz_pct(50) ? fz_shape_len1(l->mode) : 0;
}

static size_t fz_lens_next(const struct fz_lens *l)
{
	return l->fixed ? l->fixed : fz_shape_len1(l->mode);
}

/*
 * A stride: sub-page, one or two pages, a page or two and a little, many
 * pages, more than a window spans (each element outside the last one's).
 */
static long long fz_stride(void)
{
	switch (fz_below(11)) {
	case 0:
		return 1 + fz_below(pg / 2);
	case 1:
		return 64LL << fz_below(6);
	case 2:
		return pg;
	case 3:
		return 2 * pg;
	case 4:
		return 2 * pg + 1 + fz_below(256);
	case 5:
		return pg + 1 + fz_below(256);
	case 6:
		return (3 + fz_below(14)) * pg;
	case 7:
		return (17 + fz_below(112)) * pg;
	case 8:
		return (1 + fz_below(4)) * pg - 1 - fz_below(64);
	case 9:
		return (513 + fz_below(fz_pages)) * pg + fz_below(pg);
	default:
		return 1 + fz_below(8 * pg);
	}
}

/* A small stride, for runs of near elements. */
static long long fz_near_stride(void)
{
	static const unsigned int div[] = { 64, 16, 2, 1 };
	unsigned int r = fz_below(6);

	if (r < 4)
		return pg / div[r];
	return r == 4 ? 2 * pg : 1 + fz_below(pg);
}

/* A distance in pages around the limits of the window: its stack array, its span. */
static long long fz_far_pages(void)
{
	static const unsigned short edge[] = { 15, 16, 17, 63, 64, 65 };

	switch (fz_below(5)) {
	case 0:
		return edge[fz_below(6)];
	case 1:
		return 2 + fz_below(126);
	case 2:
		return 128 + fz_below(384);
	default:
		return 514 + fz_below(fz_pages);
	}
}

static unsigned long fz_shape_count(unsigned long max)
{
	unsigned int r = fz_below(100);
	unsigned long n;

	if (r < 10)
		n = 1 + fz_below(32);
	else if (r < 40)
		n = 33 + fz_below(480);
	else if (r < 75)
		n = 513 + fz_below(FZ_IOV_MAX - 512);
	else
		n = FZ_IOV_MAX;
	return n < max ? n : max;
}

/*
 * Move the offsets @off of @n elements into @a: shifted to a random place where
 * they all fit (unless @absolute), now and then so that the lowest element
 * starts just before the arena or the highest one ends just past it; an
 * element that would start outside the arena and its guard pages is wrapped
 * around the arena.
 */
static void fz_place(struct iovec *v, const long long *off, unsigned long n,
		     const struct fz_arena *a, bool absolute)
{
	long long span = (long long)fz_pages * pg, lo = LLONG_MAX, hi = LLONG_MIN;
	long long shift = 0, o, guard = (long long)FZ_GUARD * pg;
	unsigned long i;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		if (off[i] < lo)
			lo = off[i];
		if (off[i] + (long long)v[i].iov_len > hi)
			hi = off[i] + v[i].iov_len;
	}
	if (!absolute) {
		shift = -lo;
		if (hi - lo <= span)
			shift += fz_below(span - (hi - lo) + 1);
		if (fz_pct(6))
			shift = fz_pct(50) ? -lo - 1 - (long long)fz_below(pg) :
					     span - hi + 1 + (long long)fz_below(pg);
	}
	for (i = 0; i < n; i++) {
		o = off[i] + shift;
		if (o < -guard || o >= span + guard - (long long)pg)
			o = (o % span + span) % span;
		v[i].iov_base = (void *)(uintptr_t)((long long)a->base + o);
	}
}

/* Draw one shape of at most @max elements; returns how many. */
static unsigned long fz_shape1(struct iovec *v, long long *off, unsigned long max,
			       const struct fz_arena *a, char *desc, size_t dn)
{
	long long span = (long long)fz_pages * pg, d, j, far, cur, blk, len;
	unsigned long n = fz_shape_count(max), i, k, m;
	unsigned int sh = fz_pct(30) ? FZ_SH_EDGE + fz_below(2) : fz_below(FZ_SH_NR), p;
	long long maxp = FZ_WIN_PAGES;
	bool absolute = false;
	struct fz_lens l;
	int w = 0;

	if (!n)
		return 0;
	st.sh_kind[sh]++;
	fz_lens_init(&l);
	for (i = 0; i < n; i++)
		v[i].iov_len = fz_lens_next(&l);
	switch (sh) {
	case FZ_SH_STRIDE:
	case FZ_SH_REVERSE:
	case FZ_SH_JITTER:
		d = fz_stride();
		j = 0;
		if (sh == FZ_SH_JITTER)
			j = 1 + fz_below(fz_pct(50) ? d / 2 + 1 : 2 * pg);
		/* Mostly fitting the arena, else wrapping around it. */
		if (n > 1 && fz_pct(75) && (long long)(n - 1) * d > span - 2 * (long long)pg)
			n = (span - 2 * pg) / d + 1;
		for (i = 0; i < n; i++) {
			off[i] = (long long)i * d;
			if (j)
				off[i] += (long long)fz_below(2 * j + 1) - j;
			if (sh == FZ_SH_REVERSE)
				off[i] = -off[i];
		}
		w = snprintf(desc, dn, "%s %lld B", fz_shape_name[sh], d);
		if (j)
			w += snprintf(desc + w, dn - w, " +-%lld", j);
		break;
	case FZ_SH_SPARSE:
		/* Every k-th page of a range of up to 700 pages, in random order. */
		k = 1 + fz_below(4);
		m = 16 + fz_below(700);
		if (m > fz_pages - 1)
			m = fz_pages - 1;
		m = m / k ? m / k : 1;
		j = fz_pct(50) ? (long long)fz_below(pg) : -1;
		for (i = 0; i < n; i++)
			off[i] = (long long)(i % m) * k * pg + (j < 0 ? fz_below(pg) : j);
		for (i = n; i-- > 1;) {
			long long t = off[i];

			k = fz_below(i + 1);
			off[i] = off[k];
			off[k] = t;
		}
		w = snprintf(desc, dn, "sparse, %lu slots", m);
		break;
	case FZ_SH_ALTERNATE:
		far = fz_far_pages() * (fz_pct(30) ? -1 : 1);
		p = fz_below(4);
		d = p == 0 ? 0 : p == 1 ? (long long)fz_below(2 * pg) : fz_stride();
		for (i = 0; i < n; i++)
			off[i] = (long long)(i / 2) * d + (i & 1 ? far * (long long)pg : 0);
		w = snprintf(desc, dn, "alternate %lld pages apart, step %lld B", far, d);
		break;
	case FZ_SH_MIX:
		p = fz_pct(10) ? 100 : 5 + fz_below(50);
		d = (long long)pg * (1 + fz_below(8));
		cur = fz_below(span);
		for (i = 0; i < n; i++) {
			if (fz_pct(p))
				cur = fz_below(span);
			else
				cur += (long long)fz_below(d + 1) - d / 4;
			cur = (cur % span + span) % span;
			off[i] = cur;
		}
		absolute = true;
		w = snprintf(desc, dn, "mix, %u%% far, near within %lld B", p, d);
		break;
	case FZ_SH_RUN:
		/* To and past the largest window: 64 pages. */
		switch (fz_below(4)) {
		case 0:
			far = 63 + fz_below(3);
			break;
		case 1:
			far = 1024;
			break;
		default:
			far = 256 + fz_below(768);
		}
		if (far > fz_pages - 1)
			far = fz_pages - 1;
		len = far * pg / n;
		if (len > 4 * (long long)pg)
			len = 4 * pg;
		if (!len)
			len = 1;
		j = fz_pct(70) ? 0 : fz_below(64);
		p = fz_pct(60);
		cur = fz_pct(50) ? 0 : fz_below(pg);
		for (i = 0; i < n; i++) {
			v[i].iov_len = p ? len : 1 + fz_below(2 * len);
			off[i] = cur;
			cur += v[i].iov_len + j;
		}
		w = snprintf(desc, dn, "run over %lld pages, %s %lld B, gap %lld B", far,
			     p ? "length" : "lengths to", p ? len : 2 * len, j);
		break;
	case FZ_SH_EXCURSION:
		/* Near elements, with blocks of elements outside the map in between. */
		d = fz_near_stride();
		cur = 0;
		k = 1 + fz_below(4);
		m = 0;
		for (i = 0; i < n; i++) {
			if (!m && fz_below(n) < k) {
				static const unsigned char sz[] = { 31, 32, 33, 34 };

				m = fz_pct(70) ? sz[fz_below(4)] : 1 + fz_below(64);
				far = fz_pct(30) ? -129 - (long long)fz_below(400) : fz_far_pages();
				blk = cur + far * (long long)pg;
				j = fz_pct(50) ? d : fz_stride();
			}
			if (m) {
				off[i] = blk;
				blk += j;
				m--;
				continue;
			}
			off[i] = cur;
			cur += d;
		}
		w = snprintf(desc, dn, "excursions from a %lld B stride", d);
		break;
	case FZ_SH_EDGE:
		/*
		 * Windows at their limits: an element, then a run of elements
		 * one to four pages apart (dense enough for a window to take
		 * them all) going down (look-behind) or up (look-ahead) to the
		 * page 63 pages away, then one element 0-2 pages past that:
		 * windows of exactly 64 pages, the farthest look-behind, and
		 * a span of 65 or 66 pages that must not be taken.  Again
		 * from a new start, as often as the elements allow.  Elements
		 * of 1-64 bytes, in one page or across the end of one.  Or,
		 * one time in four, elements of 64 pages (less or plus a
		 * page or a byte) back to back or apart:
		 * each the largest window by itself.
		 */
		if (fz_pct(25)) {
			n = n < 4 ? n : 1 + fz_below(4);
			d = fz_pct(50) ? 0 : (long long)fz_below(3 * pg);
			cur = fz_pct(50) ? 0 : (long long)fz_below(pg);
			for (i = 0; i < n; i++) {
				static const int dl[] = { -4096, -1, 0, 0, 1, 4096 };

				v[i].iov_len = FZ_WIN_PAGES * pg +
					       (dl[fz_below(6)] * (long long)pg) / 4096;
				off[i] = cur;
				cur += v[i].iov_len + d;
			}
			w = snprintf(desc, dn, "edge, elements of 64 pages, gap %lld B", d);
			break;
		}
		k = fz_pct(20) ? 1 : 2 + fz_below(3);
		p = fz_pct(65);		/* down */
		far = fz_below(3);
		j = fz_pct(70) ? (long long)fz_below(pg - 64) : (long long)pg - 1 - fz_below(32);
		cur = 0;
		for (i = 0, m = 0; i < n; i++) {
			if (m == 0)
				d = 0;
			else if (m * k < (unsigned long)maxp - 1)
				d = m * k;
			else if (m * k < (unsigned long)maxp - 1 + k)
				d = maxp - 1;
			else
				d = maxp - 1 + far;
			off[i] = cur + (p ? -d : d) * (long long)pg + j;
			v[i].iov_len = 1 + fz_below(64);
			if (d == maxp - 1 + far) {
				m = 0;
				cur += (p ? -1 : 1) * (maxp + 8) * (long long)pg;
				continue;
			}
			m++;
		}
		w = snprintf(desc, dn, "edge, %s %lld B apart to 64 pages %s%lld",
			     p ? "down" : "up", k * (long long)pg, far ? "+ " : "", far);
		break;
	case FZ_SH_SCATTER:
		/*
		 * Runs of 7-9 or 15-17 elements, each over 64 pages from the one
		 * before (no window joins them: a window per element), then a
		 * group of near elements that windows share again.
		 */
		k = fz_pct(50) ? 7 + fz_below(3) : 15 + fz_below(3);
		blk = 0;
		m = 4 + fz_below(40);
		d = fz_near_stride();
		far = maxp + 1 + fz_below(8);
		cur = 0;
		for (i = 0; i < n; i++) {
			p = i % (k + m);
			if (p < k) {
				off[i] = (long long)(p % 4) * far * (long long)pg + fz_below(pg);
				v[i].iov_len = 1 + fz_below(pg / 2);
				continue;
			}
			if (p == k) {
				blk = (long long)fz_below(4) * far * (long long)pg / 2;
				cur = 0;
			}
			off[i] = blk + cur;
			cur += d;
		}
		w = snprintf(desc, dn, "scatter, %lu 64 pages apart then %lu near", k, m);
		break;
	default:
		/* Blocks going down, or up but each starting behind the last one's end. */
		k = 1 + fz_below(64);
		d = fz_near_stride();
		p = fz_pct(50);
		blk = 0;
		far = 0;
		for (i = 0; i < n; i++) {
			if (i && i % k == 0) {
				if (!far || fz_pct(20))
					far = fz_pct(50) ? fz_far_pages() % 200 + 1 :
							   1 + fz_below(127);
				blk += (p ? 0 : (long long)k * d) - far * (long long)pg;
			}
			off[i] = blk + (long long)(i % k) * d;
		}
		w = snprintf(desc, dn, "behind, blocks of %lu, %s, step %lld B", k,
			     p ? "down" : "sawtooth", d);
	}
	if (w >= 0 && (size_t)w < dn) {
		if (sh == FZ_SH_RUN)
			snprintf(desc + w, dn - w, ", x%lu", n);
		else if (l.fixed)
			snprintf(desc + w, dn - w, ", x%lu, length %zu", n, l.fixed);
		else
			snprintf(desc + w, dn - w, ", x%lu, lengths %s", n, fz_lens_name[l.mode]);
	}
	fz_place(v, off, n, a, absolute);
	return n;
}

/*
 * Draw a structured vector of @a: one shape, or two or three in a row; now
 * and then with zero-length elements or one odd element in it.
 */
static unsigned long fz_shape(struct iovec *v, const struct fz_arena *a,
			      const struct fz_arena *other, char *desc, size_t dn)
{
	unsigned long n = 0, i, k;
	unsigned int segs = fz_pct(15) ? 2 + fz_below(2) : 1, s;
	size_t w;

	desc[0] = 0;
	for (s = 0; s < segs && n < FZ_IOV_MAX; s++) {
		w = strlen(desc);
		if (s && w + 3 < dn)
			w += snprintf(desc + w, dn - w, " + ");
		n += fz_shape1(v + n, fz_off + n, (FZ_IOV_MAX - n) / (segs - s), a, desc + w,
			       dn - w);
	}
	if (n && fz_pct(3))
		for (k = 1 + fz_below(n / 8 + 1); k; k--)
			v[fz_below(n)].iov_len = 0;
	if (n && fz_pct(3)) {
		i = fz_below(n);
		if (fz_pct(50))
			v[i].iov_base = (void *)fz_weird_addr(other);
		else
			v[i].iov_len = fz_huge_len();
	}
	return n;
}

/*
 * The local side of a structured case, for @need remote bytes: mostly a few
 * elements that can be accessed in full and add up to @need (or less, so that
 * the local side ends first); else a shape too, or the usual draw.
 */
static void fz_shape_local(struct fz_case *c, size_t need)
{
	bool wr = !c->write;	/* readv writes the local side */
	unsigned long k, i, n = 0;
	unsigned int r = fz_below(100), tries;
	uintptr_t base;
	size_t len;

	if (r < 12) {
		c->ln = fz_shape(c->lv, &la, &ra, c->lshape, sizeof(c->lshape));
		return;
	}
	if (r < 22) {
		c->ln = fz_count();
		n = c->ln > FZ_IOV_MAX ? FZ_IOV_MAX : c->ln;
		fz_draw_side(c->lv, n, &la, &ra, wr, fz_pct(88), 0, n > 64);
		return;
	}
	if (r < 40)
		need = fz_below(need + 1);
	k = 1 + fz_below(fz_pct(70) ? 4 : 64);
	for (i = 0; i < k && need; i++) {
		for (tries = 0; tries < 8; tries++) {
			base = la.base + fz_below(fz_pages) * pg + (fz_pct(50) ? 0 : fz_below(pg));
			if (fz_ok(&la, base, wr))
				break;
		}
		len = i + 1 < k ? need / (k - i) : need;
		if (!len)
			len = need;
		len = fz_acc(&la, base, len, wr);
		c->lv[n].iov_base = (void *)base;
		c->lv[n++].iov_len = len;
		need -= len;
	}
	if (!n) {
		c->lv[n].iov_base = (void *)la.base;
		c->lv[n++].iov_len = 0;
	}
	c->ln = n;
}

/* Restore the remote pages that the last case made bad. */
static void fz_inj_restore(void)
{
	while (fz_ninj) {
		fz_ninj--;
		fz_set_kind(fz_inj[fz_ninj].a, fz_inj[fz_ninj].page, fz_inj[fz_ninj].kind);
	}
}

/*
 * Make a few remote pages of case @c bad for this case: pages that an element
 * touches, or any page between the lowest and the highest element (then often
 * one that no element touches).  Not present (untouched) pages too.
 */
static void fz_inj_draw(const struct fz_case *c)
{
	static const unsigned char kinds[] = { FZ_NONE, FZ_HOLE, FZ_RO, FZ_ZERO, FZ_NONE,
					       FZ_HOLE, FZ_RO, FZ_ZERO, FZ_HOLE, FZ_NONE };
	uintptr_t lo = UINTPTR_MAX, hi = 0, b;
	unsigned long i, rn = c->rn > FZ_IOV_MAX ? FZ_IOV_MAX : c->rn;
	struct fz_arena *ra = fz_rarena(c);
	unsigned int k;

	if (!rn || !fz_pct(45))
		return;
	for (i = 0; i < rn; i++) {
		b = (uintptr_t)c->rv[i].iov_base;
		if (b - ra->base >= fz_pages * pg)
			continue;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	if (lo > hi)
		return;
	for (k = 1 + fz_below(FZ_INJ_MAX - 1); k; k--) {
		i = fz_below(rn);
		b = (uintptr_t)c->rv[i].iov_base;
		if (fz_pct(40) || !c->rv[i].iov_len || c->rv[i].iov_len > 8 * pg)
			b = lo + fz_below(hi - lo + 1);
		else
			b += fz_below(c->rv[i].iov_len);
		if (b - ra->base >= fz_pages * pg)
			continue;
		fz_inj[fz_ninj].a = ra;
		fz_inj[fz_ninj].page = (b - ra->base) / pg;
		fz_inj[fz_ninj].kind = ra->kind[fz_inj[fz_ninj].page];
		/* Compared after the call too: no element names it, perhaps. */
		ra->want[fz_inj[fz_ninj].page] = 1;
		fz_set_kind(ra, fz_inj[fz_ninj++].page, kinds[fz_below(sizeof(kinds))]);
		st.sh_inj++;
	}
}

static void fz_draw_shaped(struct fz_case *c)
{
	size_t need = 0, cap = fz_pages * pg;
	unsigned long i;

	c->write = fz_pct(50);
	c->flags = fz_draw_flags(c);
	/* Flags the kernel does not know are tested enough by fz_draw(). */
	if ((c->flags & ~flags_ok) && fz_pct(90)) {
		c->flags = 0;
		c->pidsel = 0;
	}
	c->lnull = false;
	c->rnull = false;
	c->lshape[0] = 0;
	st.shaped++;
	c->rn = fz_shape(c->rv, fz_rarena(c), fz_oarena(c), c->rshape, sizeof(c->rshape));
	for (i = 0; i < c->rn; i++)
		need += c->rv[i].iov_len < cap ? c->rv[i].iov_len : cap;
	fz_shape_local(c, need < cap ? need : cap);
	fz_inj_draw(c);
}

/*
 * Draw a case: one in ten has the caller as its own target, the remote
 * iovecs in a third arena or in the local one (falling back to the third
 * where fz_overlap_ok() refuses).
 */
static void fz_draw_case(struct fz_case *c)
{
	int self = fz_pct(10) ? 1 + fz_below(2) : 0;

	for (;;) {
		c->self = self;
		if (shapes && fz_pct(75))
			fz_draw_shaped(c);
		else
			fz_draw(c);
		if (self != 2 || fz_overlap_ok(c))
			break;
		fz_inj_restore();
		self = 1;
	}
	st.self[c->self]++;
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
	char s[FZ_ROW + 1];
	unsigned int i, j;

	ksft_print_msg("  %s = 0x%llx, pages (w rw, z untouched, r ro, n none, . hole),\n"
		       "  under each its memory (a anon, f file shared, p file private,\n"
		       "  m memfd, s shared anon, t THP block):\n",
		       a->name, (unsigned long long)a->base);
	for (i = 0; i < fz_pages; i += FZ_ROW) {
		for (j = 0; j < FZ_ROW && i + j < fz_pages; j++)
			s[j] = fz_kind_char[a->kind[i + j]];
		s[j] = 0;
		ksft_print_msg("    %5u |%s|\n", i, s);
		for (j = 0; j < FZ_ROW && i + j < fz_pages; j++)
			s[j] = fz_back_char[a->back[i + j]];
		ksft_print_msg("          %s\n", s);
	}
}

static void fz_print_case(const struct fz_case *c)
{
	static const char * const pids[] = { "pid", "pidfd", "not a pidfd" };

	ksft_print_msg("  %s, flags 0x%lx, %s, liovcnt %lu%s, riovcnt %lu%s, page %zu\n",
		       c->write ? "process_vm_writev" : "process_vm_readv", c->flags,
		       pids[c->pidsel], c->ln, c->lnull ? " (lvec NULL)" : "", c->rn,
		       c->rnull ? " (rvec NULL)" : "", pg);
	if (c->lshape[0])
		ksft_print_msg("  local vector drawn as: %s\n", c->lshape);
	fz_print_side("local", c->lv, c->ln, verbose);
	if (c->rshape[0])
		ksft_print_msg("  remote vector drawn as: %s\n", c->rshape);
	fz_print_side("remote", c->rv, c->rn, verbose);
	fz_print_layout(&la);
	fz_print_layout(&ra);
}

/* Drop elements @i to @i + @k - 1 of the @n of @v. */
static void fz_drop(struct iovec *v, unsigned long *n, unsigned long i, unsigned long k)
{
	memmove(&v[i], &v[i + k], (*n - i - k) * sizeof(*v));
	*n -= k;
}

/* Whether @c, run from freshly rebuilt arenas, still fails. */
static bool fz_fails(const struct fz_case *c)
{
	if (fz_rebuild())
		return false;
	if (c->self == 2 && !fz_overlap_ok(c))
		return false;
	return fz_run_case(c, true) != 0;
}

/*
 * Remove elements and flags from the failing case @c while it keeps failing:
 * halves of a side first, then quarters..., then single elements.
 */
static void fz_shrink(struct fz_case *c)
{
	unsigned long i, k, blk, *n;
	unsigned int tries = 0, side;
	bool progress = true;

	while (progress && tries < FZ_SHRINK_TRIES) {
		progress = false;
		for (side = 0; side < 2; side++) {
			n = side ? &c->rn : &c->ln;
			if (*n > FZ_IOV_MAX)
				continue;
			for (blk = (*n + 1) / 2; blk; blk /= 2) {
				for (i = *n; i > 0 && tries < FZ_SHRINK_TRIES; tries++) {
					k = i < blk ? i : blk;
					i -= k;
					fz_try = *c;
					if (side)
						fz_drop(fz_try.rv, &fz_try.rn, i, k);
					else
						fz_drop(fz_try.lv, &fz_try.ln, i, k);
					if (!fz_fails(&fz_try))
						continue;
					*c = fz_try;
					progress = true;
				}
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

/* The value of @key in /proc/@pid/smaps_rollup (@pid 0: this process), or -1. */
static long fz_smaps_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps_rollup");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			kb = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return kb;
}

static void fz_usage(const char *prog)
{
	printf("Usage: %s [--seed N] [--iterations N] [--seconds S] [--check-pins]\n"
	       "          [--pin-slack N] [--no-shrink] [--verbose] [--mainline]\n"
	       "          [--faults | --faults-all] [--pages N] [--shapes]\n"
	       "Defaults: a seed from the clock, 100000 iterations, at most 120 seconds.\n"
	       "--pages N: pages in each arena, 8 to %d (default %d, with --shapes %d).\n"
	       "--shapes: three cases in four get a structured remote vector (strides,\n"
	       "sparse shuffles, alternating areas, runs past the largest window...),\n"
	       "with bad pages of that case in it now and then.\n"
	       "--mainline: expect liovcnt to be truncated to 32 bits, as mainline does\n"
	       "(the man page and our kernel: EINVAL for liovcnt > IOV_MAX), and accept\n"
	       "a kernel without PROCESS_VM_PIDFD or PROCESS_VM_NOWAIT (ours needs both).\n"
	       "--faults: the kernel injects allocation and user copy failures (enabled\n"
	       "by the caller in debugfs, with task-filter): accept early ENOMEM/EFAULT\n"
	       "and short counts; make-it-fail is set only around the calls under test.\n"
	       "--faults-all: the same, but leave make-it-fail as inherited.\n",
	       prog, FZ_PAGES_MAX, FZ_PAGES, FZ_PAGES_SHAPES);
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
		{ "pages", required_argument, NULL, 'P' },
		{ "shapes", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long long seed = 0, iters = 100000, it;
	long long acq0 = 0, rel0 = 0, acq1 = 0, rel1 = 0, slack = 0, diff;
	bool have_seed = false, pins = false, shrink = true, faults_all = false, ref0, ref1;
	double secs = 120, t0, el;
	char path[64];
	unsigned long long full_every;
	long thp_kb[2];
	unsigned int i;
	long pages = 0;
	int opt, tries = 0;

	while ((opt = getopt_long(argc, argv, "s:i:t:pk:nvmfFP:Sh", opts, NULL)) != -1) {
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
		case 'P':
			pages = strtol(optarg, NULL, 0);
			if (pages < 8 || pages > FZ_PAGES_MAX) {
				fprintf(stderr, "--pages: 8 to %d\n", FZ_PAGES_MAX);
				return 2;
			}
			break;
		case 'S':
			shapes = true;
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
	fz_pages = pages ? pages : shapes ? FZ_PAGES_SHAPES : FZ_PAGES;
	rng = seed;
	if (faults && !faults_all)
		fz_faults_narrow();

	ksft_print_header();
	ksft_set_plan(1);
	ksft_print_msg("cma_fuzz: seed %llu (replay: --seed %llu), up to %llu iterations, %g s\n",
		       seed, seed, iters, secs);
	if (fz_pages != FZ_PAGES || shapes)
		ksft_print_msg("arenas of %u pages%s\n", fz_pages,
			       shapes ? ", structured remote vectors (--shapes)" : "");
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
	/*
	 * Our kernel knows both flags: one that rejects either is broken, not
	 * older, and the model would only expect EINVAL for its calls.
	 */
	if (!mainline && flags_ok != (PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT))
		ksft_exit_fail_msg("the kernel rejects PROCESS_VM_PIDFD or PROCESS_VM_NOWAIT%s\n",
				   " (--mainline models such a kernel)");
	if (sizeof(long) > 4 &&
	    !fz_rw(false, getpid(), NULL, (unsigned long)(1ULL << 32), NULL, 0, 0))
		ksft_print_msg("the kernel truncates liovcnt to 32 bits%s\n",
			       mainline ? "" : " (expect a mismatch; --mainline models it)");

	if (pins && fz_read_pins(&acq0, &rel0, &ref0))
		ksft_exit_skip("--check-pins: no nr_foll_pin_* in /proc/vmstat\n");

	if (pg == 4096 && fz_pages >= FZ_THP_BYTES / pg)
		fz_blk = FZ_THP_BYTES / pg;
	if (fz_arena_init(&la) || fz_arena_init(&ra) || fz_arena_init(&sa))
		ksft_exit_skip("cannot map the arenas: %s\n", strerror(errno));
	user_top = fz_probe_top();
	ksft_print_msg("local ranges end at or below 0x%llx (access_ok)\n", user_top);
	fz_first_layout();
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
		while ((spidfd = syscall(__NR_pidfd_open, getpid(), 0)) < 0 && fz_again(&tries))
			;
		if (tpidfd < 0 || spidfd < 0)
			flags_ok &= ~PROCESS_VM_PIDFD;
	}
	if (fz_rebuild() || fz_check_all(true)) {
		fz_target_stop();
		ksft_exit_skip("cannot set up the target's arena (%s)\n", why);
	}
	if (fz_blk)
		ksft_print_msg("THP blocks: %lu; AnonHugePages: here %ld kB, target %ld kB\n",
			       st.thp_blocks, fz_smaps_kb(0, "AnonHugePages:"),
			       fz_smaps_kb(tpid, "AnonHugePages:"));

	/* Full compares cost as much as the arenas are large: fewer of them. */
	full_every = FZ_FULL_CHECK * (fz_pages > FZ_FULL_PAGES ? fz_pages / FZ_FULL_PAGES : 1);
	t0 = fz_now();
	for (it = 0; it < iters; it++) {
		if (it && secs > 0 && fz_now() - t0 >= secs)
			break;
		/* Every byte compared before a new layout writes over pages. */
		if (it && it % FZ_RELAYOUT == 0 && fz_check_all(true)) {
			fz_cur.ln = 0;
			fz_cur.rn = 0;
			goto mismatch;
		}
		fz_inj_restore();
		if (it && it % FZ_RELAYOUT == 0 && fz_relayout()) {
			snprintf(why, sizeof(why), "cannot change the layout: %s", strerror(errno));
			goto fail_infra;
		}
		fz_draw_case(&fz_cur);
		if (fz_redo && fz_target_layout()) {
			snprintf(why, sizeof(why), "cannot change the layout: %s", strerror(errno));
			goto fail_infra;
		}
		if (fz_run_case(&fz_cur, (it + 1) % full_every == 0))
			goto mismatch;
	}
	if (fz_check_all(true)) {
		fz_cur.ln = 0;
		fz_cur.rn = 0;
		goto mismatch;
	}
	el = fz_now() - t0;
	thp_kb[0] = fz_smaps_kb(0, "AnonHugePages:");
	thp_kb[1] = fz_smaps_kb(tpid, "AnonHugePages:");
	fz_target_stop();

	ksft_print_msg("%llu iterations in %.1f s (%.0f/s), seed %llu\n", it, el,
		       el > 0 ? it / el : 0.0, seed);
	ksft_print_msg("outcomes: EINVAL %lu, EFAULT %lu, EBADF %lu, 0 %lu\n", st.einval,
		       st.efault, st.ebadf, st.zero);
	ksft_print_msg("transfers: full %lu, partial %lu, local fault %lu; %llu bytes moved\n",
		       st.full, st.partial, st.lfault, st.bytes);
	if (shapes) {
		ksft_print_msg("structured: %lu cases; full %lu, partial %lu, EFAULT %lu\n",
			       st.shaped, st.sh_full, st.sh_partial, st.sh_efault);
		ksft_print_msg("  that moved bytes in remote pages over 128 pages: %lu, 512: %lu\n",
			       st.sh_wide[0], st.sh_wide[1]);
		ksft_print_msg("remote pages made bad for one case: %lu\n", st.sh_inj);
		for (i = 0; i < FZ_SH_NR; i++)
			ksft_print_msg("  %-10s %lu\n", fz_shape_name[i], st.sh_kind[i]);
	}
	ksft_print_msg("cases by target: another process %lu, itself %lu (in S), %lu (in L)\n",
		       st.self[0], st.self[1], st.self[2]);
	ksft_print_msg("cases that moved bytes in remote pages of each memory\n");
	ksft_print_msg("  (%s): %lu %lu %lu %lu %lu %lu\n",
		       "anon, file shared, file private, memfd, shared anon, THP block",
		       st.moved_back[0], st.moved_back[1], st.moved_back[2], st.moved_back[3],
		       st.moved_back[4], st.moved_back[5]);
	ksft_print_msg("THP blocks set up: %lu; AnonHugePages now: here %ld kB, target %ld kB\n",
		       st.thp_blocks, thp_kb[0], thp_kb[1]);
	ksft_print_msg("MAP_PRIVATE file pages found unchanged in the files: %lu\n",
		       st.file_checks);
	ksft_print_msg("cases whose windows (as our kernel chooses them) reached:\n");
	for (i = 0; i < FZ_W_NR; i++)
		ksft_print_msg("  %-30s %lu\n", fz_wev_name[i], fz_wev_cases[i]);
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
