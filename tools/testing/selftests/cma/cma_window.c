// SPDX-License-Identifier: GPL-2.0
/*
 * process_vm_readv(2)/process_vm_writev(2) may pin several remote pages at
 * once for elements still to come, but never a page that no element
 * touches.  Pinning takes the page's reference bit with it, so a page
 * that no element touches must still be unreferenced after the call:
 * the caller reads itself, clears its reference bits through
 * /proc/self/clear_refs first, and reads the "Referenced:" line of
 * /proc/self/smaps for the mappings that hold the untouched pages (kept
 * in VMAs of their own by MADV_DONTFORK) afterwards.  Nor does it fault
 * in a later element's page that is not present: the copy may never get
 * there.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

#define ELEM	64

/* The caller's area of remote pages, and the call's iovecs. */
struct area {
	size_t page;
	char *area;
	size_t npages;
	char local[CMA_IOV_MAX * ELEM];
	struct iovec riov[CMA_IOV_MAX];
	unsigned int nr;
};

FIXTURE(window) {
	struct area a;
};

#define CMA_RW_FIXTURE window
#include "cma_rw_variants.h"

FIXTURE_SETUP(window)
{
	self->a.page = cma_page();
	self->a.area = NULL;
	self->a.nr = 0;
}

FIXTURE_TEARDOWN(window)
{
	if (self->a.area)
		munmap(self->a.area, self->a.npages * self->a.page);
}

/*
 * Map @npages pages, touch them all, give each page in @hole[] a VMA of
 * its own and zap each page in @zap[] (it is no longer present).  A
 * list ends with -1.
 */
static int area_setup(struct area *self, size_t npages,
		      const int *hole, const int *zap)
{
	size_t p = self->page;
	char *a;

	a = mmap(NULL, npages * p, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return -1;
	self->area = a;
	self->npages = npages;
	cma_fill(a, npages * p, 11);
	for (; *hole >= 0; hole++)
		if (madvise(a + *hole * p, p, MADV_DONTFORK))
			return -1;
	for (; *zap >= 0; zap++)
		if (madvise(a + *zap * p, p, MADV_DONTNEED))
			return -1;
	return 0;
}

/* A remote element of ELEM bytes at @off in page @pg of the area. */
static void elem(struct area *self, int pg, size_t off)
{
	self->riov[self->nr].iov_base = self->area + pg * self->page + off;
	self->riov[self->nr].iov_len = ELEM;
	self->nr++;
}

static int forget_refs(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, "1\n", 2) == 2;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * The kB of "Referenced:" in /proc/self/smaps of the mapping that holds
 * @page (area_setup() gives each hole page a VMA of its own), or -1.
 */
static long referenced_kb(const void *page)
{
	long bytes = cma_smaps_bytes(page, "Referenced");

	return bytes < 0 ? -1 : bytes >> 10;
}

/*
 * Run the call with the elements laid out, check every element's bytes
 * and that no page in @hole[] (ending with -1) was referenced.
 */
static void run_and_check(struct __test_metadata *_metadata,
			  struct area *self, bool write,
			  const int *hole)
{
	size_t total = (size_t)self->nr * ELEM, i;
	struct iovec liov = { self->local, total };
	ssize_t ret;

	if (write)
		cma_fill(self->local, total, 99);
	else
		memset(self->local, 0, total);
	ASSERT_EQ(0, forget_refs());
	ret = cma_rw(write, getpid(), &liov, 1, self->riov, self->nr, 0);
	ASSERT_EQ((ssize_t)total, ret) TH_LOG("errno %d", errno);

	/* Reference bits first: the byte checks below touch the area. */
	for (; *hole >= 0; hole++) {
		long kb = referenced_kb(self->area + *hole * self->page);

		ASSERT_LE(0, kb) TH_LOG("no smaps entry for page %d", *hole);
		EXPECT_EQ(0, kb) TH_LOG("untouched page %d was pinned (Referenced: %ld kB)",
					*hole, kb);
	}
	for (i = 0; i < self->nr; i++) {
		char *r = self->riov[i].iov_base;
		char *l = self->local + i * ELEM;

		/* a readv brought @r's bytes here, a writev took @l's there */
		ASSERT_EQ(0, memcmp(r, l, ELEM)) TH_LOG("element %zu", i);
	}
}

/*
 * The current element on page 10 and the next ones on pages 9 down to 5,
 * with page 7 not present: a window over pages 5-10 cannot take its pages
 * before page 10 without faulting, and starts at page 10 instead.  It
 * must still end at page 10: pages 11-15 lie after every element.
 */
TEST_F(window, failed_look_behind)
{
	/* pages 11-15 merge into one VMA: their flags are the same */
	const int hole[] = { 11, 12, 13, 14, 15, -1 };
	const int zap[] = { 7, -1 };
	int pg;

	ASSERT_EQ(0, area_setup(&self->a, 16, hole, zap));
	for (pg = 10; pg >= 5; pg--)
		elem(&self->a, pg, 128);
	run_and_check(_metadata, &self->a, variant->write, (const int[]){ 11, -1 });
}

/*
 * Elements on the even pages of 64, in shuffled order and then in reverse
 * order: each odd page, untouched, sits between two touched ones.
 */
TEST_F(window, holes_between_elements)
{
	int hole[33], zap[] = { -1 };
	unsigned int i, r;
	int pg;

	for (i = 0; i < 32; i++)
		hole[i] = 2 * i + 1;
	hole[32] = -1;
	ASSERT_EQ(0, area_setup(&self->a, 64, hole, zap));
	for (i = 0; i < 32; i++)
		elem(&self->a, 2 * i, (i % 8) * ELEM);
	srand(7);
	for (i = self->a.nr - 1; i > 0; i--) {
		struct iovec t = self->a.riov[i];

		r = (unsigned int)rand() % (i + 1);
		self->a.riov[i] = self->a.riov[r];
		self->a.riov[r] = t;
	}
	for (pg = 62; pg >= 0; pg -= 2)
		elem(&self->a, pg, 9 * ELEM);
	run_and_check(_metadata, &self->a, variant->write, hole);
}

/*
 * Looking ahead pins a later element's pages only if they are present
 * (FOLL_NOFAULT): it must not fault one in for a copy that may never get
 * there.  Element 0 covers pages 0-1 of the area, element 1 lies on page
 * 3, which is not present.  The second page of the caller's buffer for
 * element 0 is unmapped, so the copy stops after page 0, before element 1
 * and at a page boundary: exactly one page moves, whatever the
 * architecture's copy routine.  Page 3 must still be absent afterwards
 * (mincore(); a fault would map a page for writev, the zero page for
 * readv).
 */
TEST_F(window, lookahead_faults_nothing_in)
{
	const int hole[] = { -1 }, zap[] = { 3, -1 };
	size_t p = self->a.page, i;
	struct iovec liov[2];
	unsigned char in;
	char *area, *l;
	ssize_t ret;

	ASSERT_EQ(0, area_setup(&self->a, 4, hole, zap));
	area = self->a.area;
	ASSERT_EQ(0, mincore(area + 3 * p, p, &in));
	ASSERT_EQ(0, in & 1) TH_LOG("page 3 is present before the call");
	l = mmap(NULL, 3 * p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(l != MAP_FAILED);
	ASSERT_EQ(0, munmap(l + p, p));
	cma_fill(l, p, 99);
	cma_fill(l + 2 * p, p, 99);
	liov[0] = (struct iovec){ l, 2 * p };
	liov[1] = (struct iovec){ l + 2 * p, ELEM };
	self->a.riov[0] = (struct iovec){ area, 2 * p };
	self->a.riov[1] = (struct iovec){ area + 3 * p + 128, ELEM };
	ret = cma_rw(variant->write, getpid(), liov, 2, self->a.riov, 2, 0);

	ASSERT_EQ(0, mincore(area + 3 * p, p, &in));
	EXPECT_EQ(0, in & 1) TH_LOG("looking ahead faulted page 3 in");
	ASSERT_EQ((ssize_t)p, ret) TH_LOG("errno %d", errno);
	/* Page 0 moved; nothing else did. */
	EXPECT_EQ(0, memcmp(area, l, p));
	EXPECT_EQ(-1, cma_cmp_pat(area + p, p, (uintptr_t)area + p, 11));
	EXPECT_EQ(-1, cma_cmp_pat(l + 2 * p, p, (uintptr_t)l + 2 * p, 99));
	for (i = 0; i < p; i++)
		ASSERT_EQ(0, area[3 * p + i]) TH_LOG("byte %zu of page 3", i);
	munmap(l, p);
	munmap(l + 2 * p, p);
}

TEST_HARNESS_MAIN
