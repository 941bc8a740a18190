// SPDX-License-Identifier: GPL-2.0
/*
 * process_vm_readv(2)/process_vm_writev(2) on the pages of a file on a
 * block device: what reaches the disk, and what PROCESS_VM_NOWAIT does
 * when a page is not in the page cache.
 *
 * A write through a pin goes to the page, not through a page table entry,
 * so nothing but the unpin marks the page dirty.  The fault that pins a
 * page of a shared file mapping for writing dirties it already, so the
 * missing mark shows only when the page is written back while it is
 * pinned: writeback_while_pinned has the caller's source buffer served by
 * a userfaultfd whose handler syncs the file before each page, so the
 * copy runs into pinned pages that writeback has just cleaned.  Every
 * file is read back from the device after its pages were dropped from
 * the page cache, which mincore() confirms.
 *
 * The file lives in $CMA_DISK_DIR, or else in $TMPDIR or /tmp if either
 * is a file system on a block device; the cases skip without one.
 */
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include "../kselftest_harness.h"
#include "cma_common.h"

#define KPF_DIRTY	4	/* /proc/kpageflags */
#define NR_PAGES	4	/* pages of the file */
#define OLD_SEED	0x21	/* what the file holds first */
#define NEW_SEED	0x5a	/* what the calls write */
#define NOWAIT_TRIES	30

/* A file on the device, mapped MAP_SHARED by a target that never touched it. */
struct dfile {
	struct cma_target t;
	size_t page;
	size_t len;		/* of the file and of the mapping */
	char path[PATH_MAX];	/* the file, empty if there is no device */
	char why[128];		/* why there is none */
	int fd;			/* the caller's descriptor of the file */
	char *addr;		/* the target's mapping */
	unsigned char *img;	/* what the file must hold, len bytes */
	unsigned char *buf;	/* the caller's buffer, len bytes */
};

/* Is @dir a writable folder of a file system on a block device? */
static bool on_disk(const char *dir)
{
	struct stat st;

	/* Anonymous devices (tmpfs, overlayfs, 9p, btrfs) have major 0. */
	return dir && *dir && !stat(dir, &st) && S_ISDIR(st.st_mode) && major(st.st_dev) &&
	       !access(dir, W_OK);
}

/* In the target: map the file named by arg0, arg1 bytes.  0 on failure. */
static long t_map_file(struct cma_mbox *mb)
{
	void *p;
	int fd;

	fd = open((const char *)mb->arg[0], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	p = mmap(NULL, mb->arg[1], PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? 0 : (long)p;
}

/* In the target: read a byte of each page of [arg0, arg0 + arg1). */
long cma_disk_sink;	/* keeps t_touch()'s reads */

static long t_touch(struct cma_mbox *mb)
{
	const char *p = (const char *)mb->arg[0];
	size_t i;
	long sum = 0;

	for (i = 0; i < (size_t)mb->arg[1]; i += cma_page())
		sum += p[i];
	cma_disk_sink = sum;
	return 0;
}

/* In the target: unmap the pages of [arg0, arg0 + arg1), keep the mapping. */
static long t_zap(struct cma_mbox *mb)
{
	return madvise((void *)mb->arg[0], mb->arg[1], MADV_DONTNEED);
}

static void dfile_setup(struct __test_metadata *_metadata, struct dfile *d)
{
	const char *env = getenv("CMA_DISK_DIR");
	const char *dir = NULL;

	d->page = cma_page();
	d->len = NR_PAGES * d->page;
	d->fd = -1;
	if (env && *env) {
		/* Asked for: a wrong folder is an error, not a reason to skip. */
		ASSERT_TRUE(on_disk(env))
			TH_LOG("CMA_DISK_DIR=%s is not a writable folder on a block device", env);
		dir = env;
	} else if (on_disk(getenv("TMPDIR"))) {
		dir = getenv("TMPDIR");
	} else if (on_disk("/tmp")) {
		dir = "/tmp";
	}
	if (!dir) {
		snprintf(d->why, sizeof(d->why), "no folder on a block device (set CMA_DISK_DIR)");
		return;
	}
	snprintf(d->path, sizeof(d->path), "%s/cma_disk_XXXXXX", dir);
	d->fd = mkstemp(d->path);
	ASSERT_LE(0, d->fd) TH_LOG("mkstemp in %s: %s", dir, strerror(errno));
	d->img = malloc(d->len);
	d->buf = malloc(d->len);
	ASSERT_TRUE(d->img && d->buf);
	/* The old contents, on the device before anything maps the file. */
	cma_fill(d->img, d->len, OLD_SEED);
	ASSERT_EQ((ssize_t)d->len, pwrite(d->fd, d->img, d->len, 0));
	ASSERT_EQ(0, fsync(d->fd));
	ASSERT_EQ(0, cma_target_start(&d->t));
	d->addr = (char *)cma_call3(&d->t, t_map_file, (long)d->path, d->len, 0);
	ASSERT_TRUE(!!d->addr);
}

static void dfile_teardown(struct dfile *d)
{
	cma_target_stop(&d->t);
	if (d->fd >= 0)
		close(d->fd);
	if (d->path[0])
		unlink(d->path);
	free(d->img);
	free(d->buf);
}

/*
 * Pages of [@off, @off + @len) of the file in the page cache, from a
 * mapping of our own that touches nothing; -1 on error.
 */
static long cached_pages(struct dfile *d, size_t off, size_t len)
{
	unsigned char vec[NR_PAGES];
	size_t i;
	long n = 0;
	void *m;

	m = mmap(NULL, d->len, PROT_READ, MAP_SHARED, d->fd, 0);
	if (m == MAP_FAILED)
		return -1;
	if (mincore(m, d->len, vec))
		n = -1;
	munmap(m, d->len);
	for (i = off / d->page; n >= 0 && i < (off + len) / d->page; i++)
		n += vec[i] & 1;
	return n;
}

/*
 * Write pages [@off, @off + @len) of the file back and drop them from the
 * page cache; 0 once none of them is cached.  Reading them first waits
 * for any read still in flight (a locked page cannot be dropped); a page
 * that a process maps cannot be dropped either.
 */
static int evict(struct dfile *d, size_t off, size_t len)
{
	int i;

	if (pread(d->fd, d->buf, len, off) != (ssize_t)len || fsync(d->fd))
		return -1;
	for (i = 0; i < 10; i++) {
		if (posix_fadvise(d->fd, off, len, POSIX_FADV_DONTNEED))
			return -1;
		if (!cached_pages(d, off, len))
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * The first byte of the file, as the device holds it, that differs from
 * the image, or -1.  The file is written back and dropped from the page
 * cache first: no process may map a page of it.  Clobbers d->buf.
 */
static long disk_differs(struct dfile *d)
{
	size_t i;

	if (evict(d, 0, d->len))
		return LONG_MAX;
	memset(d->buf, 0, d->len);
	if (pread(d->fd, d->buf, d->len, 0) != (ssize_t)d->len)
		return LONG_MAX;
	for (i = 0; i < d->len; i++)
		if (d->buf[i] != d->img[i])
			return i;
	return -1;
}

/* The offset of the first byte where @a and @b differ, or -1. */
static long first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

/*
 * KPF_DIRTY of the page that @pid maps at @addr: 1 or 0; -1 if page
 * frames cannot be read (CAP_SYS_ADMIN), -2 if no page is mapped there.
 */
static int page_dirty(pid_t pid, uintptr_t addr)
{
	uint64_t pfn, flags;

	if (cma_page_info(pid, addr, &pfn, &flags))
		return -1;
	if (!(flags & CMA_PG_PRESENT))
		return -2;
	return (flags >> KPF_DIRTY) & 1;
}

FIXTURE(disk) {
	struct dfile d;
};

FIXTURE_SETUP(disk)
{
	dfile_setup(_metadata, &self->d);
}

FIXTURE_TEARDOWN(disk)
{
	dfile_teardown(&self->d);
}

/*
 * process_vm_writev() into pages the target has read (clean, mapped
 * read-only): the device has the bytes afterwards, and only them.
 */
TEST_F(disk, writeback)
{
	struct dfile *d = &self->d;
	size_t p = d->page, off = p / 2, len = 2 * p;
	unsigned char *src = malloc(len);
	struct iovec l = { src, len };
	struct iovec r = { d->addr + off, len };
	long bad;

	if (!d->path[0])
		SKIP(return, "%s", d->why);
	ASSERT_TRUE(!!src);
	ASSERT_EQ(0, cma_call3(&d->t, t_touch, (long)d->addr, d->len, 0));
	cma_fill(src, len, NEW_SEED);
	ASSERT_EQ((ssize_t)len, cma_writev(d->t.pid, &l, 1, &r, 1, 0));
	memcpy(d->img + off, src, len);
	cma_target_stop(&d->t);
	bad = disk_differs(d);
	ASSERT_EQ(-1, bad) TH_LOG("file byte %ld is not what it must be", bad);
	free(src);
}

/*
 * process_vm_readv() of pages that are not in the page cache (the target
 * mapped them but never touched them): the call reads them from the device.
 */
TEST_F(disk, read_page_cache_miss)
{
	struct dfile *d = &self->d;
	size_t p = d->page, off = p - 100, len = 2 * p + 200;
	unsigned char *dst = malloc(len);
	struct iovec l = { dst, len };
	struct iovec r = { d->addr + off, len };

	if (!d->path[0])
		SKIP(return, "%s", d->why);
	ASSERT_TRUE(!!dst);
	ASSERT_EQ(0, evict(d, 0, d->len));
	memset(dst, 0, len);
	ASSERT_EQ((ssize_t)len, cma_readv(d->t.pid, &l, 1, &r, 1, 0));
	ASSERT_EQ(-1, first_diff(d->img + off, dst, len));
	free(dst);
}

/* Serves the caller's source buffer, writing the file back before each page. */
struct wb_server {
	int uffd;
	int fd;			/* the file */
	pid_t target;
	uintptr_t raddr;	/* the target's mapping */
	uintptr_t laddr;	/* the buffer */
	int pages;		/* to serve */
	int served;
	int dirty[NR_PAGES];	/* page_dirty() of each remote page after the sync */
	int err;		/* errno of a failed step */
};

static void *wb_serve(void *arg)
{
	struct wb_server *s = arg;
	struct pollfd pfd = { .fd = s->uffd, .events = POLLIN };
	size_t p = cma_page(), i;
	struct uffdio_copy copy;
	struct uffd_msg msg;
	unsigned char *page;
	uintptr_t addr;
	size_t k;

	page = mmap(NULL, p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		s->err = errno;
		return NULL;
	}
	while (s->served < s->pages) {
		/* Bounded: a call that never faults must not hang the case. */
		if (poll(&pfd, 1, 30000) <= 0) {
			s->err = ETIMEDOUT;
			break;
		}
		if (read(s->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		addr = msg.arg.pagefault.address & ~(uintptr_t)(p - 1);
		k = (addr - s->laddr) / p;
		/*
		 * The call waits in its copy into remote page k, which it
		 * has pinned for writing: write the file back now.
		 */
		if (fsync(s->fd)) {
			s->err = errno;
			break;
		}
		if (k < NR_PAGES)
			s->dirty[k] = page_dirty(s->target, s->raddr + k * p);
		for (i = 0; i < p; i++)
			page[i] = cma_pat(addr + i, NEW_SEED);
		memset(&copy, 0, sizeof(copy));
		copy.dst = addr;
		copy.src = (uintptr_t)page;
		copy.len = p;
		if (ioctl(s->uffd, UFFDIO_COPY, &copy)) {
			s->err = errno;
			break;
		}
		s->served++;
	}
	munmap(page, p);
	return NULL;
}

/*
 * The pages of the pinned cases: one, a window of a lone page, whose
 * unpin has nothing to batch; and two, which the unpin takes together.
 */
FIXTURE(disk_pinned) {
	struct dfile d;
};

FIXTURE_VARIANT(disk_pinned) {
	int pages;
};

FIXTURE_VARIANT_ADD(disk_pinned, one_page) {
	.pages = 1,
};

FIXTURE_VARIANT_ADD(disk_pinned, two_pages) {
	.pages = 2,
};

FIXTURE_SETUP(disk_pinned)
{
	dfile_setup(_metadata, &self->d);
}

FIXTURE_TEARDOWN(disk_pinned)
{
	dfile_teardown(&self->d);
}

/*
 * process_vm_writev() whose remote pages are written back while they are
 * pinned, before the call writes them: only the dirty mark that the unpin
 * sets gets the new bytes to the device.
 */
TEST_F(disk_pinned, writeback_while_pinned)
{
	struct dfile *d = &self->d;
	int k, n = variant->pages, after[2];
	size_t p = d->page, len = n * p;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct wb_server s;
	struct iovec l, r;
	unsigned char *lbuf;
	pthread_t th;
	ssize_t ret;
	long bad;

	if (!d->path[0])
		SKIP(return, "%s", d->why);
	ASSERT_EQ(0, cma_call3(&d->t, t_touch, (long)d->addr, d->len, 0));
	if (page_dirty(d->t.pid, (uintptr_t)d->addr) == -1)
		SKIP(return, "cannot read page flags (/proc/kpageflags needs CAP_SYS_ADMIN)");
	/*
	 * Nothing mapped: a page that the handler finds mapped was mapped
	 * by the call's pinning fault, so it was pinned before the sync.
	 */
	ASSERT_EQ(0, cma_call3(&d->t, t_zap, (long)d->addr, d->len, 0));
	for (k = 0; k < n; k++)
		ASSERT_EQ(-2, page_dirty(d->t.pid, (uintptr_t)d->addr + k * p));
	lbuf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(lbuf != MAP_FAILED);
	memset(&s, 0, sizeof(s));
	s.fd = d->fd;
	s.target = d->t.pid;
	s.raddr = (uintptr_t)d->addr;
	s.laddr = (uintptr_t)lbuf;
	s.pages = n;
	s.uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (s.uffd < 0)
		SKIP(return, "no userfaultfd for kernel faults: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(s.uffd, UFFDIO_API, &api));
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)lbuf;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(s.uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(0, pthread_create(&th, NULL, wb_serve, &s));

	l = (struct iovec){ lbuf, len };
	r = (struct iovec){ d->addr, len };
	ret = cma_writev(d->t.pid, &l, 1, &r, 1, 0);
	pthread_join(th, NULL);
	close(s.uffd);
	ASSERT_EQ(0, s.err) TH_LOG("handler: %s", strerror(s.err));
	ASSERT_EQ((ssize_t)len, ret);
	ASSERT_EQ(n, s.served);
	for (k = 0; k < n; k++) {
		/*
		 * What the proof rests on: each page was pinned (mapped) and
		 * clean when the call was about to write it (1 would be
		 * dirty, -2 unmapped) ...
		 */
		ASSERT_EQ(0, s.dirty[k])
			TH_LOG("remote page %d was not clean and mapped after the sync", k);
		/* ... and the unpin marked it dirty ... */
		after[k] = page_dirty(d->t.pid, (uintptr_t)d->addr + k * p);
		EXPECT_EQ(1, after[k]) TH_LOG("remote page %d is not dirty after the call", k);
	}
	/* ... so the device has the new bytes. */
	memcpy(d->img, lbuf, len);
	cma_target_stop(&d->t);
	bad = disk_differs(d);
	ASSERT_EQ(-1, bad) TH_LOG("file byte %ld is not what it must be", bad);
	munmap(lbuf, len);
}

FIXTURE(disk_nowait) {
	struct dfile d;
};

#define CMA_RW_FIXTURE disk_nowait
#include "cma_rw_variants.h"

FIXTURE_SETUP(disk_nowait)
{
	dfile_setup(_metadata, &self->d);
}

FIXTURE_TEARDOWN(disk_nowait)
{
	dfile_teardown(&self->d);
}

/*
 * One call with PROCESS_VM_NOWAIT over [@off, @off + @len) of the file,
 * with page 0 in the page cache if @cache0 and no other: expect @want
 * bytes, or -1 with EFAULT if @want is 0 (Documentation/cma.rst: the
 * transfer stops at a page that needs I/O).  The fault starts the read,
 * which may end before the fault looks at the page again: then the page
 * is there and the call copies everything.  Under QEMU that happens in
 * about a third of the calls, and cannot happen every time, so the case
 * tries again, up to NOWAIT_TRIES times, and checks the first call that
 * did not copy everything; a kernel that waits copies everything each time.
 */
static void nowait_call(struct __test_metadata *_metadata, struct dfile *d, bool write,
			size_t off, size_t len, bool cache0, size_t want)
{
	unsigned char *lbuf = malloc(len), *old = malloc(d->len);
	struct iovec l = { lbuf, len };
	struct iovec r = { d->addr + off, len };
	size_t p = d->page, i;
	ssize_t ret = 0;
	long bad;
	int try, err = 0;

	ASSERT_TRUE(lbuf && old);
	memcpy(old, d->img, d->len);
	for (try = 0; try < NOWAIT_TRIES; try++) {
		/* The old file, no page mapped by the target, none cached. */
		ASSERT_EQ(0, cma_call3(&d->t, t_zap, (long)d->addr, d->len, 0));
		ASSERT_EQ((ssize_t)d->len, pwrite(d->fd, old, d->len, 0));
		ASSERT_EQ(0, evict(d, 0, d->len));
		if (cache0) {
			ASSERT_EQ((ssize_t)p, pread(d->fd, d->buf, p, 0));
			ASSERT_EQ(0, evict(d, p, d->len - p));
		}
		ASSERT_EQ((long)cache0, cached_pages(d, 0, p));
		ASSERT_EQ(0, cached_pages(d, p, d->len - p));
		cma_fill(lbuf, len, NEW_SEED);
		ret = cma_rw(write, d->t.pid, &l, 1, &r, 1, PROCESS_VM_NOWAIT);
		err = errno;
		if (ret != (ssize_t)len)
			break;
	}
	if (try)
		TH_LOG("the read ended first in %d of %d calls", try, try + (try < NOWAIT_TRIES));
	if (want) {
		ASSERT_EQ((ssize_t)want, ret);
	} else {
		ASSERT_EQ(-1, ret);
		ASSERT_EQ(EFAULT, err);
	}
	/* Exactly @want bytes moved, no other byte of either side changed. */
	for (i = 0; i < len; i++) {
		unsigned char mine = cma_pat((uintptr_t)lbuf + i, NEW_SEED);

		if (!write && i < want)
			mine = d->img[off + i];
		ASSERT_EQ(mine, lbuf[i]) TH_LOG("byte %zu", i);
	}
	if (write)
		memcpy(d->img + off, lbuf, want);
	ASSERT_EQ(0, cma_call3(&d->t, t_zap, (long)d->addr, d->len, 0));
	bad = disk_differs(d);
	ASSERT_EQ(-1, bad) TH_LOG("file byte %ld is not what it must be", bad);
	/* Back to the old contents for the next call. */
	memcpy(d->img, old, d->len);
	ASSERT_EQ((ssize_t)d->len, pwrite(d->fd, old, d->len, 0));
	free(lbuf);
	free(old);
}

/*
 * PROCESS_VM_NOWAIT on file pages that are not in the page cache: a page
 * that must be read from the device stops the transfer; without the flag
 * the same call waits for the read.
 */
TEST_F(disk_nowait, page_cache_miss)
{
	struct dfile *d = &self->d;
	size_t p = d->page;
	unsigned char *lbuf;
	struct iovec l, r;

	if (!d->path[0])
		SKIP(return, "%s", d->why);
	if (!cma_flag_supported(PROCESS_VM_NOWAIT))
		SKIP(return, "kernel without PROCESS_VM_NOWAIT");
	/* The first remote page is missing: nothing moves, EFAULT. */
	nowait_call(_metadata, d, variant->write, p + 16, p, false, 0);
	/* A cached page, then a missing one: the cached page's bytes. */
	nowait_call(_metadata, d, variant->write, 100, 2 * p, true, p - 100);
	nowait_call(_metadata, d, variant->write, 0, 3 * p, true, p);

	/* Without the flag the call waits for the reads. */
	lbuf = malloc(3 * p);
	ASSERT_TRUE(!!lbuf);
	ASSERT_EQ(0, cma_call3(&d->t, t_zap, (long)d->addr, d->len, 0));
	ASSERT_EQ(0, evict(d, 0, d->len));
	cma_fill(lbuf, 3 * p, NEW_SEED);
	l = (struct iovec){ lbuf, 3 * p };
	r = (struct iovec){ d->addr + 100, 3 * p };
	ASSERT_EQ((ssize_t)(3 * p), cma_rw(variant->write, d->t.pid, &l, 1, &r, 1, 0));
	if (variant->write)
		memcpy(d->img + 100, lbuf, 3 * p);
	ASSERT_EQ(-1, first_diff(d->img + 100, lbuf, 3 * p));
	ASSERT_EQ(0, cma_call3(&d->t, t_zap, (long)d->addr, d->len, 0));
	ASSERT_EQ(-1, disk_differs(d));
	free(lbuf);
}

TEST_HARNESS_MAIN
