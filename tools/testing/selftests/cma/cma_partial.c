// SPDX-License-Identifier: GPL-2.0
/*
 * Partial transfers.  The documented granularity (the same as mainline's):
 * the transfer runs in iovec order and stops at the first remote page that
 * cannot be accessed; the result counts the bytes before that page, and once
 * any byte moved no error is returned.  A local page that cannot be accessed
 * stops the transfer at or before its address.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

FIXTURE(partial) {
	struct cma_target t;
	struct cma_xfer *x;
	size_t page;
};

#define CMA_RW_FIXTURE partial
#include "cma_rw_variants.h"

FIXTURE_SETUP(partial)
{
	self->page = cma_page();
	ASSERT_EQ(0, cma_target_start(&self->t));
	self->x = &self->t.mb->x;
}

FIXTURE_TEARDOWN(partial)
{
	cma_target_stop(&self->t);
}

/* Unmap @npages remote pages at page @pg, and have the checks skip them. */
static int remote_hole(struct cma_target *t, size_t pg, size_t npages)
{
	struct cma_xfer *x = &t->mb->x;

	x->rreg.hole = pg * cma_page();
	x->rreg.hole_len = npages * cma_page();
	return cma_call3(t, cma_t_munmap, (long)(x->rreg.addr + x->rreg.hole), x->rreg.hole_len, 0);
}

/* Element k+1 lies in unmapped memory: the first k elements move. */
TEST_F(partial, unmapped_element_after_k)
{
	size_t p = self->page, sum = 0;
	struct cma_xfer *x = self->x;
	int k;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 8 * p, 8 * p, CMA_ANON));
	ASSERT_EQ(0, remote_hole(&self->t, 5, 1));
	for (k = 0; k < 3; k++) {
		cma_riov(x, 100 + k * (p + 7), p - 11);
		sum += p - 11;
	}
	cma_riov(x, 5 * p + 16, 64);
	cma_riov(x, 6 * p, 128);
	cma_liov(x, 20, sum + 192);
	cma_xfer_expect(_metadata, &self->t, variant->write, sum);
}

/*
 * Elements 40 pages apart, so that windows stop looking ahead after the
 * eighth and pin each element's page alone: the page of element 30 is
 * unmapped, and the 30 elements before it move.
 */
TEST_F(partial, scattered_unmapped_past_cutoff)
{
	const size_t stride = 40, n = 40, bad = 30;
	size_t p = self->page, i;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, n * stride * p, CMA_ANON));
	ASSERT_EQ(0, remote_hole(&self->t, bad * stride, 1));
	for (i = 0; i < n; i++)
		cma_riov(x, i * stride * p + 8 * i, 64);
	cma_liov(x, 16, n * 64);
	cma_xfer_expect(_metadata, &self->t, variant->write, bad * 64);
}

/*
 * Elements at a stride of two pages, @per_page of them in each page they
 * use: the page that element @bad starts is unmapped, and the elements
 * before it move.  Every pin taken is released.  The elements share
 * windows, one pin call a page; the hole is left out of the window it
 * falls in, and the copy must stop there with the pages pinned before it
 * released.
 */
static void strided_unmapped(struct __test_metadata *_metadata, struct cma_target *t,
			     bool write, size_t bad, size_t per_page)
{
	const size_t n = 40;
	size_t p = cma_page(), i;
	struct cma_xfer *x = &t->mb->x;

	ASSERT_EQ(0, cma_xfer_setup(t, 4 * p, 2 * n * p, CMA_ANON));
	ASSERT_EQ(0, remote_hole(t, 2 * (bad / per_page), 1));
	for (i = 0; i < n; i++)
		cma_riov(x, 2 * (i / per_page) * p + 128 * (i % per_page) + 8 * i, 64);
	cma_liov(x, 16, n * 64);
	cma_xfer_expect_balanced(_metadata, t, write, bad * 64);
}

/* Early: the windows before the hole still look ahead, then give up. */
TEST_F(partial, strided_unmapped_early)
{
	strided_unmapped(_metadata, &self->t, variant->write, 2, 1);
}

/* Late: past the cutoff, the windows before the hole do not look ahead. */
TEST_F(partial, strided_unmapped_late)
{
	strided_unmapped(_metadata, &self->t, variant->write, 30, 1);
}

/* Pairs: the first window's pin of its later pages stops at the hole. */
TEST_F(partial, strided_pairs_unmapped_early)
{
	strided_unmapped(_metadata, &self->t, variant->write, 6, 2);
}

/* Pairs: a hole in a later window, after windows that pinned whole. */
TEST_F(partial, strided_pairs_unmapped_late)
{
	strided_unmapped(_metadata, &self->t, variant->write, 30, 2);
}

/* A hole inside one element: the bytes up to the start of the hole page move. */
TEST_F(partial, hole_inside_element)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 8 * p, 8 * p, CMA_ANON));
	ASSERT_EQ(0, remote_hole(&self->t, 3, 1));
	cma_riov(x, 100, 5 * p);
	cma_liov(x, 60, 5 * p);
	cma_xfer_expect(_metadata, &self->t, variant->write, 3 * p - 100);
}

/* Earlier elements complete, then a hole in the middle of a later one. */
TEST_F(partial, hole_inside_later_element)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 10 * p, 10 * p, CMA_ANON));
	ASSERT_EQ(0, remote_hole(&self->t, 6, 2));
	cma_riov(x, 10, 333);
	cma_riov(x, p + 1, p + 2);
	cma_riov(x, 4 * p + 17, 4 * p);
	cma_riov(x, 9 * p, 10);
	cma_liov(x, 5, 3 * p);
	cma_liov(x, 3 * p + 50, 5 * p);
	cma_xfer_expect(_metadata, &self->t, variant->write,
			333 + p + 2 + 2 * p - 17);
}

/* The first remote page is not mapped: nothing moves, EFAULT. */
TEST_F(partial, hole_at_start)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, 4 * p, CMA_ANON));
	ASSERT_EQ(0, remote_hole(&self->t, 1, 1));
	cma_riov(x, p + 5, 2 * p);
	cma_riov(x, 10, 10);
	cma_liov(x, 5, 2 * p + 10);
	cma_xfer_expect(_metadata, &self->t, variant->write, -EFAULT);
}

/* A PROT_NONE page inside an element stops the transfer like a hole. */
TEST_F(partial, prot_none_inside_element)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 8 * p, 8 * p, CMA_ANON));
	ASSERT_EQ(0, cma_call3(&self->t, cma_t_mprotect, (long)(x->rreg.addr + 4 * p), p,
			       PROT_NONE));
	x->rreg.hole = 4 * p;
	x->rreg.hole_len = p;
	cma_riov(x, 7, 3 * p);
	cma_riov(x, 3 * p + 1, 2 * p);
	cma_liov(x, 30, 5 * p);
	cma_xfer_expect(_metadata, &self->t, variant->write, 3 * p + p - 1);
}

/* A read-only page inside an element: readv moves everything, writev stops. */
TEST_F(partial, read_only_inside_element)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 6 * p, 6 * p, CMA_ANON));
	ASSERT_EQ(0, cma_call3(&self->t, cma_t_mprotect, (long)(x->rreg.addr + 3 * p), p,
			       PROT_READ));
	cma_riov(x, p + 9, 3 * p);
	cma_liov(x, 30, 3 * p);
	cma_xfer_expect(_metadata, &self->t, variant->write,
			variant->write ? 2 * p - 9 : 3 * p);
}

/*
 * How many bytes short of a fault in the caller's buffers an
 * architecture's copy routine may stop (the man page: "a few bytes
 * earlier").  x86's stop at the faulting byte: rep movs does, and a word
 * copy that faults finishes byte by byte.
 */
#if defined(__x86_64__)
#define COPY_SLACK	0
#elif defined(__i386__)
#define COPY_SLACK	0
#else
#define COPY_SLACK	64
#endif

/*
 * A local page in the middle of the local element is unmapped.  The copy
 * stops at that page, in the middle of a remote page: the count is every
 * byte before the hole (less COPY_SLACK at most), the bytes the copy
 * moved from that remote page included, the counted prefix must be
 * right, and nothing at or past the hole may change on the other side.
 */
TEST_F(partial, local_hole)
{
	size_t p = self->page, before = 3 * p - 200;
	struct cma_xfer *x = self->x;
	ssize_t ret;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 8 * p, 8 * p, CMA_ANON));
	x->lreg.hole = 3 * p;
	x->lreg.hole_len = p;
	ASSERT_EQ(0, munmap(x->lreg.addr + 3 * p, p));
	cma_liov(x, 200, 5 * p);
	cma_riov(x, 1000, 5 * p);
	errno = 0;
	ret = cma_xfer_run(&self->t, variant->write, 0);
	ASSERT_GE((ssize_t)before, ret) TH_LOG("errno %d (%s)", errno, strerror(errno));
	ASSERT_LE((ssize_t)(before - COPY_SLACK), ret)
		TH_LOG("%zu bytes precede the hole, %zd counted", before, ret);
	/* Bytes between the count and the hole may or may not have moved. */
	cma_xfer_check_tol(_metadata, &self->t, variant->write, ret, before);
}

/* The first local page is unmapped: nothing moves, EFAULT. */
TEST_F(partial, local_hole_at_start)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, 4 * p, CMA_ANON));
	x->lreg.hole = p;
	x->lreg.hole_len = p;
	ASSERT_EQ(0, munmap(x->lreg.addr + p, p));
	cma_liov(x, p + 100, 2 * p);
	cma_riov(x, 100, 2 * p);
	cma_xfer_expect(_metadata, &self->t, variant->write, -EFAULT);
}

/*
 * The local side is the wrong kind of memory for the direction: readv into
 * a read-only local page, writev from a PROT_NONE one.  A fault on the first
 * byte is EFAULT with nothing moved.
 */
TEST_F(partial, local_wrong_protection)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	if (variant->write && cma_on_uml())
		SKIP(return, "User-Mode Linux reads PROT_NONE user pages (arch/um uaccess)");
	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, 4 * p, CMA_ANON));
	ASSERT_EQ(0, mprotect(x->lreg.addr + p, 2 * p, variant->write ? PROT_NONE : PROT_READ));
	if (variant->write) {
		x->lreg.hole = p;
		x->lreg.hole_len = 2 * p;
	}
	cma_liov(x, p, p);
	cma_riov(x, 100, p);
	cma_xfer_expect(_metadata, &self->t, variant->write, -EFAULT);
}

TEST_HARNESS_MAIN
