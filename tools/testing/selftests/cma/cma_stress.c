// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency: several callers on one target, and a target that changes its
 * mappings, execs or dies while transfers run.  Every result must be a full
 * count, an exact partial count or a documented error, and data that is
 * reported as moved must be right.  Each case is bounded by time.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

#define RUN_SECONDS	1.5
#define NTHREADS	4

struct worker {
	pthread_t th;
	struct cma_target *t;
	int id;
	int nthreads;
	double until;
	bool write;
	size_t ops;		/* transfers done */
	size_t shorts;		/* short counts seen */
	size_t errors;		/* documented errors seen */
	int failed;		/* 0, or a line number in this file */
	char why[160];
};

/* Record the first failure of a worker; returns NULL for the worker to return. */
static void *wfail(struct worker *w, int line, const char *fmt, ssize_t a, ssize_t b)
{
	if (!w->failed) {
		w->failed = line;
		snprintf(w->why, sizeof(w->why), fmt, a, b);
	}
	return NULL;
}

static void start_workers(struct __test_metadata *_metadata, struct worker *w, int n,
			  struct cma_target *t, void *(*fn)(void *))
{
	double until = cma_now() + RUN_SECONDS;
	int i;

	for (i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].t = t;
		w[i].id = i;
		w[i].nthreads = n;
		w[i].until = until;
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, fn, &w[i]));
	}
}

static void join_workers(struct __test_metadata *_metadata, struct worker *w, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, w[i].failed) TH_LOG("worker %d, line %d: %s", i, w[i].failed,
						 w[i].why);
		TH_LOG("worker %d: %zu transfers, %zu short, %zu errors", i, w[i].ops,
		       w[i].shorts, w[i].errors);
	}
}

FIXTURE(stress) {
	struct cma_target t;
	struct cma_xfer *x;
	size_t page;
};

FIXTURE_SETUP(stress)
{
	self->page = cma_page();
	ASSERT_EQ(0, cma_target_start(&self->t));
	self->x = &self->t.mb->x;
}

FIXTURE_TEARDOWN(stress)
{
	cma_target_stop(&self->t);
}

#define SLICE_PAGES	8

/*
 * Each worker owns a slice of the remote region; slices do not line up with
 * pages, so neighbours share pages.  Write a fresh pattern, read it back, compare.
 */
static void *slice_worker(void *arg)
{
	struct worker *w = arg;
	struct cma_xfer *x = &w->t->mb->x;
	size_t stride = SLICE_PAGES * cma_page() - 100, len = stride - 7;
	char *src = malloc(len), *dst = malloc(len);
	struct iovec r = { x->rreg.addr + 13 + w->id * stride, len };
	struct iovec l;
	unsigned int seed = 0x100 * (w->id + 1);
	ssize_t ret;

	if (!src || !dst)
		return wfail(w, __LINE__, "out of memory", 0, 0);
	while (cma_now() < w->until) {
		seed++;
		cma_fill(src, len, seed);
		l.iov_base = src;
		l.iov_len = len;
		ret = cma_writev(w->t->pid, &l, 1, &r, 1, 0);
		if (ret != (ssize_t)len)
			return wfail(w, __LINE__, "writev returned %zd, errno %zd", ret, errno);
		memset(dst, 0, len);
		l.iov_base = dst;
		ret = cma_readv(w->t->pid, &l, 1, &r, 1, 0);
		if (ret != (ssize_t)len)
			return wfail(w, __LINE__, "readv returned %zd, errno %zd", ret, errno);
		if (memcmp(src, dst, len))
			return wfail(w, __LINE__, "read back differs (seed %zd)", seed, 0);
		w->ops += 2;
	}
	free(src);
	free(dst);
	return NULL;
}

TEST_F(stress, threads_own_slices)
{
	struct worker w[NTHREADS];

	ASSERT_EQ(0, cma_xfer_setup(&self->t, self->page,
				    NTHREADS * SLICE_PAGES * self->page + self->page, CMA_ANON));
	start_workers(_metadata, w, NTHREADS, &self->t, slice_worker);
	join_workers(_metadata, w, NTHREADS);
}

#define NSEEDS		4
static const unsigned int seeds[NSEEDS] = { 0x31, 0x32, 0x33, 0x34 };

/*
 * Two readers and a writer on the same remote range.  The writer stores one
 * of four patterns, each a function of the remote address; a reader may see
 * a mix, but every byte must belong to one of them.
 */
static void *shared_range_worker(void *arg)
{
	struct worker *w = arg;
	struct cma_xfer *x = &w->t->mb->x;
	size_t len = x->rreg.len, i, k;
	uintptr_t base = (uintptr_t)x->rreg.addr;
	struct iovec r = { (void *)base, len }, l;
	unsigned char *buf = malloc(len);
	ssize_t ret;

	if (!buf)
		return wfail(w, __LINE__, "out of memory", 0, 0);
	l.iov_base = buf;
	l.iov_len = len;
	while (cma_now() < w->until) {
		if (w->write) {
			unsigned int s = seeds[w->ops % NSEEDS];

			for (i = 0; i < len; i++)
				buf[i] = cma_pat(base + i, s);
			ret = cma_writev(w->t->pid, &l, 1, &r, 1, 0);
		} else {
			ret = cma_readv(w->t->pid, &l, 1, &r, 1, 0);
		}
		if (ret != (ssize_t)len)
			return wfail(w, __LINE__, "returned %zd, errno %zd", ret, errno);
		for (i = 0; !w->write && i < len; i++) {
			for (k = 0; k < NSEEDS; k++)
				if (buf[i] == cma_pat(base + i, seeds[k]))
					break;
			if (k == NSEEDS)
				return wfail(w, __LINE__,
					     "byte %zd is 0x%zx, of no pattern", i, buf[i]);
		}
		w->ops++;
	}
	free(buf);
	return NULL;
}

/* arg: seed.  Fill x.rreg with that pattern. */
static long t_set_seed(struct cma_mbox *mb)
{
	mb->x.rreg.seed = mb->arg[0];
	cma_region_refill(&mb->x.rreg);
	return 0;
}

TEST_F(stress, two_readers_one_writer)
{
	struct worker w[3];
	unsigned int last;
	int i;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, self->page, 16 * self->page, CMA_ANON));
	ASSERT_EQ(0, cma_call1(&self->t, t_set_seed, seeds[0]));
	for (i = 0; i < 3; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].t = &self->t;
		w[i].write = i == 2;
		w[i].until = cma_now() + RUN_SECONDS;
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, shared_range_worker, &w[i]));
	}
	join_workers(_metadata, w, 3);

	/* Afterwards the range holds the writer's last pattern. */
	last = seeds[(w[2].ops + NSEEDS - 1) % NSEEDS];
	self->x->rreg.seed = last;
	EXPECT_EQ(-1, cma_call3(&self->t, cma_t_check, 0, 0, 0) - 1)
		TH_LOG("remote range does not hold the last pattern written");
}

/*
 * A transfer racing with changes to the target's mappings: the result is
 * the full count, or a count that ends exactly at a page of the remote
 * range, or EFAULT.  The memory is a memfd holding the pattern, so any bytes
 * that moved must be the pattern whichever mapping they came from.
 */
static void *remap_worker(void *arg)
{
	struct worker *w = arg;
	struct cma_xfer *x = &w->t->mb->x;
	size_t page = cma_page(), len = x->rreg.len - 200, i;
	uintptr_t base = (uintptr_t)x->rreg.addr + 100;
	struct iovec r = { (void *)base, len }, l;
	unsigned char *buf = malloc(len);
	ssize_t ret;

	if (!buf)
		return wfail(w, __LINE__, "out of memory", 0, 0);
	l.iov_base = buf;
	l.iov_len = len;
	w->write = w->id & 1;
	while (cma_now() < w->until) {
		for (i = 0; i < len; i++)
			buf[i] = w->write ? cma_pat(base + i, x->rreg.seed) : 0;
		ret = cma_rw(w->write, w->t->pid, &l, 1, &r, 1, 0);
		w->ops++;
		if (ret == -1) {
			if (errno != EFAULT)
				return wfail(w, __LINE__, "returned -1 with errno %zd", errno, 0);
			w->errors++;
			continue;
		}
		if (ret <= 0 || ret > (ssize_t)len)
			return wfail(w, __LINE__, "returned %zd of %zd", ret, len);
		if (ret < (ssize_t)len) {
			if ((base + ret) % page)
				return wfail(w, __LINE__,
					     "short count %zd not at a page (of %zd)", ret, len);
			w->shorts++;
		}
		for (i = 0; !w->write && i < (size_t)ret; i++)
			if (buf[i] != cma_pat(base + i, x->rreg.seed))
				return wfail(w, __LINE__, "byte %zd of %zd wrong", i, ret);
	}
	free(buf);
	return NULL;
}

static long t_remap_thread_running;

/* In the target: unmap, remap, protect and zap pages of x.rreg in a loop. */
static void *remapper(void *arg)
{
	struct cma_region *r = arg;
	size_t page = cma_page(), npages = r->len / page;
	unsigned int n = 0;

	__atomic_store_n(&t_remap_thread_running, 1, __ATOMIC_RELEASE);
	for (;; n++) {
		size_t k = (n * 7) % npages;
		char *p = r->addr + k * page;

		switch (n % 4) {
		case 0:
			munmap(p, page);
			usleep(50);
			mmap(p, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd,
			     k * page);
			break;
		case 1:
			mprotect(p, page, PROT_NONE);
			usleep(50);
			mprotect(p, page, PROT_READ | PROT_WRITE);
			break;
		case 2:
			mmap(p, 2 * page > r->len - k * page ? page : 2 * page,
			     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd, k * page);
			break;
		default:
			madvise(p, page, MADV_DONTNEED);
			break;
		}
		usleep(20);
	}
	return NULL;
}

static long t_start_remapper(struct cma_mbox *mb)
{
	pthread_t th;

	errno = pthread_create(&th, NULL, remapper, &mb->x.rreg);
	if (errno)
		return -1;
	while (!__atomic_load_n(&t_remap_thread_running, __ATOMIC_ACQUIRE))
		usleep(100);
	return 0;
}

TEST_F(stress, target_remaps)
{
	struct worker w[NTHREADS];

	ASSERT_EQ(0, cma_xfer_setup(&self->t, self->page, 32 * self->page, CMA_MEMFD));
	ASSERT_EQ(0, cma_call(&self->t, t_start_remapper));
	start_workers(_metadata, w, NTHREADS, &self->t, remap_worker);
	join_workers(_metadata, w, NTHREADS);
}

static bool dying_check_data;

/*
 * Transfers while the target dies (or execs): full or short counts, EFAULT
 * or ESRCH, until ESRCH shows the target is gone.  Writers store the bytes
 * that are already there, so what readers get can be checked, unless the
 * target execs and its memory becomes something else.
 */
static void *dying_worker(void *arg)
{
	struct worker *w = arg;
	struct cma_xfer *x = &w->t->mb->x;
	size_t len = x->rreg.len - 200, i;
	uintptr_t base = (uintptr_t)x->rreg.addr + 100;
	struct iovec r = { (void *)base, len }, l;
	unsigned char *buf = malloc(len);
	ssize_t ret = 0;

	if (!buf)
		return wfail(w, __LINE__, "out of memory", 0, 0);
	l.iov_base = buf;
	l.iov_len = len;
	w->write = w->id & 1;
	while (cma_now() < w->until + 5) {
		for (i = 0; i < len; i++)
			buf[i] = w->write ? cma_pat(base + i, x->rreg.seed) : 0;
		ret = cma_rw(w->write, w->t->pid, &l, 1, &r, 1, 0);
		w->ops++;
		if (ret == -1 && errno == ESRCH)
			break;
		if (ret == -1) {
			if (errno != EFAULT)
				return wfail(w, __LINE__, "returned -1 with errno %zd", errno, 0);
			w->errors++;
			continue;
		}
		if (ret <= 0 || ret > (ssize_t)len)
			return wfail(w, __LINE__, "returned %zd of %zd", ret, len);
		if (ret < (ssize_t)len)
			w->shorts++;
		for (i = 0; dying_check_data && !w->write && i < (size_t)ret; i++)
			if (buf[i] != cma_pat(base + i, x->rreg.seed))
				return wfail(w, __LINE__, "byte %zd of %zd wrong", i, ret);
	}
	if (!(ret == -1 && errno == ESRCH))
		return wfail(w, __LINE__, "no ESRCH after the target died", 0, 0);
	free(buf);
	return NULL;
}

/* Runs in the target and never returns: exec a shell that exits soon. */
static long t_exec_shell(struct cma_mbox *mb)
{
	execl("/bin/sh", "sh", "-c", "sleep 0.5 || sleep 1", (char *)NULL);
	_exit(0);
}

static void run_dying(struct __test_metadata *_metadata, struct cma_target *t, bool exec)
{
	uintptr_t fn = (uintptr_t)t_exec_shell;
	struct worker w[NTHREADS];
	int i, idle = 0;

	ASSERT_EQ(0, cma_xfer_setup(t, cma_page(), 16 * cma_page(), CMA_ANON));
	dying_check_data = !exec;
	start_workers(_metadata, w, NTHREADS, t, dying_worker);
	usleep(300 * 1000);
	if (exec) {
		/* No answer comes back: the target execs, then exits. */
		ASSERT_EQ(sizeof(fn), write(t->cmd, &fn, sizeof(fn)));
	} else {
		kill(t->pid, SIGKILL);
	}
	waitpid(t->pid, NULL, 0);
	t->pid = 0;
	join_workers(_metadata, w, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		idle += !w[i].ops;
	EXPECT_EQ(0, idle) TH_LOG("%d of %d workers did no transfer", idle, NTHREADS);
}

TEST_F(stress, target_killed)
{
	run_dying(_metadata, &self->t, false);
}

TEST_F(stress, target_execs)
{
	if (access("/bin/sh", X_OK))
		SKIP(return, "no /bin/sh to exec");
	run_dying(_metadata, &self->t, true);
}

/* What a reader killed in the middle of a call did, shared with the test. */
struct reader_log {
	double fastest;		/* its fastest call that returned */
	double started;		/* when its last call began */
	long begun;		/* calls begun */
	long calls;		/* calls that returned */
	long bad;		/* calls that returned another count, or wrong bytes */
	long ret;		/* the first such result, and its errno */
	int err;
};

#define KILL_SPAN	64		/* pages of each element: the kernel's window */
#define KILL_SEGS	128		/* elements of a call at first */
#define KILL_SEGS_MAX	1023		/* at most: 256 MiB with 4 KiB pages */
#define KILL_TRIALS	5	/* fresh readers killed, until one is cut short */
#define KILL_REF_CALLS	2	/* calls timed before the kill */
#define KILL_CHECK	(2 << 20)	/* a copy checks for a fatal signal this often */
#define KILL_MARGIN	0.02	/* s: for the scheduler, on top of the rest */
#define KILL_TELL	4	/* a call lasts this many times what a death may take */
#define KILL_IDLE	3	/* idle processes killed to time a death */

/* Bytes of each element: KILL_SPAN pages. */
static size_t kill_seg;

/*
 * Read @segs x kill_seg per call (the same remote pages over and over)
 * until killed; check every result and the bytes.  The last kill_seg of
 * each call go to @tail, which the test shares and which is zeroed before
 * each call: after the kill it tells whether the call ran to its end.
 */
static long huge_reader(struct cma_target *t, int segs, struct reader_log *log, char *tail,
			int ready)
{
	struct cma_xfer *x = &t->mb->x;
	static struct iovec l[KILL_SEGS_MAX], r[KILL_SEGS_MAX];
	char *buf = malloc(kill_seg);
	double took;
	ssize_t ret;
	int i;

	if (!buf)
		return -1;
	for (i = 0; i < segs; i++) {
		l[i].iov_base = i < segs - 1 ? buf : tail;
		l[i].iov_len = kill_seg;
		r[i].iov_base = x->rreg.addr;
		r[i].iov_len = kill_seg;
	}
	if (write(ready, "", 1) != 1)
		return -1;
	for (;;) {
		memset(tail, 0, kill_seg);
		log->started = cma_now();
		__atomic_add_fetch(&log->begun, 1, __ATOMIC_SEQ_CST);
		ret = cma_readv(t->pid, l, segs, r, segs, 0);
		took = cma_now() - log->started;
		if (!log->calls || took < log->fastest)
			log->fastest = took;
		if ((ret != (ssize_t)(segs * kill_seg) ||
		     cma_cmp_pat(buf, kill_seg, (uintptr_t)x->rreg.addr, x->rreg.seed) >= 0 ||
		     cma_cmp_pat(tail, kill_seg, (uintptr_t)x->rreg.addr, x->rreg.seed) >= 0) &&
		    !log->bad++) {
			log->ret = ret;
			log->err = errno;
		}
		__atomic_add_fetch(&log->calls, 1, __ATOMIC_SEQ_CST);
	}
	return 0;
}

/*
 * Fork a child that dies with this process.  The child gets 0, and in
 * *@ready the write end of a pipe, to write one byte to once it is set up;
 * the parent gets the child's pid when that byte has come.
 */
static pid_t fork_ready(struct __test_metadata *_metadata, int *ready)
{
	int fds[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(fds));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		*ready = fds[1];
		return 0;
	}
	close(fds[1]);
	ASSERT_EQ(1, read(fds[0], &c, 1));
	close(fds[0]);
	return pid;
}

/*
 * How long a process takes to die here when it is not in a call: the
 * median of KILL_IDLE forks of this one, each killed while it waits in
 * pause().  Exit costs what the kernel, its debug options and the host's
 * load make it cost; a caller killed in a call must die about as fast.
 */
static double idle_death(struct __test_metadata *_metadata)
{
	double took[KILL_IDLE], t0, tmp;
	int i, j, ready;
	pid_t pid;

	for (i = 0; i < KILL_IDLE; i++) {
		pid = fork_ready(_metadata, &ready);
		if (!pid) {
			if (write(ready, "", 1) == 1)
				pause();
			_exit(1);
		}
		t0 = cma_now();
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, NULL, 0));
		took[i] = cma_now() - t0;
		for (j = i; j > 0 && took[j - 1] > took[j]; j--) {
			tmp = took[j];
			took[j] = took[j - 1];
			took[j - 1] = tmp;
		}
	}
	return took[KILL_IDLE / 2];
}

enum kill_result {
	KILL_CUT,	/* the kill cut the call short: the case passes */
	KILL_MISSED,	/* this trial did not show it */
	KILL_GROW,	/* calls too short to tell: the next trial reads more */
	KILL_TOO_SHORT,	/* the longest call is too short to tell: the case fails */
};

/*
 * Trial @n: a fresh reader makes KILL_REF_CALLS calls of *@segs elements,
 * the fastest of which sets the scale.  A caller killed in a call may
 * take @allowed to die: four times what a process not in a call took
 * (@idle), the time to copy four times KILL_CHECK (the most a copy may go
 * on before it looks for the signal; the rest for its unpinning, and for
 * a busy host) and KILL_MARGIN.  A call shorter than KILL_TELL times
 * that cannot tell a kill that cut it short from one that waited for its
 * end (a kill that counts leaves three quarters of the call to run, which
 * must be well beyond @allowed): the trial then kills the reader, grows
 * *@segs (KILL_GROW), or gives up at KILL_SEGS_MAX (KILL_TOO_SHORT).
 * Otherwise the reader is killed a tenth of a call into the next one.
 * The trial counts only if the kill came early in that call (between a
 * twentieth and a quarter of the fastest call in: a test delayed by the
 * host's load aims late).  Then the call must not have reached its end,
 * and the caller must have died within @allowed.  Every trial is logged.
 */
static enum kill_result kill_trial(struct __test_metadata *_metadata, struct cma_target *t,
				   int n, int *segs, double idle)
{
	double t0, dt, into, fastest, wait, allowed;
	enum kill_result res = KILL_MISSED;
	struct reader_log *log;
	int status, ready;
	const char *why;
	bool reached;
	char *tail;
	pid_t pid;
	long need;

	log = mmap(NULL, sizeof(*log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(log != MAP_FAILED);
	memset(log, 0, sizeof(*log));
	tail = mmap(NULL, kill_seg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(tail != MAP_FAILED);
	pid = fork_ready(_metadata, &ready);
	if (!pid) {
		huge_reader(t, *segs, log, tail, ready);
		_exit(1);
	}
	t0 = cma_now();
	while (__atomic_load_n(&log->calls, __ATOMIC_SEQ_CST) < KILL_REF_CALLS &&
	       cma_now() < t0 + 100)
		usleep(1000);
	fastest = log->fastest;
	allowed = KILL_MARGIN + 4 * idle + 4 * fastest * KILL_CHECK / ((double)*segs * kill_seg);
	if (log->calls >= KILL_REF_CALLS && fastest < KILL_TELL * allowed) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		/* Aim at three times the least, for the noise; at least double. */
		need = (long)(3 * KILL_TELL * allowed / fastest * *segs) + 1;
		if (need < 2 * *segs)
			need = 2 * *segs;
		TH_LOG("trial %d: calls of %zu KiB take %.3f s, under %d x the %.3f s a killed",
		       n, *segs * (kill_seg >> 10), fastest, KILL_TELL, allowed);
		TH_LOG("trial %d: caller may take to die (%.3f s for a process not in a call)%s",
		       n, idle, *segs < KILL_SEGS_MAX ? ": reading more" : "");
		if (*segs >= KILL_SEGS_MAX)
			res = KILL_TOO_SHORT;
		else
			res = KILL_GROW;
		*segs = need < KILL_SEGS_MAX ? need : KILL_SEGS_MAX;
		goto out;
	}
	wait = fastest / 10 > 0.01 ? fastest / 10 : 0.01;
	usleep(wait * 1e6);
	t0 = cma_now();
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	dt = cma_now() - t0;

	/* The reader is dead: what it left in the log and in @tail is final. */
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	EXPECT_LE(KILL_REF_CALLS, log->calls)
		TH_LOG("%d calls did not return within 100 s", KILL_REF_CALLS);
	EXPECT_EQ(0, log->bad) TH_LOG("a call returned %ld (errno %d) or wrong bytes",
				      log->ret, log->err);
	into = t0 - log->started;
	reached = cma_cmp_pat(tail, kill_seg, 0, 0) >= 0;
	if (log->begun != log->calls + 1 || into < fastest / 20 || into > fastest / 4) {
		why = "does not count: the kill did not come early in a call";
	} else if (reached) {
		why = "the call ran on to its end after the kill";
	} else if (dt >= allowed) {
		why = "the caller took too long to die";
	} else {
		res = KILL_CUT;
		why = "the kill cut the call short";
	}
	TH_LOG("trial %d: %ld calls of %zu KiB, the fastest %.3f s; killed %.3f s into call %ld%s",
	       n, log->calls, *segs * (kill_seg >> 10), fastest, into, log->begun,
	       reached ? ", which reached its end" : "");
	TH_LOG("trial %d: the caller died %.3f s after the kill (allowed %.3f s; idle %.3f s): %s",
	       n, dt, allowed, idle, why);
out:
	munmap(tail, kill_seg);
	munmap(log, sizeof(*log));
	return res;
}

/*
 * SIGKILL ends a caller in the middle of a transfer long before the call
 * would have ended, even where every copy comes from one window: elements
 * of the window's span (KILL_SPAN pages), all the same remote pages, so
 * that the call pins them once and copies on with no GUP call to notice
 * the signal, which the copy checks for every 2 MiB.  The case first makes
 * sure that it can tell: a call must last KILL_TELL times as long as a
 * killed caller may take to die, else the transfer grows, up to
 * KILL_SEGS_MAX elements (256 MiB with 4 KiB pages); where even that is
 * too short (a native host copies it in a few tens of milliseconds) the
 * case cannot tell, and skips.  A kernel that ignores the signal there
 * fails every trial (the killed call reaches its end, and the caller dies
 * only when it returns); a loaded host can delay the kill or the death in
 * one trial, so up to KILL_TRIALS readers are killed until one shows the
 * call cut short.
 */
TEST_F_TIMEOUT(stress, sigkill_during_256m_transfer, 300)
{
	enum kill_result res = KILL_MISSED;
	int n = 1, segs = KILL_SEGS;
	double idle;

	kill_seg = KILL_SPAN * self->page;
	ASSERT_EQ(0, cma_xfer_setup(&self->t, self->page, kill_seg, CMA_ANON));
	idle = idle_death(_metadata);
	ASSERT_LT(0, idle);
	while (n <= KILL_TRIALS) {
		res = kill_trial(_metadata, &self->t, n, &segs, idle);
		if (res == KILL_CUT || res == KILL_TOO_SHORT)
			break;
		if (res == KILL_MISSED)
			n++;
	}
	if (res == KILL_TOO_SHORT)
		SKIP(return, "calls of %zu MiB, the most, are too short here to tell a kill",
		     KILL_SEGS_MAX * kill_seg >> 20);
	EXPECT_EQ(KILL_CUT, res)
		TH_LOG("in none of %d trials did the kill cut the call short", KILL_TRIALS);
}

static struct cma_uffd_server slow_server;	/* in the target */

/* arg: delay in us.  Serve x.rreg through a userfaultfd, each page late. */
static long t_serve_slowly(struct cma_mbox *mb)
{
	return cma_uffd_serve_region(&slow_server, &mb->x.rreg, mb->arg[0]);
}

static long t_served(struct cma_mbox *mb)
{
	return __atomic_load_n(&slow_server.served, __ATOMIC_SEQ_CST);
}

#define SLOW_PAGES	256
#define SLOW_US		20000

/*
 * SIGKILL ends a caller that waits for a remote side served slowly: 256
 * missing pages, each supplied by the target's userfaultfd handler 20 ms
 * after its fault, would take over 5 s.  The caller reads them into memory
 * it shares with the test, and is killed once a few pages came.  It must
 * die at once, the handler must not have served most pages, and what it
 * read must be whole remote pages from the start, no more than were
 * served, the rest of its buffer as it was.
 */
TEST_F(stress, sigkill_during_served_transfer)
{
	size_t p = self->page, len = SLOW_PAGES * p, k;
	struct cma_xfer *x = self->x;
	struct iovec l, r;
	uintptr_t raddr;
	double t0, dt;
	int status, ready;
	long served;
	char *buf;
	pid_t pid;

	ASSERT_EQ(0, cma_xfer_setup(&self->t, p, len, CMA_ANON));
	raddr = (uintptr_t)x->rreg.addr;
	if (cma_call1(&self->t, t_serve_slowly, SLOW_US))
		SKIP(return, "no userfaultfd for kernel faults: %s", strerror(errno));
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(buf != MAP_FAILED);
	cma_fill(buf, len, 0x11);
	l.iov_base = buf;
	l.iov_len = len;
	r.iov_base = x->rreg.addr;
	r.iov_len = len;
	pid = fork_ready(_metadata, &ready);
	if (!pid) {
		if (write(ready, "", 1) == 1)
			cma_readv(self->t.pid, &l, 1, &r, 1, 0);
		_exit(1);
	}
	t0 = cma_now();
	while (cma_call(&self->t, t_served) < 4 && cma_now() < t0 + 30)
		usleep(1000);
	t0 = cma_now();
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	dt = cma_now() - t0;
	served = cma_call(&self->t, t_served);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	EXPECT_GT(1000, (int)(dt * 1000)) TH_LOG("the caller took %.3f s to die", dt);
	EXPECT_GT(SLOW_PAGES / 2, served) TH_LOG("the transfer was not cut short");
	/* Whole pages of the remote range, then pages as they were. */
	for (k = 0; k < SLOW_PAGES; k++)
		if (cma_cmp_pat(buf + k * p, p, raddr + k * p, x->rreg.seed) >= 0)
			break;
	EXPECT_GE(served, (long)k) TH_LOG("%zu pages read, %ld served", k, served);
	EXPECT_EQ(-1, cma_cmp_pat(buf + k * p, len - k * p, (uintptr_t)buf + k * p, 0x11))
		TH_LOG("the caller's buffer changed past the %zu pages read", k);
	TH_LOG("%ld pages served, %zu read, died %.3f s after the kill", served, k, dt);
	munmap(buf, len);
}

TEST_HARNESS_MAIN
