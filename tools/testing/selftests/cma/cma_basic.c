// SPDX-License-Identifier: GPL-2.0
/*
 * process_vm_readv(2)/process_vm_writev(2): data lands where the iovecs say,
 * nothing else changes, and the result is the number of bytes moved.  Every
 * case runs once per direction.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

#include <sys/mount.h>

#define MARGIN	64	/* canary bytes kept before and after a range at least */

FIXTURE(basic) {
	struct cma_target t;
	struct cma_xfer *x;
	size_t page;
};

#define CMA_RW_FIXTURE basic
#include "cma_rw_variants.h"

FIXTURE_SETUP(basic)
{
	self->page = cma_page();
	ASSERT_EQ(0, cma_target_start(&self->t));
	self->x = &self->t.mb->x;
}

FIXTURE_TEARDOWN(basic)
{
	cma_target_stop(&self->t);
}

/* One element on each side: @len bytes at @loff locally and @roff remotely. */
static void one_element(struct __test_metadata *_metadata, struct cma_target *t,
			bool write, size_t len, size_t loff, size_t roff)
{
	struct cma_xfer *x = &t->mb->x;

	ASSERT_EQ(0, cma_xfer_setup(t, loff + len + MARGIN, roff + len + MARGIN, CMA_ANON));
	cma_liov(x, loff, len);
	cma_riov(x, roff, len);
	cma_xfer_expect(_metadata, t, write, len);
}

TEST_F(basic, size_1)
{
	one_element(_metadata, &self->t, variant->write, 1, MARGIN, MARGIN + 3);
}

TEST_F(basic, size_page_minus_1)
{
	one_element(_metadata, &self->t, variant->write, self->page - 1, MARGIN, MARGIN);
}

TEST_F(basic, size_page_aligned)
{
	one_element(_metadata, &self->t, variant->write, self->page, self->page, self->page);
}

TEST_F(basic, size_page_plus_1)
{
	one_element(_metadata, &self->t, variant->write, self->page + 1, 100, 3000);
}

TEST_F(basic, size_many_pages)
{
	one_element(_metadata, &self->t, variant->write, 37 * self->page + 123, MARGIN, 200);
}

/* One call of 64 MiB each way; the remote side starts off the page. */
TEST_F_TIMEOUT(basic, size_64m, 240)
{
	one_element(_metadata, &self->t, variant->write, 64UL << 20, self->page, MARGIN + 5);
}

/* Every combination of start offset on each side with lengths around a page. */
TEST_F(basic, alignment_classes)
{
	size_t p = self->page;
	const size_t offs[] = { 0, 1, 7, 8, 63, p / 2, p - 1 };
	const size_t lens[] = { 1, 8, 100, p - 1, p, p + 1, 2 * p + 3 };
	struct cma_xfer *x = self->x;
	char why[128];
	size_t a, b, c;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 5 * p, 5 * p, CMA_ANON));
	for (a = 0; a < ARRAY_SIZE(offs); a++) {
		for (b = 0; b < ARRAY_SIZE(offs); b++) {
			for (c = 0; c < ARRAY_SIZE(lens); c++) {
				cma_xfer_reset(&self->t);
				cma_liov(x, p + offs[a], lens[c]);
				cma_riov(x, p + offs[b], lens[c]);
				ASSERT_EQ(0, cma_xfer_try(&self->t, variant->write, lens[c],
							  why, sizeof(why)))
					TH_LOG("local +%zu remote +%zu len %zu: %s",
					       offs[a], offs[b], lens[c], why);
			}
		}
	}
}

/* Lay out @n elements of lengths @len with @gap bytes between them. */
static size_t lay_out(struct cma_xfer *x, bool local, const size_t *len, int n, size_t start,
		      size_t gap)
{
	size_t off = start, sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (local)
			cma_liov(x, off, len[i]);
		else
			cma_riov(x, off, len[i]);
		off += len[i] + gap;
		sum += len[i];
	}
	return sum;
}

TEST_F(basic, gather_1xn)
{
	size_t p = self->page;
	const size_t rl[] = { 1, 100, p - 3, 17, p + 5, 2, 333 };
	struct cma_xfer *x = self->x;
	size_t sum;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, 6 * p, CMA_ANON));
	sum = lay_out(x, false, rl, ARRAY_SIZE(rl), 11, 29);
	cma_liov(x, MARGIN + 1, sum);
	cma_xfer_expect(_metadata, &self->t, variant->write, sum);
}

TEST_F(basic, scatter_nx1)
{
	size_t p = self->page;
	const size_t ll[] = { 3, p, 1, 250, p - 1, 64, 2 * p + 1 };
	struct cma_xfer *x = self->x;
	size_t sum;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 7 * p, 6 * p, CMA_ANON));
	sum = lay_out(x, true, ll, ARRAY_SIZE(ll), 7, 13);
	cma_riov(x, p - 5, sum);
	cma_xfer_expect(_metadata, &self->t, variant->write, sum);
}

/* N x M elements whose boundaries never line up on the two sides. */
TEST_F(basic, gather_scatter_nxm)
{
	size_t p = self->page;
	const size_t ll[] = { 5, p + 11, 300, 2, 2 * p - 7, 1000 };
	const size_t rl[] = { p - 1, 18, 998, 2 * p - 8, 303, 1 };
	struct cma_xfer *x = self->x;
	size_t lsum, rsum;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 8 * p, 8 * p, CMA_ANON));
	lsum = lay_out(x, true, ll, ARRAY_SIZE(ll), 3, 9);
	rsum = lay_out(x, false, rl, ARRAY_SIZE(rl), p / 2, 1);
	ASSERT_EQ(lsum, rsum);
	cma_xfer_expect(_metadata, &self->t, variant->write, lsum);
}

/*
 * Remote elements of growing size, pages apart: each wants a larger window
 * of pinned pages than the one before (a few, tens, hundreds, then more
 * than one window holds), so the kernel's page array is replaced by larger
 * ones in the middle of the call.
 */
TEST_F(basic, growing_windows)
{
	size_t p = self->page;
	const size_t rl[] = { 3 * p + 1, 40 * p - 7, 100 * p + 9, 300 * p, 700 * p + 5 };
	struct cma_xfer *x = self->x;
	size_t sum;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 1150 * p, 1160 * p, CMA_ANON));
	sum = lay_out(x, false, rl, ARRAY_SIZE(rl), 5, 2 * p + 3);
	cma_liov(x, MARGIN, sum);
	cma_xfer_expect(_metadata, &self->t, variant->write, sum);
}

/*
 * Remote elements 40 pages apart, in order: no window finds company (the
 * span would pass 32 pages at less than a page in four), so after eight
 * such windows in a row only one in eight looks ahead and the others pin
 * their element's page alone.  Elements start anywhere in their page,
 * some end at its last byte, one spans two pages and some are empty; a
 * few are followed by one in the same page, which copies from the page
 * that the first one pinned.
 */
TEST_F(basic, scattered_past_cutoff)
{
	const size_t stride = 40, n = 48;
	size_t p = self->page, sum = 0, off, len, i;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 8 * p, (n * stride + 2) * p, CMA_ANON));
	for (i = 0; i < n; i++) {
		off = (i * 97) % (p / 2);
		len = 1 + (i * 37) % 200;
		if (i % 5 == 3)
			off = p - len;
		if (i == 21)
			len = p + 100;
		if (i % 11 == 7)
			len = 0;
		cma_riov(x, i * stride * p + off, len);
		sum += len;
		if (i % 9 == 4 && off + len + 10 <= p) {
			cma_riov(x, i * stride * p + off + len, 10);
			sum += 10;
		}
	}
	ASSERT_LT(sum + 2 * MARGIN, 8 * p);
	cma_liov(x, MARGIN, sum);
	cma_xfer_expect(_metadata, &self->t, variant->write, sum);
}

/* The local side asks for more than the remote side has: the smaller total moves. */
TEST_F(basic, local_longer)
{
	size_t p = self->page;
	const size_t ll[] = { p, p, p };
	const size_t rl[] = { 100, p + 1 };
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 5 * p, 4 * p, CMA_ANON));
	lay_out(x, true, ll, ARRAY_SIZE(ll), 77, 5);
	cma_xfer_expect(_metadata, &self->t, variant->write,
			lay_out(x, false, rl, ARRAY_SIZE(rl), 300, 8));
}

TEST_F(basic, remote_longer)
{
	size_t p = self->page;
	const size_t ll[] = { 10, 2 * p - 1 };
	const size_t rl[] = { p, 3 * p };
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, 6 * p, CMA_ANON));
	lay_out(x, false, rl, ARRAY_SIZE(rl), 1, 1);
	cma_xfer_expect(_metadata, &self->t, variant->write,
			lay_out(x, true, ll, ARRAY_SIZE(ll), 40, 3));
}

/* IOV_MAX elements on each side, of different lengths, with gaps. */
TEST_F(basic, iov_max_both_sides)
{
	struct cma_xfer *x = self->x;
	size_t ll[CMA_IOV_MAX], rl[CMA_IOV_MAX], lsum = 0, rsum = 0;
	int i;

	for (i = 0; i < CMA_IOV_MAX; i++) {
		ll[i] = 1 + (i * 7) % 13;
		rl[i] = 1 + (i * 5) % 11;
		lsum += ll[i] + 1;
		rsum += rl[i] + 2;
	}
	ASSERT_EQ(0, cma_xfer_setup(&self->t, lsum + 2 * MARGIN, rsum + 2 * MARGIN, CMA_ANON));
	lsum = lay_out(x, true, ll, CMA_IOV_MAX, MARGIN, 1);
	rsum = lay_out(x, false, rl, CMA_IOV_MAX, MARGIN, 2);
	cma_xfer_expect(_metadata, &self->t, variant->write, lsum < rsum ? lsum : rsum);
}

/* Zero-length elements (some with a NULL base) anywhere on both sides. */
TEST_F(basic, zero_length_elements)
{
	size_t p = self->page;
	const size_t ll[] = { 0, 0, 500, 0, p, 0, 0, 3, 0 };
	const size_t rl[] = { 0, 7, 0, 0, p + 400, 0, 96, 0 };
	struct cma_xfer *x = self->x;
	size_t sum;
	int i;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 3 * p, 3 * p, CMA_ANON));
	sum = lay_out(x, true, ll, ARRAY_SIZE(ll), 33, 17);
	ASSERT_EQ(sum, lay_out(x, false, rl, ARRAY_SIZE(rl), 51, 5));
	for (i = 0; i < x->ln; i += 3)
		if (!x->liov[i].iov_len)
			x->liov[i].iov_base = NULL;
	for (i = 0; i < x->rn; i += 2)
		if (!x->riov[i].iov_len)
			x->riov[i].iov_base = NULL;
	cma_xfer_expect(_metadata, &self->t, variant->write, sum);
}

/* Remote elements overlap or repeat: for writev the later element wins. */
TEST_F(basic, remote_overlap_repeat)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, 3 * p, CMA_ANON));
	cma_riov(x, 200, 300);
	cma_riov(x, 300, 300);
	cma_riov(x, 200, 300);
	cma_riov(x, p - 10, p);
	cma_riov(x, p - 20, 15);
	cma_liov(x, MARGIN, 900 + p + 15);
	cma_xfer_expect(_metadata, &self->t, variant->write, 900 + p + 15);
}

/* Never-touched anonymous memory reads as zeros and takes writes. */
TEST_F(basic, untouched_anon)
{
	size_t p = self->page;
	struct cma_xfer *x = self->x;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 6 * p, 8 * p, CMA_UNTOUCHED));
	cma_riov(x, p + 9, 4 * p);
	cma_riov(x, 7 * p, 10);
	cma_liov(x, 100, 4 * p + 10);
	cma_xfer_expect(_metadata, &self->t, variant->write, 4 * p + 10);
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

/* arg: addr, len.  Pages of the range that THPs back, or -1. */
static long t_thp_pages(struct cma_mbox *mb)
{
	return cma_thp_pages((void *)mb->arg[0], mb->arg[1]);
}

/* arg: addr, smaps field.  Bytes counted under the field, or -1. */
static long t_smaps_bytes(struct cma_mbox *mb)
{
	return cma_smaps_bytes((void *)mb->arg[0], (const char *)mb->arg[1]);
}

/* arg: addr, len.  Collapse the range into huge pages. */
static long t_collapse(struct cma_mbox *mb)
{
	return madvise((void *)mb->arg[0], mb->arg[1], MADV_COLLAPSE);
}

/*
 * Pages of the target's x.rreg that THPs back: from /proc/kpageflags, or
 * where its page frames cannot be read, from @field of smaps (PMD-mapped
 * THPs only).  -1 if neither can tell.
 */
static long rreg_thp_pages(struct cma_target *t, const char *field)
{
	struct cma_region *r = &t->mb->x.rreg;
	long n = cma_call3(t, t_thp_pages, (long)r->addr, r->len, 0);

	if (n < 0) {
		n = cma_call3(t, t_smaps_bytes, (long)r->addr, (long)field, 0);
		if (n >= 0)
			n /= cma_page();
	}
	return n;
}

/* Whether the THP setting in @path (enabled, shmem_enabled) is @value. */
static bool thp_setting(const char *path, const char *value)
{
	char buf[128] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 && strstr(buf, value);
}

/* What thp_case() transfers. */
enum thp_how {
	THP_SPAN,	/* two elements that run through large folios */
	THP_LONE,	/* one element inside a huge page */
	THP_STRIDED,	/* pairs of elements every two pages, across both */
};

/*
 * A transfer across the two huge pages of x.rreg, @kind CMA_THP or
 * CMA_FILE_THP, which huge pages must back before and after: a copy that
 * runs through a large folio is what THP_SPAN tests.
 * THP_LONE, one element of 200 bytes inside the second huge page: a call
 * that pins one subpage where a PMD maps the huge page.  THP_STRIDED, 64
 * elements, two a page at a stride of two pages from 32 pages before the
 * second huge page: a window whose runs each take one subpage of a
 * PMD-mapped folio, and must pin none of the subpages between (the pin
 * counters balance either way; a run that took them would still copy
 * right).
 */
static void thp_case(struct __test_metadata *_metadata, struct cma_target *t, bool write,
		     enum cma_kind kind, const char *field, enum thp_how how)
{
	size_t p = cma_page(), h = CMA_THP_SIZE, want = 2 * h / p, i;
	struct cma_xfer *x = &t->mb->x;
	long huge;

	ASSERT_EQ(0, cma_xfer_setup(t, 8 * p, 2 * h, kind));
	huge = rreg_thp_pages(t, field);
	ASSERT_LE(0, huge) TH_LOG("neither /proc/kpageflags nor smaps tells what backs the region");
	if (huge < (long)want) {
		cma_call3(t, t_collapse, (long)x->rreg.addr, x->rreg.len, 0);
		huge = rreg_thp_pages(t, field);
	}
	if (huge < (long)want)
		SKIP(return, "transparent huge pages: none could be allocated (%ld of %zu huge)",
		     huge, want);
	if (how == THP_LONE) {
		cma_riov(x, h + 5 * p + 100, 200);
		cma_liov(x, MARGIN, 200);
		cma_xfer_expect(_metadata, t, write, 200);
	} else if (how == THP_STRIDED) {
		for (i = 0; i < 64; i++)
			cma_riov(x, h - 32 * p + 2 * (i / 2) * p + 128 * (i % 2) + 8 * i, 64);
		cma_liov(x, MARGIN, 64 * 64);
		cma_xfer_expect_balanced(_metadata, t, write, 64 * 64);
	} else {
		cma_riov(x, 100, 3 * p);
		cma_riov(x, h - 3 * p - 5, 4 * p + 11);
		cma_liov(x, MARGIN, 7 * p + 11);
		cma_xfer_expect(_metadata, t, write, 7 * p + 11);
	}
	EXPECT_EQ((long)want, rreg_thp_pages(t, field)) TH_LOG("the transfer split a huge page");
}

/* Why anonymous memory cannot have transparent huge pages here, or NULL. */
static const char *thp_anon_missing(void)
{
	if (access(CMA_THP_SYSFS, F_OK))
		return "no transparent huge pages";
	if (thp_setting(CMA_THP_SYSFS "/enabled", "[never]"))
		return "transparent huge pages disabled (enabled: never)";
	return NULL;
}

TEST_F(basic, thp)
{
	const char *why = thp_anon_missing();

	if (why)
		SKIP(return, "%s", why);
	thp_case(_metadata, &self->t, variant->write, CMA_THP, "AnonHugePages", THP_SPAN);
}

TEST_F(basic, thp_lone_page)
{
	const char *why = thp_anon_missing();

	if (why)
		SKIP(return, "%s", why);
	thp_case(_metadata, &self->t, variant->write, CMA_THP, "AnonHugePages", THP_LONE);
}

TEST_F(basic, thp_strided_pairs)
{
	const char *why = thp_anon_missing();

	if (why)
		SKIP(return, "%s", why);
	thp_case(_metadata, &self->t, variant->write, CMA_THP, "AnonHugePages", THP_STRIDED);
}

/* In the target: a /tmp of its own, on tmpfs with huge=always. */
static long t_huge_tmpfs(struct cma_mbox *mb)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	return mount("cma", "/tmp", "tmpfs", 0, "huge=always");
}

/* The same through a MAP_SHARED mapping of a file on tmpfs with huge pages. */
TEST_F(basic, thp_shmem)
{
	if (access(CMA_THP_SYSFS "/shmem_enabled", F_OK))
		SKIP(return, "no transparent huge pages");
	if (thp_setting(CMA_THP_SYSFS "/shmem_enabled", "[deny]"))
		SKIP(return, "transparent huge pages disabled (shmem_enabled: deny)");
	if (cma_call(&self->t, t_huge_tmpfs)) {
		if (errno == EINVAL)
			SKIP(return, "transparent huge pages: tmpfs takes no huge=always");
		SKIP(return, "transparent huge pages: cannot mount tmpfs: %s", strerror(errno));
	}
	thp_case(_metadata, &self->t, variant->write, CMA_FILE_THP, "ShmemPmdMapped", THP_SPAN);
}

#define MTHP_64K	CMA_THP_SYSFS "/hugepages-64kB/enabled"

static int thp_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, value, strlen(value));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* arg: seed.  Advise x.rreg for huge pages, then fill it: faults allocate them. */
static long t_advise_fill(struct cma_mbox *mb)
{
	struct cma_region *r = &mb->x.rreg;

	if (madvise(r->addr, r->len, MADV_HUGEPAGE))
		return -1;
	r->seed = mb->arg[0];
	cma_region_refill(r);
	return 0;
}

/*
 * Multi-size THP: 64 KiB folios among small pages.  The region is shorter
 * than a PMD, so faults take the largest order that fits; the transfer
 * runs through 64 KiB folios and across their edges into small pages.
 */
TEST_F(basic, thp_mthp_64k)
{
	size_t p = self->page, len = 40 * p;
	struct cma_xfer *x = self->x;
	bool enabled = false;
	char why[128] = "";
	long huge;
	int ret;

	if (p != 4096 || access(MTHP_64K, F_OK))
		SKIP(return, "no transparent huge pages of 64 KiB");
	if (thp_setting(MTHP_64K, "[never]")) {
		if (thp_write(MTHP_64K, "madvise"))
			SKIP(return, "transparent huge pages: cannot enable 64 KiB folios");
		enabled = true;
	}
	ASSERT_EQ(0, cma_xfer_setup(&self->t, len + 2 * MARGIN, len, CMA_UNTOUCHED));
	ret = cma_call1(&self->t, t_advise_fill, 0x5a);
	huge = rreg_thp_pages(&self->t, "-");
	if (!ret && huge >= 16) {
		cma_riov(x, 5, p);
		cma_riov(x, 2 * p - 3, len - 3 * p);
		cma_riov(x, len - p + 7, p - 7);
		cma_liov(x, MARGIN, len - p - 7);
		ret = cma_xfer_try(&self->t, variant->write, len - p - 7, why, sizeof(why));
	}
	if (enabled)
		ASSERT_EQ(0, thp_write(MTHP_64K, "never"));
	ASSERT_EQ(0, ret) TH_LOG("%s", why[0] ? why : strerror(errno));
	if (huge < 0)
		SKIP(return, "transparent huge pages: no /proc/kpageflags (CAP_SYS_ADMIN)");
	ASSERT_LE(16, huge) TH_LOG("%ld of %zu pages in 64 KiB folios", huge, len / p);
}

/* Make @want huge pages free; returns the old nr_hugepages, or -1. */
static long hugetlb_reserve(long want)
{
	long old, free_pages = 0, size_kb = 0;
	char line[128];
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
			continue;
		if (sscanf(line, "Hugepagesize: %ld", &size_kb) == 1)
			continue;
	}
	fclose(f);
	if (size_kb != (long)(CMA_THP_SIZE >> 10) || cma_read_long(CMA_NR_HUGE, &old))
		return -1;
	if (free_pages < want)
		cma_write_long(CMA_NR_HUGE, old + want - free_pages);
	return old;
}

TEST_F(basic, hugetlb)
{
	size_t p = self->page, h = CMA_THP_SIZE;
	struct cma_xfer *x = self->x;
	char why[128] = "";
	long old;
	int ret;

	old = hugetlb_reserve(2);
	if (old < 0)
		SKIP(return, "no 2 MiB hugetlb pages");
	if (cma_xfer_setup(&self->t, 8 * p, 2 * h, CMA_HUGETLB)) {
		cma_write_long(CMA_NR_HUGE, old);
		SKIP(return, "cannot map 2 hugetlb pages: %s", strerror(errno));
	}
	cma_riov(x, 100, 3 * p);
	cma_riov(x, h - 3 * p - 5, 4 * p + 11);
	cma_liov(x, MARGIN, 7 * p + 11);
	ret = cma_xfer_try(&self->t, variant->write, 7 * p + 11, why, sizeof(why));
	cma_call(&self->t, cma_t_rreg_free);
	cma_write_long(CMA_NR_HUGE, old);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
}

static void shared_kind(struct __test_metadata *_metadata, struct cma_target *t,
			bool write, enum cma_kind kind)
{
	size_t p = cma_page();
	struct cma_xfer *x = &t->mb->x;

	ASSERT_EQ(0, cma_xfer_setup(t, 6 * p, 6 * p, kind));
	cma_riov(x, 7, p);
	cma_riov(x, 2 * p - 1, 2 * p + 2);
	cma_liov(x, 300, 3 * p + 2);
	cma_xfer_expect(_metadata, t, write, 3 * p + 2);
}

TEST_F(basic, shmem_memfd)
{
	shared_kind(_metadata, &self->t, variant->write, CMA_MEMFD);
}

TEST_F(basic, shared_anon)
{
	shared_kind(_metadata, &self->t, variant->write, CMA_SHARED_ANON);
}

/* arg: offset, len.  Checks that the file holds what the mapping holds. */
static long t_file_matches_map(struct cma_mbox *mb)
{
	struct cma_region *r = &mb->x.rreg;
	char *buf = malloc(r->len);
	long ret = -1;
	int fd;

	fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (buf && fd >= 0 && pread(fd, buf, r->len, 0) == (ssize_t)r->len)
		ret = memcmp(buf, r->addr, r->len) ? 1 : 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

TEST_F(basic, file_shared)
{
	size_t p = self->page, len = 2 * p + 100, roff = p - 50, i;
	struct cma_xfer *x = self->x;
	unsigned char *buf;
	int fd;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, 4 * p, 4 * p, CMA_FILE));
	cma_riov(x, roff, len);
	cma_liov(x, 10, len);
	cma_xfer_expect(_metadata, &self->t, variant->write, len);
	ASSERT_EQ(0, cma_call3(&self->t, cma_t_msync, (long)x->rreg.addr, x->rreg.len, 0));
	ASSERT_EQ(0, cma_call(&self->t, t_file_matches_map));

	/* Read the file from here too: the written range holds our bytes. */
	buf = malloc(len);
	ASSERT_TRUE(!!buf);
	fd = open(x->rreg.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, pread(fd, buf, len, roff));
	close(fd);
	for (i = 0; i < len; i++) {
		char *from = variant->write ? x->lreg.addr + 10 : x->rreg.addr + roff;
		unsigned int seed = variant->write ? x->lreg.seed : x->rreg.seed;
		uintptr_t src = (uintptr_t)from;

		ASSERT_EQ(cma_pat(src + i, seed), buf[i]) TH_LOG("file byte %zu", roff + i);
	}
	free(buf);
}

/*
 * The target is forked after the region is filled, so the pages are shared
 * copy-on-write.  readv: the parent rewrites its copy first and must still
 * read the child's original bytes.  writev: the parent's copy stays as it was.
 * One remote element of @len bytes at @roff.
 */
/*
 * arg: addr, len.  Reads a byte of every page, so that its PTE or PMD is
 * young; returns their sum, which is never negative.
 */
static long t_touch(struct cma_mbox *mb)
{
	const unsigned char *a = (const unsigned char *)mb->arg[0];
	long sum = 0;
	size_t i;

	for (i = 0; i < (size_t)mb->arg[1]; i += cma_page())
		sum += a[i];
	return sum;
}

/*
 * The page frame of @addr in @pid, for fork_cow_run(); 0 where frames
 * cannot be read (/proc/PID/pagemap gives them to CAP_SYS_ADMIN only).
 */
static uint64_t cow_frame(pid_t pid, const char *addr)
{
	uint64_t pfn, flags;

	return cma_page_info(pid, (uintptr_t)addr, &pfn, &flags) ? 0 : pfn;
}

/* The most pages an element of fork_cow_run() covers. */
#define COW_PAGES	4

/*
 * With @frames, readv's parent leaves its copy as it is, and every page
 * of the element must end up a page of the target's own: shared with us
 * before the call, another frame after it, ours unchanged.  A pin for
 * writev breaks the sharing with a write fault; a pin for readv must
 * unshare the page (gup_must_unshare()), so that the page it copies from
 * stays the target's after a write of either side.  That holds for the
 * pages that follow the first one in its page table too, which GUP takes
 * in one run (follow_pte_run()).
 */
static void fork_cow_run(struct __test_metadata *_metadata, bool write, enum cma_kind kind,
			 size_t roff, size_t len, bool frames)
{
	size_t p = cma_page(), size = kind == CMA_THP ? CMA_THP_SIZE : 4 * p, k, npages;
	uint64_t shared[COW_PAGES] = { 0 };
	struct cma_region mine;
	bool noframes = false;
	struct cma_target t2;
	struct cma_xfer *x;
	char *at;

	npages = (roff + len - 1) / p - roff / p + 1;
	ASSERT_GE(COW_PAGES, npages);
	ASSERT_EQ(0, cma_region_alloc(&mine, size, 0x5a, kind));
	if (kind == CMA_THP && cma_thp_pages(mine.addr, size) < (long)(size / p)) {
		cma_region_free(&mine);
		SKIP(return, "transparent huge pages: none backs the region");
	}
	ASSERT_EQ(0, cma_target_start(&t2));
	x = &t2.mb->x;
	x->rreg = mine;
	x->rreg.fd = -1;
	ASSERT_EQ(0, cma_region_alloc(&x->lreg, 4 * p, 0x11, CMA_ANON));
	if (!write && !frames) {
		mine.seed = 0x77;
		cma_region_refill(&mine);
	}
	/* fork() leaves a huge PMD old in the child: young, it may be pinned unlocked. */
	ASSERT_LE(0, cma_call3(&t2, t_touch, (long)mine.addr, (long)size, 0));
	at = mine.addr + roff / p * p;
	for (k = 0; frames && k < npages; k++) {
		shared[k] = cow_frame(getpid(), at + k * p);
		noframes = !shared[k];
		if (noframes)
			goto stop;
		ASSERT_EQ(shared[k], cow_frame(t2.pid, at + k * p))
			TH_LOG("fork() left page %zu unshared", k);
	}
	cma_riov(x, roff, len);
	cma_liov(x, 99, len);
	cma_xfer_expect(_metadata, &t2, write, len);
	EXPECT_EQ(-1, cma_verify(&mine, NULL, 0, NULL, 0, 0, 0, 0));
	for (k = 0; frames && k < npages; k++) {
		EXPECT_EQ(shared[k], cow_frame(getpid(), at + k * p))
			TH_LOG("our page %zu changed", k);
		EXPECT_NE(shared[k], cow_frame(t2.pid, at + k * p))
			TH_LOG("the target's page %zu of %zu is still the one it shares with us",
			       k, npages);
	}
stop:
	cma_target_stop(&t2);
	cma_region_free(&mine);
	if (noframes)
		SKIP(return, "no page frames (/proc/PID/pagemap needs CAP_SYS_ADMIN)");
}

TEST_F(basic, fork_cow)
{
	fork_cow_run(_metadata, variant->write, CMA_ANON, 3, 3 * self->page, false);
}

/*
 * The same with a call of a few bytes inside one page, which pins its page
 * without the target's mmap lock: the page is mapped read-only in both
 * processes, so writev must take it through a write fault, never pin it.
 */
TEST_F(basic, fork_cow_lone_page)
{
	fork_cow_run(_metadata, variant->write, CMA_ANON, self->page + 100, 200, false);
}

/*
 * Both again with the pages still shared with the parent when the call
 * pins them: each of the target's pages (four, then one) must come out
 * of it a page of its own.
 */
TEST_F(basic, fork_cow_unshared)
{
	fork_cow_run(_metadata, variant->write, CMA_ANON, 3, 3 * self->page, true);
}

TEST_F(basic, fork_cow_lone_page_unshared)
{
	fork_cow_run(_metadata, variant->write, CMA_ANON, self->page + 100, 200, true);
}

/* fork_cow_lone_page inside a transparent huge page that fork() left PMD-mapped in both. */
TEST_F(basic, thp_fork_cow_lone_page)
{
	const char *why = thp_anon_missing();

	if (why)
		SKIP(return, "%s", why);
	fork_cow_run(_metadata, variant->write, CMA_THP, 7 * self->page + 100, 200, false);
}

TEST_F(basic, self_target)
{
	size_t p = self->page;
	struct cma_target me;
	struct cma_xfer *x;

	ASSERT_EQ(0, cma_target_self(&me));
	x = &me.mb->x;
	ASSERT_EQ(0, cma_xfer_setup(&me, 4 * p, 4 * p, CMA_ANON));
	cma_riov(x, 5, p);
	cma_riov(x, 2 * p, p + 1);
	cma_liov(x, 700, 2 * p + 1);
	cma_xfer_expect(_metadata, &me, variant->write, 2 * p + 1);
	cma_target_stop(&me);
}

/*
 * Source and destination overlap inside the caller.  With the destination
 * below the source a forward copy gives memmove()'s result; the other way
 * round the result is not defined, so only the count and the bytes around
 * the destination are checked.
 */
TEST_F(basic, self_overlap)
{
	size_t p = self->page, len = 3 * p + 5, src = 1000 + p, dst;
	struct cma_region r;
	unsigned char *want;
	struct iovec d, s;
	ssize_t ret;
	long bad;
	int round;

	ASSERT_EQ(0, cma_region_alloc(&r, 6 * p, 0x33, CMA_ANON));
	want = malloc(r.len);
	ASSERT_TRUE(!!want);
	for (round = 0; round < 2; round++) {
		dst = round ? src + 700 : src - p - 300;
		cma_region_refill(&r);
		memcpy(want, r.addr, r.len);
		memmove(want + dst, want + src, len);
		d.iov_base = r.addr + dst;
		d.iov_len = len;
		s.iov_base = r.addr + src;
		s.iov_len = len;
		ret = variant->write ? cma_writev(getpid(), &s, 1, &d, 1, 0) :
				       cma_readv(getpid(), &d, 1, &s, 1, 0);
		ASSERT_EQ((ssize_t)len, ret);
		if (!round) {
			EXPECT_EQ(0, memcmp(want, r.addr, r.len));
			continue;
		}
		bad = cma_check_orig(&r, 0, dst);
		EXPECT_EQ(-1, bad);
		bad = cma_check_orig(&r, dst + len, r.len);
		EXPECT_EQ(-1, bad);
	}
	free(want);
	cma_region_free(&r);
}

TEST_HARNESS_MAIN
