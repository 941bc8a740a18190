/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Included by vm/ab-tree.sh in place of mm/internal.h when our
 * mm/process_vm_access.c is built on stock 6.12's GUP (kernel "ab", the
 * "B-gup" column of make icount): stand-ins for what mm/gup.c.patch adds,
 * made of the calls stock GUP has, so that our file runs as it would
 * without the GUP patches.  Not part of the series.
 */
#ifndef PROCESS_VM_NOGUP_H
#define PROCESS_VM_NOGUP_H

/* No pin under the VMA lock: every page takes the mmap lock. */
#define pin_user_page_remote_present(mm, addr, flags, pagep) false

/* No pin of a mapped page outside GUP's loop: pin_user_pages_remote(). */
#define pin_user_page_remote_mapped(mm, addr, flags, pagep) false

/* The present pages of a set, with one pin_user_pages_remote() a run. */
static long pin_user_pages_remote_set(struct mm_struct *mm,
				      unsigned long start,
				      unsigned long nr_pages,
				      const unsigned long *set,
				      unsigned int gup_flags,
				      struct page **pages)
{
	unsigned long a = 0, b;
	long pinned = 0, got;

	while ((a = find_next_bit(set, nr_pages, a)) < nr_pages) {
		b = find_next_zero_bit(set, nr_pages, a);
		got = pin_user_pages_remote(mm, start + (a << PAGE_SHIFT),
					    b - a, gup_flags | FOLL_NOFAULT,
					    pages + a, NULL);
		if (got > 0)
			pinned += got;
		if (got < (long)(b - a))
			break;
		a = b;
	}
	return pinned;
}

#endif
