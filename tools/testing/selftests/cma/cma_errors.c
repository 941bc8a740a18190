// SPDX-License-Identifier: GPL-2.0
/*
 * process_vm_readv(2)/process_vm_writev(2): each error with its exact errno,
 * and the order in which the checks apply.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

#define SIGN_BIT	((size_t)1 << (sizeof(size_t) * 8 - 1))
#define BAD_PTR		((void *)1)

static char lbuf[1 << 16];
static char rbuf[1 << 16];

/* Both syscalls fail with @err, or succeed with @want when @err is 0. */
#define EXPECT_BOTH(err, want, pid, lv, ln, rv, rn, flags) do {			\
	int __w, __e = (err);							\
	for (__w = 0; __w < 2; __w++) {						\
		ssize_t __r;							\
		errno = 0;							\
		__r = cma_rw(__w, pid, lv, ln, rv, rn, flags);			\
		if (__e) {							\
			EXPECT_EQ(-1, __r) TH_LOG("%s", __w ? "writev" : "readv"); \
			EXPECT_EQ(__e, errno) TH_LOG("%s: %s", __w ? "writev" : "readv", \
						     strerror(errno));		\
		} else {							\
			EXPECT_EQ(want, __r) TH_LOG("%s: %s", __w ? "writev" : "readv", \
						    strerror(errno));		\
		}								\
	}									\
} while (0)

TEST(flags_unknown_checked_first)
{
	const unsigned long bad[] = {
		1UL << 2, 1UL << 7, 1UL << 31, ~0UL, PROCESS_VM_PIDFD | (1UL << 3),
		PROCESS_VM_NOWAIT | (1UL << 30), ~(PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT),
	};
	struct iovec l = { lbuf, 16 }, r = { rbuf, 16 };
	pid_t gone = cma_free_pid();
	size_t i;

	ASSERT_LT(0, gone);
	memset(lbuf, 1, 16);
	memset(rbuf, 2, 16);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		/* Everything else is wrong too: EINVAL still comes first. */
		EXPECT_BOTH(EINVAL, 0, gone, BAD_PTR, CMA_IOV_MAX + 1, BAD_PTR,
			    CMA_IOV_MAX + 1, bad[i]);
		EXPECT_BOTH(EINVAL, 0, -1, NULL, 1, NULL, 1, bad[i]);
		/* A transfer that would otherwise work does not happen. */
		EXPECT_BOTH(EINVAL, 0, getpid(), &l, 1, &r, 1, bad[i]);
		EXPECT_BOTH(EINVAL, 0, getpid(), NULL, 0, NULL, 0, bad[i]);
	}
	EXPECT_EQ(1, lbuf[15]);
	EXPECT_EQ(2, rbuf[15]);
}

TEST(liovcnt_over_iov_max)
{
	static struct iovec l[CMA_IOV_MAX + 1];
	struct iovec r = { rbuf, 4096 };
	int i;

	for (i = 0; i <= CMA_IOV_MAX; i++) {
		l[i].iov_base = lbuf + i;
		l[i].iov_len = 1;
	}
	EXPECT_BOTH(EINVAL, 0, getpid(), l, CMA_IOV_MAX + 1, &r, 1, 0);
	EXPECT_BOTH(EINVAL, 0, getpid(), l, ULONG_MAX, &r, 1, 0);
	EXPECT_BOTH(0, CMA_IOV_MAX, getpid(), l, CMA_IOV_MAX, &r, 1, 0);
}

/*
 * A count of 2^32 + k elements is more than IOV_MAX, not k: mainline
 * truncates liovcnt to 32 bits there and moves k elements' bytes; we
 * return EINVAL (riovcnt was never truncated).  Only 64-bit callers can
 * pass such a count.
 */
TEST(liovcnt_over_32_bits)
{
#if ULONG_MAX > 0xffffffffUL
	static struct iovec l[2] = { { lbuf, 8 }, { lbuf + 8, 8 } };
	struct iovec r = { rbuf, 16 };

	if (!cma_flag_supported(PROCESS_VM_PIDFD))
		SKIP(return, "mainline truncates liovcnt to 32 bits: not our kernel");
	memset(lbuf, 1, 16);
	memset(rbuf, 2, 16);
	EXPECT_BOTH(EINVAL, 0, getpid(), l, (1UL << 32) + 2, &r, 1, 0);
	EXPECT_BOTH(EINVAL, 0, getpid(), &r, 1, l, (1UL << 32) + 2, 0);
	EXPECT_EQ(1, lbuf[15]);
	EXPECT_EQ(2, rbuf[15]);
#else
	SKIP(return, "32-bit ABI: liovcnt cannot exceed 32 bits");
#endif
}

TEST(riovcnt_over_iov_max)
{
	static struct iovec r[CMA_IOV_MAX + 1];
	struct iovec l = { lbuf, 4096 };
	int i;

	for (i = 0; i <= CMA_IOV_MAX; i++) {
		r[i].iov_base = rbuf + i;
		r[i].iov_len = 1;
	}
	EXPECT_BOTH(EINVAL, 0, getpid(), &l, 1, r, CMA_IOV_MAX + 1, 0);
	EXPECT_BOTH(EINVAL, 0, getpid(), &l, 1, r, ULONG_MAX, 0);
	EXPECT_BOTH(0, CMA_IOV_MAX, getpid(), &l, 1, r, CMA_IOV_MAX, 0);
}

TEST(local_len_negative)
{
	struct iovec l[2] = { { lbuf, 8 }, { lbuf + 8, SIGN_BIT } };
	struct iovec r = { rbuf, 64 };

	EXPECT_BOTH(EINVAL, 0, getpid(), &l[1], 1, &r, 1, 0);
	EXPECT_BOTH(EINVAL, 0, getpid(), l, 2, &r, 1, 0);
	l[1].iov_len = (size_t)-1;
	EXPECT_BOTH(EINVAL, 0, getpid(), l, 2, &r, 1, 0);
}

TEST(remote_len_negative)
{
	struct iovec r[2] = { { rbuf, 8 }, { rbuf + 8, SIGN_BIT } };
	struct iovec l = { lbuf, 64 };

	EXPECT_BOTH(EINVAL, 0, getpid(), &l, 1, &r[1], 1, 0);
	EXPECT_BOTH(EINVAL, 0, getpid(), &l, 1, r, 2, 0);
	r[1].iov_len = (size_t)-1;
	EXPECT_BOTH(EINVAL, 0, getpid(), &l, 1, r, 2, 0);
}

/*
 * A local total above MAX_RW_COUNT (but no single negative length) is capped,
 * as for readv(2), not refused: the transfer moves what the remote side has.
 */
TEST(local_len_total_capped)
{
	struct iovec l[3], r = { rbuf, 4096 };
	size_t big = sizeof(size_t) > 4 ? 1UL << 30 : 0x7ffff000UL;
	int n = sizeof(size_t) > 4 ? 3 : 2;

	l[0].iov_base = lbuf;
	l[0].iov_len = big;
	l[1].iov_base = lbuf;
	l[1].iov_len = sizeof(size_t) > 4 ? big : 0x800;
	l[2] = l[1];
	memset(rbuf, 0x42, 4096);
	memset(lbuf, 0, 8192);
	ASSERT_EQ(4096, cma_readv(getpid(), l, n, &r, 1, 0)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0x42, lbuf[4095]);
	EXPECT_EQ(0, lbuf[4096]);
}

/*
 * Local lengths whose sum overflows ssize_t.  On 64-bit ABIs each length
 * then reaches past the address space: mainline fails the range check
 * (EFAULT), a kernel that sums first says EINVAL; both refuse.  On 32-bit
 * ABIs the ranges are valid, and mainline caps the total like readv(2) and
 * moves the data; a kernel that refuses says EINVAL.
 */
TEST(local_len_sum_overflow)
{
	size_t half = ((size_t)-1 >> 1) / 2 + 1;
	struct iovec l[2] = { { lbuf, half }, { lbuf, half } };
	struct iovec r = { rbuf, 4096 };
	ssize_t ret;

	if (sizeof(size_t) == 4) {
		l[0].iov_len = 0x7ffff000;
		l[1].iov_len = 0x7ffff000;
	}
	memset(rbuf, 0x43, 4096);
	memset(lbuf, 0, 8192);
	errno = 0;
	ret = cma_readv(getpid(), l, 2, &r, 1, 0);
	if (ret == -1 && errno == EINVAL)
		return;
	if (sizeof(size_t) > 4) {
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(EFAULT, errno);
		EXPECT_EQ(0, lbuf[0]);
	} else {
		ASSERT_EQ(4096, ret);
		EXPECT_EQ(0x43, lbuf[4095]);
		EXPECT_EQ(0, lbuf[4096]);
	}
}

TEST(local_iov_array_bad)
{
	struct iovec r = { rbuf, 64 };
	void *none;

	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(none != MAP_FAILED);
	EXPECT_BOTH(EFAULT, 0, getpid(), NULL, 1, &r, 1, 0);
	EXPECT_BOTH(EFAULT, 0, getpid(), BAD_PTR, 1, &r, 1, 0);
	EXPECT_BOTH(EFAULT, 0, getpid(), none, 2, &r, 1, 0);
	munmap(none, 4096);
}

TEST(remote_iov_array_bad)
{
	struct iovec l = { lbuf, 64 };
	void *none;

	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(none != MAP_FAILED);
	EXPECT_BOTH(EFAULT, 0, getpid(), &l, 1, NULL, 1, 0);
	EXPECT_BOTH(EFAULT, 0, getpid(), &l, 1, BAD_PTR, 1, 0);
	EXPECT_BOTH(EFAULT, 0, getpid(), &l, 1, none, 3, 0);
	munmap(none, 4096);
}

/* A local total of 0 returns 0 before the target or the remote side matter. */
TEST(zero_local_total)
{
	struct iovec l[3] = { { lbuf, 0 }, { NULL, 0 }, { BAD_PTR, 0 } };
	struct iovec r = { rbuf, 64 };
	pid_t gone = cma_free_pid();

	ASSERT_LT(0, gone);
	EXPECT_BOTH(0, 0, gone, NULL, 0, NULL, 0, 0);
	EXPECT_BOTH(0, 0, gone, NULL, 0, &r, 1, 0);
	EXPECT_BOTH(0, 0, gone, l, 3, &r, 1, 0);
	EXPECT_BOTH(0, 0, gone, l, 3, BAD_PTR, 1, 0);
	EXPECT_BOTH(0, 0, getpid(), l, 3, BAD_PTR, 1, 0);
}

/* A nonzero local total with only zero-length remote elements moves nothing. */
TEST(zero_remote_total)
{
	struct iovec l = { lbuf, 64 };
	struct iovec r[3] = { { rbuf, 0 }, { NULL, 0 }, { BAD_PTR, 0 } };

	memset(lbuf, 5, 64);
	memset(rbuf, 6, 64);
	EXPECT_BOTH(0, 0, getpid(), &l, 1, r, 3, 0);
	EXPECT_BOTH(0, 0, getpid(), &l, 1, r, 0, 0);
	EXPECT_EQ(5, lbuf[0]);
	EXPECT_EQ(6, rbuf[0]);
}

TEST(no_such_pid)
{
	struct iovec l = { lbuf, 64 }, r = { rbuf, 64 };
	pid_t gone = cma_free_pid();

	ASSERT_LT(0, gone);
	EXPECT_BOTH(ESRCH, 0, gone, &l, 1, &r, 1, 0);
	EXPECT_BOTH(ESRCH, 0, INT_MAX, &l, 1, &r, 1, 0);
}

/* pid 0 and negative pids name no process here (they are not "self" or groups). */
TEST(pid_zero_and_negative)
{
	struct iovec l = { lbuf, 64 }, r = { rbuf, 64 };

	EXPECT_BOTH(ESRCH, 0, 0, &l, 1, &r, 1, 0);
	EXPECT_BOTH(ESRCH, 0, -1, &l, 1, &r, 1, 0);
	EXPECT_BOTH(ESRCH, 0, -getpid(), &l, 1, &r, 1, 0);
	EXPECT_BOTH(ESRCH, 0, INT_MIN, &l, 1, &r, 1, 0);
}

TEST(kernel_thread)
{
	struct iovec l = { lbuf, 64 }, r = { (void *)0x400000, 64 };
	char line[128];
	bool kthreadd = false;
	FILE *f;

	f = fopen("/proc/2/status", "re");
	if (f) {
		if (fgets(line, sizeof(line), f))
			kthreadd = !!strstr(line, "kthreadd");
		fclose(f);
	}
	if (!kthreadd)
		SKIP(return, "pid 2 is not kthreadd here");
	EXPECT_BOTH(ESRCH, 0, 2, &l, 1, &r, 1, 0);
}

TEST(zombie)
{
	struct iovec l = { lbuf, 64 }, r = { rbuf, 64 };
	pid_t pid = cma_zombie();

	ASSERT_LT(0, pid);
	EXPECT_BOTH(ESRCH, 0, pid, &l, 1, &r, 1, 0);
	waitpid(pid, NULL, 0);
}

FIXTURE(remote) {
	struct cma_target t;
	struct cma_xfer *x;
	size_t page;
};

FIXTURE_SETUP(remote)
{
	self->page = cma_page();
	ASSERT_EQ(0, cma_target_start(&self->t));
	self->x = &self->t.mb->x;
	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * self->page, 4 * self->page, CMA_ANON));
}

FIXTURE_TEARDOWN(remote)
{
	cma_target_stop(&self->t);
}

/* Both directions fail with @err on one page at page 1 of the target's region. */
static void both_fail(struct __test_metadata *_metadata, struct cma_target *t, int err)
{
	struct cma_xfer *x = &t->mb->x;

	cma_liov(x, 0, cma_page());
	cma_riov(x, cma_page(), cma_page());
	cma_xfer_expect(_metadata, t, false, -err);
	cma_xfer_expect(_metadata, t, true, -err);
}

TEST_F(remote, prot_none)
{
	size_t p = self->page;

	ASSERT_EQ(0, cma_call3(&self->t, cma_t_mprotect, (long)(self->x->rreg.addr + p), p,
			       PROT_NONE));
	self->x->rreg.hole = p;
	self->x->rreg.hole_len = p;
	both_fail(_metadata, &self->t, EFAULT);
}

TEST_F(remote, unmapped)
{
	size_t p = self->page;

	ASSERT_EQ(0, cma_call3(&self->t, cma_t_munmap, (long)(self->x->rreg.addr + p), p, 0));
	self->x->rreg.hole = p;
	self->x->rreg.hole_len = p;
	both_fail(_metadata, &self->t, EFAULT);
}

/*
 * A remote element at @addr of @len bytes that no user mapping can hold:
 * alone it moves nothing (EFAULT); after a good element, that element's
 * bytes move and the transfer stops there, whatever follows.
 */
static void bad_remote(struct __test_metadata *_metadata, struct cma_target *t, void *addr,
		       size_t len)
{
	struct cma_xfer *x = &t->mb->x;
	int w;

	for (w = 0; w < 2; w++) {
		x->ln = 0;
		x->rn = 0;
		cma_liov(x, 0, len + 100);
		x->riov[x->rn].iov_base = addr;
		x->riov[x->rn++].iov_len = len;
		cma_xfer_expect(_metadata, t, w, -EFAULT);
		x->ln = 0;
		x->rn = 0;
		cma_liov(x, 0, len + 200);
		cma_riov(x, 7, 100);
		x->riov[x->rn].iov_base = addr;
		x->riov[x->rn++].iov_len = len;
		cma_riov(x, 300, 100);
		cma_xfer_expect(_metadata, t, w, 100);
		cma_xfer_reset(t);
	}
}

TEST_F(remote, address_all_ones)
{
	bad_remote(_metadata, &self->t, (void *)-1, 1);
	bad_remote(_metadata, &self->t, (void *)-1, 16);
}

/* Kernel memory (x86_64 kernel text; above a 32-bit task's address space). */
TEST_F(remote, address_kernel)
{
#if UINTPTR_MAX > 0xffffffffUL
	bad_remote(_metadata, &self->t, (void *)0xffffffff81000000UL, 64);
#else
	bad_remote(_metadata, &self->t, (void *)0xffffe000UL, 64);
#endif
}

/* An element that runs past the top of the address space (and wraps to 0). */
TEST_F(remote, element_wraps)
{
	uintptr_t top = UINTPTR_MAX & ~(uintptr_t)(self->page - 1);

	bad_remote(_metadata, &self->t, (void *)top, 2 * self->page);
	bad_remote(_metadata, &self->t, (void *)(top + 100), self->page);
}

/* No FOLL_FORCE: writev cannot write read-only memory, readv still reads it. */
TEST_F(remote, read_only_for_writev)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_call3(&self->t, cma_t_mprotect, (long)(x->rreg.addr + p), p, PROT_READ));
	cma_liov(x, 0, p);
	cma_riov(x, p, p);
	cma_xfer_expect(_metadata, &self->t, true, -EFAULT);
	cma_xfer_expect(_metadata, &self->t, false, p);
}

/* The target's own code is read-only too: writev cannot patch it. */
TEST_F(remote, read_only_text)
{
	unsigned char before[16], after[16];
	struct iovec l = { before, sizeof(before) };
	struct iovec r = { (void *)(uintptr_t)&cma_t_munmap, sizeof(before) };

	ASSERT_EQ(16, cma_readv(self->t.pid, &l, 1, &r, 1, 0));
	errno = 0;
	EXPECT_EQ(-1, cma_writev(self->t.pid, &l, 1, &r, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	memset(after, 0xcc, sizeof(after));
	l.iov_base = after;
	EXPECT_EQ(16, cma_readv(self->t.pid, &l, 1, &r, 1, 0));
	EXPECT_EQ(0, memcmp(before, after, sizeof(after)));
}

/*
 * arg: len.  Maps a secret memory area at x.rreg.  Returns -2 if the kernel
 * has no memfd_secret(), -1 with errno on another failure.
 */
static long t_map_secret(struct cma_mbox *mb)
{
	struct cma_region *r = &mb->x.rreg;
	int fd = syscall(__NR_memfd_secret, 0);
	void *p;

	if (fd < 0)
		return -2;
	if (ftruncate(fd, mb->arg[0])) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, mb->arg[0], PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	memset(p, 0x5e, mb->arg[0]);
	cma_region_free(r);
	r->addr = p;
	r->len = mb->arg[0];
	r->seed = 0;
	return 0;
}

TEST_F(remote, secretmem)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;
	struct iovec l = { x->lreg.addr, p }, r;
	long ret = cma_call1(&self->t, t_map_secret, 2 * p);

	if (ret == -2)
		SKIP(return, "no memfd_secret(): %s", strerror(errno));
	ASSERT_EQ(0, ret) TH_LOG("secret memory: %s", strerror(errno));
	r.iov_base = x->rreg.addr + 10;
	r.iov_len = p;
	EXPECT_BOTH(EFAULT, 0, self->t.pid, &l, 1, &r, 1, 0);
	EXPECT_EQ(-1, cma_verify(&x->lreg, NULL, 0, NULL, 0, 0, 0, 0));
	/* A few bytes in one page: the way that pins without the mmap lock. */
	r.iov_len = 64;
	l.iov_len = 64;
	EXPECT_BOTH(EFAULT, 0, self->t.pid, &l, 1, &r, 1, 0);
	EXPECT_EQ(-1, cma_verify(&x->lreg, NULL, 0, NULL, 0, 0, 0, 0));
}

/* [vvar] is a VM_PFNMAP | VM_IO mapping, which GUP refuses. */
TEST_F(remote, vvar_pfnmap)
{
	struct iovec l = { self->x->lreg.addr, 64 }, r;
	size_t len = 0;

	r.iov_base = (void *)cma_find_mapping(self->t.pid, "[vvar]", &len);
	r.iov_len = 64;
	if (!r.iov_base)
		SKIP(return, "the target has no [vvar] mapping");
	EXPECT_BOTH(EFAULT, 0, self->t.pid, &l, 1, &r, 1, 0);
	EXPECT_EQ(-1, cma_verify(&self->x->lreg, NULL, 0, NULL, 0, 0, 0, 0));
}

TEST_HARNESS_MAIN
