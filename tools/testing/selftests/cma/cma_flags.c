// SPDX-License-Identifier: GPL-2.0
/*
 * The flags of our process_vm_readv(2)/process_vm_writev(2):
 * PROCESS_VM_PIDFD (the first argument is a pidfd) and PROCESS_VM_NOWAIT
 * (never sleep on a page fault).  Kernels without them reject the flag with
 * EINVAL, and these cases skip there.  The userfaultfd cases at the end
 * also check, with no flag, that looking ahead never waits for a later
 * element, and that faults served by a handler thread (pinning waits with
 * the mmap lock dropped; a copy waits on the caller's own buffers) give
 * the whole transfer.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>

#ifndef __NR_clone3
#define __NR_clone3	CMA_NR_COMMON(435)
#endif

#define NO_PIDFD	"kernel without PROCESS_VM_PIDFD"
#define NO_NOWAIT	"kernel without PROCESS_VM_NOWAIT"

FIXTURE(flags) {
	struct cma_target t;
	struct cma_xfer *x;
	size_t page;
	bool pidfd_ok;		/* the kernel knows PROCESS_VM_PIDFD */
	bool nowait_ok;		/* the kernel knows PROCESS_VM_NOWAIT */
	int pidfd;		/* a pidfd for the target when pidfd_ok */
};

FIXTURE_SETUP(flags)
{
	self->page = cma_page();
	self->pidfd = -1;
	self->pidfd_ok = cma_flag_supported(PROCESS_VM_PIDFD);
	self->nowait_ok = cma_flag_supported(PROCESS_VM_NOWAIT);
	ASSERT_EQ(0, cma_target_start(&self->t));
	self->x = &self->t.mb->x;
	if (self->pidfd_ok) {
		self->pidfd = cma_pidfd_open(self->t.pid, 0);
		ASSERT_LE(0, self->pidfd) TH_LOG("pidfd_open: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(flags)
{
	if (self->pidfd >= 0)
		close(self->pidfd);
	cma_target_stop(&self->t);
}

/* A transfer to the target by pid with @flags, checking only the result. */
static void run_flags_nocheck(struct __test_metadata *_metadata, struct cma_target *t,
			      bool write, unsigned long flags, ssize_t want)
{
	struct cma_xfer *x = &t->mb->x;
	ssize_t ret;

	errno = 0;
	ret = cma_rw(write, t->pid, x->liov, x->ln, x->riov, x->rn, flags);
	if (want < 0) {
		ASSERT_EQ(-1, ret);
		ASSERT_EQ(-want, errno) TH_LOG("%s", strerror(errno));
	} else {
		ASSERT_EQ(want, ret) TH_LOG("%s", strerror(errno));
	}
}

/* The usual transfer, through @fd and with @flags; expect @want (or -errno). */
static void run_flags(struct __test_metadata *_metadata, struct cma_target *t,
		      bool write, long fd, unsigned long flags, ssize_t want)
{
	struct cma_xfer *x = &t->mb->x;
	ssize_t ret;

	errno = 0;
	ret = cma_rw(write, fd, x->liov, x->ln, x->riov, x->rn, flags);
	if (want < 0) {
		ASSERT_EQ(-1, ret);
		ASSERT_EQ(-want, errno) TH_LOG("%s", strerror(errno));
		want = 0;
	} else {
		ASSERT_EQ(want, ret) TH_LOG("%s", strerror(errno));
	}
	cma_xfer_check(_metadata, t, write, want);
	cma_xfer_reset_keep(t, write, want);
}

static void usual_layout(struct __test_metadata *_metadata, struct cma_target *t,
			 enum cma_kind kind)
{
	struct cma_xfer *x = &t->mb->x;
	size_t p = cma_page();

	ASSERT_EQ(0, cma_xfer_setup(t, 4 * p, 4 * p, kind));
	cma_riov(x, 13, p);
	cma_riov(x, p + 50, p + 7);
	cma_liov(x, 100, 2 * p + 7);
}

TEST_F(flags, pidfd_readv)
{
	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	run_flags(_metadata, &self->t, false, self->pidfd, PROCESS_VM_PIDFD, 2 * self->page + 7);
}

TEST_F(flags, pidfd_writev)
{
	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	run_flags(_metadata, &self->t, true, self->pidfd, PROCESS_VM_PIDFD, 2 * self->page + 7);
}

TEST_F(flags, pidfd_bad_fd)
{
	int fd;

	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	fd = dup(self->pidfd);
	ASSERT_LE(0, fd);
	close(fd);
	run_flags(_metadata, &self->t, false, fd, PROCESS_VM_PIDFD, -EBADF);
	run_flags(_metadata, &self->t, true, fd, PROCESS_VM_PIDFD, -EBADF);
	run_flags(_metadata, &self->t, false, -1, PROCESS_VM_PIDFD, -EBADF);
	run_flags(_metadata, &self->t, true, -1, PROCESS_VM_PIDFD, -EBADF);
}

TEST_F(flags, pidfd_not_a_pidfd)
{
	int fd, pipefd[2];

	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	run_flags(_metadata, &self->t, false, fd, PROCESS_VM_PIDFD, -EBADF);
	run_flags(_metadata, &self->t, true, fd, PROCESS_VM_PIDFD, -EBADF);
	run_flags(_metadata, &self->t, false, pipefd[0], PROCESS_VM_PIDFD, -EBADF);
	run_flags(_metadata, &self->t, true, pipefd[1], PROCESS_VM_PIDFD, -EBADF);
	close(fd);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* A local total of 0 returns 0 with a pidfd as well. */
TEST_F(flags, pidfd_zero_local_total)
{
	struct iovec r = { (void *)1, 64 };

	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	EXPECT_EQ(0, cma_readv(self->pidfd, NULL, 0, &r, 1, PROCESS_VM_PIDFD));
	EXPECT_EQ(0, cma_writev(self->pidfd, NULL, 0, &r, 1, PROCESS_VM_PIDFD));
}

static int thread_tid;

static void *sleeper(void *arg)
{
	__atomic_store_n(&thread_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

/* Start a thread in the target; returns its tid. */
static long t_start_thread(struct cma_mbox *mb)
{
	pthread_t th;
	int tid;

	errno = pthread_create(&th, NULL, sleeper, NULL);
	if (errno)
		return -1;
	while (!(tid = __atomic_load_n(&thread_tid, __ATOMIC_ACQUIRE)))
		usleep(1000);
	return tid;
}

/* A pidfd for one thread of the target (PIDFD_THREAD) reaches its mm too. */
TEST_F(flags, pidfd_thread)
{
	long tid;

	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	tid = cma_call(&self->t, t_start_thread);
	ASSERT_LT(0, tid);
	ASSERT_NE(self->t.pid, tid);
	close(self->pidfd);
	self->pidfd = cma_pidfd_open(tid, PIDFD_THREAD);
	if (self->pidfd < 0 && errno == EINVAL)
		SKIP(return, "no PIDFD_THREAD");
	ASSERT_LE(0, self->pidfd) TH_LOG("pidfd_open: %s", strerror(errno));
	run_flags(_metadata, &self->t, false, self->pidfd, PROCESS_VM_PIDFD, 2 * self->page + 7);
	run_flags(_metadata, &self->t, true, self->pidfd, PROCESS_VM_PIDFD, 2 * self->page + 7);
}

/* A /proc/PID directory names a process too, but it is not a pidfd: EBADF. */
TEST_F(flags, pidfd_proc_dirfd)
{
	char path[64];
	int fd;

	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	snprintf(path, sizeof(path), "/proc/%d", self->t.pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	run_flags(_metadata, &self->t, false, fd, PROCESS_VM_PIDFD, -EBADF);
	run_flags(_metadata, &self->t, true, fd, PROCESS_VM_PIDFD, -EBADF);
	close(fd);
}

/* Any thread's id reaches the process's memory as a plain pid. */
TEST_F(flags, thread_id_as_pid)
{
	long tid;

	usual_layout(_metadata, &self->t, CMA_ANON);
	tid = cma_call(&self->t, t_start_thread);
	ASSERT_LT(0, tid);
	ASSERT_NE(self->t.pid, tid);
	run_flags(_metadata, &self->t, false, tid, 0, 2 * self->page + 7);
	run_flags(_metadata, &self->t, true, tid, 0, 2 * self->page + 7);
}

static void kill_target(struct cma_target *t, bool reap)
{
	siginfo_t si;

	kill(t->pid, SIGKILL);
	memset(&si, 0, sizeof(si));
	waitid(P_PID, t->pid, &si, WEXITED | (reap ? 0 : WNOWAIT));
}

/* A pidfd whose process has exited (a zombie, or reaped too): ESRCH both ways. */
static void pidfd_exited(struct __test_metadata *_metadata, struct cma_target *t,
			 int pidfd, bool reap)
{
	struct iovec l = { t->mb->x.lreg.addr, 64 }, r = { t->mb->x.rreg.addr, 64 };

	kill_target(t, reap);
	errno = 0;
	EXPECT_EQ(-1, cma_readv(pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, cma_writev(pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD));
	EXPECT_EQ(ESRCH, errno);
}

TEST_F(flags, pidfd_zombie)
{
	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	pidfd_exited(_metadata, &self->t, self->pidfd, false);
}

TEST_F(flags, pidfd_reaped)
{
	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	usual_layout(_metadata, &self->t, CMA_ANON);
	pidfd_exited(_metadata, &self->t, self->pidfd, true);
}

static char reuse_marker[64] = "this process took over the pid of the reaped target";

/* Create a process with pid @pid (clone3 set_tid); returns its pid or -1. */
static pid_t spawn_at_pid(pid_t pid)
{
	struct clone_args args;
	pid_t tid = pid, ret;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uintptr_t)&tid;
	args.set_tid_size = 1;
	fflush(stdout);
	fflush(stderr);
	ret = syscall(__NR_clone3, &args, sizeof(args));
	if (ret == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return ret;
}

/*
 * The pid of a reaped target now belongs to another process: the pidfd still
 * names the dead target and fails, while the pid number reaches the newcomer.
 */
TEST_F(flags, pidfd_pid_reused)
{
	char got[64] = "";
	struct iovec l = { got, sizeof(got) }, r = { reuse_marker, sizeof(reuse_marker) };
	pid_t old = self->t.pid, pid;

	if (!self->pidfd_ok)
		SKIP(return, NO_PIDFD);
	kill_target(&self->t, true);
	self->t.pid = 0;
	pid = spawn_at_pid(old);
	if (pid < 0)
		SKIP(return, "cannot create a process at pid %d: %s", old, strerror(errno));
	errno = 0;
	EXPECT_EQ(-1, cma_readv(self->pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, cma_writev(self->pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(0, got[0]);
	EXPECT_EQ((ssize_t)sizeof(got), cma_readv(pid, &l, 1, &r, 1, 0));
	EXPECT_EQ(0, strcmp(got, reuse_marker));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST_F(flags, unknown_bits_with_known)
{
	const unsigned long bad[] = {
		PROCESS_VM_PIDFD | (1UL << 2), PROCESS_VM_NOWAIT | (1UL << 5),
		PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT | (1UL << 31), ~0UL,
	};
	size_t i;

	if (!self->pidfd_ok || !self->nowait_ok)
		SKIP(return, "kernel without PROCESS_VM_PIDFD or PROCESS_VM_NOWAIT");
	usual_layout(_metadata, &self->t, CMA_ANON);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		long who = bad[i] & PROCESS_VM_PIDFD ? self->pidfd : self->t.pid;

		run_flags(_metadata, &self->t, false, who, bad[i], -EINVAL);
		run_flags(_metadata, &self->t, true, who, bad[i], -EINVAL);
	}
}

TEST_F(flags, pidfd_and_nowait)
{
	if (!self->pidfd_ok || !self->nowait_ok)
		SKIP(return, "kernel without PROCESS_VM_PIDFD or PROCESS_VM_NOWAIT");
	usual_layout(_metadata, &self->t, CMA_ANON);
	run_flags(_metadata, &self->t, false, self->pidfd, PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT,
		  2 * self->page + 7);
	run_flags(_metadata, &self->t, true, self->pidfd, PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT,
		  2 * self->page + 7);
}

TEST_F(flags, nowait_resident)
{
	if (!self->nowait_ok)
		SKIP(return, NO_NOWAIT);
	usual_layout(_metadata, &self->t, CMA_ANON);
	run_flags(_metadata, &self->t, false, self->t.pid, PROCESS_VM_NOWAIT, 2 * self->page + 7);
	run_flags(_metadata, &self->t, true, self->t.pid, PROCESS_VM_NOWAIT, 2 * self->page + 7);
}

/* Anonymous faults need no I/O: never-touched memory works under NOWAIT. */
TEST_F(flags, nowait_untouched)
{
	if (!self->nowait_ok)
		SKIP(return, NO_NOWAIT);
	usual_layout(_metadata, &self->t, CMA_UNTOUCHED);
	run_flags(_metadata, &self->t, false, self->t.pid, PROCESS_VM_NOWAIT, 2 * self->page + 7);
	run_flags(_metadata, &self->t, true, self->t.pid, PROCESS_VM_NOWAIT, 2 * self->page + 7);
}

static int uffd = -1;

/*
 * arg: resident pages.  Touch the first pages of x.rreg (which holds zeros),
 * then register all of it with a userfaultfd that nobody serves, so that a
 * fault on any other page would wait forever.
 */
static long t_uffd_register(struct cma_mbox *mb)
{
	struct cma_region *r = &mb->x.rreg;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	long i;

	for (i = 0; i < mb->arg[0]; i++)
		r->addr[i * cma_page()] = 0;
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		return -1;
	if (ioctl(uffd, UFFDIO_API, &api))
		return -1;
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)r->addr;
	reg.range.len = r->len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	return ioctl(uffd, UFFDIO_REGISTER, &reg);
}

/* Stop serving faults through the userfaultfd: missing pages read as zeros again. */
static long t_uffd_close(struct cma_mbox *mb)
{
	(void)mb;
	close(uffd);
	uffd = -1;
	return 0;
}

/* Set up x for a uffd case with @resident resident pages first; -1 with errno if impossible. */
static int uffd_setup(struct cma_target *t, long resident)
{
	size_t p = cma_page();

	if (cma_xfer_setup(t, 8 * p, 8 * p, CMA_UNTOUCHED))
		return -1;
	return cma_call1(t, t_uffd_register, resident);
}

/*
 * One transfer with @flags against the userfaultfd-registered region,
 * expecting @want.  An alarm turns a hang into a failure.  The target's side can only
 * be checked once the userfaultfd is gone: the check itself would fault on
 * the missing pages.
 */
static void run_uffd(struct __test_metadata *_metadata, struct cma_target *t,
		     bool write, unsigned long flags, ssize_t want)
{
	double t0;

	alarm(10);
	t0 = cma_now();
	run_flags_nocheck(_metadata, t, write, flags, want);
	alarm(0);
	EXPECT_GT(5, (int)(cma_now() - t0));
	cma_call1(t, t_uffd_close, 0);
	cma_xfer_check(_metadata, t, write, want < 0 ? 0 : want);
}

/*
 * @resident pages of the remote region are resident, the rest missing and
 * registered with a userfaultfd nobody serves; transfer @pages pages.
 */
static void uffd_case(struct __test_metadata *_metadata, struct cma_target *t,
		      long resident, size_t pages, bool write, ssize_t want)
{
	size_t p = cma_page();

	if (uffd_setup(t, resident))
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	cma_riov(&t->mb->x, 100, pages * p);
	cma_liov(&t->mb->x, 10, pages * p);
	run_uffd(_metadata, t, write, PROCESS_VM_NOWAIT, want);
}

/* The first remote page is missing and only a userfaultfd handler could supply it: EFAULT. */
TEST_F(flags, nowait_uffd_missing_readv)
{
	if (!self->nowait_ok)
		SKIP(return, NO_NOWAIT);
	uffd_case(_metadata, &self->t, 0, 3, false, -EFAULT);
}

TEST_F(flags, nowait_uffd_missing_writev)
{
	if (!self->nowait_ok)
		SKIP(return, NO_NOWAIT);
	uffd_case(_metadata, &self->t, 0, 3, true, -EFAULT);
}

/* Resident pages before the first missing one move: a short count. */
TEST_F(flags, nowait_uffd_partial_readv)
{
	if (!self->nowait_ok)
		SKIP(return, NO_NOWAIT);
	uffd_case(_metadata, &self->t, 3, 5, false, 3 * self->page - 100);
}

TEST_F(flags, nowait_uffd_partial_writev)
{
	if (!self->nowait_ok)
		SKIP(return, NO_NOWAIT);
	uffd_case(_metadata, &self->t, 3, 5, true, 3 * self->page - 100);
}

/*
 * Looking ahead never waits for a later element.  Page 0 of the remote
 * region is resident, page 3 unmapped, the others missing and registered
 * with a userfaultfd that nobody serves.  The elements: (page 0 when
 * @first_ok), page 3, then page 2.  The transfer must stop at page 3, in
 * iovec order, without faulting in page 2: a blocking call would wait there
 * forever.  No flag is used, so this holds for mainline too.
 */
static void lookahead_case(struct __test_metadata *_metadata, struct cma_target *t,
			   bool write, bool first_ok)
{
	struct cma_xfer *x = &t->mb->x;
	size_t p = cma_page();

	if (uffd_setup(t, 1))
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	x->rreg.hole = 3 * p;
	x->rreg.hole_len = p;
	ASSERT_EQ(0, cma_call3(t, cma_t_munmap, (long)(x->rreg.addr + 3 * p), p, 0));
	if (first_ok)
		cma_riov(x, 16, 64);
	cma_riov(x, 3 * p + 16, 64);
	cma_riov(x, 2 * p + 8, 64);
	cma_liov(x, 10, 192);
	run_uffd(_metadata, t, write, 0, first_ok ? 64 : -EFAULT);
}

TEST_F(flags, lookahead_no_wait_readv)
{
	lookahead_case(_metadata, &self->t, false, false);
}

TEST_F(flags, lookahead_no_wait_writev)
{
	lookahead_case(_metadata, &self->t, true, false);
}

TEST_F(flags, lookahead_no_wait_partial_readv)
{
	lookahead_case(_metadata, &self->t, false, true);
}

TEST_F(flags, lookahead_no_wait_partial_writev)
{
	lookahead_case(_metadata, &self->t, true, true);
}

static struct cma_uffd_server t_server;	/* in the target */

/* arg: delay in us.  Serve x.rreg through a userfaultfd in the target. */
static long t_uffd_serve(struct cma_mbox *mb)
{
	return cma_uffd_serve_region(&t_server, &mb->x.rreg, mb->arg[0]);
}

static long t_uffd_served(struct cma_mbox *mb)
{
	return __atomic_load_n(&t_server.served, __ATOMIC_SEQ_CST);
}

/* Remote elements over 8 pages, in and out of order, and the local side. */
static void served_layout(struct cma_xfer *x, size_t p)
{
	cma_riov(x, 5 * p + 100, 2 * p);
	cma_riov(x, 50, p + 9);
	cma_riov(x, 2 * p + 1000, 3 * p);
	cma_liov(x, 30, 3 * p + 4000);
	cma_liov(x, 4 * p, 3 * p + 9 - 4000);
}

/*
 * Run the served layout, expecting all of it; @served reports the faults
 * served so far, which must be @pages (each page the transfer touches
 * once) before the sides are checked, which may fault pages in too.
 */
static void served_run(struct __test_metadata *_metadata, struct cma_target *t, bool write,
		       long (*served)(struct cma_target *t), long pages)
{
	size_t p = cma_page();
	ssize_t ret;

	served_layout(&t->mb->x, p);
	alarm(20);
	errno = 0;
	ret = cma_xfer_run(t, write, 0);
	alarm(0);
	ASSERT_EQ((ssize_t)(6 * p + 9), ret) TH_LOG("errno %d (%s)", errno, strerror(errno));
	EXPECT_EQ(pages, served(t)) TH_LOG("faults served during the transfer");
	cma_xfer_check(_metadata, t, write, ret);
}

static long target_served(struct cma_target *t)
{
	return cma_call(t, t_uffd_served);
}

/*
 * The remote pages are missing and a thread of the target serves their
 * faults: pinning them blocks in the handler, with the target's mmap lock
 * dropped (the locked == 0 return of pinning), and the transfer goes on
 * once each page is there.  No flag: mainline behaves the same.
 */
static void served_remote(struct __test_metadata *_metadata, struct cma_target *t,
			  bool write)
{
	ASSERT_EQ(0, cma_xfer_setup(t, 8 * cma_page(), 8 * cma_page(), CMA_ANON));
	if (cma_call1(t, t_uffd_serve, 0))
		SKIP(return, "no userfaultfd for kernel faults: %s", strerror(errno));
	served_run(_metadata, t, write, target_served, 8);
}

TEST_F(flags, uffd_served_remote_readv)
{
	served_remote(_metadata, &self->t, false);
}

TEST_F(flags, uffd_served_remote_writev)
{
	served_remote(_metadata, &self->t, true);
}

/*
 * The caller's own buffers are missing and served by a thread of the
 * caller: the copy faults on them while no lock of the target is held.
 */
static struct cma_uffd_server local_server;

static long local_served(struct cma_target *t)
{
	return __atomic_load_n(&local_server.served, __ATOMIC_SEQ_CST);
}

static void served_local(struct __test_metadata *_metadata, struct cma_target *t,
			 bool write)
{
	ASSERT_EQ(0, cma_xfer_setup(t, 8 * cma_page(), 8 * cma_page(), CMA_ANON));
	if (cma_uffd_serve_region(&local_server, &t->mb->x.lreg, 0))
		SKIP(return, "no userfaultfd for kernel faults: %s", strerror(errno));
	served_run(_metadata, t, write, local_served, 7);
}

TEST_F(flags, uffd_served_local_readv)
{
	served_local(_metadata, &self->t, false);
}

TEST_F(flags, uffd_served_local_writev)
{
	served_local(_metadata, &self->t, true);
}

/*
 * The caller is its own target, and its remote range is served by one of
 * its threads: the pinning thread waits with its own mmap lock dropped
 * while the handler takes it to fill the page.
 */
static void served_self(struct __test_metadata *_metadata, bool write)
{
	struct cma_target me;

	ASSERT_EQ(0, cma_target_self(&me));
	ASSERT_EQ(0, cma_xfer_setup(&me, 8 * cma_page(), 8 * cma_page(), CMA_ANON));
	if (cma_call1(&me, t_uffd_serve, 0))
		SKIP(return, "no userfaultfd for kernel faults: %s", strerror(errno));
	served_run(_metadata, &me, write, target_served, 8);
}

TEST_F(flags, uffd_served_self_readv)
{
	served_self(_metadata, false);
}

TEST_F(flags, uffd_served_self_writev)
{
	served_self(_metadata, true);
}

/* ---- the target's mmap lock, contended ------------------------------- */

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif

/*
 * Two processes share the target's mm (clone(CLONE_VM), not threads, so
 * that the test can kill them alone).  The holder populates a huge
 * read-only mapping with the zero page, holding the mmap lock for read
 * until it is killed (it would take minutes to finish); the writer then
 * waits in mprotect() for the lock for write.  While a writer waits, a
 * trylock for read fails and a read lock waits behind it.
 * mb->arg[6] (the holder) and mb->arg[7] (the writer): 1 started, 2 done.
 *
 * User-Mode Linux cannot build this state.  It walks the holder's pages
 * in milliseconds (2 GiB in 7 ms) and then, after the call has dropped the
 * lock, maps every page into the host process one by one (2 GiB in 2 s,
 * one host mapping per page: a few GiB reach the host's max_map_count);
 * with one CPU and no preemption, no writer runs during the walk.
 */
#define LOCK_HOLDER	6
#define LOCK_WRITER	7
#define LOCK_STACK	(64 << 10)
#define LOCK_NO_UML	"User-Mode Linux holds no mmap lock long enough for a writer to queue"

static void *hold_addr = MAP_FAILED;
static size_t hold_len;
static char *lock_stacks;	/* the holder's, then the writer's */

static int lock_holder(void *arg)
{
	struct cma_mbox *mb = arg;

	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	__atomic_store_n(&mb->arg[LOCK_HOLDER], 1, __ATOMIC_RELEASE);
	syscall(SYS_madvise, hold_addr, hold_len, MADV_POPULATE_READ);
	__atomic_store_n(&mb->arg[LOCK_HOLDER], 2, __ATOMIC_RELEASE);
	return 0;
}

static int lock_writer(void *arg)
{
	struct cma_mbox *mb = arg;

	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	__atomic_store_n(&mb->arg[LOCK_WRITER], 1, __ATOMIC_RELEASE);
	syscall(SYS_mprotect, hold_addr, cma_page(), PROT_READ);
	__atomic_store_n(&mb->arg[LOCK_WRITER], 2, __ATOMIC_RELEASE);
	return 0;
}

/* In the target: map the huge range and start the holder; returns its pid. */
static long t_lock_holder(struct cma_mbox *mb)
{
	size_t len = sizeof(long) == 8 ? 16UL << 30 : 2UL << 30;

	if (hold_addr != MAP_FAILED)
		munmap(hold_addr, hold_len);
	for (; len >= (64UL << 20); len /= 2) {
		hold_addr = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		if (hold_addr != MAP_FAILED)
			break;
	}
	if (hold_addr == MAP_FAILED)
		return -1;
	hold_len = len;
	/* Small pages: a huge zero page would be 512 times as quick. */
	madvise(hold_addr, len, MADV_NOHUGEPAGE);
	if (!lock_stacks) {
		lock_stacks = mmap(NULL, 2 * LOCK_STACK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (lock_stacks == MAP_FAILED) {
			lock_stacks = NULL;
			return -1;
		}
		/* No fault on them later: it might wait for the mmap lock. */
		memset(lock_stacks, 1, 2 * LOCK_STACK);
	}
	mb->arg[LOCK_HOLDER] = 0;
	return clone(lock_holder, lock_stacks + LOCK_STACK, CLONE_VM | SIGCHLD, mb);
}

static long t_lock_writer(struct cma_mbox *mb)
{
	mb->arg[LOCK_WRITER] = 0;
	return clone(lock_writer, lock_stacks + 2 * LOCK_STACK, CLONE_VM | SIGCHLD, mb);
}

static long lock_state(struct cma_target *t, int who)
{
	return __atomic_load_n(&t->mb->arg[who], __ATOMIC_ACQUIRE);
}

/* The writer is still waiting for the lock (state D, not done). */
static bool writer_waits(struct cma_target *t, pid_t writer)
{
	return lock_state(t, LOCK_WRITER) == 1 && cma_proc_state(writer) == 'D';
}

/* Start the holder and a writer that waits behind it.  Returns the writer's pid, or -1. */
static pid_t lock_contend(struct __test_metadata *_metadata, struct cma_target *t,
			  pid_t *holder)
{
	double end;
	pid_t writer;
	int try;

	*holder = cma_call(t, t_lock_holder);
	if (*holder <= 0) {
		TH_LOG("holder: %s", strerror(errno));
		return -1;
	}
	/* Deadlines on the clock: in the VM a usleep(1000) lasts 4 ms or more. */
	end = cma_now() + 5;
	while (lock_state(t, LOCK_HOLDER) != 1 && cma_now() < end)
		usleep(1000);
	/* The writer may get in before the holder has the lock: then again. */
	for (try = 0; try < 20 && lock_state(t, LOCK_HOLDER) == 1; try++) {
		writer = cma_call(t, t_lock_writer);
		if (writer <= 0) {
			TH_LOG("writer: %s", strerror(errno));
			return -1;
		}
		end = cma_now() + 5;
		while (lock_state(t, LOCK_WRITER) != 2 && cma_now() < end) {
			if (writer_waits(t, writer))
				return writer;
			usleep(1000);
		}
	}
	TH_LOG("no writer waited for the mmap lock (holder state %ld)", lock_state(t, LOCK_HOLDER));
	return -1;
}

/* Kill the holder; the writer then gets the lock and finishes. */
static bool lock_release(struct cma_target *t, pid_t holder)
{
	double end = cma_now() + 20;

	kill(holder, SIGKILL);
	while (lock_state(t, LOCK_WRITER) != 2 && cma_now() < end)
		usleep(1000);
	return lock_state(t, LOCK_WRITER) == 2;
}

struct timed_call {
	long ret;
	int err;
	long bad;	/* a wrong byte on the caller's side, or -1 */
	int done;
};

/* The usual transfer, from a child of the test; @r is shared. */
static pid_t call_in_child(struct cma_target *t, bool write, unsigned long flags,
			   struct timed_call *r)
{
	pid_t pid;

	memset(r, 0, sizeof(*r));
	fflush(stdout);
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		errno = 0;
		r->ret = cma_xfer_run(t, write, flags);
		r->err = errno;
		r->bad = cma_check_local(&t->mb->x, write, r->ret > 0 ? r->ret : 0,
					 r->ret > 0 ? r->ret : 0);
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	return pid;
}

static bool call_done(struct timed_call *r, double s)
{
	double end = cma_now() + s;

	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) && cma_now() < end)
		usleep(1000);
	return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

/*
 * One call from a child while a writer waits for the target's mmap lock.
 * Once the call sleeps (D state) or has returned, it gets @wait_s seconds
 * more; then whether it still waits is sampled, and the holder is killed
 * so that it can finish.
 * Returns false when the round cannot tell anything: the holder finished
 * by itself before the call's state was sampled (a 32-bit target has only
 * a few hundred MiB to populate, and a quick host gets through them).
 */
static bool contended_call(struct __test_metadata *_metadata, struct cma_target *t, bool write,
			   unsigned long flags, double wait_s, struct timed_call *r, bool *waited)
{
	pid_t holder, writer, pid;
	bool held;
	double end;

	writer = lock_contend(_metadata, t, &holder);
	if (writer <= 0)
		return false;
	pid = call_in_child(t, write, flags, r);
	if (pid < 0) {
		lock_release(t, holder);
		return false;
	}
	end = cma_now() + 5;
	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) && cma_proc_state(pid) != 'D' &&
	       cma_now() < end)
		usleep(1000);
	call_done(r, wait_s);
	*waited = cma_proc_state(pid) == 'D' && !__atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
	held = writer_waits(t, writer) && lock_state(t, LOCK_HOLDER) == 1;
	lock_release(t, holder);
	call_done(r, 20);
	waitpid(pid, NULL, 0);
	if (!held)
		TH_LOG("the holder finished first (writer %ld, holder %ld): once more",
		       lock_state(t, LOCK_WRITER), lock_state(t, LOCK_HOLDER));
	return held;
}

/*
 * contended_call() until a round holds the lock throughout (at most five
 * rounds; else the case fails), the transfer's state reset between rounds.
 */
static void contended_rounds(struct __test_metadata *_metadata, struct cma_target *t,
			     bool write, unsigned long flags, double wait_s,
			     struct timed_call *r, bool *waited)
{
	int round;

	for (round = 0; !contended_call(_metadata, t, write, flags, wait_s, r, waited); round++) {
		ASSERT_GT(5, round) TH_LOG("no round with the lock held throughout");
		cma_xfer_reset_keep(t, write, r->ret > 0 ? r->ret : 0);
	}
}

/*
 * PROCESS_VM_NOWAIT does not wait for the target's mmap lock: with a writer
 * waiting for it, nothing can be pinned and the call fails with EFAULT at
 * once, touching neither side; once the lock is free, the same call moves
 * all.  A call still waiting after a second fails the case (the holder is
 * then killed, so that it does not hang; a 32-bit one populates 2 GiB in
 * about 3 s in the VM, so the second must be well short of that).
 */
TEST_F_TIMEOUT(flags, nowait_mmap_lock_contended, 180)
{
	size_t want = 2 * self->page + 7;
	struct timed_call *r;
	bool waited;
	int w;

	if (!self->nowait_ok)
		SKIP(return, NO_NOWAIT);
	if (cma_on_uml())
		SKIP(return, LOCK_NO_UML);
	usual_layout(_metadata, &self->t, CMA_ANON);
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(r != MAP_FAILED);
	for (w = 0; w < 2; w++) {
		contended_rounds(_metadata, &self->t, w, PROCESS_VM_NOWAIT, 1, r, &waited);
		ASSERT_FALSE(waited) TH_LOG("%s with PROCESS_VM_NOWAIT waited for the mmap lock",
					    w ? "writev" : "readv");
		EXPECT_EQ(-1, r->ret);
		EXPECT_EQ(EFAULT, r->err) TH_LOG("%s", strerror(r->err));
		EXPECT_EQ(-1, r->bad) TH_LOG("local byte %ld changed", r->bad);
		EXPECT_EQ(0, cma_call3(&self->t, cma_t_check, w, 0, 0));
	}
	run_flags(_metadata, &self->t, false, self->t.pid, PROCESS_VM_NOWAIT, want);
	run_flags(_metadata, &self->t, true, self->t.pid, PROCESS_VM_NOWAIT, want);
	munmap(r, sizeof(*r));
}

/*
 * Without the flag the same call waits for the lock (its caller sleeps in
 * D state behind the writer) and moves everything once the lock is free.
 */
TEST_F_TIMEOUT(flags, mmap_lock_contended_waits, 180)
{
	size_t want = 2 * self->page + 7;
	struct timed_call *r;
	bool waited;
	int w;

	if (cma_on_uml())
		SKIP(return, LOCK_NO_UML);
	usual_layout(_metadata, &self->t, CMA_ANON);
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(r != MAP_FAILED);
	for (w = 0; w < 2; w++) {
		contended_rounds(_metadata, &self->t, w, 0, 0.05, r, &waited);
		ASSERT_TRUE(waited) TH_LOG("%s did not wait for the mmap lock: returned %ld (%s)",
					   w ? "writev" : "readv", r->ret, strerror(r->err));
		ASSERT_EQ((long)want, r->ret) TH_LOG("%s", strerror(r->err));
		EXPECT_EQ(-1, r->bad) TH_LOG("local byte %ld wrong", r->bad);
		EXPECT_EQ(0, cma_call3(&self->t, cma_t_check, w, want, want));
		cma_xfer_reset_keep(&self->t, w, want);
	}
	munmap(r, sizeof(*r));
}

TEST_HARNESS_MAIN
