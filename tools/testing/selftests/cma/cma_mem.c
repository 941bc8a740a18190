// SPDX-License-Identifier: GPL-2.0
/*
 * process_vm_readv(2)/process_vm_writev(2) on memory whose pages need more
 * than a reference to be pinned: MAP_PRIVATE file mappings (a write must
 * copy the page first), read-only shared mappings (a write must fail), the
 * pages past the end of a mapped file (SIGBUS), hugetlb memfds, KSM-merged
 * pages (a write must unshare, and so must a read pin), the shared zero
 * page, and runs that mix all of these in one call, where pinning goes
 * through a page table a run of pages at a time.  Also the copies that run
 * linearly through several pages, which hardened usercopy checks.
 *
 * Each case keeps an image of what the target's memory must hold; after a
 * call the target compares all of its mappings with the image, the caller
 * checks its own buffer byte for byte, and files are read back: nothing
 * outside the requested ranges may change.
 */
#include <linux/const.h>
#include "../kselftest_harness.h"
#include "cma_common.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB		0x0004U
#endif
#ifndef MADV_MERGEABLE
#define MADV_MERGEABLE		12
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE		15
#endif

#define MARGIN		64		/* caller canaries around its buffer */
#define IMG_LEN		(8UL << 20)	/* the images of all regions of a case */
#define LOCAL_SEED	0x3c
#define NR_REGIONS	3

#define KPF_ZERO_PAGE	24

/*
 * The images, in a mapping that the target shares: a region's image is
 * what its memory must hold.  Set up before the target is forked.
 */
static unsigned char *img;

/* A mapping of the target and its image. */
struct mreg {
	char *addr;		/* in the target */
	size_t len;		/* bytes the target compares */
	unsigned char *img;
};

FIXTURE(mem) {
	struct cma_target t;
	size_t page;
	struct mreg r[NR_REGIONS];
	int nr;
	size_t img_used;
	char path[64];		/* a file the case made, to unlink */
	long old_huge;		/* nr_hugepages to restore, or -1 */
};

/* The fixture's type, for the helpers below that take it. */
#define MEM_DATA FIXTURE_DATA(mem)

#define CMA_RW_FIXTURE mem
#include "cma_rw_variants.h"

FIXTURE_SETUP(mem)
{
	self->page = cma_page();
	self->old_huge = -1;
	img = mmap(NULL, IMG_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(img != MAP_FAILED);
	ASSERT_EQ(0, cma_target_start(&self->t));
}

FIXTURE_TEARDOWN(mem)
{
	cma_target_stop(&self->t);
	if (self->path[0])
		unlink(self->path);
	if (self->old_huge >= 0)
		cma_write_long(CMA_NR_HUGE, self->old_huge);
	munmap(img, IMG_LEN);
}

/* ---- in the target ---------------------------------------------------- */

/* arg: len, prot, flags, fd, offset.  Returns the address or 0. */
static long t_mmap(struct cma_mbox *mb)
{
	void *p = mmap(NULL, mb->arg[0], mb->arg[1], mb->arg[2], mb->arg[3], mb->arg[4]);

	return p == MAP_FAILED ? 0 : (long)p;
}

/* arg: addr, len, advice */
static long t_madvise(struct cma_mbox *mb)
{
	return madvise((void *)mb->arg[0], mb->arg[1], mb->arg[2]);
}

/* arg: addr, image, len.  Write the image into memory. */
static long t_fill(struct cma_mbox *mb)
{
	memcpy((void *)mb->arg[0], (void *)mb->arg[1], mb->arg[2]);
	return 0;
}

/* arg: addr, len.  Read one byte of every page: maps what backs it. */
long cma_mem_sink;	/* keeps the reads of t_touch() and zero_page_on_read() */

static long t_touch(struct cma_mbox *mb)
{
	const char *p = (const char *)mb->arg[0];
	size_t i, page = cma_page();
	long sum = 0;

	for (i = 0; i < (size_t)mb->arg[1]; i += page)
		sum += p[i];
	cma_mem_sink = sum;
	return 0;
}

/* arg: addr, image, len.  0 if memory holds the image, else 1 + first bad offset. */
static long t_cmp(struct cma_mbox *mb)
{
	const unsigned char *p = (const unsigned char *)mb->arg[0];
	const unsigned char *want = (const unsigned char *)mb->arg[1];
	size_t i;

	if (!memcmp(p, want, mb->arg[2]))
		return 0;
	for (i = 0; p[i] == want[i]; i++)
		;
	return i + 1;
}

/* arg: path (in the mailbox), flags.  Returns the fd. */
static long t_open(struct cma_mbox *mb)
{
	return open(mb->reg.path, mb->arg[0] | O_CLOEXEC);
}

/* arg: size.  A hugetlb memfd of @size bytes; returns the fd. */
static long t_memfd_huge(struct cma_mbox *mb)
{
	int fd = memfd_create("cma_mem", MFD_HUGETLB | MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, mb->arg[0]))
		return -1;
	return fd;
}

/* ---- in the caller ---------------------------------------------------- */

/* Add a region of @len bytes at @addr in the target; its image starts as zeros. */
static struct mreg *add_region(MEM_DATA *self, long addr, size_t len)
{
	struct mreg *r = &self->r[self->nr++];

	r->addr = (char *)addr;
	r->len = len;
	r->img = img + self->img_used;
	memset(r->img, 0, len);
	self->img_used += (len + CMA_THP_SIZE - 1) & ~(CMA_THP_SIZE - 1);
	return r;
}

static long tmap(MEM_DATA *self, size_t len, int prot, int flags, int fd, off_t off)
{
	struct cma_mbox *mb = self->t.mb;

	mb->arg[3] = fd;
	mb->arg[4] = off;
	return cma_call3(&self->t, t_mmap, len, prot, flags);
}

/* Fill [@off, @off + @len) of @r in the target with its image. */
static long fill(MEM_DATA *self, struct mreg *r, size_t off, size_t len)
{
	return cma_call3(&self->t, t_fill, (long)(r->addr + off), (long)(r->img + off), len);
}

/* A page's content that depends on its offset only: pages with it are identical. */
static void same_page(unsigned char *dst, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		dst[i] = cma_pat(i, seed);
}

/* Make a file of @size bytes holding @data in /tmp; its name goes to the mailbox. */
static int make_file(MEM_DATA *self, const unsigned char *data, size_t size)
{
	int fd;

	snprintf(self->path, sizeof(self->path), "/tmp/cma_mem_XXXXXX");
	fd = mkstemp(self->path);
	if (fd < 0)
		return -1;
	if (pwrite(fd, data, size, 0) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(self->t.mb->reg.path, sizeof(self->t.mb->reg.path), "%s", self->path);
	return 0;
}

/* make_file(), then open the file in the target: its descriptor there, or -1. */
static int target_file(MEM_DATA *self, const unsigned char *data, size_t size, int oflags)
{
	if (make_file(self, data, size))
		return -1;
	return cma_call1(&self->t, t_open, oflags);
}

/* Offset of the first byte of the file that differs from @want, or -1. */
static long file_differs(const char *path, const unsigned char *want, size_t size)
{
	unsigned char *buf = malloc(size + 1);
	struct stat st;
	long bad = -1;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!buf || fd < 0 || fstat(fd, &st) || (size_t)st.st_size != size ||
	    pread(fd, buf, size + 1, 0) != (ssize_t)size) {
		bad = (long)size;	/* unreadable, or not the size it had */
	} else {
		for (i = 0; i < size && bad < 0; i++)
			if (buf[i] != want[i])
				bad = i;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return bad;
}

/* One remote element: @len bytes at @off of region @reg. */
struct rel {
	int reg;
	size_t off;
	size_t len;
};

/*
 * Move the elements @rv (@n of them) to or from one caller buffer in one
 * call, expect @want (a negative errno for a failure), then check every
 * byte: the caller's buffer and canaries, and all regions of the target,
 * whose images take the bytes a write moved.
 */
static void xfer(struct __test_metadata *_metadata, MEM_DATA *self, bool write,
		 const struct rel *rv, int n, ssize_t want)
{
	struct iovec riov[8], liov;
	size_t total = 0, done, i, k;
	unsigned char *lbuf, *lorig;
	ssize_t ret;
	long bad;
	int j;

	for (j = 0; j < n; j++) {
		riov[j].iov_base = self->r[rv[j].reg].addr + rv[j].off;
		riov[j].iov_len = rv[j].len;
		total += rv[j].len;
	}
	lbuf = malloc(total + 2 * MARGIN);
	lorig = malloc(total + 2 * MARGIN);
	ASSERT_TRUE(lbuf && lorig);
	cma_fill(lbuf, total + 2 * MARGIN, LOCAL_SEED);
	memcpy(lorig, lbuf, total + 2 * MARGIN);
	liov.iov_base = lbuf + MARGIN;
	liov.iov_len = total;

	errno = 0;
	ret = cma_rw(write, self->t.pid, &liov, 1, riov, n, 0);
	if (want < 0) {
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(-want, errno) TH_LOG("errno %d (%s)", errno, strerror(errno));
		want = 0;
	} else {
		EXPECT_EQ(want, ret) TH_LOG("errno %d (%s)", errno, strerror(errno));
	}
	if (ret > 0)
		want = ret;	/* check what the call says it did */

	/* The images take what a write moved; a read must have moved the images' bytes. */
	for (j = 0, done = 0; j < n && done < (size_t)want; j++) {
		unsigned char *im = self->r[rv[j].reg].img + rv[j].off;

		k = rv[j].len < want - done ? rv[j].len : want - done;
		if (write)
			memcpy(im, lorig + MARGIN + done, k);
		else
			memcpy(lorig + MARGIN + done, im, k);
		done += k;
	}
	for (i = 0; i < total + 2 * MARGIN; i++)
		if (lbuf[i] != lorig[i])
			break;
	EXPECT_EQ(total + 2 * MARGIN, i) TH_LOG("caller byte %zd of %zu wrong",
						(ssize_t)i - MARGIN, total);
	for (j = 0; j < self->nr; j++) {
		struct mreg *r = &self->r[j];

		bad = cma_call3(&self->t, t_cmp, (long)r->addr, (long)r->img, r->len) - 1;
		EXPECT_EQ(-1, bad) TH_LOG("region %d: target byte %ld of %zu wrong",
					  j, bad, r->len);
	}
	free(lbuf);
	free(lorig);
}

/* ---- page flags -------------------------------------------------------- */

static uint64_t page_flags(MEM_DATA *self, struct mreg *r, size_t pg)
{
	uint64_t pfn, flags;

	if (cma_page_info(self->t.pid, (uintptr_t)r->addr + pg * self->page, &pfn, &flags))
		return 0;
	return flags;
}

/* The page frame of page @pg of @r, or 0 if not present or not known. */
static uint64_t page_pfn(MEM_DATA *self, struct mreg *r, size_t pg)
{
	uint64_t pfn, flags;

	if (cma_page_info(self->t.pid, (uintptr_t)r->addr + pg * self->page, &pfn, &flags))
		return 0;
	return pfn;
}

/* ---- MAP_PRIVATE, read-only and past-EOF file mappings ----------------- */

/*
 * A MAP_PRIVATE mapping of a file whose pages the target has read (page
 * cache pages mapped read-only) but one, which it wrote (its own copy).
 * writev must copy each page before writing it: the file and another
 * process's MAP_SHARED mapping of it keep their bytes, the target sees
 * the new ones.  readv reads the file's bytes, and the copy's.
 */
TEST_F(mem, file_private)
{
	size_t p = self->page, len = 6 * p;
	unsigned char *orig, *shared;
	struct mreg *r;
	long addr;
	int fd;

	orig = img + IMG_LEN - len;
	cma_fill(orig, len, 0x71);
	fd = target_file(self, orig, len, O_RDWR);
	ASSERT_LE(0, fd);
	addr = tmap(self, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(0, addr);
	r = add_region(self, addr, len);
	memcpy(r->img, orig, len);
	ASSERT_EQ(0, cma_call3(&self->t, t_touch, addr, len, 0));
	/* Page 4 becomes the target's own copy. */
	cma_fill(r->img + 4 * p + 100, 200, 0x72);
	ASSERT_EQ(0, fill(self, r, 4 * p + 100, 200));

	/* Another process maps the file shared: this one. */
	fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	shared = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_TRUE(shared != MAP_FAILED);

	xfer(_metadata, self, variant->write, (struct rel[]){ { 0, p + 5, 4 * p + 2 } }, 1,
	     4 * p + 2);
	EXPECT_EQ(-1, file_differs(self->path, orig, len)) TH_LOG("the file changed");
	EXPECT_EQ(0, memcmp(shared, orig, len)) TH_LOG("a shared mapping of the file changed");
	munmap(shared, len);
}

/*
 * A read-only MAP_SHARED mapping of a file opened O_RDONLY.  writev: EFAULT
 * for an element there, nothing written into the file; after an element
 * that could be written, the count of that element.  readv reads the file.
 */
TEST_F(mem, file_shared_readonly)
{
	size_t p = self->page, len = 4 * p;
	unsigned char *orig;
	struct mreg *ro;
	long addr;
	int fd;

	orig = img + IMG_LEN - len;
	cma_fill(orig, len, 0x73);
	fd = target_file(self, orig, len, O_RDONLY);
	ASSERT_LE(0, fd);
	addr = tmap(self, len, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(0, addr);
	ro = add_region(self, addr, len);
	memcpy(ro->img, orig, len);
	ASSERT_EQ(0, cma_call3(&self->t, t_touch, addr, len, 0));
	addr = tmap(self, 2 * p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(0, addr);
	add_region(self, addr, 2 * p);
	cma_fill(self->r[1].img, 2 * p, 0x74);
	ASSERT_EQ(0, fill(self, &self->r[1], 0, 2 * p));

	if (variant->write) {
		xfer(_metadata, self, true, (struct rel[]){ { 0, p + 3, 2 * p } }, 1, -EFAULT);
		xfer(_metadata, self, true, (struct rel[]){ { 0, 0, 1 } }, 1, -EFAULT);
		xfer(_metadata, self, true,
		     (struct rel[]){ { 1, 50, 100 }, { 0, p - 7, 2 * p } }, 2, 100);
	} else {
		xfer(_metadata, self, false,
		     (struct rel[]){ { 1, 50, 100 }, { 0, p - 7, 3 * p } }, 2, 3 * p + 100);
	}
	EXPECT_EQ(-1, file_differs(self->path, orig, len)) TH_LOG("the file changed");
}

/*
 * Pages of a file mapping past the page that holds the end of the file
 * (where an access raises SIGBUS), in a MAP_SHARED and a MAP_PRIVATE
 * mapping.  As mainline: an element that runs into them moves the bytes up
 * to the end of the page holding EOF (the page granularity of partial
 * transfers); a later element moves nothing; nothing moved is EFAULT.  The
 * rest of EOF's page moves like any other byte, and never reaches the file.
 */
TEST_F(mem, file_past_eof)
{
	size_t p = self->page, size = 2 * p + 100, len = 4 * p;
	unsigned char *orig;
	int fd, round;

	orig = img + IMG_LEN - len;
	cma_fill(orig, size, 0x75);
	fd = target_file(self, orig, size, O_RDWR);
	ASSERT_LE(0, fd);
	for (round = 0; round < 2; round++) {
		int flags = round ? MAP_SHARED : MAP_PRIVATE;
		struct mreg *r;
		long addr;

		addr = tmap(self, len, PROT_READ | PROT_WRITE, flags, fd, 0);
		ASSERT_NE(0, addr);
		self->nr = 0;
		self->img_used = 0;
		/*
		 * The target compares the pages it can access: up to the end
		 * of EOF's page, where it has a copy of that page; but in the
		 * page cache only up to EOF, since writeback may zero the rest
		 * of the page at any time (ext4 does).  The private round goes
		 * first, so the shared one still reads zeros there.
		 */
		r = add_region(self, addr, flags == MAP_PRIVATE ? 3 * p : size);
		memcpy(r->img, orig, size);

		xfer(_metadata, self, variant->write,
		     (struct rel[]){ { 0, p + 10, 2 * p + 40 } }, 1, 2 * p - 10);
		xfer(_metadata, self, variant->write,
		     (struct rel[]){ { 0, 2 * p + 200, 300 }, { 0, 3 * p + 5, 100 } }, 2, 300);
		xfer(_metadata, self, variant->write,
		     (struct rel[]){ { 0, 3 * p, 10 }, { 0, 0, 10 } }, 2, -EFAULT);
		xfer(_metadata, self, variant->write,
		     (struct rel[]){ { 0, 2 * p - 1, 2 * p } }, 1, p + 1);
		if (variant->write && flags == MAP_SHARED)
			memcpy(orig, r->img, size);
		EXPECT_EQ(-1, file_differs(self->path, orig, size))
			TH_LOG("%s: the file is not what the mapping holds up to EOF",
			       round ? "MAP_SHARED" : "MAP_PRIVATE");
	}
}

/* ---- hugetlb memfd ----------------------------------------------------- */

/* Make @want 2 MiB huge pages free; returns the old nr_hugepages, or -1. */
static long hugetlb_reserve(long want)
{
	long old, free_pages = -1, size_kb = 0;
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
	if (size_kb != (long)(CMA_THP_SIZE >> 10) || free_pages < 0 ||
	    cma_read_long(CMA_NR_HUGE, &old))
		return -1;
	if (free_pages < want)
		cma_write_long(CMA_NR_HUGE, old + want - free_pages);
	return old;
}

/*
 * A hugetlb memfd of two 2 MiB pages, mapped MAP_SHARED and MAP_PRIVATE by
 * the target and MAP_SHARED by the caller.  Transfers across the boundary
 * of the huge pages; a write through the private mapping copies the huge
 * page and leaves the memfd as it was, one through the shared mapping
 * shows in the caller's mapping.
 */
TEST_F(mem, hugetlb_memfd)
{
	size_t p = self->page, h = CMA_THP_SIZE, len = 2 * h;
	struct mreg *s, *pr;
	char path[64];
	char *mine;
	long addr;
	int fd, myfd;

	/* Two pages for the memfd, two for the private mapping's copies. */
	self->old_huge = hugetlb_reserve(4);
	if (self->old_huge < 0)
		SKIP(return, "no 2 MiB hugetlb pages");
	fd = cma_call1(&self->t, t_memfd_huge, len);
	if (fd < 0)
		SKIP(return, "cannot make a hugetlb memfd: %s", strerror(errno));
	addr = tmap(self, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!addr)
		SKIP(return, "cannot map 2 hugetlb pages: %s", strerror(errno));
	s = add_region(self, addr, len);
	cma_fill(s->img, len, 0x76);
	ASSERT_EQ(0, fill(self, s, 0, len));
	addr = tmap(self, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (!addr)
		SKIP(return, "cannot map 2 more hugetlb pages: %s", strerror(errno));
	ASSERT_EQ(0, cma_call3(&self->t, t_touch, addr, len, 0));

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", self->t.pid, fd);
	myfd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, myfd);
	mine = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, myfd, 0);
	close(myfd);
	ASSERT_TRUE(mine != MAP_FAILED);

	xfer(_metadata, self, variant->write,
	     (struct rel[]){ { 0, 100, 3 * p }, { 0, h - 3 * p - 5, 4 * p + 11 } }, 2,
	     7 * p + 11);
	EXPECT_EQ(0, memcmp(mine, s->img, len)) TH_LOG("the caller's mapping differs");
	/* Not written yet, the private mapping reads the memfd as it is now. */
	pr = add_region(self, addr, len);
	memcpy(pr->img, s->img, len);
	xfer(_metadata, self, variant->write,
	     (struct rel[]){ { 1, h - p - 1, 2 * p + 2 }, { 1, 7, 9 } }, 2, 2 * p + 11);
	EXPECT_EQ(0, memcmp(mine, s->img, len)) TH_LOG("a private write reached the memfd");
	munmap(mine, len);
	cma_target_stop(&self->t);
}

/* ---- KSM ---------------------------------------------------------------- */

#define KSM_DIR		"/sys/kernel/mm/ksm/"

static const char *const ksm_knobs[] = { "pages_to_scan", "sleep_millisecs", "run" };

struct ksm_saved {
	long val[3];
	bool saved;
};

static int ksm_set(const char *knob, long val)
{
	char path[96];

	snprintf(path, sizeof(path), KSM_DIR "%s", knob);
	return cma_write_long(path, val);
}

static int ksm_save(struct ksm_saved *s)
{
	char path[96];
	int i;

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), KSM_DIR "%s", ksm_knobs[i]);
		if (cma_read_long(path, &s->val[i]))
			return -1;
	}
	s->saved = true;
	return 0;
}

static void ksm_restore(struct ksm_saved *s)
{
	int i;

	if (!s->saved)
		return;
	ksm_set("run", 0);
	for (i = 0; i < 3; i++)
		ksm_set(ksm_knobs[i], s->val[i]);
}

/*
 * Whether the pages @pg[] (@n of them) of @r are merged: mapped to one
 * page frame.  (Not KPF_KSM: 6.12's /proc/kpageflags sets it for every
 * anonymous page.)
 */
static bool ksm_merged(MEM_DATA *self, struct mreg *r, const int *pg, int n)
{
	uint64_t pfn = page_pfn(self, r, pg[0]);
	int i;

	for (i = 1; i < n; i++)
		if (!pfn || page_pfn(self, r, pg[i]) != pfn)
			return false;
	return true;
}

/*
 * Have ksmd scan as fast as it can until the pages @pg[] (@n of them) of
 * @r are merged, for at most @secs seconds; then stop it, so that nothing
 * merges again behind the case's back.  Returns 0 when merged.
 */
static int ksm_merge(MEM_DATA *self, struct mreg *r, const int *pg, int n, int secs)
{
	double end = cma_now() + secs;
	bool merged = false;

	if (ksm_set("pages_to_scan", 20000) || ksm_set("sleep_millisecs", 0) ||
	    ksm_set("run", 1))
		return -1;
	while (!merged && cma_now() < end) {
		merged = ksm_merged(self, r, pg, n);
		if (!merged)
			usleep(20000);
	}
	ksm_set("run", 0);
	return merged ? 0 : -1;
}

/*
 * Whether this kernel maps the shared zero page when private anonymous
 * memory is read before it is written.  Mainline does; a kernel may not
 * (the 6.18 host kernel of this project's CI gives such a read a page of
 * its own).  If the probe itself fails, the answer is yes, so that the
 * case below keeps its strict check.
 */
static bool zero_page_on_read(size_t p)
{
	char *m = mmap(NULL, p, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t pfn, fl;
	bool zero = true;

	if (m == MAP_FAILED)
		return zero;
	madvise(m, p, MADV_NOHUGEPAGE);
	cma_mem_sink += m[0];
	if (!cma_page_info(getpid(), (uintptr_t)m, &pfn, &fl) && (fl & CMA_PG_PRESENT))
		zero = fl & _BITULL(KPF_ZERO_PAGE);
	munmap(m, p);
	return zero;
}

/*
 * Eight pages, one call over all of them: present, KSM-merged, present, the
 * shared zero page (read, never written; an ordinary present page on a
 * kernel that maps no zero page there), never touched, KSM-merged,
 * present, present; a third page merged with the two lies outside the
 * range.  Pinning takes runs of present pages under one page table lock
 * and must stop at each page that needs a fault first: a write must
 * unshare each KSM page (the page merged with it keeps its bytes) and
 * allocate the untouched and the zero page; a read pin must unshare the
 * KSM pages too (a pinned anonymous page belongs to one process), and
 * reads zeros from the zero page and the untouched one.
 */
TEST_F(mem, mixed_run_ksm)
{
	size_t p = self->page, len = 10 * p;
	static const int ksm_pg[] = { 1, 5, 9 };
	struct ksm_saved saved = { };
	bool zero_read = zero_page_on_read(p);
	uint64_t fl, ksm_pfn;
	struct mreg *r;
	long addr;
	int i, ret;

	if (access(KSM_DIR "run", F_OK))
		SKIP(return, "no KSM (CONFIG_KSM)");
	if (geteuid())
		SKIP(return, "KSM settings and page flags need root");
	if (!zero_read)
		TH_LOG("no shared zero page on a read fault here: page 3 gets its own");
	addr = tmap(self, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(0, addr);
	/*
	 * Small pages only: a huge folio would fault in pages 4 and 8 with
	 * their neighbours.  A kernel without THP (PREEMPT_RT in 6.12) has
	 * nothing else, and rejects the advice with EINVAL.
	 */
	if (!access(CMA_THP_SYSFS, F_OK))
		ASSERT_EQ(0, cma_call3(&self->t, t_madvise, addr, len, MADV_NOHUGEPAGE));
	r = add_region(self, addr, len);
	for (i = 0; i < 10; i++) {
		if (i == 3 || i == 4 || i == 8)
			continue;
		if (i == 1 || i == 5 || i == 9)
			same_page(r->img + i * p, p, 0x6b);
		else
			cma_fill(r->img + i * p, p, 0x77);
		ASSERT_EQ(0, fill(self, r, i * p, p));
	}
	ASSERT_EQ(0, cma_call3(&self->t, t_touch, addr + 3 * p, p, 0));
	ASSERT_EQ(0, cma_call3(&self->t, t_madvise, addr, len, MADV_MERGEABLE))
		TH_LOG("MADV_MERGEABLE: %s", strerror(errno));

	ASSERT_EQ(0, ksm_save(&saved));
	ret = ksm_merge(self, r, ksm_pg, 3, 60);
	if (ret) {
		ksm_restore(&saved);
		ASSERT_EQ(0, ret) TH_LOG("ksmd did not merge the identical pages within 60 s");
	}
	/* The run is what it should be. */
	ksm_pfn = page_pfn(self, r, 9);
	for (i = 0; i < 10; i++) {
		fl = page_flags(self, r, i);
		if (i == 3 && zero_read) {
			EXPECT_TRUE(fl & _BITULL(KPF_ZERO_PAGE)) TH_LOG("page 3 not the zero page");
		} else if (i == 3) {
			EXPECT_TRUE(fl & CMA_PG_PRESENT) TH_LOG("page 3 not present");
		} else if (i == 4 || i == 8) {
			EXPECT_FALSE(fl & CMA_PG_PRESENT) TH_LOG("page %d present", i);
		} else if (i != 1 && i != 5 && i != 9) {
			EXPECT_TRUE(fl & CMA_PG_PRESENT) TH_LOG("page %d not present", i);
			EXPECT_NE(ksm_pfn, page_pfn(self, r, i)) TH_LOG("page %d merged", i);
		}
	}

	xfer(_metadata, self, variant->write, (struct rel[]){ { 0, 100, 8 * p - 200 } }, 1,
	     8 * p - 200);
	/*
	 * Pinned pages are the target's own: the range's KSM pages were
	 * unshared, for a read pin too; the page outside the range was not.
	 */
	EXPECT_NE(ksm_pfn, page_pfn(self, r, 1)) TH_LOG("page 1 still merged");
	EXPECT_NE(ksm_pfn, page_pfn(self, r, 5)) TH_LOG("page 5 still merged");
	EXPECT_EQ(ksm_pfn, page_pfn(self, r, 9)) TH_LOG("page 9 unmerged");
	cma_target_stop(&self->t);
	ksm_restore(&saved);
}

/* ---- linear copies (hardened usercopy) --------------------------------- */

/*
 * Copies that run linearly through several pages: the pages of a THP, and
 * small pages whose frames follow each other.  Under HARDENED_USERCOPY
 * each copy is checked against the folio it starts in; the debug kernel's
 * log gate fails the run on any report.  The case checks that such pages
 * back the target (a THP, and at least two small pages with consecutive
 * frames), then moves both in one call.
 */
TEST_F(mem, linear_copies)
{
	size_t p = self->page, h = CMA_THP_SIZE, small = 64 * p, i;
	uint64_t pfn, prev = 0, fl;
	struct mreg *s, *t;
	int adjacent = 0, huge = 0;
	long addr;

	if (access(CMA_THP_SYSFS, F_OK))
		SKIP(return, "no transparent huge pages");
	addr = tmap(self, small, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(0, addr);
	ASSERT_EQ(0, cma_call3(&self->t, t_madvise, addr, small, MADV_NOHUGEPAGE));
	s = add_region(self, addr, small);
	cma_fill(s->img, small, 0x78);
	ASSERT_EQ(0, fill(self, s, 0, small));
	/* A 2 MiB-aligned THP inside a larger mapping. */
	addr = tmap(self, 2 * h, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(0, addr);
	addr = (long)(((uintptr_t)addr + h - 1) & ~(uintptr_t)(h - 1));
	ASSERT_EQ(0, cma_call3(&self->t, t_madvise, addr, h, MADV_HUGEPAGE));
	t = add_region(self, addr, h);
	cma_fill(t->img, h, 0x79);
	ASSERT_EQ(0, fill(self, t, 0, h));

	for (i = 0; i < small / p; i++) {
		if (cma_page_info(self->t.pid, (uintptr_t)s->addr + i * p, &pfn, &fl))
			SKIP(return,
			     "no page frame numbers (/proc/PID/pagemap needs CAP_SYS_ADMIN)");
		adjacent += i && pfn == prev + 1;
		prev = pfn;
	}
	for (i = 0; i < h / p; i++)
		huge += !!(page_flags(self, t, i) & _BITULL(CMA_KPF_THP));
	/*
	 * Whether small pages follow each other is the page allocator's
	 * choice (on a busy machine they seldom do): it is reported, not
	 * required.  Hardened usercopy checks a copy against the folio it
	 * starts in, which for a small page is no check at all; the THP is
	 * what it can object to.
	 */
	TH_LOG("%d of %zu small pages follow the one before; %d of %zu pages in a THP",
	       adjacent, small / p - 1, huge, h / p);
	if (huge != (int)(h / p))
		SKIP(return, "transparent huge pages: none could be allocated (%d of %zu)",
		     huge, h / p);

	xfer(_metadata, self, variant->write,
	     (struct rel[]){ { 0, 3, small - 6 }, { 1, 0, h }, { 0, 0, 2 * p + 1 } }, 3,
	     small - 6 + h + 2 * p + 1);
}

TEST_HARNESS_MAIN
