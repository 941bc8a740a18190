/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_PROCESS_VM_H
#define _UAPI_LINUX_PROCESS_VM_H

#include <linux/const.h>

/*
 * Flags for process_vm_readv(2) and process_vm_writev(2).
 *
 * PROCESS_VM_PIDFD: the first argument is a pidfd (from pidfd_open(2) or
 * clone(2) with CLONE_PIDFD), not a pid.  The target cannot be replaced by
 * an unrelated process that happens to reuse the pid.
 *
 * PROCESS_VM_NOWAIT: do not wait for the target's mmap lock, nor for its
 * pages to be faulted in from disk, swap or a userfaultfd handler.  The call
 * copies what it can reach without waiting and returns a short count, or
 * fails with EFAULT if nothing could be copied.  It may still sleep for
 * other reasons, such as memory allocation (see Documentation/cma.rst).
 */
#define PROCESS_VM_PIDFD	_BITUL(0)
#define PROCESS_VM_NOWAIT	_BITUL(1)

#endif /* _UAPI_LINUX_PROCESS_VM_H */
