/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the process_vm_readv(2)/process_vm_writev(2) selftests.
 *
 * A case works on two "regions": areas of memory framed by PROT_NONE guard
 * pages and filled with a pattern that is a function of each byte's address
 * and of a per-region seed.  Because the content of every byte is known from
 * its address alone, a check needs no copy of the original data: after a
 * transfer, each byte a transfer element covers must hold the source
 * pattern, and every other byte (the canaries) must still hold its own.
 *
 * The remote side is a "target": a forked child that sleeps on a pipe and
 * runs, on request, functions of this program (it is a fork, so function
 * pointers are valid there).  Arguments and results travel through a
 * shared "mailbox" mapping.  The target may also be the caller itself.
 */
#ifndef CMA_COMMON_H
#define CMA_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/const.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>

#if __has_include("linux/process_vm.h")
#include <linux/process_vm.h>
#endif

#include "cma_pins.h"

#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	0x1UL
#endif
#ifndef PROCESS_VM_NOWAIT
#define PROCESS_VM_NOWAIT	0x2UL
#endif

/* The tree under test may not list the syscalls yet: numbers by ABI. */
#if defined(__x86_64__) && defined(__ILP32__)
#define CMA_X32_BIT		0x40000000
#ifndef __NR_process_vm_readv
#define __NR_process_vm_readv	(CMA_X32_BIT + 539)
#define __NR_process_vm_writev	(CMA_X32_BIT + 540)
#endif
#ifndef __NR_userfaultfd
#define __NR_userfaultfd	(CMA_X32_BIT + 323)
#endif
#define CMA_NR_COMMON(n)	(CMA_X32_BIT + (n))
#elif defined(__x86_64__)
#ifndef __NR_process_vm_readv
#define __NR_process_vm_readv	310
#define __NR_process_vm_writev	311
#endif
#ifndef __NR_userfaultfd
#define __NR_userfaultfd	323
#endif
#define CMA_NR_COMMON(n)	(n)
#elif defined(__i386__)
#ifndef __NR_process_vm_readv
#define __NR_process_vm_readv	347
#define __NR_process_vm_writev	348
#endif
#ifndef __NR_userfaultfd
#define __NR_userfaultfd	374
#endif
#define CMA_NR_COMMON(n)	(n)
#else
/* asm-generic numbering */
#ifndef __NR_process_vm_readv
#define __NR_process_vm_readv	270
#define __NR_process_vm_writev	271
#endif
#ifndef __NR_userfaultfd
#define __NR_userfaultfd	282
#endif
#define CMA_NR_COMMON(n)	(n)
#endif

/* Numbers shared by all ABIs since 5.1 (x32 adds its bit). */
#ifndef __NR_pidfd_open
#define __NR_pidfd_open		CMA_NR_COMMON(434)
#endif
#ifndef __NR_memfd_secret
#define __NR_memfd_secret	CMA_NR_COMMON(447)
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD		O_EXCL
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE		14
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB		0x40000
#endif
#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY	((unsigned long)-1)
#endif

#define CMA_IOV_MAX		1024	/* UIO_MAXIOV */
#define CMA_NOBODY		65534
#define CMA_NOBODY2		65533
#define CMA_THP_SIZE		(2UL << 20)
#define CMA_YAMA		"/proc/sys/kernel/yama/ptrace_scope"
#define CMA_NR_HUGE		"/proc/sys/vm/nr_hugepages"

static inline size_t cma_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static inline ssize_t cma_readv(long pid, const struct iovec *lvec, unsigned long liovcnt,
				const struct iovec *rvec, unsigned long riovcnt,
				unsigned long flags)
{
	return syscall(__NR_process_vm_readv, pid, lvec, liovcnt, rvec, riovcnt, flags);
}

static inline ssize_t cma_writev(long pid, const struct iovec *lvec, unsigned long liovcnt,
				 const struct iovec *rvec, unsigned long riovcnt,
				 unsigned long flags)
{
	return syscall(__NR_process_vm_writev, pid, lvec, liovcnt, rvec, riovcnt, flags);
}

static inline ssize_t cma_rw(bool write, long pid, const struct iovec *lvec,
			     unsigned long liovcnt, const struct iovec *rvec,
			     unsigned long riovcnt, unsigned long flags)
{
	if (write)
		return cma_writev(pid, lvec, liovcnt, rvec, riovcnt, flags);
	return cma_readv(pid, lvec, liovcnt, rvec, riovcnt, flags);
}

static inline int cma_pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(__NR_pidfd_open, pid, flags);
}

/*
 * Our kernel checks the flags first and then returns 0 for a local total of
 * 0; a kernel that does not know @flag fails with EINVAL.
 */
static inline bool cma_flag_supported(unsigned long flag)
{
	return cma_readv(0, NULL, 0, NULL, 0, flag) == 0;
}

/*
 * Whether this is User-Mode Linux.  Its copy_from_user() reads user pages
 * mapped PROT_NONE (arch/um treats a PROT_NONE pte as present), so a
 * caller's PROT_NONE buffer does not fault there, whatever the syscall.
 */
static inline bool cma_on_uml(void)
{
	char line[256];
	bool uml = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (!uml && fgets(line, sizeof(line), f))
		uml = strstr(line, "User Mode Linux");
	fclose(f);
	return uml;
}

/* ---- fixtures -------------------------------------------------------- */

/*
 * FIXTURE_VARIANT() and FIXTURE_VARIANT_ADD() with @fixture macro-expanded
 * first (the harness pastes the name as written), for cma_rw_variants.h.
 */
#define CMA_FIXTURE_VARIANT(fixture)		FIXTURE_VARIANT(fixture)
#define CMA_FIXTURE_VARIANT_ADD(fixture, name)	FIXTURE_VARIANT_ADD(fixture, name)

/* ---- the pattern ---------------------------------------------------- */

#define CMA_PAT_MUL	0x9e3779b1u
#define CMA_PAT_SEED	0x85ebca77u

/* The pattern: the top byte of a multiplicative hash of address and seed. */
static inline unsigned char cma_pat(uintptr_t addr, unsigned int seed)
{
	uint32_t x = (uint32_t)addr * CMA_PAT_MUL + seed * CMA_PAT_SEED;

	if (!seed)
		return 0;
	return x >> 24;
}

/* Fill [start, start + len) with its pattern; consecutive bytes add CMA_PAT_MUL. */
static inline void cma_fill(void *start, size_t len, unsigned int seed)
{
	uint32_t x = (uint32_t)(uintptr_t)start * CMA_PAT_MUL + seed * CMA_PAT_SEED;
	unsigned char *p = start;
	size_t i;

	if (!seed) {
		memset(p, 0, len);
		return;
	}
	for (i = 0; i < len; i++, x += CMA_PAT_MUL)
		p[i] = x >> 24;
}

/*
 * Offset of the first of the @len bytes at @p that differs from the pattern
 * of @seed for the addresses starting at @addr, or -1.
 */
static inline long cma_cmp_pat(const void *p, size_t len, uintptr_t addr, unsigned int seed)
{
	uint32_t x = (uint32_t)addr * CMA_PAT_MUL + seed * CMA_PAT_SEED;
	const unsigned char *b = p;
	size_t i;

	if (!seed) {
		for (i = 0; i < len; i++)
			if (b[i])
				return (long)i;
		return -1;
	}
	for (i = 0; i < len; i++, x += CMA_PAT_MUL)
		if (b[i] != (unsigned char)(x >> 24))
			return (long)i;
	return -1;
}

/* ---- regions -------------------------------------------------------- */

enum cma_kind {
	CMA_ANON,		/* private anonymous, filled */
	CMA_UNTOUCHED,		/* private anonymous, never written: zeros */
	CMA_THP,		/* private anonymous with MADV_HUGEPAGE */
	CMA_HUGETLB,		/* MAP_HUGETLB */
	CMA_MEMFD,		/* MAP_SHARED of a memfd (shmem) */
	CMA_SHARED_ANON,	/* MAP_SHARED | MAP_ANONYMOUS */
	CMA_FILE,		/* MAP_SHARED of a file in /tmp */
	CMA_FILE_THP,		/* CMA_FILE, huge-page aligned, MADV_HUGEPAGE */
};

struct cma_region {
	char *addr;		/* first byte of the checked area */
	size_t len;		/* bytes in the checked area */
	char *map;		/* whole reservation, guard pages included */
	size_t map_len;
	unsigned int seed;	/* pattern seed; 0: the area holds zeros */
	size_t hole;		/* [hole, hole + hole_len) is skipped by checks */
	size_t hole_len;
	int fd;			/* backing file or -1 */
	char path[64];		/* CMA_FILE: the file's name */
};

/*
 * cma_region_alloc() - map @len bytes (rounded up to the page, or to the huge
 * page for CMA_THP and CMA_HUGETLB) of @kind between two guard areas, and
 * fill them with the pattern of @seed.  Returns 0 or -1 with errno set.
 */
static inline int cma_region_alloc(struct cma_region *r, size_t len, unsigned int seed,
				   enum cma_kind kind)
{
	size_t page = cma_page();
	size_t align = (kind == CMA_THP || kind == CMA_HUGETLB || kind == CMA_FILE_THP) ?
		       CMA_THP_SIZE : page;
	int flags = MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS;
	uintptr_t start;
	void *p;
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->len = (len + align - 1) & ~(align - 1);
	r->map_len = r->len + 2 * align;
	r->map = mmap(NULL, r->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		      -1, 0);
	if (r->map == MAP_FAILED)
		return -1;
	start = ((uintptr_t)r->map + page + align - 1) & ~(uintptr_t)(align - 1);
	r->addr = (char *)start;

	switch (kind) {
	case CMA_HUGETLB:
		flags |= MAP_HUGETLB;
		break;
	case CMA_SHARED_ANON:
		flags = MAP_FIXED | MAP_SHARED | MAP_ANONYMOUS;
		break;
	case CMA_MEMFD:
		r->fd = memfd_create("cma", MFD_CLOEXEC);
		break;
	case CMA_FILE:
	case CMA_FILE_THP:
		snprintf(r->path, sizeof(r->path), "/tmp/cma_test_XXXXXX");
		r->fd = mkstemp(r->path);
		break;
	default:
		break;
	}
	if (kind == CMA_MEMFD || kind == CMA_FILE || kind == CMA_FILE_THP) {
		if (r->fd < 0 || ftruncate(r->fd, r->len))
			goto fail;
		flags = MAP_FIXED | MAP_SHARED;
	}
	/* Prefault what is filled anyway: one call instead of a fault a page. */
	if (kind != CMA_UNTOUCHED && kind != CMA_THP && kind != CMA_FILE_THP)
		flags |= MAP_POPULATE;
	p = mmap(r->addr, r->len, PROT_READ | PROT_WRITE, flags, r->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	if ((kind == CMA_THP || kind == CMA_FILE_THP) &&
	    madvise(r->addr, r->len, MADV_HUGEPAGE))
		goto fail;
	if (kind != CMA_UNTOUCHED) {
		r->seed = seed;
		cma_fill(r->addr, r->len, seed);
	}
	return 0;
fail:
	err = errno;
	munmap(r->map, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	if (r->path[0])
		unlink(r->path);
	r->map = NULL;
	r->fd = -1;
	errno = err;
	return -1;
}

static inline void cma_region_free(struct cma_region *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	if (r->path[0])
		unlink(r->path);
	r->map = NULL;
	r->fd = -1;
	r->path[0] = 0;
}

/* Put the pattern of @r back, after a case changed it. */
static inline void cma_region_refill(struct cma_region *r)
{
	if (r->seed)
		cma_fill(r->addr, r->len, r->seed);
	else
		memset(r->addr, 0, r->len);
}

/* ---- checking a transfer --------------------------------------------- */

struct cma_seg {
	uintptr_t dst;
	uintptr_t src;
	size_t len;
	size_t off;		/* offset of this segment in the transfer */
};

static inline int cma_seg_cmp(const void *a, const void *b)
{
	const struct cma_seg *x = a, *y = b;

	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/*
 * Split the first @limit bytes of a transfer from @sv to @dv into segments
 * that are contiguous on both sides.  Returns the number of segments.
 */
static inline int cma_segments(struct cma_seg *seg, const struct iovec *dv, int dn,
			       const struct iovec *sv, int sn, size_t limit)
{
	size_t di = 0, si = 0, doff = 0, soff = 0, done = 0;
	int n = 0;

	while (done < limit && di < (size_t)dn && si < (size_t)sn) {
		size_t dl = dv[di].iov_len - doff, sl = sv[si].iov_len - soff;
		size_t len = dl < sl ? dl : sl;

		if (len > limit - done)
			len = limit - done;
		if (len) {
			seg[n].dst = (uintptr_t)dv[di].iov_base + doff;
			seg[n].src = (uintptr_t)sv[si].iov_base + soff;
			seg[n].len = len;
			seg[n].off = done;
			n++;
		}
		doff += len;
		soff += len;
		done += len;
		if (doff == dv[di].iov_len) {
			di++;
			doff = 0;
		}
		if (soff == sv[si].iov_len) {
			si++;
			soff = 0;
		}
	}
	return n;
}

static inline bool cma_in_hole(const struct cma_region *r, size_t off)
{
	return r->hole_len && off >= r->hole && off - r->hole < r->hole_len;
}

static inline long cma_check_span(const struct cma_region *r, size_t from, size_t to)
{
	long bad;

	if (from >= to)
		return -1;
	bad = cma_cmp_pat(r->addr + from, to - from, (uintptr_t)r->addr + from, r->seed);
	return bad < 0 ? -1 : (long)from + bad;
}

/* Offset of the first byte of [from, to) of @r not holding its pattern, or -1. */
static inline long cma_check_orig(const struct cma_region *r, size_t from, size_t to)
{
	size_t hole_end = r->hole + r->hole_len;
	long bad;

	if (!r->hole_len || to <= r->hole || from >= hole_end)
		return cma_check_span(r, from, to);
	bad = cma_check_span(r, from, r->hole > from ? r->hole : from);
	if (bad >= 0)
		return bad;
	return cma_check_span(r, hole_end > from ? hole_end : from, to);
}

static inline bool cma_byte_ok(const struct cma_region *r, const struct cma_seg *s,
			       size_t i, unsigned int src_seed, size_t n)
{
	unsigned char have = *(unsigned char *)(s->dst + i);
	unsigned char want = cma_pat(s->src + i, src_seed);

	if (have == want)
		return true;
	/* Past the count: the byte may or may not have been written. */
	return s->off + i >= n && have == cma_pat(s->dst + i, r->seed);
}

/*
 * cma_verify() - check the region @dst after a transfer of @n bytes from the
 * elements @sv, whose memory held the pattern of @src_seed, to the elements @dv
 * inside @dst.  Bytes of the transfer at offsets [@n, @tol) may hold either
 * their old or their new value.  Every byte of @dst that the transfer did not
 * reach must hold its original pattern.  When elements of @dv overlap, the
 * later one wins, as for a copy in iovec order.
 *
 * Returns -1 if all is well, or the offset in @dst of the first wrong byte.
 */
static inline long cma_verify(const struct cma_region *dst, const struct iovec *dv, int dn,
			      const struct iovec *sv, int sn, unsigned int src_seed,
			      size_t n, size_t tol)
{
	uintptr_t base = (uintptr_t)dst->addr;
	struct cma_seg *seg = NULL;
	unsigned char *seen = NULL;
	size_t pos = 0, i;
	long bad = -1;
	int ns = 0, k;
	bool overlap = false;

	if (tol < n)
		tol = n;
	if (tol) {
		seg = calloc(dn + sn + 1, sizeof(*seg));
		if (!seg)
			return 0;
		ns = cma_segments(seg, dv, dn, sv, sn, tol);
		qsort(seg, ns, sizeof(*seg), cma_seg_cmp);
	}
	for (k = 0; k < ns; k++) {
		if (seg[k].dst < base || seg[k].dst + seg[k].len > base + dst->len) {
			bad = 0;	/* the case itself is broken */
			goto out;
		}
		if (k && seg[k].dst < seg[k - 1].dst + seg[k - 1].len)
			overlap = true;
	}

	if (!overlap) {
		for (k = 0; k < ns; k++) {
			bad = cma_check_orig(dst, pos, seg[k].dst - base);
			if (bad >= 0)
				goto out;
			for (i = 0; i < seg[k].len; i++) {
				long o = cma_cmp_pat((void *)(seg[k].dst + i), seg[k].len - i,
						     seg[k].src + i, src_seed);

				if (o < 0)
					break;
				i += o;
				if (!cma_byte_ok(dst, &seg[k], i, src_seed, n)) {
					bad = (long)(seg[k].dst + i - base);
					goto out;
				}
			}
			pos = seg[k].dst + seg[k].len - base;
		}
		bad = cma_check_orig(dst, pos, dst->len);
		goto out;
	}

	/* Overlapping destinations: the segment latest in the transfer wins. */
	seen = calloc(dst->len, 1);
	if (!seen) {
		bad = 0;
		goto out;
	}
	qsort(seg, ns, sizeof(*seg), cma_seg_cmp);
	for (;;) {
		int last = -1;

		for (k = 0; k < ns; k++)
			if (seg[k].len && (last < 0 || seg[k].off > seg[last].off))
				last = k;
		if (last < 0)
			break;
		for (i = 0; i < seg[last].len; i++) {
			size_t o = seg[last].dst + i - base;

			if (seen[o])
				continue;
			seen[o] = 1;
			if (!cma_byte_ok(dst, &seg[last], i, src_seed, n)) {
				bad = (long)o;
				goto out;
			}
		}
		seg[last].len = 0;
	}
	for (i = 0; i < dst->len; i++) {
		if (seen[i] || cma_in_hole(dst, i))
			continue;
		if ((unsigned char)dst->addr[i] != cma_pat(base + i, dst->seed)) {
			bad = (long)i;
			break;
		}
	}
out:
	free(seen);
	free(seg);
	return bad;
}

static inline size_t cma_iov_total(const struct iovec *v, int n)
{
	size_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += v[i].iov_len;
	return sum;
}

/* ---- the target ------------------------------------------------------ */

/* One transfer: the caller's region and iovec, the target's region and iovec. */
struct cma_xfer {
	struct cma_region lreg;
	struct cma_region rreg;
	int ln;
	int rn;
	struct iovec liov[CMA_IOV_MAX];
	struct iovec riov[CMA_IOV_MAX];
};

struct cma_mbox {
	long arg[8];
	long ret;
	int err;
	struct cma_region reg;	/* result of cma_t_region_alloc() */
	struct cma_xfer x;
};

struct cma_target;
typedef long (*cma_fn)(struct cma_mbox *mb);

struct cma_target {
	pid_t pid;		/* the target; getpid() for a self target */
	bool self;
	int cmd;		/* write end: function pointers to run */
	int ack;		/* read end: one byte per finished call */
	struct cma_mbox *mb;	/* shared with the target */
};

static inline void cma_target_loop(struct cma_target *t, int cmd, int ack, pid_t parent)
{
	uintptr_t fn;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	while (read(cmd, &fn, sizeof(fn)) == sizeof(fn) && fn) {
		errno = 0;
		t->mb->ret = ((cma_fn)fn)(t->mb);
		t->mb->err = errno;
		if (write(ack, "", 1) != 1)
			break;
	}
	_exit(0);
}

static inline int cma_mbox_map(struct cma_target *t)
{
	t->mb = mmap(NULL, sizeof(*t->mb), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (t->mb == MAP_FAILED) {
		t->mb = NULL;
		return -1;
	}
	t->mb->x.lreg.fd = -1;
	t->mb->x.rreg.fd = -1;
	return 0;
}

/* The caller as its own target: calls run in-process. */
static inline int cma_target_self(struct cma_target *t)
{
	memset(t, 0, sizeof(*t));
	t->self = true;
	t->pid = getpid();
	t->cmd = -1;
	t->ack = -1;
	return cma_mbox_map(t);
}

/* Fork a target that waits for calls.  Returns 0 or -1 with errno. */
static inline int cma_target_start(struct cma_target *t)
{
	int c[2], a[2];
	pid_t parent = getpid();

	memset(t, 0, sizeof(*t));
	t->cmd = -1;
	t->ack = -1;
	if (cma_mbox_map(t))
		return -1;
	if (pipe2(c, O_CLOEXEC))
		return -1;
	if (pipe2(a, O_CLOEXEC)) {
		close(c[0]);
		close(c[1]);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (!t->pid) {
		close(c[1]);
		close(a[0]);
		cma_target_loop(t, c[0], a[1], parent);
	}
	close(c[0]);
	close(a[1]);
	t->cmd = c[1];
	t->ack = a[0];
	return 0;
}

/* Run @fn in the target.  Returns its result, with its errno. */
static inline long cma_call(struct cma_target *t, cma_fn fn)
{
	uintptr_t p = (uintptr_t)fn;
	char c;

	if (t->self) {
		errno = 0;
		t->mb->ret = fn(t->mb);
		t->mb->err = errno;
		return t->mb->ret;
	}
	if (t->cmd < 0 || write(t->cmd, &p, sizeof(p)) != sizeof(p) ||
	    read(t->ack, &c, 1) != 1) {
		errno = ESRCH;
		return -1;
	}
	errno = t->mb->err;
	return t->mb->ret;
}

static inline long cma_call1(struct cma_target *t, cma_fn fn, long a0)
{
	t->mb->arg[0] = a0;
	return cma_call(t, fn);
}

static inline long cma_call3(struct cma_target *t, cma_fn fn, long a0, long a1, long a2)
{
	t->mb->arg[0] = a0;
	t->mb->arg[1] = a1;
	t->mb->arg[2] = a2;
	return cma_call(t, fn);
}

/* Stop and reap the target; its regions go with it. */
static inline void cma_target_stop(struct cma_target *t)
{
	if (!t->mb)
		return;
	if (t->self) {
		cma_region_free(&t->mb->x.rreg);
	} else if (t->pid > 0) {
		if (t->mb->x.rreg.path[0])
			unlink(t->mb->x.rreg.path);
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		close(t->cmd);
		close(t->ack);
	}
	cma_region_free(&t->mb->x.lreg);
	munmap(t->mb, sizeof(*t->mb));
	t->mb = NULL;
	t->pid = 0;
}

/* Functions to run in the target, with their arguments in mb->arg[]. */

/* arg: len, seed, kind.  Maps x.rreg. */
static inline long cma_t_rreg_alloc(struct cma_mbox *mb)
{
	return cma_region_alloc(&mb->x.rreg, mb->arg[0], mb->arg[1], mb->arg[2]);
}

static inline long cma_t_rreg_free(struct cma_mbox *mb)
{
	cma_region_free(&mb->x.rreg);
	return 0;
}

static inline long cma_t_rreg_refill(struct cma_mbox *mb)
{
	cma_region_refill(&mb->x.rreg);
	return 0;
}

/* arg: addr, len, prot */
static inline long cma_t_mprotect(struct cma_mbox *mb)
{
	return mprotect((void *)mb->arg[0], mb->arg[1], mb->arg[2]);
}

/* arg: addr, len */
static inline long cma_t_munmap(struct cma_mbox *mb)
{
	return munmap((void *)mb->arg[0], mb->arg[1]);
}

/* arg: addr, len */
static inline long cma_t_msync(struct cma_mbox *mb)
{
	return msync((void *)mb->arg[0], mb->arg[1], MS_SYNC);
}

/* arg: uid, gid, dumpable */
static inline long cma_t_setids(struct cma_mbox *mb)
{
	if (setgroups(0, NULL) || setresgid(mb->arg[1], mb->arg[1], mb->arg[1]) ||
	    setresuid(mb->arg[0], mb->arg[0], mb->arg[0]))
		return -1;
	return prctl(PR_SET_DUMPABLE, mb->arg[2], 0, 0, 0);
}

/* arg: dumpable */
static inline long cma_t_dumpable(struct cma_mbox *mb)
{
	return prctl(PR_SET_DUMPABLE, mb->arg[0], 0, 0, 0);
}

/* arg: the pid allowed to trace, or PR_SET_PTRACER_ANY */
static inline long cma_t_ptracer(struct cma_mbox *mb)
{
	return prctl(PR_SET_PTRACER, (unsigned long)mb->arg[0], 0, 0, 0);
}

/*
 * Check the target's side of x after a transfer of @n bytes (tolerance up to
 * @tol).  arg: write, n, tol.  Returns 0 if all is well, else 1 + the offset
 * of the first bad byte (so that a failed call, -1, is never taken for 0).
 */
static inline long cma_t_check(struct cma_mbox *mb)
{
	struct cma_xfer *x = &mb->x;

	if (!mb->arg[0])
		return cma_verify(&x->rreg, NULL, 0, NULL, 0, 0, 0, 0) + 1;
	return cma_verify(&x->rreg, x->riov, x->rn, x->liov, x->ln, x->lreg.seed,
			  mb->arg[1], mb->arg[2]) + 1;
}

static inline long cma_check_local(struct cma_xfer *x, bool write, size_t n, size_t tol)
{
	if (write)
		return cma_verify(&x->lreg, NULL, 0, NULL, 0, 0, 0, 0);
	return cma_verify(&x->lreg, x->liov, x->ln, x->riov, x->rn, x->rreg.seed, n, tol);
}

/*
 * Set up a transfer: x.lreg of @lsize bytes in the caller (seed 0x11), and
 * x.rreg of @rsize bytes of @rkind in the target (seed 0x5a).  Returns 0 or
 * -1 with errno set.
 */
static inline int cma_xfer_setup(struct cma_target *t, size_t lsize, size_t rsize,
				 enum cma_kind rkind)
{
	struct cma_xfer *x = &t->mb->x;

	x->ln = 0;
	x->rn = 0;
	if (cma_region_alloc(&x->lreg, lsize, 0x11, CMA_ANON))
		return -1;
	if (cma_call3(t, cma_t_rreg_alloc, rsize, 0x5a, rkind))
		return -1;
	return 0;
}

static inline void cma_liov(struct cma_xfer *x, size_t off, size_t len)
{
	x->liov[x->ln].iov_base = x->lreg.addr + off;
	x->liov[x->ln].iov_len = len;
	x->ln++;
}

static inline void cma_riov(struct cma_xfer *x, size_t off, size_t len)
{
	x->riov[x->rn].iov_base = x->rreg.addr + off;
	x->riov[x->rn].iov_len = len;
	x->rn++;
}

static inline ssize_t cma_xfer_run(struct cma_target *t, bool write, unsigned long flags)
{
	struct cma_xfer *x = &t->mb->x;

	return cma_rw(write, t->pid, x->liov, x->ln, x->riov, x->rn, flags);
}

/*
 * Check both sides of the last transfer, which moved @n bytes, and tolerate
 * either value for transfer offsets in [@n, @tol).
 */
static inline void cma_xfer_check_tol(struct __test_metadata *_metadata, struct cma_target *t,
				      bool write, size_t n, size_t tol)
{
	struct cma_xfer *x = &t->mb->x;
	long bad;

	bad = cma_check_local(x, write, n, tol);
	EXPECT_EQ(-1, bad) TH_LOG("local byte %ld of %zu wrong", bad, x->lreg.len);
	bad = cma_call3(t, cma_t_check, write, n, tol) - 1;
	EXPECT_EQ(-1, bad) TH_LOG("remote byte %ld of %zu wrong", bad, x->rreg.len);
}

static inline void cma_xfer_check(struct __test_metadata *_metadata, struct cma_target *t,
				  bool write, size_t n)
{
	cma_xfer_check_tol(_metadata, t, write, n, n);
}

/*
 * Run the transfer set up in t->mb->x, expect @want as result, then check
 * both sides.  A negative @want is an expected errno.
 */
static inline void cma_xfer_expect(struct __test_metadata *_metadata, struct cma_target *t,
				   bool write, ssize_t want)
{
	ssize_t ret;

	errno = 0;
	ret = cma_xfer_run(t, write, 0);
	if (want < 0) {
		ASSERT_EQ(-1, ret);
		ASSERT_EQ(-want, errno) TH_LOG("errno %d (%s)", errno, strerror(errno));
		want = 0;
	} else {
		ASSERT_EQ(want, ret) TH_LOG("errno %d (%s)", errno, strerror(errno));
	}
	cma_xfer_check(_metadata, t, write, want);
}

/*
 * cma_xfer_expect(), and every FOLL_PIN pin taken during it released, where
 * the kernel's counters can be read and folded (cma_pins.h).
 */
static inline void cma_xfer_expect_balanced(struct __test_metadata *_metadata,
					    struct cma_target *t, bool write, ssize_t want)
{
	long long acq0, rel0, acq1, rel1;
	bool ref0, ref1, pins;

	pins = !cma_read_pins(&acq0, &rel0, &ref0);
	cma_xfer_expect(_metadata, t, write, want);
	if (!pins || cma_read_pins(&acq1, &rel1, &ref1) || !ref0 || !ref1)
		return;
	EXPECT_EQ(acq1 - acq0, rel1 - rel0) TH_LOG("%lld pins taken, %lld released",
						   acq1 - acq0, rel1 - rel0);
}

/*
 * Like cma_xfer_expect() without the harness: returns 0 when the result and
 * both sides are right, else -1 with a description in @why.
 */
static inline int cma_xfer_try(struct cma_target *t, bool write, ssize_t want,
			       char *why, size_t whylen)
{
	struct cma_xfer *x = &t->mb->x;
	ssize_t ret;
	long bad;

	errno = 0;
	ret = cma_xfer_run(t, write, 0);
	if (want < 0 ? (ret != -1 || errno != -want) : ret != want) {
		snprintf(why, whylen, "returned %zd (errno %d), expected %zd", ret, errno, want);
		return -1;
	}
	if (want < 0)
		want = 0;
	bad = cma_check_local(x, write, want, want);
	if (bad >= 0) {
		snprintf(why, whylen, "local byte %ld wrong", bad);
		return -1;
	}
	bad = cma_call3(t, cma_t_check, write, want, want) - 1;
	if (bad != -1) {
		snprintf(why, whylen, "remote byte %ld wrong", bad);
		return -1;
	}
	return 0;
}

/* Put both sides back to their patterns between runs of one case. */
static inline void cma_xfer_reset(struct cma_target *t)
{
	cma_region_refill(&t->mb->x.lreg);
	cma_call(t, cma_t_rreg_refill);
	t->mb->x.ln = 0;
	t->mb->x.rn = 0;
}

/* arg: n.  Put the pattern back under the first @n bytes of x.riov, only. */
static inline long cma_t_refill_riov(struct cma_mbox *mb)
{
	struct cma_xfer *x = &mb->x;
	size_t left = mb->arg[0], len;
	int i;

	for (i = 0; i < x->rn && left; i++) {
		len = x->riov[i].iov_len < left ? x->riov[i].iov_len : left;
		if (x->rreg.seed)
			cma_fill(x->riov[i].iov_base, len, x->rreg.seed);
		else
			memset(x->riov[i].iov_base, 0, len);
		left -= len;
	}
	return 0;
}

/*
 * Undo a transfer of @n bytes but keep the iovecs, touching no remote byte
 * that the transfer did not write (some may not even be resident).
 */
static inline void cma_xfer_reset_keep(struct cma_target *t, bool write, size_t n)
{
	cma_region_refill(&t->mb->x.lreg);
	if (write && n)
		cma_call1(t, cma_t_refill_riov, n);
}

/* ---- caller children and privileges ---------------------------------- */

struct cma_res {
	long ret;
	int err;
	int done;
};

/*
 * Run @fn(@arg) in a forked child (to drop privileges there, for instance)
 * and return its result and errno.  done is 0 when the child died.
 */
static inline struct cma_res cma_in_child(long (*fn)(void *arg), void *arg)
{
	struct cma_res res = { .ret = -1, .err = 0, .done = 0 };
	struct cma_res *shared;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED)
		return res;
	memset(shared, 0, sizeof(*shared));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		errno = 0;
		shared->ret = fn(arg);
		shared->err = errno;
		shared->done = 1;
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	res = *shared;
	munmap(shared, sizeof(*shared));
	return res;
}

/* Become @uid/@gid with no supplementary groups; stay dumpable. */
static inline int cma_become(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* Drop @cap from the effective and permitted sets. */
static inline int cma_drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[cap / 32].effective &= ~(1u << (cap % 32));
	data[cap / 32].permitted &= ~(1u << (cap % 32));
	return syscall(SYS_capset, &hdr, data);
}

/* ---- small system helpers -------------------------------------------- */

static inline int cma_read_long(const char *path, long *val)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*val = strtol(buf, NULL, 10);
	return 0;
}

static inline int cma_write_long(const char *path, long val)
{
	char buf[64];
	int fd, len;
	ssize_t n;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%ld\n", val);
	n = write(fd, buf, len);
	close(fd);
	return n == len ? 0 : -1;
}

/* A pid that no process has: a child that was just reaped. */
static inline pid_t cma_free_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return -1;
	return pid;
}

/* A child that has exited but is not reaped yet. */
static inline pid_t cma_zombie(void)
{
	siginfo_t si;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return -1;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT))
		return -1;
	return pid;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'D', 'Z', ...), or 0. */
static inline char cma_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static inline double cma_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- userfaultfd ---------------------------------------------------- */

/*
 * A userfaultfd that a thread serves: each missing page of the registered
 * range gets the pattern of @seed for its addresses, after @delay_us.
 */
struct cma_uffd_server {
	int fd;
	unsigned int seed;
	long delay_us;
	long served;		/* faults served so far */
	pthread_t th;
};

static inline void *cma_uffd_serve(void *arg)
{
	struct cma_uffd_server *s = arg;
	size_t p = cma_page(), i;
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	struct uffdio_copy copy;
	struct uffd_msg msg;
	unsigned char *page;
	uintptr_t addr;

	page = mmap(NULL, p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	for (;;) {
		if (poll(&pfd, 1, -1) <= 0 || read(s->fd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		addr = msg.arg.pagefault.address & ~(uintptr_t)(p - 1);
		for (i = 0; i < p; i++)
			page[i] = cma_pat(addr + i, s->seed);
		if (s->delay_us)
			usleep(s->delay_us);
		memset(&copy, 0, sizeof(copy));
		copy.dst = addr;
		copy.src = (uintptr_t)page;
		copy.len = p;
		/* Counted first: the copy wakes the faulting thread up. */
		__atomic_add_fetch(&s->served, 1, __ATOMIC_SEQ_CST);
		if (ioctl(s->fd, UFFDIO_COPY, &copy))
			__atomic_sub_fetch(&s->served, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/*
 * Drop the pages of @r, register them with a new userfaultfd that a
 * thread of this process serves with @r's pattern, after @delay_us a
 * page.  Returns 0, or -1 with errno set.
 */
static inline int cma_uffd_serve_region(struct cma_uffd_server *s, struct cma_region *r,
					long delay_us)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	memset(s, 0, sizeof(*s));
	s->seed = r->seed;
	s->delay_us = delay_us;
	if (madvise(r->addr, r->len, MADV_DONTNEED))
		return -1;
	s->fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (s->fd < 0 || ioctl(s->fd, UFFDIO_API, &api))
		return -1;
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)r->addr;
	reg.range.len = r->len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(s->fd, UFFDIO_REGISTER, &reg))
		return -1;
	errno = pthread_create(&s->th, NULL, cma_uffd_serve, s);
	return errno ? -1 : 0;
}

/* ---- page frames and flags -------------------------------------------- */

#define CMA_PG_PRESENT	_BITULL(63)	/* cma_page_info(): the page is present */

/*
 * The page frame of @addr in @pid (0 if not present) and its
 * /proc/kpageflags, with CMA_PG_PRESENT added.  -1 where they cannot be read
 * (both need CAP_SYS_ADMIN).
 */
static inline int cma_page_info(pid_t pid, uintptr_t addr, uint64_t *pfn, uint64_t *flags)
{
	char path[64];
	uint64_t ent;
	int pm, kpf, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (pm < 0 || kpf < 0)
		goto out;
	if (pread64(pm, &ent, sizeof(ent), addr / cma_page() * sizeof(ent)) != sizeof(ent))
		goto out;
	*pfn = 0;
	*flags = 0;
	if (ent & CMA_PG_PRESENT) {
		*pfn = ent & ((1ULL << 55) - 1);
		if (!*pfn)
			goto out;
		if (pread64(kpf, flags, sizeof(*flags), *pfn * sizeof(*flags)) != sizeof(*flags))
			goto out;
		*flags |= CMA_PG_PRESENT;
	}
	ret = 0;
out:
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
	return ret;
}

/* ---- huge pages ------------------------------------------------------ */

#define CMA_THP_SYSFS	"/sys/kernel/mm/transparent_hugepage"
#define CMA_KPF_THP	22	/* /proc/kpageflags: page of a THP (any order) */

/*
 * Pages of [@addr, @addr + @len) that transparent huge pages back, from
 * /proc/self/pagemap and /proc/kpageflags (any THP order, anonymous or
 * shmem).  Touches nothing.  Returns -1 when the page frames cannot be
 * read (both files need CAP_SYS_ADMIN).
 */
static inline long cma_thp_pages(const void *addr, size_t len)
{
	size_t page = cma_page(), i, n = len / page;
	uint64_t ent, flags;
	long huge = 0;
	int pm, kpf;

	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (pm < 0 || kpf < 0)
		goto fail;
	for (i = 0; i < n; i++) {
		off64_t at = ((uintptr_t)addr / page + i) * sizeof(ent);

		if (pread64(pm, &ent, sizeof(ent), at) != sizeof(ent))
			goto fail;
		if (!(ent >> 63))	/* not present */
			continue;
		ent &= (1ULL << 55) - 1;
		if (!ent)		/* no page frame numbers for us */
			goto fail;
		if (pread64(kpf, &flags, sizeof(flags), ent * sizeof(flags)) != sizeof(flags))
			goto fail;
		huge += (flags >> CMA_KPF_THP) & 1;
	}
	close(pm);
	close(kpf);
	return huge;
fail:
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
	return -1;
}

/*
 * Bytes of the mapping that holds @addr counted under @field in
 * /proc/self/smaps (AnonHugePages, ShmemPmdMapped: PMD-mapped THPs), or
 * -1 if there is no such mapping or field.
 */
static inline long cma_smaps_bytes(const void *addr, const char *field)
{
	unsigned long lo, hi, kb;
	size_t flen = strlen(field);
	bool in = false;
	char line[512];
	long ret = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			continue;
		}
		if (in && !strncmp(line, field, flen) && line[flen] == ':' &&
		    sscanf(line + flen + 1, "%lu", &kb) == 1) {
			ret = kb << 10;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Start of the first mapping of @pid named @name in /proc/PID/maps, or 0. */
static inline uintptr_t cma_find_mapping(pid_t pid, const char *name, size_t *len)
{
	char path[64], line[512];
	uintptr_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char *tail = strrchr(line, ' ');

		if (!tail || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		tail[strcspn(tail, "\n")] = 0;
		if (!strcmp(tail + 1, name)) {
			found = lo;
			*len = hi - lo;
			break;
		}
	}
	fclose(f);
	return found;
}

#endif /* CMA_COMMON_H */
