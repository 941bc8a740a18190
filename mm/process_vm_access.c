// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Copyright (C) 2010-2011 Christopher Yeoh <cyeoh@au1.ibm.com>, IBM Corp.
 *
 * process_vm_readv(2) and process_vm_writev(2) copy between the caller's
 * iovecs and address ranges of another process: the target's pages are
 * pinned and the data moves between them and the caller's buffers once.
 *
 * The remote iovecs are copied in order through a window of pinned pages.
 * A window holds the pages of the element being copied and those of the
 * elements after it, in order, for as long as all of them fit in a span of
 * 64 pages, a bit each in a u64.  Its pages are pinned under one hold of the
 * target's mmap lock, one pin_user_pages_remote() call per run of adjacent
 * pages, and released in one call; the first element it does not hold
 * starts the next window.  Only the current element's pages are faulted
 * in: later elements' pages are pinned only if present (FOLL_NOFAULT), so
 * looking ahead never faults in, waits for or fails on a page the copy may
 * never reach; one it left out is faulted in when the copy gets there.
 * Pages between elements are never pinned.  No lock is held while
 * copying, so the caller's own buffers fault as usual.
 *
 * Bytes move in iovec order.  The copy stops at the first remote page that
 * cannot be pinned or the first byte of the caller's buffers that faults,
 * so it may stop inside a remote element, at a page boundary.  If anything
 * was copied, the count is returned; otherwise the error.
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

/* The widest window, in pages: its plan and its pinned set are a u64 each. */
#define PVM_SPAN_PAGES		64
/* Page pointers on the stack; larger windows allocate an array. */
#define PVM_STACK_PAGES		16
/* Later elements a call may look at to plan windows, per remote element. */
#define PVM_LOOKS_PER_SEG	4
/* Bytes copied between checks for a fatal signal. */
#define PVM_CHECK_BYTES		SZ_2M

/**
 * struct pvm_xfer - state of one process_vm_readv/writev call
 * @mm:		the target's address space
 * @iter:	the caller's buffers
 * @gup_flags:	flags for pin_user_pages_remote()
 * @write:	true for process_vm_writev()
 * @nowait:	PROCESS_VM_NOWAIT was given
 * @looks:	later elements the call may still look at
 * @pages:	the window: @pages[i] is page @first + i, if bit i of @pinned
 * @max_pages:	capacity of @pages
 * @first:	page number (address >> PAGE_SHIFT) of @pages[0]
 * @span:	pages the window covers, from @first on
 * @pinned:	a bit for each pinned entry of @pages
 * @stack_pages: the on-stack array that @pages starts in
 */
struct pvm_xfer {
	struct mm_struct *mm;
	struct iov_iter *iter;
	unsigned int gup_flags;
	bool write;
	bool nowait;
	unsigned long looks;
	struct page **pages;
	unsigned long max_pages;
	unsigned long first;
	unsigned long span;
	u64 pinned;
	struct page *stack_pages[PVM_STACK_PAGES];
};

/**
 * pvm_release() - unpin every page of the window and empty it
 * @x: the transfer
 *
 * Pages pinned for process_vm_writev() are marked dirty as they are
 * unpinned, so that changes to file-backed memory reach the file.
 */
static inline void pvm_release(struct pvm_xfer *x)
{
	u64 set = x->pinned;
	unsigned long n;

	if (set & (set + 1)) {
		/* Not all at the front: move them there, in order */
		for (n = 0; set; set &= set - 1)
			x->pages[n++] = x->pages[__ffs64(set)];
	} else {
		n = fls64(set);
	}
	if (n)
		unpin_user_pages_dirty_lock(x->pages, n, x->write);
	x->span = 0;
	x->pinned = 0;
}

/**
 * pvm_grow() - make room in the page array for a window of @want pages
 * @x: the transfer, with an empty window
 * @want: number of pages, at most PVM_SPAN_PAGES
 *
 * Failing to allocate is not an error: the caller then plans a smaller
 * window.  With PROCESS_VM_NOWAIT the allocation does not wait for reclaim.
 *
 * Return: true if @x->pages holds @want entries.
 */
static bool pvm_grow(struct pvm_xfer *x, unsigned long want)
{
	struct page **pages;

	if (want <= x->max_pages)
		return true;
	pages = kmalloc_array(PVM_SPAN_PAGES, sizeof(*pages),
			      (x->nowait ? GFP_NOWAIT : GFP_KERNEL) | __GFP_NOWARN);
	if (!pages)
		return false;
	x->pages = pages;
	x->max_pages = PVM_SPAN_PAGES;
	return true;
}

/**
 * pvm_lock() - take the target's mmap lock for reading
 * @x: the transfer
 *
 * Return: 0 with the lock held; -EFAULT if PROCESS_VM_NOWAIT finds it
 * taken or wanted by a writer, -EINTR on a fatal signal while waiting.
 */
static int pvm_lock(struct pvm_xfer *x)
{
	if (x->nowait)
		return mmap_read_trylock(x->mm) ? 0 : -EFAULT;
	return mmap_read_lock_killable(x->mm) ? -EINTR : 0;
}

/**
 * pvm_pin_run() - pin a run of the window's pages
 * @x: the transfer, with the target's mmap lock held
 * @i: index in the window of the run's first page
 * @nr: number of pages in the run, none of them pinned yet
 * @flags: FOLL_ flags beyond @x->gup_flags
 * @locked: set to 0 if the lock was dropped; NULL if it must not be
 *
 * Return: the number of pages pinned from @i on, or a negative errno:
 * -ENOMEM or -EINTR where that is what happened, else -EFAULT (a bad
 * address, or "would block" under PROCESS_VM_NOWAIT, as the man page
 * has it).
 */
static inline long pvm_pin_run(struct pvm_xfer *x, unsigned long i,
			       unsigned long nr, unsigned int flags,
			       int *locked)
{
	long got = pin_user_pages_remote(x->mm, (x->first + i) << PAGE_SHIFT,
					 nr, x->gup_flags | flags,
					 x->pages + i, locked);

	if (got > 0) {
		x->pinned |= GENMASK_ULL(i + got - 1, i);
		return got;
	}
	return got == -ENOMEM || got == -EINTR ? got : -EFAULT;
}

/**
 * pvm_pin() - plan and pin the window that starts at the current element
 * @x: the transfer, with an empty window
 * @iov: the current remote element
 * @end: the end of the remote iovecs
 * @addr: the first remote byte to copy, inside *@iov
 * @len: the bytes of *@iov left to copy from @addr on, not zero
 *
 * Return: 0 with the page of @addr pinned, or a negative errno with the
 * window empty.
 */
static int pvm_pin(struct pvm_xfer *x, const struct iovec *iov,
		   const struct iovec *end, unsigned long addr, size_t len)
{
	unsigned long cur = addr >> PAGE_SHIFT, lo = cur, hi, own, a, b, s, e;
	size_t left = iov_iter_count(x->iter) - len, n;
	int locked = 1;
	u64 want = 0;
	long got;

	own = addr + len - 1 < addr ? PVM_SPAN_PAGES :
	      min(((addr + len - 1) >> PAGE_SHIFT) - cur + 1, PVM_SPAN_PAGES);
	hi = cur + own;
	/*
	 * The later elements whose pages fit in one span with @own's.  Bit k
	 * of @want plans page @lo + k, so the plan moves up as @lo moves
	 * down; the span keeps every bit index and shift below 64.  Most
	 * often, in a scattered vector, the next element starts too far away
	 * to fit: one test then says there is no plan.
	 */
	if (++iov < end && iov->iov_len &&
	    abs_diff((unsigned long)iov->iov_base >> PAGE_SHIFT, cur) >=
	    PVM_SPAN_PAGES)
		iov = end;
	for (; iov < end && left && x->looks; iov++, x->looks--) {
		n = min(iov->iov_len, left);
		if (!n)
			continue;
		a = (unsigned long)iov->iov_base;
		if (a + n - 1 < a)
			break;
		b = ((a + n - 1) >> PAGE_SHIFT) + 1;
		a >>= PAGE_SHIFT;
		if (max(hi, b) - min(lo, a) > PVM_SPAN_PAGES)
			break;
		if (a < lo) {
			want <<= lo - a;
			lo = a;
		}
		hi = max(hi, b);
		want |= GENMASK_ULL(b - lo - 1, a - lo);
		left -= n;
	}
	if (!pvm_grow(x, hi - lo)) {
		own = min(own, x->max_pages);
		lo = cur;
		hi = cur + own;
		want = 0;
	}
	want &= ~GENMASK_ULL(cur - lo + own - 1, cur - lo);
	x->first = lo;

	got = pvm_lock(x);
	if (got)
		return got;
	got = pvm_pin_run(x, cur - lo, own, 0, &locked);
	/*
	 * The later elements' pages, if this element's all are pinned and
	 * the lock is still held: only those present, a run at a time.  A
	 * page left out is faulted in when the copy reaches it (pvm_fill());
	 * a run may be pinned in part.
	 */
	while (want && got == own && locked) {
		s = __ffs64(want);
		e = ~(want >> s) ? s + __ffs64(~(want >> s)) : 64;
		pvm_pin_run(x, s, e - s, FOLL_NOFAULT, NULL);
		want &= ~GENMASK_ULL(e - 1, s);
	}
	if (locked)
		mmap_read_unlock(x->mm);
	if (got < 0)
		return got;
	/* A page of the span not pinned here is pinned when it is reached */
	x->span = hi - lo;
	return 0;
}

/**
 * pvm_fill() - pin the pages of an element that the window left out
 * @x: the transfer
 * @i: index in the window of the page to copy next, not pinned
 * @need: pages the element still needs from @i on
 *
 * A page of the window's span that it did not pin (a later element's page
 * that was not present, or any page after the lock was dropped) is faulted
 * in when the copy reaches it, with the run of missing pages that follows
 * it in the element, and the window is kept.
 *
 * Return: 0 with page @i pinned, or a negative errno.
 */
static int pvm_fill(struct pvm_xfer *x, unsigned long i, unsigned long need)
{
	u64 above = x->pinned >> i;
	unsigned long nr = min(need, x->span - i);
	int locked = 1, err;
	long got;

	if (above)
		nr = min_t(unsigned long, nr, __ffs64(above));
	err = pvm_lock(x);
	if (err)
		return err;
	got = pvm_pin_run(x, i, nr, 0, &locked);
	if (locked)
		mmap_read_unlock(x->mm);
	return got < 0 ? got : 0;
}

/**
 * pvm_copy() - copy between a pinned page and the caller's buffers
 * @x: the transfer
 * @page: the page, pinned
 * @offset: offset of the first byte in @page
 * @len: bytes to copy, all of them inside @page
 *
 * What copy_page_to_iter() and copy_page_from_iter() do for a range
 * inside one page, without their checks and loop for ranges that are not
 * (about 45 instructions for each element of a gather).  Like them, it skips
 * hardened usercopy's object checks: a mapped user page holds no object
 * to check.
 *
 * Return: bytes copied, less than @len if the caller's buffers fault.
 */
static inline size_t pvm_copy(struct pvm_xfer *x, struct page *page,
			      size_t offset, size_t len)
{
	void *kaddr = kmap_local_page(page);
	size_t done;

	if (x->write)
		done = _copy_from_iter(kaddr + offset, len, x->iter);
	else
		done = _copy_to_iter(kaddr + offset, len, x->iter);
	kunmap_local(kaddr);
	if (x->write)
		flush_dcache_page(page);
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
	const struct iovec *iov, *end = riov + nr_segs;
	size_t unchecked = 0, chunk, done;
	ssize_t copied = 0;
	int err = 0;

	for (iov = riov; iov < end && iov_iter_count(x->iter); iov++) {
		unsigned long addr = (unsigned long)iov->iov_base;
		size_t len = min(iov->iov_len, iov_iter_count(x->iter));

		while (len) {
			unsigned long i = (addr >> PAGE_SHIFT) - x->first;

			if (i >= x->span) {
				pvm_release(x);
				err = pvm_pin(x, iov, end, addr, len);
				i = (addr >> PAGE_SHIFT) - x->first;
			} else if (!(x->pinned & BIT_ULL(i))) {
				err = pvm_fill(x, i, DIV_ROUND_UP(offset_in_page(addr) +
								  len, PAGE_SIZE));
			}
			if (err)
				goto out;
			chunk = min(len, PAGE_SIZE - offset_in_page(addr));
			done = pvm_copy(x, x->pages[i], offset_in_page(addr),
					chunk);
			copied += done;
			if (done < chunk) {
				err = -EFAULT;
				goto out;
			}
			addr += done;
			len -= done;
			/* Copies served from the window make no GUP call to check */
			unchecked += done;
			if (unchecked >= PVM_CHECK_BYTES) {
				unchecked = 0;
				if (fatal_signal_pending(current)) {
					err = -EINTR;
					goto out;
				}
				cond_resched();
			}
		}
	}
out:
	pvm_release(x);
	return copied ? copied : err;
}

/**
 * pvm_target_mm() - the target's address space, if the caller may use it
 * @pid: a pid, or a pidfd with PROCESS_VM_PIDFD
 * @flags: the call's flags
 *
 * A pidfd opened with PIDFD_THREAD names that thread, any other pidfd a
 * thread group; a plain @pid may be any thread's id.  Access requires the
 * rights to attach with ptrace, checked against the real credentials.
 *
 * Return: a reference to the mm, or ERR_PTR() with -ESRCH (no such task,
 * or it has no mm), -EPERM (not allowed), -EBADF (not a pidfd) or -EINTR.
 */
static struct mm_struct *pvm_target_mm(pid_t pid, unsigned long flags)
{
	struct task_struct *task;
	struct mm_struct *mm;
	unsigned int f_flags;

	if (flags & PROCESS_VM_PIDFD)
		task = pidfd_get_task(pid, &f_flags);
	else
		task = find_get_task_by_vpid(pid) ?: ERR_PTR(-ESRCH);
	if (IS_ERR(task))
		return ERR_CAST(task);

	mm = mm_access(task, PTRACE_MODE_ATTACH_REALCREDS);
	put_task_struct(task);
	if (mm == ERR_PTR(-EACCES))
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
	struct iovec *liov = lstack, *riov;
	struct iov_iter iter;
	struct pvm_xfer x;
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
	x.looks = riovcnt * PVM_LOOKS_PER_SEG;
	x.pages = x.stack_pages;
	x.max_pages = PVM_STACK_PAGES;
	x.first = 0;
	x.span = 0;
	x.pinned = 0;

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
