// SPDX-License-Identifier: GPL-2.0
/*
 * The measuring engine: one cell (transport, pattern, size, process count)
 * is measured by forking its worker processes, which attach the transport,
 * then run one warm-up run and opts->runs timed runs.  Every iteration is
 *
 *	stamp the send buffer with (iteration, sender) -> barrier ->
 *	timed exchange -> verify every received byte
 *
 * so stamping, verifying and the barrier are never timed.  Each worker
 * times its own part of the exchange; as in hpcc, the slowest worker's
 * time is the iteration's (in ping-pong: the initiator's round trip).
 * Rank 0 takes the median over a run's iterations as the run's figure;
 * the caller takes the median, min and max over runs.
 *
 * Flow control between workers is a per-process doorbell: whoever changes
 * state a peer waits for bumps the peer's bell, and wakes it with a futex
 * only if the peer said it was going to sleep.  In spin mode nobody sleeps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmabench.h"
#include "procinfo.h"

#define WARMUP_ITERS	4

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("cmabench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* Spin-mode waiting: pause, and let an oversubscribed CPU run others. */
static void spin_once(unsigned *n)
{
	if (++*n % 4096 == 0)
		sched_yield();
	else
		cpu_relax();
}

void ring_bell(struct proc *p, unsigned rank)
{
	struct proc_shm *q = &p->peers[rank];

	atomic_fetch_add(&q->bell, 1);
	if (!p->spin && atomic_load(&q->sleeping))
		futex(&q->bell, FUTEX_WAKE, 1);
}

void wait_bell(struct proc *p, uint32_t snap)
{
	struct proc_shm *me = p->me;
	unsigned n = 0;

	if (p->spin) {
		while (atomic_load_explicit(&me->bell, memory_order_acquire) == snap)
			spin_once(&n);
		return;
	}
	atomic_store(&me->sleeping, 1);
	if (atomic_load(&me->bell) == snap)
		futex(&me->bell, FUTEX_WAIT, snap);
	atomic_store(&me->sleeping, 0);
}

/* ---- buffers -------------------------------------------------------- */

struct shared_alloc {
	void *p;
	size_t len;
};
static struct shared_alloc shared_allocs[3 * MAX_PROCS + 4];
static unsigned nshared_allocs;

/*
 * A buffer aligned to 2 MiB and a multiple of it, so that with THP even a
 * 4 KiB message sits in a huge page.  4 KiB pages are forced with
 * MADV_NOHUGEPAGE.  Shared buffers are created before fork and unmapped
 * by free_shared().
 */
void *alloc_buf(size_t len, enum pages_id pages, int shared)
{
	size_t mlen = (len + HUGE_SZ - 1) / HUGE_SZ * HUGE_SZ + HUGE_SZ;
	int flags = MAP_ANONYMOUS | (shared ? MAP_SHARED : MAP_PRIVATE);
	char *raw, *p;

	raw = mmap(NULL, mlen, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap %zu bytes: %s", mlen, strerror(errno));
	p = (char *)(((uintptr_t)raw + HUGE_SZ - 1) & ~(HUGE_SZ - 1));
	/* Best effort: a kernel without THP says EINVAL, reported elsewhere. */
	madvise(p, mlen - HUGE_SZ, pages == PG_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	if (shared) {
		if (nshared_allocs == sizeof(shared_allocs) / sizeof(shared_allocs[0]))
			die("too many shared buffers");
		shared_allocs[nshared_allocs++] = (struct shared_alloc){ raw, mlen };
	}
	return p;
}

static void free_shared(void)
{
	while (nshared_allocs) {
		nshared_allocs--;
		munmap(shared_allocs[nshared_allocs].p, shared_allocs[nshared_allocs].len);
	}
}

int thp_available(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strstr(buf, "[never]") && buf[0];
}

/* ---- layouts, stamping, verification ---------------------------------- */

size_t layout_iov(const struct layout *l, char *base, size_t off,
		  struct iovec *iov, unsigned max, unsigned *n)
{
	size_t bytes = 0;
	unsigned i = 0, s;

	if (!l->nseg) {
		iov[0] = (struct iovec){ base + off, l->len - off };
		*n = 1;
		return l->len - off;
	}
	for (s = off / l->seglen; s < l->nseg && i < max; s++, i++) {
		size_t in = s == off / l->seglen ? off % l->seglen : 0;

		iov[i] = (struct iovec){ base + l->segoff[s] + in, l->seglen - in };
		bytes += l->seglen - in;
	}
	*n = i;
	return bytes;
}

void layout_copy_out(const struct layout *l, const char *base, size_t off,
		     char *dst, size_t n)
{
	if (!l->nseg) {
		memcpy(dst, base + off, n);
		return;
	}
	while (n) {
		size_t s = off / l->seglen, in = off % l->seglen;
		size_t k = l->seglen - in < n ? l->seglen - in : n;

		memcpy(dst, base + l->segoff[s] + in, k);
		dst += k;
		off += k;
		n -= k;
	}
}

/*
 * Word i of a sender's buffer holds stamp_base(iteration, sender) + i: a
 * value unique to the pair plus the word's index, so that stale, foreign
 * or misplaced data all show.  Cheap enough to vectorize.
 */
static inline uint64_t stamp_base(uint64_t seq, uint32_t salt)
{
	uint64_t x = (seq << 8 | salt) * 0x9E3779B97F4A7C15ull;

	return x ^ x >> 29;
}

static void stamp(char *buf, size_t span, uint64_t seq, uint32_t salt)
{
	uint64_t *w = (uint64_t *)buf, base = stamp_base(seq, salt);
	size_t i;

	for (i = 0; i < span / 8; i++)
		w[i] = base + i;
}

static void verify_fail(const struct proc *p, const char *buf, size_t at,
			uint64_t want, uint64_t seq)
{
	uint64_t got;
	unsigned b;

	memcpy(&got, buf + at, 8);
	for (b = 0; b < 8 && ((got ^ want) >> (8 * b) & 0xff) == 0; b++)
		;
	fprintf(stderr, "cmabench: VERIFY FAILED: %s %s, rank %u, iteration %llu: "
		"received byte %zu is 0x%02x, expected 0x%02x\n",
		xports[p->c->x].name, pattern_names[p->c->pat], p->rank,
		(unsigned long long)seq, at + b,
		(unsigned)(got >> (8 * b) & 0xff), (unsigned)(want >> (8 * b) & 0xff));
	exit(EXIT_VERIFY);
}

/* Compare n words at w with base + first + i; blockwise, so it vectorizes. */
static void verify_run(const struct proc *p, const char *buf, const uint64_t *w,
		       size_t n, uint64_t base, size_t first, uint64_t seq)
{
	size_t i, j;

	for (i = 0; i < n; i += 256) {
		size_t m = n - i < 256 ? n - i : 256;
		uint64_t diff = 0;

		for (j = 0; j < m; j++)
			diff |= w[i + j] ^ (base + first + i + j);
		if (!diff)
			continue;
		for (j = 0; j < m; j++)
			if (w[i + j] != base + first + i + j)
				verify_fail(p, buf, (const char *)&w[i + j] - buf,
					    base + first + i + j, seq);
	}
}

/* Check the packed message in buf against what the sender stamped. */
static void verify(const struct proc *p, const char *buf, uint64_t seq, uint32_t salt)
{
	const struct layout *l = p->lay;
	const uint64_t *w = (const uint64_t *)buf;
	uint64_t base = stamp_base(seq, salt);
	size_t s;

	if (!l->nseg) {
		verify_run(p, buf, w, l->len / 8, base, 0, seq);
		return;
	}
	for (s = 0; s < l->nseg; s++)
		verify_run(p, buf, w + s * (l->seglen / 8), l->seglen / 8, base,
			   l->segoff[s] / 8, seq);
}

static void make_layout(struct layout *l, const struct cell *c, unsigned seed)
{
	unsigned i;

	memset(l, 0, sizeof(*l));
	l->len = l->span = c->size;
	if (c->pat != P_GATHER || !strcmp(c->shape, "contig"))
		return;
	l->nseg = MAX_SEGS;
	l->seglen = 64;
	l->len = (size_t)l->nseg * l->seglen;
	if (!strcmp(c->shape, "vector")) {
		/* every other 64-byte element: 1024 elements over 32 pages */
		for (i = 0; i < l->nseg; i++)
			l->segoff[i] = (size_t)i * 128;
		l->span = (size_t)l->nseg * 128;
		return;
	}
	/* gather: all 1024 elements of 16 pages, in a shuffled order */
	for (i = 0; i < l->nseg; i++)
		l->segoff[i] = (size_t)i * 64;
	srand(seed);
	for (i = l->nseg - 1; i > 0; i--) {
		unsigned j = rand() % (i + 1);
		size_t t = l->segoff[i];

		l->segoff[i] = l->segoff[j];
		l->segoff[j] = t;
	}
	l->span = l->len;
}

/* ---- the shared control block and the barrier ------------------------- */

struct shared {
	_Atomic uint32_t bar_count __attribute__((aligned(CACHELINE)));
	_Atomic uint32_t bar_gen __attribute__((aligned(CACHELINE)));
	unsigned iters;
	struct proc_shm procs[MAX_PROCS];
	struct link_shm links[MAX_PROCS];
	struct result res;
	uint64_t start[MAX_ITERS][MAX_PROCS];
	uint64_t end[MAX_ITERS][MAX_PROCS];
	uint64_t call[MAX_ITERS][MAX_PROCS];
};

static struct shared *sh;

static void barrier(const struct proc *p)
{
	uint32_t gen = atomic_load(&sh->bar_gen);
	unsigned n = 0;

	if (atomic_fetch_add(&sh->bar_count, 1) == p->nprocs - 1) {
		atomic_store(&sh->bar_count, 0);
		atomic_fetch_add(&sh->bar_gen, 1);
		if (!p->spin)
			futex(&sh->bar_gen, FUTEX_WAKE, MAX_PROCS);
		return;
	}
	while (atomic_load(&sh->bar_gen) == gen) {
		if (p->spin)
			spin_once(&n);
		else
			futex(&sh->bar_gen, FUTEX_WAIT, gen);
	}
}

/* ---- the worker --------------------------------------------------------- */

static void xfer_run(struct proc *p, struct link *out, struct link *in, uint64_t seq,
		     uint64_t *call_ns)
{
	struct xfer t = { .out = out, .in = in, .seq = seq, .sdone = !out, .rdone = !in };

	for (;;) {
		int prog;

		t.snap = atomic_load(&p->me->bell);
		prog = p->xp->progress(p, &t);
		if (t.sdone && t.rdone)
			break;
		if (!prog)
			p->xp->wait(p, &t);
	}
	*call_ns += t.call_ns;
}

/* One timed exchange of the cell's pattern, as seen by this process. */
static void exchange(struct proc *p, uint64_t seq, unsigned it)
{
	const struct cell *c = p->c;
	uint64_t call = 0, t0 = now_ns();
	struct link *out = NULL, *in = NULL;
	unsigned i;

	if (c->x == X_MEMCPY) {
		layout_copy_out(p->lay, p->sbuf, 0, p->rbuf, p->lay->len);
	} else if (c->pat == P_PINGPONG || c->pat == P_SWEEP) {
		if (p->rank == 0) {
			xfer_run(p, &p->links[0], NULL, seq, &call);
			xfer_run(p, NULL, &p->links[1], seq, &call);
		} else {
			xfer_run(p, NULL, &p->links[0], seq, &call);
			xfer_run(p, &p->links[1], NULL, seq, &call);
		}
	} else {
		for (i = 0; i < p->nlinks; i++) {
			if (p->links[i].from == p->rank)
				out = &p->links[i];
			if (p->links[i].to == p->rank)
				in = &p->links[i];
		}
		xfer_run(p, out, in, seq, &call);
	}
	sh->start[it][p->rank] = t0;
	sh->end[it][p->rank] = now_ns();
	sh->call[it][p->rank] = call;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The time of iteration it: as in hpcc each process times itself and the
 * slowest counts; in ping-pong only the initiator's round trip counts. */
static uint64_t iter_ns(const struct proc *p, unsigned it, int pingpong)
{
	uint64_t longest = 0;
	unsigned r;

	for (r = 0; r < (pingpong ? 1 : p->nprocs); r++) {
		uint64_t d = sh->end[it][r] - sh->start[it][r];

		longest = d > longest ? d : longest;
	}
	return longest;
}

/*
 * Rank 0, after a timed run: the run's figure is the median over its
 * iterations (the mean with --mean), so that a preemption by other work
 * on a shared machine spoils one iteration, not the run.  Ping-pong: a message is half a
 * round trip.  Calls are per call: a ring makes one per process.
 */
static void summarize(const struct proc *p, unsigned iters, unsigned run)
{
	static uint64_t t[MAX_ITERS], calls[MAX_ITERS];
	const struct cell *c = p->c;
	int pingpong = (c->pat == P_PINGPONG || c->pat == P_SWEEP) && c->x != X_MEMCPY;
	unsigned it, r, per_iter;
	struct result *res = &sh->res;
	double msg_ns;

	per_iter = pingpong ? 2 : c->pat == P_RING || c->pat == P_RANDOM ? p->nprocs : 1;
	for (it = 0; it < iters; it++) {
		t[it] = iter_ns(p, it, pingpong);
		calls[it] = 0;
		for (r = 0; r < p->nprocs; r++)
			calls[it] += sh->call[it][r];
	}
	if (p->o->mean) {
		double st = 0, sc = 0;

		for (it = 0; it < iters; it++) {
			st += t[it];
			sc += calls[it];
		}
		msg_ns = st / iters / (pingpong ? 2 : 1);
		res->call_us[run - 1] = sc / iters / per_iter / 1e3;
	} else {
		msg_ns = (double)median_u64(t, iters) / (pingpong ? 2 : 1);
		res->call_us[run - 1] = (double)median_u64(calls, iters) / per_iter / 1e3;
	}
	res->bw[run - 1] = p->lay->len / msg_ns * 1e3;
	res->us[run - 1] = msg_ns / 1e3;
}

/* After the warm-up run: enough iterations for opts->target_ms a run. */
static void set_iters(const struct proc *p)
{
	uint64_t est[WARMUP_ITERS];
	unsigned i;
	double n;

	/* the median of the warm-up iterations after the first */
	for (i = 1; i < WARMUP_ITERS; i++)
		est[i - 1] = iter_ns(p, i, 0);
	n = p->o->target_ms * 1e6 / (double)(median_u64(est, WARMUP_ITERS - 1) + 1);
	sh->iters = n < 1 ? 1 : n > MAX_ITERS ? MAX_ITERS : (unsigned)n;
}

static void pin(unsigned rank)
{
	cpu_set_t set, one;
	unsigned cpu, k = 0, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	n = CPU_COUNT(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (k++ == rank % n) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
			return;
		}
	}
}

static void worker(struct proc *p)
{
	const struct cell *c = p->c;
	unsigned run, it, i;
	uint64_t seq = 0;
	int sends = 0, recvs = 0;

	if (p->o->pin)
		pin(p->rank);
	/* Yama: let our siblings attach, as Open MPI does; EINVAL without Yama */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);

	p->sbuf = alloc_buf(p->lay->span, c->pages, 0);
	p->rbuf = alloc_buf(p->lay->len, c->pages, 0);
	memset(p->rbuf, 0xee, p->lay->len);
	stamp(p->sbuf, p->lay->span, 0, 0);
	for (i = 0; i < p->nlinks; i++) {
		struct link *l = &p->links[i];

		if (l->from == p->rank) {
			if (l->shbuf)
				p->sbuf = l->shbuf;
			l->sh->spid = getpid();
			l->sh->sbuf = p->sbuf;
			sends = 1;
		}
		if (l->to == p->rank) {
			l->sh->rpid = getpid();
			l->sh->rbuf = p->rbuf;
			recvs = 1;
		}
	}
	if (c->x == X_MEMCPY)
		sends = recvs = 1;
	if (p->xp->attach)
		p->xp->attach(p);
	if (p->rank == 0)
		sh->res.thp_kb = anon_huge_kb();
	barrier(p);

	for (run = 0; run <= p->o->runs; run++) {
		unsigned iters = run ? sh->iters : WARMUP_ITERS;

		for (it = 0; it < iters; it++) {
			seq++;
			if (sends)
				stamp(p->sbuf, p->lay->span, seq, p->rank + 1);
			barrier(p);
			exchange(p, seq, it);
			if (recvs) {
				uint32_t from = p->rank;

				for (i = 0; i < p->nlinks; i++)
					if (p->links[i].to == p->rank)
						from = p->links[i].from;
				verify(p, p->rbuf, seq, from + 1);
			}
		}
		barrier(p);
		if (p->rank == 0) {
			if (run == 0)
				set_iters(p);
			else
				summarize(p, iters, run);
		}
		barrier(p);
	}
	if (p->rank == 0)
		sh->res.iters = sh->iters;
	exit(0);
}

/* ---- the parent ---------------------------------------------------------- */

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

static unsigned ncpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

static void make_pipe(struct link *l, const struct bench_opts *o, int nonblock)
{
	if (pipe2(l->fd, nonblock ? O_NONBLOCK : 0))
		die("pipe2: %s", strerror(errno));
	/* best effort; the kernel caps unprivileged requests at pipe-max-size */
	fcntl(l->fd[1], F_SETPIPE_SZ, (int)o->xo.pipe_size);
}

void run_cell(const struct cell *c, const struct bench_opts *o, struct result *r)
{
	const struct xport *xp = &xports[c->x];
	static struct layout lay;
	struct link links[MAX_PROCS];
	unsigned order[MAX_PROCS], nprocs = c->nprocs, nlinks = 0, i, alive;
	pid_t pids[MAX_PROCS];
	struct sigaction sa = { .sa_handler = on_alarm };
	struct proc p;
	int fail = 0, skip = 0;

	make_layout(&lay, c, o->seed);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap control block: %s", strerror(errno));

	/* Who sends to whom. */
	for (i = 0; i < nprocs; i++)
		order[i] = i;
	if (c->pat == P_RANDOM) {
		srand(o->seed + nprocs);
		for (i = nprocs - 1; i > 0; i--) {
			unsigned j = rand() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
	}
	memset(links, 0, sizeof(links));
	if (c->x == X_MEMCPY)
		nlinks = 0;
	else if (c->pat == P_RING || c->pat == P_RANDOM)
		for (i = 0; i < nprocs; i++, nlinks++) {
			links[i].from = order[i];
			links[i].to = order[(i + 1) % nprocs];
		}
	else {
		links[nlinks].from = 0;
		links[nlinks++].to = 1;
		if (c->pat != P_GATHER) {
			links[nlinks].from = 1;
			links[nlinks++].to = 0;
		}
	}
	for (i = 0; i < nlinks; i++) {
		struct link *l = &links[i];

		l->sh = &sh->links[i];
		l->fd[0] = l->fd[1] = -1;
		if (xp->needs_ring)
			l->ring = alloc_buf((size_t)o->xo.slots * o->xo.frag, c->pages, 1);
		if (xp->needs_shbuf)
			l->shbuf = alloc_buf(lay.span, c->pages, 1);
		if (xp->needs_pipe)
			make_pipe(l, o, xp->nonblock_pipe);
		l->efd = -1;
		if (xp->needs_ack && (l->efd = eventfd(0, EFD_NONBLOCK)) < 0)
			die("eventfd: %s", strerror(errno));
	}

	memset(&p, 0, sizeof(p));
	p.nprocs = nprocs;
	p.c = c;
	p.o = o;
	p.xp = xp;
	p.peers = sh->procs;
	p.links = links;
	p.nlinks = nlinks;
	p.lay = &lay;
	p.spin = o->wait == W_SPIN || (o->wait == W_AUTO && nprocs <= ncpus_allowed());
	sh->res.thp_kb = -1;

	fflush(NULL);
	for (i = 0; i < nprocs; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork: %s", strerror(errno));
		if (pids[i] == 0) {
			p.rank = i;
			p.me = &sh->procs[i];
			worker(&p);
		}
	}
	for (i = 0; i < nlinks; i++) {
		if (links[i].fd[0] >= 0)
			close(links[i].fd[0]);
		if (links[i].fd[1] >= 0)
			close(links[i].fd[1]);
		if (links[i].efd >= 0)
			close(links[i].efd);
	}

	/* Reap; on a failure or a timeout stop the others. */
	timed_out = 0;
	sigaction(SIGALRM, &sa, NULL);
	alarm(o->timeout);
	for (alive = nprocs; alive;) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);

		if (pid < 0) {
			if (errno != EINTR)
				die("waitpid: %s", strerror(errno));
			if (timed_out && !fail) {
				fail = -1;
				for (i = 0; i < nprocs; i++)
					if (pids[i])
						kill(pids[i], SIGKILL);
			}
			continue;
		}
		for (i = 0; i < nprocs; i++)
			if (pids[i] == pid)
				pids[i] = 0, alive--;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			continue;
		if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_SKIP)
			skip = 1;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_VERIFY)
			fail = EXIT_VERIFY;
		else if (!fail)
			fail = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		for (i = 0; i < nprocs; i++)
			if (pids[i])
				kill(pids[i], SIGKILL);
	}
	alarm(0);

	*r = sh->res;
	r->runs = o->runs;
	r->has_call = c->x == X_CMA_READ || c->x == X_CMA_WRITE || c->x == X_IDEAL;
	snprintf(r->wait, sizeof(r->wait), "%s", p.spin ? "spin" : "futex");
	munmap(sh, sizeof(*sh));
	free_shared();

	if (fail == EXIT_VERIFY)
		die("%s: received bytes differ from the sent ones (see above); aborting",
		    xp->name);
	if (fail == -1)
		die("%s %s %zu bytes %u procs: no result after %u s; stopped",
		    xp->name, pattern_names[c->pat], c->size, nprocs, o->timeout);
	if (fail)
		die("%s %s: a worker failed (status %d)", xp->name, pattern_names[c->pat], fail);
	r->status = skip ? EXIT_SKIP : 0;
}

/* ---- what this kernel offers ------------------------------------------- */

int probe_cma(char *why, size_t len)
{
	char src[64] = "probe", dst[64];
	struct iovec l = { dst, sizeof(dst) }, rm = { src, sizeof(src) };

	if (process_vm_readv(getpid(), &l, 1, &rm, 1, 0) == (ssize_t)sizeof(src))
		return 1;
	snprintf(why, len, "process_vm_readv: %s", strerror(errno));
	return 0;
}
