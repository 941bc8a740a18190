// SPDX-License-Identifier: GPL-2.0
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
 * is kept pinned: one contiguous range of user pages, pinned under a
 * single hold of the target's mmap lock.  Each remote element is copied
 * from the window as long as its pages lie inside it; only an element that
 * leaves the window releases it and pins a new one.  To choose a window,
 * the pages that the following elements touch near the current page are
 * marked in a small bitmap (the map), which serves the windows after it
 * for as long as the elements stay inside it.  The window then grows from
 * the current element's pages over the elements that follow, in order,
 * while each lies in marked pages: the first element that does not would
 * end the window anyway.  Elements may come in any order, so a shuffled
 * gather of a thousand small elements lying in a few pages costs one lock,
 * one pin and one unpin, where a per-element scheme pays for each element.
 * Pages that no element touches are never pinned, so a hole between
 * elements is never an error.  Looking at elements is bounded per call
 * (PVM_LOOKS_PER_SEG per remote element): layouts that share no pages,
 * such as a stride of two pages or a scatter over a large area, fall back
 * to one window per element, as cheaply as a per-element scheme.
 *
 * Only the pages of the element being copied are faulted in.  The pages
 * that the window holds for later elements are pinned only if they are
 * present already (FOLL_NOFAULT): looking ahead never faults in, waits on,
 * or fails because of a page the transfer might stop before reaching.
 *
 * The mmap lock is held only while pinning.  Copies run from the pinned
 * pages with no lock held, so faults on the caller's own buffers are
 * handled normally (the caller may even be the target).  Where the kernel
 * maps memory linearly (no HIGHMEM), a range of the window that lies in
 * one large folio (THP, hugetlb), or in small pages that follow each other
 * in physical memory, is copied in one step rather than page by page.
 * Small calls use an on-stack page array; a larger array is allocated only
 * when a window wants more pages than the stack array holds, and if that
 * allocation fails the transfer continues with the small array.  Between
 * windows the transfer reschedules if needed and stops early when a fatal
 * signal is pending.
 *
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

#define PROCESS_VM_SUPPORTED_FLAGS	(PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT)

/*
 * Limits are set in bytes, so that they hold on every page size: a window
 * covers at most 2 MiB (512 pages of 4 KiB, 32 of 64 KiB), so no single
 * step of a copy moves more than that.
 */
#define PVM_MAX_PAGES		(SZ_2M >> PAGE_SHIFT)
/* Page pointers kept on the stack: 128 KiB of 4 KiB pages. */
#define PVM_STACK_PAGES		32
/* Pages before the current one that a new map of touched pages covers. */
#define PVM_SCAN_BEFORE		(PVM_MAX_PAGES / 4)
/* Pages that the map of touched pages covers. */
#define PVM_MAP_PAGES		(PVM_SCAN_BEFORE + PVM_MAX_PAGES)
/* Consecutive elements outside the map that end a scan. */
#define PVM_SCAN_MISSES		32
/* Elements a call may look at, per remote element, to choose windows. */
#define PVM_LOOKS_PER_SEG	4
/*
 * A window pays for pinning each of its pages; an element served from it
 * saves a window of its own (the lock, the calls into GUP, a release) and
 * that window's page.  Costs in units of a quarter page: a window grows to
 * serve more elements only while it pins at most 4/3 of a page for each.
 */
#define PVM_GAIN_PER_SEG	4
#define PVM_COST_PER_PAGE	3
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
 * @pages:	the window's pinned pages
 * @max_pages:	capacity of @pages
 * @first:	page number (address >> PAGE_SHIFT) of @pages[0]
 * @nr:		number of pages pinned in the window
 * @map_base:	page number of the first page that @map covers
 * @map_seg:	elements below this index have been looked at for @map
 * @looks:	elements the call may still look at to choose windows
 * @map:	pages that the elements looked at touch, from @map_base on
 * @stack_pages: the on-stack page array @pages starts with
 */
struct pvm_xfer {
	struct mm_struct *mm;
	struct iov_iter *iter;
	unsigned int gup_flags;
	bool write;
	bool nowait;
	struct page **pages;
	unsigned long max_pages;
	unsigned long first;
	unsigned long nr;
	unsigned long map_base;
	unsigned long map_seg;
	unsigned long looks;
	DECLARE_BITMAP(map, PVM_MAP_PAGES);
	struct page *stack_pages[PVM_STACK_PAGES];
};

/**
 * pvm_release() - unpin the window
 * @x: the transfer
 *
 * Pages written by process_vm_writev() are marked dirty as they are
 * unpinned, so that file-backed memory reaches its file.
 */
static void pvm_release(struct pvm_xfer *x)
{
	if (!x->nr)
		return;
	if (x->write)
		unpin_user_pages_dirty_lock(x->pages, x->nr, true);
	else
		unpin_user_pages(x->pages, x->nr);
	x->nr = 0;
}

/**
 * pvm_grow() - make room for a window of @want pages
 * @x: the transfer
 * @want: pages the next window would like to cover
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
 * pvm_map() - map the pages that the next elements touch
 * @x: the transfer
 * @riov: the remote iovecs
 * @nr_segs: number of remote iovecs
 * @seg: index of the element being copied
 * @addr: remote address the copy resumes at, inside element @seg
 * @len: bytes of element @seg that the call will copy, not zero
 * @left: bytes that the caller's buffers take after those
 *
 * Starts a new map around the page of @addr and marks in it the pages of
 * element @seg and of the elements after it, as far as the caller's
 * buffers reach, until PVM_SCAN_MISSES elements in a row fall outside the
 * map or the call's allowance of looks runs out.
 */
static void pvm_map(struct pvm_xfer *x, const struct iovec *riov,
		    unsigned long nr_segs, unsigned long seg,
		    unsigned long addr, size_t len, size_t left)
{
	unsigned long cur = addr >> PAGE_SHIFT;
	unsigned long base = cur - min(cur, PVM_SCAN_BEFORE);
	unsigned int misses = 0;
	unsigned long p0, p1;

	x->map_base = base;
	bitmap_zero(x->map, PVM_MAP_PAGES);
	for (;;) {
		if (len) {
			pvm_extent(addr, len, &p0, &p1);
			if (p1 >= base && p0 < base + PVM_MAP_PAGES) {
				p0 = max(p0, base) - base;
				p1 = min(p1 - base, PVM_MAP_PAGES - 1);
				if (p0 == p1)
					__set_bit(p0, x->map);
				else
					bitmap_set(x->map, p0, p1 - p0 + 1);
				misses = 0;
			} else if (++misses > PVM_SCAN_MISSES) {
				seg++;
				break;
			}
		}
		if (!left || ++seg >= nr_segs || !x->looks)
			break;
		x->looks--;
		addr = (unsigned long)riov[seg].iov_base;
		len = min(riov[seg].iov_len, left);
		left -= len;
	}
	x->map_seg = seg;
}

/**
 * pvm_map_holds() - whether every page of a range is marked in the map
 * @x: the transfer
 * @p0: page number of the range's first page
 * @p1: page number of the page after the range
 *
 * Return: true if the range lies in the map and all its pages are marked.
 */
static bool pvm_map_holds(const struct pvm_xfer *x, unsigned long p0,
			  unsigned long p1)
{
	if (p0 >= p1)
		return true;
	if (p0 < x->map_base || p1 > x->map_base + PVM_MAP_PAGES)
		return false;
	/* Ranges are a page or two: a window only grows, up to its limit. */
	for (; p0 < p1; p0++)
		if (!test_bit(p0 - x->map_base, x->map))
			return false;
	return true;
}

/**
 * pvm_window() - choose the pages of the next window
 * @x: the transfer
 * @riov: the remote iovecs
 * @nr_segs: number of remote iovecs
 * @seg: index of the element being copied
 * @addr: remote address the copy resumes at, inside element @seg
 * @len: bytes left in element @seg
 * @first: set to the page number of the window's first page
 *
 * The window starts as the pages that element @seg needs from @addr on,
 * and widens over the elements that follow, in order, for as long as
 * each of them lies in pages marked in the map of touched pages and the
 * window stays within PVM_MAX_PAGES.  The first element that does not
 * would leave the window and end it anyway, so no page is pinned for an
 * element after it.  Of the windows met on the way, the one that serves
 * the most elements for the pages it pins (PVM_GAIN_PER_SEG against
 * PVM_COST_PER_PAGE) is taken: two elements far apart in a run of
 * touched pages do not pin the pages between them.
 *
 * The map is reused from one window to the next while it covers the
 * current element; a new one is made when it does not.  The last element
 * that the call reaches, and an element of PVM_MAX_PAGES pages or more,
 * simply get their own pages.  Every element looked at costs one of the
 * call's looks; once they run out, every window is its element's own
 * pages, so the work of choosing windows stays in proportion to the
 * number of elements whatever their layout.
 *
 * Return: the number of pages, at least one and at most PVM_MAX_PAGES.
 */
static unsigned long pvm_window(struct pvm_xfer *x,
				const struct iovec *riov, unsigned long nr_segs,
				unsigned long seg, unsigned long addr, size_t len,
				unsigned long *first)
{
	unsigned long cur = addr >> PAGE_SHIFT;
	size_t left = iov_iter_count(x->iter);
	unsigned long lo, hi, p0, p1, nlo, nhi, best_lo, best_hi;
	long score, best;

	len = min(len, left);
	left -= len;
	lo = cur;
	hi = cur + DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
	*first = cur;
	if (seg + 1 == nr_segs || !left || hi - lo >= PVM_MAX_PAGES ||
	    !x->looks)
		return min(hi - lo, PVM_MAX_PAGES);

	/* A new map unless this one covers the element, with room after it. */
	if (seg >= x->map_seg || cur < x->map_base ||
	    hi + PVM_SCAN_BEFORE > x->map_base + PVM_MAP_PAGES)
		pvm_map(x, riov, nr_segs, seg, addr, len, left);

	best_lo = lo;
	best_hi = hi;
	score = PVM_GAIN_PER_SEG - PVM_COST_PER_PAGE * (long)(hi - lo);
	best = score;
	while (left && ++seg < nr_segs && x->looks) {
		x->looks--;
		len = min(riov[seg].iov_len, left);
		if (!len)
			continue;
		left -= len;
		pvm_extent((unsigned long)riov[seg].iov_base, len, &p0, &p1);
		nlo = min(lo, p0);
		nhi = max(hi, p1 + 1);
		if (nhi - nlo > PVM_MAX_PAGES ||
		    !pvm_map_holds(x, nlo, lo) || !pvm_map_holds(x, hi, nhi))
			break;
		score += PVM_GAIN_PER_SEG -
			 PVM_COST_PER_PAGE * (long)(nhi - nlo - (hi - lo));
		lo = nlo;
		hi = nhi;
		if (score > best) {
			best = score;
			best_lo = lo;
			best_hi = hi;
		}
	}
	*first = best_lo;
	return best_hi - best_lo;
}

/**
 * pvm_pin() - pin a new window
 * @x: the transfer
 * @first: page number of the window's first page
 * @want: number of pages wanted
 * @cur: page number of the page the copy resumes at
 * @own: number of pages from @cur on that the current element needs
 *
 * The pages of the current element are faulted in as needed; the others,
 * wanted for later elements, are pinned only if they are present already.
 * A window may therefore hold fewer pages than wanted, and start at @cur
 * rather than @first, but on success it always holds @cur.
 *
 * Return: 0 on success, or a negative errno if @cur could not be pinned.
 */
static int pvm_pin(struct pvm_xfer *x, unsigned long first, unsigned long want,
		   unsigned long cur, unsigned long own)
{
	unsigned int spec = x->gup_flags | FOLL_NOFAULT;
	unsigned long end = first + want;
	unsigned long before, mid;
	int locked = 1;
	long got, more;

	pvm_grow(x, want);
	if (want > x->max_pages) {
		/* A smaller window that still holds @cur, near its start. */
		first = cur - min(cur - first, x->max_pages / 4);
		end = first + min(x->max_pages, end - first);
	}
	before = cur - first;
	mid = min(own, end - cur);

	if (x->nowait) {
		if (!mmap_read_trylock(x->mm))
			return -EFAULT;
	} else if (mmap_read_lock_killable(x->mm)) {
		return -EINTR;
	}
	if (before) {
		more = pin_user_pages_remote(x->mm, first << PAGE_SHIFT, before,
					     spec, x->pages, NULL);
		if (more != before) {
			/* Not all present: start the window at @cur. */
			if (more > 0)
				unpin_user_pages(x->pages, more);
			first = cur;
			before = 0;
		}
	}
	got = pin_user_pages_remote(x->mm, cur << PAGE_SHIFT, mid, x->gup_flags,
				    x->pages + before, &locked);
	/* The window ends at @end even when it no longer starts at @first. */
	if (got == mid && locked && cur + mid < end) {
		more = pin_user_pages_remote(x->mm, (cur + mid) << PAGE_SHIFT,
					     end - cur - mid, spec,
					     x->pages + before + mid, NULL);
		if (more > 0)
			got += more;
	}
	if (locked)
		mmap_read_unlock(x->mm);
	if (got <= 0 && before)
		unpin_user_pages(x->pages, before);

	if (got <= 0) {
		/* NOWAIT reports "would block" as nothing copied: EFAULT */
		if (got == 0 || (x->nowait && !fatal_signal_pending(current)))
			return -EFAULT;
		return got;
	}
	x->first = first;
	x->nr = before + got;
	return 0;
}

/**
 * pvm_page_follows() - whether @next lies right after @page in memory
 * @page: a page
 * @next: another page
 *
 * Adjacent page structs describe adjacent page frames, except across
 * memory sections when the memmap is not virtually contiguous (classic
 * SPARSEMEM).  This costs a compare where page_to_pfn() may not be cheap.
 *
 * Return: true if @next's page frame number is one more than @page's.
 */
static bool pvm_page_follows(const struct page *page, const struct page *next)
{
	if (next != page + 1)
		return false;
#ifdef SECTION_IN_PAGE_FLAGS
	return page_to_section(page) == page_to_section(next);
#else
	return true;
#endif
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
 * @x: the transfer
 * @page: the page the range starts in
 * @offset: offset of the range in @page
 * @len: bytes to copy: inside @page, or inside a run from pvm_run()
 *
 * Without HIGHMEM the range is mapped linearly and is copied from its
 * address, with no temporary mapping; with HIGHMEM it lies in @page and
 * is mapped for the copy.
 *
 * Return: bytes copied, less than @len if a caller's page faulted.
 */
static size_t pvm_copy(struct pvm_xfer *x, struct page *page, size_t offset,
		       size_t len)
{
	if (IS_ENABLED(CONFIG_HIGHMEM)) {
		if (x->write)
			return copy_page_from_iter(page, offset, len, x->iter);
		return copy_page_to_iter(page, offset, len, x->iter);
	}
	if (x->write)
		return copy_from_iter(page_address(page) + offset, len, x->iter);
	return copy_to_iter(page_address(page) + offset, len, x->iter);
}

/**
 * pvm_copy_span() - copy between pinned pages and the caller's buffers
 * @x: the transfer
 * @pages: the pinned pages the span starts in
 * @offset: offset of the span in @pages[0]
 * @len: bytes to copy; all of them lie in pinned pages
 *
 * Runs of pages that one linear copy can cover (pvm_run()) go in one
 * call; other pages one at a time.  A page whose successor does not
 * follow it in memory costs one compare more than a plain per-page copy.
 *
 * Return: bytes copied, less than @len if a caller's page faulted.
 */
static size_t pvm_copy_span(struct pvm_xfer *x, struct page **pages,
			    size_t offset, size_t len)
{
	size_t done = 0;

	while (done < len) {
		size_t rest = len - done;
		size_t chunk = min(rest, PAGE_SIZE - offset);
		unsigned long n = 1, i;
		size_t copied;

		if (!IS_ENABLED(CONFIG_HIGHMEM) && chunk < rest &&
		    pvm_page_follows(pages[0], pages[1])) {
			n = pvm_run(pages, DIV_ROUND_UP(offset + rest, PAGE_SIZE));
			chunk = min(rest, (n << PAGE_SHIFT) - offset);
		}
		copied = pvm_copy(x, pages[0], offset, chunk);
		if (x->write)
			for (i = 0; i < n; i++)
				flush_dcache_page(pages[i]);
		done += copied;
		if (copied < chunk)
			break;
		pages += n;
		offset = 0;
	}
	return done;
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
	size_t unchecked = 0;
	ssize_t copied = 0;
	unsigned long seg;
	int err = 0;

	for (seg = 0; seg < nr_segs && iov_iter_count(x->iter); seg++) {
		unsigned long addr = (unsigned long)riov[seg].iov_base;
		size_t len = min(riov[seg].iov_len, iov_iter_count(x->iter));

		while (len) {
			unsigned long page = addr >> PAGE_SHIFT;
			size_t offset = offset_in_page(addr);
			unsigned long first, want;
			bool refill = page < x->first ||
				      page - x->first >= x->nr;
			size_t span, done;

			/*
			 * Check for a fatal signal between windows (the first
			 * one follows syscall entry: nothing to check yet), and
			 * also by bytes copied: elements that repeat the same
			 * pages copy from one window for as long as they like.
			 */
			if ((refill && copied) || unchecked >= PVM_CHECK_BYTES) {
				unchecked = 0;
				if (fatal_signal_pending(current)) {
					err = -EINTR;
					goto out;
				}
				cond_resched();
			}
			if (refill) {
				pvm_release(x);
				want = pvm_window(x, riov, nr_segs, seg, addr,
						  len, &first);
				err = pvm_pin(x, first, want, page,
					      DIV_ROUND_UP(offset + len,
							   PAGE_SIZE));
				if (err)
					goto out;
			}

			span = ((x->nr - (page - x->first)) << PAGE_SHIFT) - offset;
			span = min(span, len);
			done = pvm_copy_span(x, &x->pages[page - x->first],
					     offset, span);
			copied += done;
			unchecked += done;
			if (done < span) {
				err = -EFAULT;
				goto out;
			}
			addr += done;
			len -= done;
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
	/*
	 * Not zero-filled on entry (INIT_STACK_ALL_ZERO): the iovec arrays and
	 * the iterator are written by import_iovec() and iovec_from_user()
	 * before anything reads them, and every field of @x is set below.
	 */
	struct iovec lstack[UIO_FASTIOV] __uninitialized;
	struct iovec rstack[UIO_FASTIOV] __uninitialized;
	struct iov_iter iter __uninitialized;
	struct pvm_xfer x __uninitialized;
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
	x.nr = 0;
	x.map_seg = 0;
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
