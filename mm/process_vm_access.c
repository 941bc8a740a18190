// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Cross Memory Attach: process_vm_readv(2) and process_vm_writev(2).
 *
 * These calls copy between iovecs of the caller and address ranges of
 * another process, directly and once: the target's pages are pinned and
 * the data moves between them and the caller's buffers, with no bounce
 * buffer and no cooperation from the target.
 *
 * The algorithm
 * -------------
 * The remote iovecs are consumed in order while a "window" of remote pages
 * is kept pinned: a set of user pages within a span of at most 2 MiB,
 * pinned under a single hold of the target's mmap lock and released in
 * one call.  Each remote element is copied from the window as long as its
 * pages are in it; only an element that leaves the window releases it and
 * pins a new one.  A new window holds the pages of the current element and
 * of the elements that follow it, in order, for as long as they fit the
 * span: exactly the elements it will serve before the copy leaves it.
 * Elements may come in any order, so a shuffled gather of a thousand small
 * elements lying in a few pages, or a vector of small elements at a stride
 * a little over a page, costs one lock, two pin calls (the current
 * element's pages, then the window's other pages in one walk of the
 * page set, pin_user_pages_remote_set()) and one release, where a
 * per-element scheme pays a lock, a pin and an unpin for each element.
 * Where a window of one page needs no mmap lock (below), a window that
 * would serve only a few elements, each in a run of pages of its own, is
 * given up for windows of each element's own pages, which cost less than
 * its lock, pin calls and release; and an element in one page that finds
 * the mmap lock taken or wanted by a writer gets a window of its own page
 * rather than waiting for a window.
 * Only pages that elements touch are pinned, so a hole between elements is
 * never pinned and never an error.  Looking at elements is bounded per call
 * (PVM_LOOKS_PER_SEG per remote element), and a window spans more than a
 * few pages only where its pages are dense, so no layout costs more than
 * one window per element.
 *
 * Only the pages of the element being copied are faulted in.  The pages
 * that the window holds for later elements are pinned only if they are
 * present already (FOLL_NOFAULT): looking ahead never faults in, waits on,
 * or fails because of a page the transfer might stop before reaching.
 *
 * The mmap lock is held only while pinning.  Copies run from the pinned
 * pages with no lock held, so faults on the caller's own buffers are
 * handled normally (the caller may even be the target).  A window of one
 * page alone, the usual call of a profiler or a debugger, does not take
 * it at all if a small page is mapped there with the access wanted and
 * needs no unshare (not the zero page, THP, KSM or fork()-shared for a
 * read, nor a clean PTE for a write): pin_user_page_remote_present() pins
 * it under its VMA's read lock, so such a call does not queue behind a
 * writer of the target's address space.  Other pages take the lock; where
 * that pin is not built, a lone page that is mapped already is pinned
 * under the lock by pin_user_page_remote_mapped(), without GUP's loop.
 * Where the kernel maps memory linearly (no HIGHMEM), a range of the
 * window that lies in one large folio (THP, hugetlb), or in small pages
 * that follow each other in physical memory, is copied in one step rather
 * than page by page.
 * Small calls use an on-stack page array; a larger array is allocated only
 * when a window wants more pages than the stack array holds, and if that
 * allocation fails the transfer continues with the small array.  Pinning
 * stops early when a fatal signal is pending and reschedules as needed
 * (GUP checks at every page); copies that run from one window for long
 * check every 2 MiB.

 * Partial transfers
 * -----------------
 * Bytes move in iovec order.  The transfer stops at the first remote page
 * that cannot be pinned (unmapped, PROT_NONE, read-only for a write,
 * secretmem, VM_IO/VM_PFNMAP, or not resident with PROCESS_VM_NOWAIT)
 * and at the first byte of the caller's buffers that cannot be accessed.
 * A stop inside a remote element therefore falls on a remote page
 * boundary.
 * If any byte moved, the number of bytes moved is returned; otherwise the
 * error is.
 */

#include <linux/compat.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uio.h>

#include <uapi/linux/process_vm.h>

#include "internal.h"

#define PROCESS_VM_SUPPORTED_FLAGS	(PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT)

/*
 * Limits are set in bytes, so that they hold on every page size: a window
 * spans at most 2 MiB (512 pages of 4 KiB, 32 of 64 KiB), so no single
 * step of a copy moves more than that.
 */
#define PVM_MAX_PAGES		(SZ_2M >> PAGE_SHIFT)
/* Page pointers kept on the stack: 128 KiB of 4 KiB pages. */
#define PVM_STACK_PAGES		32
/* Pages a window's page set can name: any window that holds one page. */
#define PVM_SET_PAGES		(2 * PVM_MAX_PAGES)
/* Elements a call may look at, per remote element, to choose windows. */
#define PVM_LOOKS_PER_SEG	4
/*
 * After PVM_MISSES windows in a row that served at most one later element
 * or were given up (pvm_choose()), only one window in PVM_MISSES looks
 * ahead: a scattered layout then costs about what pinning each element on
 * its own costs, and elements that can share windows again are found
 * within PVM_MISSES windows.  A window that serves one later element
 * counts as a miss: if the element lies in the window's own pages, a
 * window of those pages alone serves it as well; if it lies next to them,
 * the window saves a pin call, about what looking ahead costs; if apart,
 * the window is given up (PVM_LONE_UNLOCKED) or saves a lock and a
 * release but no pin.
 */
#define PVM_MISSES		8
/*
 * Whether a window of one page is pinned without the mmap lock
 * (pin_user_page_remote_present()): only then does a window of an
 * element's own page cost less than a window that serves a few elements
 * in runs of pages of their own, and such windows are given up
 * (pvm_choose()); and only then does an element in one page that finds
 * the mmap lock taken or wanted by a writer get a window of its own page,
 * not wait for the lock (pvm_pin()).
 */
#define PVM_LONE_UNLOCKED	(IS_ENABLED(CONFIG_PER_VMA_LOCK) && \
				 IS_ENABLED(CONFIG_HAVE_GUP_FAST))
/*
 * Where PVM_LONE_UNLOCKED, a window that serves fewer than two elements
 * for each run of pages it pins is kept only if it serves at least
 * PVM_KEEP elements: the lock, the two pin calls and the release that
 * every window costs are then spread over enough elements to cost less
 * than a lone pin each.
 */
#define PVM_KEEP		4
/*
 * A window spans more than PVM_STACK_PAGES pages only while at least one
 * page in PVM_MIN_DENSITY of its span is in its set: the work of setting
 * up and releasing a window grows with its span.
 */
#define PVM_MIN_DENSITY		4
/* Bytes copied between checks for a fatal signal and for rescheduling. */
#define PVM_CHECK_BYTES		SZ_2M

/**
 * struct pvm_xfer - state of one process_vm_readv/writev call
 * @mm:		the target's address space
 * @iter:	the caller's buffers
 * @gup_flags:	flags for pin_user_pages_remote()
 * @write:	true for process_vm_writev()
 * @nowait:	PROCESS_VM_NOWAIT: do not wait for the target's mmap lock, or
 *		for I/O or a userfaultfd handler to fault a remote page in
 * @sparse:	the window holds the pages of @set only, not all of its span
 * @pages:	the window: @pages[i] is page @first + i if pinned, else NULL
 * @max_pages:	capacity of @pages
 * @first:	page number (address >> PAGE_SHIFT) of @pages[0]
 * @span:	number of entries of @pages that the window uses
 * @pinned:	number of those entries that hold a page
 * @looks:	elements the call may still look at to choose windows
 * @misses:	windows in a row that served at most one later element, or
 *		that looked ahead and were given up
 * @set_base:	page number of the first page that @set covers
 * @set:	with @sparse, the pages the window is chosen to hold
 * @stack_pages: the on-stack page array @pages starts with
 */
struct pvm_xfer {
	struct mm_struct *mm;
	struct iov_iter *iter;
	unsigned int gup_flags;
	bool write;
	bool nowait;
	bool sparse;
	struct page **pages;
	unsigned long max_pages;
	unsigned long first;
	unsigned long span;
	unsigned long pinned;
	unsigned long looks;
	unsigned int misses;
	unsigned long set_base;
	DECLARE_BITMAP(set, PVM_SET_PAGES);
	struct page *stack_pages[PVM_STACK_PAGES];
};

/**
 * pvm_release() - unpin the window
 * @x: the transfer
 *
 * The pinned pages are released in one call, gathered at the start of the
 * array first if the window has holes; a single page, as in a small call
 * or a scattered layout, without a walk of the array.  Pages written by
 * process_vm_writev() are marked dirty as they are unpinned, so that
 * file-backed memory reaches its file.
 */
static void pvm_release(struct pvm_xfer *x)
{
	struct page **pages = x->pages;
	unsigned long i, n = x->pinned, span = x->span;

	/*
	 * A scan of the span: pvm_choose() keeps it within PVM_STACK_PAGES,
	 * or within PVM_MIN_DENSITY times the pages chosen.
	 */
	if (n < span) {
		for (i = n = 0; i < span; i++) {
			pages[n] = pages[i];
			n += !!pages[i];
		}
	}
	x->span = 0;
	x->pinned = 0;
	if (!n)
		return;
	/*
	 * unpin_user_pages_dirty_lock() marks a folio dirty only if it is
	 * not dirty already; a lone page that is needs no walk for that.
	 */
	if (n == 1 && (!x->write || folio_test_dirty(page_folio(pages[0]))))
		unpin_user_page(pages[0]);
	else if (x->write)
		unpin_user_pages_dirty_lock(pages, n, true);
	else
		unpin_user_pages(pages, n);
}

/**
 * pvm_grow() - make room for a window of @want pages
 * @x: the transfer
 * @want: pages the next window would like to span
 *
 * Replaces the page array with a larger one when a window wants more
 * pages than it holds.  Arrays grow in powers of two up to PVM_MAX_PAGES,
 * so a call allocates no more than its windows need (a 256 KiB transfer
 * takes 512 bytes, not a page).  Failure is not an error: the transfer
 * goes on with smaller windows, so with PROCESS_VM_NOWAIT the allocation
 * does not wait for memory to be reclaimed.  Must be called with no pages
 * pinned.
 */
static void pvm_grow(struct pvm_xfer *x, unsigned long want)
{
	struct page **pages;
	unsigned long n;

	if (want <= x->max_pages || x->max_pages >= PVM_MAX_PAGES)
		return;
	n = min(roundup_pow_of_two(want), PVM_MAX_PAGES);
	pages = kmalloc_array(n, sizeof(*pages),
			      (x->nowait ? GFP_NOWAIT : GFP_KERNEL) | __GFP_NOWARN);
	if (!pages)
		return;
	if (x->pages != x->stack_pages)
		kfree(x->pages);
	x->pages = pages;
	x->max_pages = n;
}

/**
 * pvm_extent() - the first and last page of a range of user addresses
 * @addr: the range's first byte
 * @len: its length, not zero
 * @p0: set to the page number of its first page
 * @p1: set to the page number of its last page
 *
 * A range that wraps the address space is taken to end at the last page;
 * pinning it fails anyway.
 */
static void pvm_extent(unsigned long addr, size_t len, unsigned long *p0,
		       unsigned long *p1)
{
	unsigned long last = addr + len - 1;

	if (last < addr)
		last = ULONG_MAX;
	*p0 = addr >> PAGE_SHIFT;
	*p1 = last >> PAGE_SHIFT;
}

/**
 * pvm_alone() - whether an element's new window holds its pages alone
 * @x: the transfer
 * @last: the element is the last one that the call reaches
 *
 * A window looks at the elements after its own (pvm_choose()) unless its
 * element is the last one, the call has no looks left, or PVM_MISSES
 * windows in a row have missed (served at most one later element); then
 * only one window in PVM_MISSES looks.  A window that the cutoff keeps
 * from looking is counted here, as a miss; one that looks is counted by
 * pvm_choose(), which knows what it found.  A false answer
 * changes nothing, so that the caller may leave the choice to
 * pvm_choose(), which asks again.
 *
 * Return: true if the window holds its element's pages alone.
 */
static bool pvm_alone(struct pvm_xfer *x, bool last)
{
	if (last || !x->looks)
		return true;
	if (x->misses < PVM_MISSES || !((x->misses + 1) % PVM_MISSES))
		return false;
	x->misses++;
	return true;
}

/**
 * pvm_too_sparse() - whether a window would hold too few pages of its span
 * @span: pages the window would span
 * @held: pages of its page set
 *
 * The density rule of pvm_choose(): past PVM_STACK_PAGES pages, at least
 * one page in PVM_MIN_DENSITY of the span is in the set.
 *
 * Return: true if the window would break the rule.
 */
static bool pvm_too_sparse(unsigned long span, unsigned long held)
{
	return span > PVM_STACK_PAGES && span > held * PVM_MIN_DENSITY;
}

/**
 * pvm_apart() - whether the next element is too far to share a window
 * @x: the transfer
 * @next: the remote element after the current one, which is not the last
 *	one that the call reaches
 * @page: page number of the current element's page, the only page it needs
 *
 * What pvm_choose() would find, for an element in one page, when the next
 * element lies in one page too far away for a window to hold both: it
 * looks at the next element, stops there, and chooses the element's own
 * page.  The answer costs a compare, and a true one counts the look and
 * the miss as pvm_choose() would; so the windows of a scattered layout,
 * which mostly end at their first element, take pvm_pin_page() whether
 * windows look ahead or not.  A false answer changes nothing.
 *
 * Return: true if the window holds @page alone.
 */
static bool pvm_apart(struct pvm_xfer *x, const struct iovec *next,
		      unsigned long page)
{
	unsigned long addr = (unsigned long)next->iov_base;
	unsigned long span = max(addr >> PAGE_SHIFT, page) -
			     min(addr >> PAGE_SHIFT, page) + 1;

	if (!next->iov_len || next->iov_len > PAGE_SIZE - offset_in_page(addr))
		return false;
	if (span <= PVM_MAX_PAGES && !pvm_too_sparse(span, 2))
		return false;
	x->looks--;
	x->misses++;
	return true;
}

/**
 * pvm_choose() - choose the pages of the next window
 * @x: the transfer
 * @riov: the remote iovecs
 * @nr_segs: number of remote iovecs
 * @seg: index of the element being copied
 * @addr: remote address the copy resumes at, inside element @seg
 * @len: bytes left in element @seg
 *
 * The window holds the pages that element @seg needs from @addr on, and
 * the pages of the elements that follow it, in order, for as long as the
 * window still spans at most PVM_MAX_PAGES pages: the elements that one
 * window will serve before the copy leaves it.  Only the pages that those
 * elements touch are in its page set, so a page between two elements is
 * never pinned, and elements in any order over a few pages (a shuffled
 * gather) or one element per page (a strided vector) share one lock and
 * one release.  Past PVM_STACK_PAGES pages, a window grows only while at
 * least one page in PVM_MIN_DENSITY of its span is in its set.  Where a
 * window of one page needs no mmap lock (PVM_LONE_UNLOCKED), a window that
 * would serve fewer than PVM_KEEP elements, and fewer than two for each
 * run of pages it pins (a run is counted where an element leaves a gap to
 * the window's pages), holds its element's pages alone, and counts as a
 * miss.
 * The last element that the call reaches, and an element of PVM_MAX_PAGES
 * pages or more, get their own pages.  Every element looked at costs one
 * of the call's looks; once they run out, every window is its element's
 * own pages, so the work of choosing windows stays in proportion to the
 * number of elements whatever their layout.  Where windows keep missing
 * (PVM_MISSES), only one in PVM_MISSES looks at the elements after it
 * (pvm_alone()).
 *
 * Sets @x->first and @x->span (at least one page), and @x->sparse with
 * @x->set and @x->set_base when the window holds less than all its span.
 */
static void pvm_choose(struct pvm_xfer *x, const struct iovec *riov,
		       unsigned long nr_segs, unsigned long seg,
		       unsigned long addr, size_t len)
{
	unsigned long cur = addr >> PAGE_SHIFT;
	size_t left = iov_iter_count(x->iter);
	unsigned long base, lo, hi, p0, p1, p, nlo, nhi, held, more, looks;
	unsigned long joined = 0, runs = 1, own;
	bool gap;

	len = min(len, left);
	left -= len;
	lo = cur;
	hi = cur + DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
	x->first = cur;
	x->sparse = false;
	if (seg + 1 == nr_segs || !left || hi - lo >= PVM_MAX_PAGES ||
	    pvm_alone(x, false)) {
		x->span = min(hi - lo, PVM_MAX_PAGES);
		return;
	}
	own = hi - lo;

	/* Every window that holds @cur and spans no more than the limit. */
	base = cur - min(cur, PVM_MAX_PAGES - 1);
	held = hi - cur;
	looks = x->looks;
	while (left && ++seg < nr_segs && looks) {
		looks--;
		len = min(riov[seg].iov_len, left);
		if (!len)
			continue;
		pvm_extent((unsigned long)riov[seg].iov_base, len, &p0, &p1);
		/*
		 * An element inside the span, the usual one in a gather, keeps
		 * the span and can only make it denser: it adds its pages that
		 * the set lacks, and needs none of the tests below.
		 */
		if (p0 >= lo && p1 < hi) {
			if (held < hi - lo) {
				for (p = p0; p <= p1; p++)
					held += !__test_and_set_bit(p - base, x->set);
			}
			left -= len;
			joined++;
			continue;
		}
		nlo = min(lo, p0);
		nhi = max(hi, p1 + 1);
		if (nhi - nlo > PVM_MAX_PAGES)
			break;
		/*
		 * The element lies in the span: it has at most PVM_MAX_PAGES.
		 * While the set is all of [lo, hi), it is not kept in @x->set
		 * (most windows of a scattered layout end at their first
		 * element, and contiguous ones never need it); it is written
		 * out when an element leaves a gap.
		 */
		if (held == hi - lo) {
			more = p1 + 1 - p0 -
			       (min(p1 + 1, hi) - min(max(p0, lo), min(p1 + 1, hi)));
		} else {
			for (more = 0, p = p0; p <= p1; p++)
				more += !test_bit(p - base, x->set);
		}
		if (pvm_too_sparse(nhi - nlo, held + more))
			break;
		/* A gap: the element starts a run of pages of its own. */
		gap = p0 > hi || p1 + 1 < lo;
		runs += gap;
		if (held < hi - lo) {
			if (p0 == p1)
				__set_bit(p0 - base, x->set);
			else
				bitmap_set(x->set, p0 - base, p1 - p0 + 1);
		} else if (gap) {
			bitmap_zero(x->set, PVM_SET_PAGES);
			bitmap_set(x->set, lo - base, hi - lo);
			bitmap_set(x->set, p0 - base, p1 - p0 + 1);
		}
		held += more;
		left -= len;
		lo = nlo;
		hi = nhi;
		joined++;
	}
	x->looks = looks;
	if (PVM_LONE_UNLOCKED && joined + 1 < 2 * runs &&
	    joined + 1 < PVM_KEEP) {
		/* Few elements, in runs: the element's pages alone. */
		x->misses++;
		x->span = own;
		return;
	}
	x->misses = joined < 2 ? x->misses + 1 : 0;
	x->first = lo;
	x->span = hi - lo;
	x->set_base = base;
	x->sparse = held < hi - lo;
}

/**
 * pvm_pin_more() - pin pages of the window that are present already
 * @x: the transfer
 * @a: page number of the first page to pin
 * @b: page number of the page after the last one to pin
 *
 * Pages that are not present, or that cannot be pinned without a fault,
 * are left out: their entries stay NULL.  Called with the mmap lock held.
 */
static void pvm_pin_more(struct pvm_xfer *x, unsigned long a, unsigned long b)
{
	long got;

	if (a >= b)
		return;
	got = pin_user_pages_remote(x->mm, a << PAGE_SHIFT, b - a,
				    x->gup_flags | FOLL_NOFAULT,
				    x->pages + (a - x->first), NULL);
	if (got > 0)
		x->pinned += got;
}

/**
 * pvm_pin_run() - pin a run of the window's pages, less those pinned already
 * @x: the transfer
 * @a: page number of the run's first page
 * @b: page number of the page after its last one
 * @cur: page number of the first page pinned already
 * @mid: number of pages pinned already, from @cur on
 */
static void pvm_pin_run(struct pvm_xfer *x, unsigned long a, unsigned long b,
			unsigned long cur, unsigned long mid)
{
	pvm_pin_more(x, a, min(b, cur));
	pvm_pin_more(x, max(a, cur + mid), b);
}

/**
 * pvm_pin_locked() - pin pages of the target's address space, locked
 * @x: the transfer, with the target's mmap lock held for read
 * @cur: page number of the first page to pin
 * @nr: number of pages from @cur on to pin, faulting them in as needed
 * @pages: where the pages go
 * @locked: set to whether the mmap lock is held on return
 *
 * Return: the number of pages pinned, at least one; or a negative errno,
 * with the lock not held.
 */
static __always_inline long pvm_pin_locked(struct pvm_xfer *x,
					   unsigned long cur, unsigned long nr,
					   struct page **pages, int *locked)
{
	long got;

	*locked = 1;
	got = pin_user_pages_remote(x->mm, cur << PAGE_SHIFT, nr, x->gup_flags,
				    pages, locked);
	if (got > 0)
		return got;
	if (*locked)
		mmap_read_unlock(x->mm);
	/* NOWAIT reports "would block" as nothing copied: EFAULT */
	if (got == 0 || (x->nowait && !fatal_signal_pending(current)))
		return -EFAULT;
	return got;
}

/**
 * pvm_lock() - take the target's mmap lock for read
 * @x: the transfer
 *
 * Return: 0 with the lock held; -EFAULT if PROCESS_VM_NOWAIT finds it
 * taken or wanted by a writer, -EINTR if a fatal signal comes while
 * waiting for it.
 */
static __always_inline int pvm_lock(struct pvm_xfer *x)
{
	if (x->nowait)
		return mmap_read_trylock(x->mm) ? 0 : -EFAULT;
	return mmap_read_lock_killable(x->mm) ? -EINTR : 0;
}

/**
 * pvm_lock_pin() - lock the target's address space and pin pages of it
 * @x: the transfer
 * @cur: page number of the first page to pin
 * @nr: number of pages from @cur on to pin, faulting them in as needed
 * @pages: where the pages go
 * @locked: set to whether the mmap lock is held on return
 *
 * Return: as for pvm_pin_locked().
 */
static __always_inline long pvm_lock_pin(struct pvm_xfer *x,
					 unsigned long cur, unsigned long nr,
					 struct page **pages, int *locked)
{
	int err = pvm_lock(x);

	if (err)
		return err;
	return pvm_pin_locked(x, cur, nr, pages, locked);
}

/**
 * pvm_lock_pin_page() - pin one page under the mmap lock
 * @x: the transfer, with no pages pinned
 * @page: page number of the page
 *
 * pvm_pin_page()'s way for a page that pin_user_page_remote_present() did
 * not pin, out of line so that the way without the lock keeps a short
 * frame.  Where that way is not built (!PVM_LONE_UNLOCKED), every lone
 * page comes here: a page that is mapped already is pinned by
 * pin_user_page_remote_mapped(), without GUP's general loop, and only the
 * others by pin_user_pages_remote().
 *
 * Return: 1, or a negative errno.
 */
static noinline long pvm_lock_pin_page(struct pvm_xfer *x, unsigned long page)
{
	int locked, err = pvm_lock(x);
	long got;

	if (err)
		return err;
	if (!PVM_LONE_UNLOCKED &&
	    pin_user_page_remote_mapped(x->mm, page << PAGE_SHIFT,
					x->gup_flags, x->pages)) {
		mmap_read_unlock(x->mm);
		return 1;
	}
	got = pvm_pin_locked(x, page, 1, x->pages, &locked);
	if (got > 0 && locked)
		mmap_read_unlock(x->mm);
	return got;
}

/**
 * pvm_pin_page() - pin a window of one page
 * @x: the transfer, with an empty window
 * @page: page number of the page
 *
 * A window of one page, the one that an element in one page gets when it
 * holds its page alone, pinned without pvm_pin()'s work for windows of
 * several pages.
 *
 * Return: 0 on success, or a negative errno with the window still empty.
 */
static int pvm_pin_page(struct pvm_xfer *x, unsigned long page)
{
	if (!pin_user_page_remote_present(x->mm, page << PAGE_SHIFT,
					  x->gup_flags, x->pages)) {
		long got = pvm_lock_pin_page(x, page);

		if (got < 0)
			return got;
	}
	x->first = page;
	x->span = 1;
	x->pinned = 1;
	return 0;
}

/**
 * pvm_pin() - pin the window that pvm_choose() chose
 * @x: the transfer
 * @cur: page number of the page the copy resumes at
 * @own: number of pages from @cur on that the current element needs
 *
 * The pages of the current element are faulted in as needed; the others,
 * wanted for later elements, are pinned only if they are present already,
 * those of a window that holds less than its span in one call that stops
 * at the first page it cannot pin without a fault.
 * A window may therefore hold fewer pages than chosen, but on success it
 * always holds @cur.  If the page array cannot grow to the window's span,
 * the window is cut to the array, around @cur.  A window of one page is
 * pvm_pin_page()'s, and so is the page of an element in one page that
 * finds the mmap lock taken or wanted by a writer, where that page can be
 * pinned without it (PVM_LONE_UNLOCKED).  Kept out of line, so that the
 * path of lone pages, which never comes here, keeps its registers.
 *
 * Return: 0 on success, or a negative errno if @cur could not be pinned.
 */
static noinline int pvm_pin(struct pvm_xfer *x, unsigned long cur,
			    unsigned long own)
{
	unsigned long first = x->first, end = x->first + x->span;
	unsigned long mid;
	int locked;
	long got;

	x->span = 0;
	if (end - first == 1)
		return pvm_pin_page(x, cur);
	pvm_grow(x, end - first);
	if (end - first > x->max_pages) {
		/* A smaller window that still holds @cur, near its start. */
		first = cur - min(cur - first, x->max_pages / 4);
		end = first + min(x->max_pages, end - first);
	}
	mid = min(own, end - cur);

	/*
	 * A window saves a lock per element only while the lock is free:
	 * where an element in one page can be pinned without it, it does not
	 * wait behind a writer for a window, nor fail with
	 * PROCESS_VM_NOWAIT, but gets a window of its page, counted as a miss.
	 */
	if (PVM_LONE_UNLOCKED && mid == 1) {
		if (!mmap_read_trylock(x->mm)) {
			x->misses++;
			return pvm_pin_page(x, cur);
		}
		got = pvm_pin_locked(x, cur, mid, x->pages + (cur - first),
				     &locked);
	} else {
		got = pvm_lock_pin(x, cur, mid, x->pages + (cur - first),
				   &locked);
	}
	if (got < 0)
		return got;
	/*
	 * Entries are cleared only where the window may leave holes: a
	 * window of the current element's pages alone, the usual one in a
	 * scattered layout, needs no clearing, and none at release.
	 */
	if (cur > first)
		memset(x->pages, 0, (cur - first) * sizeof(*x->pages));
	x->first = first;
	x->pinned = got;
	if (got < mid || !locked || end - first == mid) {
		x->span = cur - first + got;
		goto out;
	}
	if (end > cur + mid)
		memset(x->pages + (cur + mid - first), 0,
		       (end - cur - mid) * sizeof(*x->pages));
	x->span = end - first;
	if (!x->sparse) {
		pvm_pin_run(x, first, end, cur, mid);
		goto out;
	}
	/*
	 * The rest of the page set, in one call however many runs it has:
	 * less the current element's pages, pinned already, and moved to
	 * start at the window's first page.
	 */
	bitmap_clear(x->set, cur - x->set_base, mid);
	bitmap_shift_right(x->set, x->set, first - x->set_base,
			   end - x->set_base);
	x->pinned += pin_user_pages_remote_set(x->mm, first << PAGE_SHIFT,
					       end - first, x->set,
					       x->gup_flags, x->pages);
out:
	if (locked)
		mmap_read_unlock(x->mm);
	return 0;
}

/**
 * pvm_page_follows() - whether @next lies right after @page in memory
 * @page: a page
 * @next: another page
 *
 * Pages whose structs are not adjacent never qualify, which a compare
 * tells; only for the others are the page frame numbers compared, which
 * with a virtually mapped memmap is the same compare again.
 *
 * Return: true if @next's page frame number is one more than @page's.
 */
static bool pvm_page_follows(const struct page *page, const struct page *next)
{
	return next == page + 1 && page_to_pfn(next) == page_to_pfn(page) + 1;
}

/**
 * pvm_run() - count the pages that one linear copy can cover
 * @pages: pinned pages, the first of which starts the copy
 * @max: pages the copy needs at most; at least 2
 *
 * Without HIGHMEM every page is mapped linearly, so a copy may run through
 * pages that follow each other in memory: the pages of one large folio, or
 * small pages with consecutive page frame numbers.  A run never leaves a
 * large folio, nor starts in a small page and enters a large one, so that
 * hardened usercopy sees a copy inside the folio it starts in.  Called
 * only without HIGHMEM, once the second page is known to follow the first.
 *
 * Return: the number of pages, from 1 to @max.
 */
static unsigned long pvm_run(struct page **pages, unsigned long max)
{
	struct folio *folio = page_folio(pages[0]);
	bool large = folio_test_large(folio);
	unsigned long n = 1;

	if (large) {
		unsigned long idx = folio_page_idx(folio, pages[0]);

		max = min(max, folio_nr_pages(folio) - idx);
	}
	while (n < max && pvm_page_follows(pages[n - 1], pages[n]) &&
	       (large || !PageCompound(pages[n])))
		n++;
	return n;
}

/**
 * pvm_copy() - copy between a pinned range and the caller's buffers
 * @iter: the caller's buffers
 * @page: the page the range starts in
 * @offset: offset of the range in @page
 * @len: bytes to copy: inside @page, or inside a run from pvm_run()
 * @write: true to copy into the range (process_vm_writev())
 *
 * Without HIGHMEM the range is mapped linearly and is copied from its
 * address, with no temporary mapping; with HIGHMEM it lies in @page and
 * is mapped for the copy.
 *
 * A range that ends in the page it starts in is copied as
 * copy_page_to_iter() and copy_page_from_iter() copy a page: with the
 * bounds of the page as its check, and without hardened usercopy's
 * object checks, which look for slab objects, stacks and kernel text and
 * so find nothing to check in a pinned user page, but would cost a call
 * and a page lookup per element of a gather.  A range over several pages
 * (a run) is checked, once per run: hardened usercopy then confirms that
 * it stays inside the folio it starts in.
 *
 * Return: bytes copied, less than @len if a caller's page faulted.
 */
static __always_inline size_t pvm_copy(struct iov_iter *iter,
				       struct page *page, size_t offset,
				       size_t len, bool write)
{
	void *addr;

	if (IS_ENABLED(CONFIG_HIGHMEM)) {
		if (write)
			return copy_page_from_iter(page, offset, len, iter);
		return copy_page_to_iter(page, offset, len, iter);
	}
	addr = page_address(page) + offset;
	if (len <= PAGE_SIZE - offset) {
		if (write)
			return _copy_from_iter(addr, len, iter);
		return _copy_to_iter(addr, len, iter);
	}
	if (write)
		return copy_from_iter(addr, len, iter);
	return copy_to_iter(addr, len, iter);
}

/**
 * pvm_copy_step() - copy through one pinned page, or one run of them
 * @iter: the caller's buffers
 * @pagesp: the pinned page the step starts in; advanced past the step
 * @last: the end of the pages the copy needs
 * @offset: offset of the step in its first page
 * @rest: bytes the copy still wants, not zero; reduced by those copied
 * @write: true to copy into the pages (process_vm_writev())
 *
 * A run of pages that one linear copy can cover (pvm_run()) goes in one
 * call, any other page alone: a page whose successor does not follow it
 * in memory costs one compare more than a plain per-page copy.
 *
 * Return: false if a caller's page faulted, else true.
 */
static __always_inline bool pvm_copy_step(struct iov_iter *iter,
					  struct page ***pagesp,
					  struct page **last, size_t offset,
					  size_t *rest, bool write)
{
	struct page **pages = *pagesp;
	size_t chunk = min(*rest, PAGE_SIZE - offset), copied;
	unsigned long n = 1, j;

	if (!IS_ENABLED(CONFIG_HIGHMEM) && pages + 1 < last &&
	    pvm_page_follows(pages[0], pages[1])) {
		n = pvm_run(pages, last - pages);
		chunk = min(*rest, (n << PAGE_SHIFT) - offset);
	}
	copied = pvm_copy(iter, pages[0], offset, chunk, write);
	if (write)
		for (j = 0; j < n; j++)
			flush_dcache_page(pages[j]);
	*rest -= copied;
	*pagesp = pages + n;
	return copied == chunk;
}

/**
 * pvm_copy_pages() - copy through pinned pages, in one direction
 * @iter: the caller's buffers
 * @pages: the pinned page the copy starts in
 * @end: the end of the window's pages
 * @offset: offset of the copy in @pages[0]
 * @len: bytes wanted, not zero
 * @write: true to copy into the pages (process_vm_writev())
 * @done: set to the bytes copied
 *
 * Copies from @pages[0] on for as long as @len lasts and the pages that
 * follow are pinned (not NULL, before @end).  The first step starts at
 * @offset and every later one at a page boundary, so the loop is built
 * with no offset to add, which saves about five instructions a page.
 *
 * Return: false if a caller's page faulted, else true.
 */
static __always_inline bool pvm_copy_pages(struct iov_iter *iter,
					   struct page **pages,
					   struct page **end, size_t offset,
					   size_t len, bool write, size_t *done)
{
	struct page **last;
	size_t rest = len;
	bool ok;

	/* The pages that @len needs, as far as the window goes. */
	last = pages + min_t(unsigned long, end - pages,
			     DIV_ROUND_UP(offset + len, PAGE_SIZE));
	ok = pvm_copy_step(iter, &pages, last, offset, &rest, write);
	while (ok && pages < last && *pages)
		ok = pvm_copy_step(iter, &pages, last, 0, &rest, write);
	*done = len - rest;
	return ok;
}

/**
 * pvm_copy_pinned() - copy through the pinned pages of the window
 * @x: the transfer
 * @i: index in the window of the page the copy starts in, a pinned one
 * @offset: offset of the copy in that page
 * @len: bytes wanted, not zero
 * @done: set to the bytes copied
 *
 * The loop is built once for each direction, so that it does not test
 * the direction at every page, and kept out of line, so that it has the
 * registers to itself rather than sharing them with the whole call.
 *
 * Return: false if a caller's page faulted, else true.
 */
static noinline bool pvm_copy_pinned(struct pvm_xfer *x, unsigned long i,
				     size_t offset, size_t len, size_t *done)
{
	struct page **pages = x->pages + i, **end = x->pages + x->span;

	if (x->write)
		return pvm_copy_pages(x->iter, pages, end, offset, len, true,
				      done);
	return pvm_copy_pages(x->iter, pages, end, offset, len, false, done);
}

/**
 * pvm_holds() - whether the window holds a pinned page at an address
 * @x: the transfer
 * @addr: a remote address
 *
 * Return: true if the page of @addr is in the window and pinned.
 */
static bool pvm_holds(const struct pvm_xfer *x, unsigned long addr)
{
	unsigned long i = (addr >> PAGE_SHIFT) - x->first;

	return i < x->span && x->pages[i];
}

/**
 * pvm_copy_small() - copy elements that each lie in one page
 * @x: the transfer, with a window pinned
 * @iovp: the first remote element to copy; set to the first one not
 *	copied whole
 * @end: the end of the remote iovecs
 * @budget: bytes after which to return, at the end of an element
 * @write: true to copy into the pages (process_vm_writev())
 * @done: set to the bytes copied
 *
 * Copies whole elements, in order, for as long as each lies in one page
 * that the window holds, or in one page that pvm_alone() gives a window
 * of its own, and the caller's buffers have room.  An element cut short
 * by the end of the caller's buffers counts as whole, as it does for the
 * call.
 *
 * Return: 0, or a negative errno: -EFAULT if a caller's page faulted (in
 * element *@iovp, whose bytes copied @done includes), else the error of
 * pinning element *@iovp.
 */
static __always_inline int pvm_copy_small(struct pvm_xfer *x,
					  const struct iovec **iovp,
					  const struct iovec *end,
					  size_t budget, bool write,
					  size_t *done)
{
	struct iov_iter *iter = x->iter;
	struct page **pages = x->pages;
	unsigned long first = x->first, span = x->span;
	size_t start = iov_iter_count(iter);
	/* The budget is spent once the caller's count is down to @stop. */
	size_t stop = start - min(start, budget);
	const struct iovec *iov;
	int err = 0;

	for (iov = *iovp; iov < end && iov_iter_count(iter) > stop; iov++) {
		unsigned long addr = (unsigned long)iov->iov_base;
		unsigned long i = (addr >> PAGE_SHIFT) - first;
		size_t offset = offset_in_page(addr);
		size_t len = min(iov->iov_len, iov_iter_count(iter));
		size_t copied;

		if (!len) {
			if (!iov_iter_count(iter))
				break;
			continue;
		}
		if (len > PAGE_SIZE - offset)
			break;
		if (i >= span || !pages[i]) {
			if (!pvm_alone(x, iov + 1 == end ||
				       len == iov_iter_count(iter)) &&
			    !pvm_apart(x, iov + 1, addr >> PAGE_SHIFT))
				break;
			pvm_release(x);
			err = pvm_pin_page(x, addr >> PAGE_SHIFT);
			if (err)
				break;
			first = addr >> PAGE_SHIFT;
			span = 1;
			i = 0;
		}
		copied = pvm_copy(iter, pages[i], offset, len, write);
		if (write)
			flush_dcache_page(pages[i]);
		if (copied < len) {
			err = -EFAULT;
			break;
		}
	}
	*iovp = iov;
	*done = start - iov_iter_count(iter);
	return err;
}

/**
 * pvm_copy_elements() - copy the elements that lie in single pages
 * @x: the transfer, with a window pinned
 * @riov: the remote iovecs
 * @nr_segs: number of remote iovecs
 * @seg: index of the element to start at; set to the first one not copied
 *	whole
 * @budget: bytes after which to return, at the end of an element
 * @done: set to the bytes copied
 *
 * A gather of small elements spends its time going from one element to the
 * next, and so does a scattered layout, where each element gets a window
 * of its one page.  This loop does only that, with the window's bounds in
 * registers; it is built once per direction and kept out of line, as
 * pvm_copy_pinned() is.  The elements it leaves (one over more than a
 * page, or one whose window looks ahead) go to the general path.
 *
 * Return: 0, or a negative errno as for pvm_copy_small().
 */
static noinline int pvm_copy_elements(struct pvm_xfer *x,
				      const struct iovec *riov,
				      unsigned long nr_segs,
				      unsigned long *seg, size_t budget,
				      size_t *done)
{
	const struct iovec *iov = riov + *seg;
	int err;

	if (x->write)
		err = pvm_copy_small(x, &iov, riov + nr_segs, budget, true,
				     done);
	else
		err = pvm_copy_small(x, &iov, riov + nr_segs, budget, false,
				     done);
	*seg = iov - riov;
	return err;
}

/**
 * pvm_transfer() - copy between the caller's buffers and remote iovecs
 * @x: the transfer, with @x->mm and @x->iter set up
 * @riov: the remote iovecs
 * @nr_segs: number of remote iovecs
 *
 * Return: bytes copied if any, else a negative errno.
 */
static ssize_t pvm_transfer(struct pvm_xfer *x, const struct iovec *riov,
			    unsigned long nr_segs)
{
	size_t unchecked = 0, done;
	ssize_t copied = 0;
	unsigned long seg = 0;
	int err = 0;
	bool ok;

	while (seg < nr_segs && iov_iter_count(x->iter)) {
		unsigned long addr = (unsigned long)riov[seg].iov_base;
		size_t len = min(riov[seg].iov_len, iov_iter_count(x->iter));

		while (len) {
			unsigned long page = addr >> PAGE_SHIFT;
			unsigned long i = page - x->first;
			size_t offset = offset_in_page(addr);

			/*
			 * Pinning checks for a fatal signal and reschedules at
			 * every page; copies from pinned pages are checked by
			 * bytes, since elements that repeat the same pages
			 * copy from one window for as long as they like.
			 */
			if (unchecked >= PVM_CHECK_BYTES) {
				unchecked = 0;
				if (fatal_signal_pending(current)) {
					err = -EINTR;
					goto out;
				}
				cond_resched();
			}
			if (i >= x->span || !x->pages[i]) {
				if (x->span)
					pvm_release(x);
				/* A small call, or a scattered layout */
				if (offset + len <= PAGE_SIZE &&
				    (pvm_alone(x, seg + 1 == nr_segs ||
					       len == iov_iter_count(x->iter)) ||
				     pvm_apart(x, riov + seg + 1, page))) {
					err = pvm_pin_page(x, page);
				} else {
					pvm_choose(x, riov, nr_segs, seg, addr,
						   len);
					err = pvm_pin(x, page,
						      DIV_ROUND_UP(offset + len,
								   PAGE_SIZE));
				}
				if (err)
					goto out;
				i = page - x->first;
			}

			/*
			 * What is left of the element lies in this page: the
			 * one copy needs no loop (a small call, the element that
			 * starts a gather).
			 */
			if (offset + len <= PAGE_SIZE) {
				struct page *p = x->pages[i];

				if (x->write) {
					done = pvm_copy(x->iter, p, offset, len, true);
					flush_dcache_page(p);
				} else {
					done = pvm_copy(x->iter, p, offset, len, false);
				}
				ok = done == len;
			} else {
				ok = pvm_copy_pinned(x, i, offset, len, &done);
			}
			copied += done;
			unchecked += done;
			if (!ok) {
				err = -EFAULT;
				goto out;
			}
			addr += done;
			len -= done;
		}
		/*
		 * The elements that follow, in single pages; the call is not
		 * worth making unless the next one starts in the window, or
		 * windows hold their element alone.
		 */
		if (++seg < nr_segs && unchecked < PVM_CHECK_BYTES &&
		    (x->misses >= PVM_MISSES || !x->looks ||
		     pvm_holds(x, (unsigned long)riov[seg].iov_base))) {
			unsigned long next = seg;

			err = pvm_copy_elements(x, riov, nr_segs, &next,
						PVM_CHECK_BYTES - unchecked,
						&done);
			seg = next;
			copied += done;
			unchecked += done;
			if (err)
				goto out;
		}
	}
out:
	pvm_release(x);
	return copied ? copied : err;
}

/**
 * pvm_find_task() - look up the target process
 * @pid: a pid, or a pidfd with PROCESS_VM_PIDFD
 * @flags: the call's flags
 *
 * A pidfd opened with PIDFD_THREAD names that very thread; any other
 * pidfd names a thread group.  A plain @pid may be any thread's id.
 *
 * Return: a reference to the task, or ERR_PTR(-ESRCH) if it does not
 * exist (any more), or ERR_PTR(-EBADF) for a @pid that is not a pidfd.
 */
static struct task_struct *pvm_find_task(pid_t pid, unsigned long flags)
{
	struct task_struct *task;
	unsigned int f_flags;

	if (flags & PROCESS_VM_PIDFD)
		return pidfd_get_task(pid, &f_flags);
	task = find_get_task_by_vpid(pid);
	return task ? task : ERR_PTR(-ESRCH);
}

/**
 * pvm_target_mm() - the target's address space, if the caller may use it
 * @pid: a pid, or a pidfd with PROCESS_VM_PIDFD
 * @flags: the call's flags
 *
 * Access requires the same rights as attaching with ptrace, checked
 * against the caller's real credentials.
 *
 * Return: a reference to the mm, or ERR_PTR() with -ESRCH (no such task,
 * or it has no mm), -EPERM (not allowed), -EBADF (not a pidfd) or -EINTR.
 */
static struct mm_struct *pvm_target_mm(pid_t pid, unsigned long flags)
{
	struct task_struct *task;
	struct mm_struct *mm;

	task = pvm_find_task(pid, flags);
	if (IS_ERR(task))
		return ERR_CAST(task);

	mm = mm_access(task, PTRACE_MODE_ATTACH_REALCREDS);
	put_task_struct(task);
	if (IS_ERR(mm) && PTR_ERR(mm) == -EACCES)
		return ERR_PTR(-EPERM);
	return mm;
}

/**
 * pvm_remote_empty() - whether the remote iovecs name no byte at all
 * @riov: the remote iovecs
 * @nr_segs: number of remote iovecs
 *
 * Return: true if every element has length zero.
 */
static bool pvm_remote_empty(const struct iovec *riov, unsigned long nr_segs)
{
	unsigned long i;

	for (i = 0; i < nr_segs; i++)
		if (riov[i].iov_len)
			return false;
	return true;
}

/**
 * process_vm_rw() - the common part of process_vm_readv/writev
 * @pid: the target: a pid, or a pidfd with PROCESS_VM_PIDFD
 * @lvec: the caller's iovecs
 * @liovcnt: number of elements in @lvec
 * @rvec: the target's iovecs
 * @riovcnt: number of elements in @rvec
 * @flags: PROCESS_VM_* flags
 * @write: true to copy from the caller to the target
 *
 * Checks come in this order: unknown @flags (-EINVAL); the caller's
 * iovecs (-EINVAL for more than IOV_MAX elements or a negative length,
 * -EFAULT for an unreadable array); a caller's total of zero returns 0;
 * the target's iovecs (likewise); a remote total of zero returns 0; then
 * the target is looked up.  The caller's total is capped at MAX_RW_COUNT.
 * iovec arrays are read in the caller's ABI (compat callers included).
 *
 * Return: the number of bytes copied, or a negative errno if none was.
 */
static ssize_t process_vm_rw(pid_t pid, const struct iovec __user *lvec,
			     unsigned long liovcnt,
			     const struct iovec __user *rvec,
			     unsigned long riovcnt, unsigned long flags,
			     bool write)
{
	struct iovec lstack[UIO_FASTIOV];
	struct iovec rstack[UIO_FASTIOV];
	struct iov_iter iter;
	struct pvm_xfer x;
	struct iovec *liov = lstack, *riov;
	ssize_t ret;

	if (flags & ~PROCESS_VM_SUPPORTED_FLAGS)
		return -EINVAL;
	/* import_iovec() takes an unsigned int count: do not let it wrap */
	if (liovcnt > UIO_MAXIOV)
		return -EINVAL;

	ret = import_iovec(write ? ITER_SOURCE : ITER_DEST, lvec, liovcnt,
			   UIO_FASTIOV, &liov, &iter);
	if (ret <= 0)
		goto free_liov;

	riov = iovec_from_user(rvec, riovcnt, UIO_FASTIOV, rstack,
			       in_compat_syscall());
	if (IS_ERR(riov)) {
		ret = PTR_ERR(riov);
		goto free_liov;
	}
	ret = 0;
	if (pvm_remote_empty(riov, riovcnt))
		goto free_riov;

	x.mm = pvm_target_mm(pid, flags);
	if (IS_ERR(x.mm)) {
		ret = PTR_ERR(x.mm);
		goto free_riov;
	}
	x.iter = &iter;
	x.write = write;
	x.nowait = flags & PROCESS_VM_NOWAIT;
	x.gup_flags = (write ? FOLL_WRITE : 0) | (x.nowait ? FOLL_NOWAIT : 0);
	x.pages = x.stack_pages;
	x.max_pages = PVM_STACK_PAGES;
	x.first = 0;
	x.span = 0;
	x.pinned = 0;
	x.misses = 0;
	x.looks = riovcnt * PVM_LOOKS_PER_SEG;

	ret = pvm_transfer(&x, riov, riovcnt);

	if (x.pages != x.stack_pages)
		kfree(x.pages);
	mmput(x.mm);
free_riov:
	if (riov != rstack)
		kfree(riov);
free_liov:
	kfree(liov);
	return ret;
}

SYSCALL_DEFINE6(process_vm_readv, pid_t, pid,
		const struct iovec __user *, lvec, unsigned long, liovcnt,
		const struct iovec __user *, rvec, unsigned long, riovcnt,
		unsigned long, flags)
{
	return process_vm_rw(pid, lvec, liovcnt, rvec, riovcnt, flags, false);
}

SYSCALL_DEFINE6(process_vm_writev, pid_t, pid,
		const struct iovec __user *, lvec, unsigned long, liovcnt,
		const struct iovec __user *, rvec, unsigned long, riovcnt,
		unsigned long, flags)
{
	return process_vm_rw(pid, lvec, liovcnt, rvec, riovcnt, flags, true);
}
