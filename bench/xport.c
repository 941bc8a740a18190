// SPDX-License-Identifier: GPL-2.0
/*
 * The transports.  Each moves one message per link and iteration: the
 * sender's bytes, laid out as p->lay says, arrive packed in the receiver's
 * p->rbuf.  progress() never blocks on the peer (a copy may take long, but
 * it is never a wait); wait() blocks until progress may be possible, on the
 * doorbell, on poll() or on the io_uring completion queue.
 *
 *   shm        sender copies fragments into a shared ring, receiver copies
 *              them out (two copies, pipelined)
 *   cma-read   sender announces the message, receiver process_vm_readv()s
 *              it from the sender's buffer, whose address it learnt once
 *   cma-write  receiver announces its buffer is free, sender
 *              process_vm_writev()s into it
 *   pipe       write()/writev() and read() on a pipe enlarged with
 *              F_SETPIPE_SZ, both ends non-blocking
 *   vmsplice   the sender vmsplice()s its pages into the pipe, the
 *              receiver read()s them (one copy) and acknowledges through
 *              an eventfd, after which the sender may reuse its buffer
 *   io_uring   the pipe again, one write and one read SQE in flight per
 *              process, submitted together, resubmitted on short counts
 *   ideal      the sender stamps its message straight into shared memory,
 *              the receiver copies it once
 *   memcpy     one process copies; handled by the engine
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmabench.h"

const char *const pattern_names[P_NR] = {
	[P_PINGPONG] = "pingpong", [P_RING] = "ring", [P_RANDOM] = "random",
	[P_SWEEP] = "sweep", [P_GATHER] = "gather",
};

#define LOAD(x)		atomic_load_explicit(&(x), memory_order_acquire)
#define STORE(x, v)	atomic_store_explicit(&(x), (v), memory_order_release)

static void spin_wait(void)
{
	static unsigned n;

	if (++n % 4096 == 0)
		sched_yield();
	else
		cpu_relax();
}

static void bell_wait(struct proc *p, struct xfer *t)
{
	wait_bell(p, t->snap);
}

/* ---- shm: double copy through a ring of fragments ------------------------ */

static int shm_progress(struct proc *p, struct xfer *t)
{
	const struct layout *lay = p->lay;
	size_t frag = p->o->xo.frag;
	unsigned slots = p->o->xo.slots;
	int prog = 0;

	if (!t->sdone) {
		struct link *l = t->out;
		uint64_t h = atomic_load_explicit(&l->sh->head, memory_order_relaxed);

		while (t->soff < lay->len && h - LOAD(l->sh->tail) < slots) {
			size_t n = lay->len - t->soff < frag ? lay->len - t->soff : frag;

			layout_copy_out(lay, p->sbuf, t->soff, l->ring + h % slots * frag, n);
			l->sh->slotlen[h % slots] = n;
			STORE(l->sh->head, ++h);
			t->soff += n;
			ring_bell(p, l->to);
			prog = 1;
		}
		/* eager: done once every fragment is in the ring */
		t->sdone = t->soff == lay->len;
	}
	if (!t->rdone) {
		struct link *l = t->in;
		uint64_t tl = atomic_load_explicit(&l->sh->tail, memory_order_relaxed);

		while (t->roff < lay->len && tl != LOAD(l->sh->head)) {
			size_t n = l->sh->slotlen[tl % slots];

			if (n > lay->len - t->roff)
				die("shm: fragment overruns the message");
			memcpy(p->rbuf + t->roff, l->ring + tl % slots * frag, n);
			STORE(l->sh->tail, ++tl);
			t->roff += n;
			ring_bell(p, l->from);
			prog = 1;
		}
		t->rdone = t->roff == lay->len;
	}
	return prog;
}

/* ---- CMA ------------------------------------------------------------------ */

static void cma_attach(struct proc *p)
{
	(void)p;	/* the engine published the buffers and set PR_SET_PTRACER */
}

/* Pull the whole message; loop on short counts like every real user. */
static void cma_pull(struct proc *p, struct xfer *t, struct link *l)
{
	static struct iovec riov[MAX_SEGS];
	const struct layout *lay = p->lay;
	size_t off = 0;

	while (off < lay->len) {
		struct iovec liov = { p->rbuf + off, lay->len - off };
		unsigned n;
		uint64_t t0;
		ssize_t r;

		layout_iov(lay, l->sh->sbuf, off, riov, MAX_SEGS, &n);
		t0 = now_ns();
		r = process_vm_readv(l->sh->spid, &liov, 1, riov, n, 0);
		t->call_ns += now_ns() - t0;
		if (r <= 0)
			die("process_vm_readv from pid %d: %s", l->sh->spid,
			    r ? strerror(errno) : "no progress");
		off += r;
	}
}

static void cma_push(struct proc *p, struct xfer *t, struct link *l)
{
	static struct iovec liov[MAX_SEGS];
	const struct layout *lay = p->lay;
	size_t off = 0;

	while (off < lay->len) {
		struct iovec riov = { (char *)l->sh->rbuf + off, lay->len - off };
		unsigned n;
		uint64_t t0;
		ssize_t r;

		layout_iov(lay, p->sbuf, off, liov, MAX_SEGS, &n);
		t0 = now_ns();
		r = process_vm_writev(l->sh->rpid, liov, n, &riov, 1, 0);
		t->call_ns += now_ns() - t0;
		if (r <= 0)
			die("process_vm_writev to pid %d: %s", l->sh->rpid,
			    r ? strerror(errno) : "no progress");
		off += r;
	}
}

/* cma-read and ideal: the sender announces, the receiver copies, then says done. */
static int pull_progress(struct proc *p, struct xfer *t, int ideal)
{
	int prog = 0;

	if (!t->sdone) {
		if (!t->sposted) {
			STORE(t->out->sh->ready, t->seq);
			ring_bell(p, t->out->to);
			t->sposted = prog = 1;
		}
		if (LOAD(t->out->sh->done) == t->seq)
			t->sdone = prog = 1;
	}
	if (!t->rdone && LOAD(t->in->sh->ready) == t->seq) {
		if (ideal) {
			uint64_t t0 = now_ns();
			layout_copy_out(p->lay, t->in->shbuf, 0, p->rbuf, p->lay->len);
			t->call_ns += now_ns() - t0;
		}
		else
			cma_pull(p, t, t->in);
		STORE(t->in->sh->done, t->seq);
		ring_bell(p, t->in->from);
		t->rdone = prog = 1;
	}
	return prog;
}

static int cma_read_progress(struct proc *p, struct xfer *t)
{
	return pull_progress(p, t, 0);
}

static int ideal_progress(struct proc *p, struct xfer *t)
{
	return pull_progress(p, t, 1);
}

/* cma-write: the receiver says its buffer is free, the sender writes, then says done. */
static int cma_write_progress(struct proc *p, struct xfer *t)
{
	int prog = 0;

	if (!t->rdone) {
		if (!t->rposted) {
			STORE(t->in->sh->rready, t->seq);
			ring_bell(p, t->in->from);
			t->rposted = prog = 1;
		}
		if (LOAD(t->in->sh->done) == t->seq)
			t->rdone = prog = 1;
	}
	if (!t->sdone && LOAD(t->out->sh->rready) == t->seq) {
		cma_push(p, t, t->out);
		STORE(t->out->sh->done, t->seq);
		ring_bell(p, t->out->to);
		t->sdone = prog = 1;
	}
	return prog;
}

/* ---- pipe and vmsplice ------------------------------------------------------ */

static int fd_progress(struct proc *p, struct xfer *t, int splice)
{
	static struct iovec iov[MAX_SEGS];
	const struct layout *lay = p->lay;
	int prog = 0;

	while (!t->sdone && t->soff < lay->len) {
		unsigned n;
		ssize_t w;

		layout_iov(lay, p->sbuf, t->soff, iov, MAX_SEGS, &n);
		if (splice)
			w = vmsplice(t->out->fd[1], iov, n, SPLICE_F_NONBLOCK);
		else
			w = writev(t->out->fd[1], iov, n);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (w <= 0)
			die("%s: %s", splice ? "vmsplice" : "writev", w ? strerror(errno) : "wrote 0");
		t->soff += w;
		t->sdone = t->soff == lay->len && !splice;
		prog = 1;
	}
	/*
	 * The pipe holds references to the spliced pages, not copies: the
	 * sender may only reuse its buffer once the reader has drained them,
	 * so a vmsplice sender completes on the reader's acknowledgement.
	 */
	if (splice && !t->sdone && t->soff == lay->len) {
		uint64_t v;

		if (read(t->out->efd, &v, sizeof(v)) == sizeof(v))
			t->sdone = prog = 1;
		else if (errno != EAGAIN && errno != EINTR)
			die("eventfd read: %s", strerror(errno));
	}
	while (!t->rdone) {
		ssize_t r = read(t->in->fd[0], p->rbuf + t->roff, lay->len - t->roff);

		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0)
			die("pipe read: %s", r ? strerror(errno) : "unexpected end of file");
		t->roff += r;
		t->rdone = t->roff == lay->len;
		prog = 1;
		if (t->rdone && splice) {
			uint64_t one = 1;

			if (write(t->in->efd, &one, sizeof(one)) != sizeof(one))
				die("eventfd write: %s", strerror(errno));
		}
	}
	return prog;
}

static int pipe_progress(struct proc *p, struct xfer *t)
{
	return fd_progress(p, t, 0);
}

static int vmsplice_progress(struct proc *p, struct xfer *t)
{
	return fd_progress(p, t, 1);
}

static void fd_wait(struct proc *p, struct xfer *t)
{
	struct pollfd pfd[2];
	int n = 0;

	if (p->spin) {
		spin_wait();
		return;
	}
	if (!t->sdone && t->soff < p->lay->len)
		pfd[n++] = (struct pollfd){ .fd = t->out->fd[1], .events = POLLOUT };
	else if (!t->sdone)
		pfd[n++] = (struct pollfd){ .fd = t->out->efd, .events = POLLIN };
	if (!t->rdone)
		pfd[n++] = (struct pollfd){ .fd = t->in->fd[0], .events = POLLIN };
	if (poll(pfd, n, -1) < 0 && errno != EINTR)
		die("poll: %s", strerror(errno));
}

/* ---- io_uring on the pipe -------------------------------------------------- */

struct uring_state {
	struct io_uring ring;
	struct iovec iov[MAX_SEGS];
	int sbusy, rbusy;
};

static void uring_attach(struct proc *p)
{
	struct uring_state *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		die("out of memory");
	err = io_uring_queue_init(8, &u->ring, 0);
	if (err < 0) {
		/* the engine only forks when probe_uring() said yes */
		die("io_uring_queue_init: %s", strerror(-err));
	}
	p->xstate = u;
}

enum { U_SEND = 1, U_RECV = 2 };

static int uring_progress(struct proc *p, struct xfer *t)
{
	struct uring_state *u = p->xstate;
	const struct layout *lay = p->lay;
	struct io_uring_cqe *cqe;
	int prog = 0, queued = 0;

	while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		int res = cqe->res;
		int send = io_uring_cqe_get_data64(cqe) == U_SEND;

		io_uring_cqe_seen(&u->ring, cqe);
		if (res < 0 && res != -EAGAIN && res != -EINTR)
			die("io_uring %s: %s", send ? "write" : "read", strerror(-res));
		if (res == 0 && !send)
			die("io_uring read: unexpected end of file");
		if (send) {
			u->sbusy = 0;
			t->soff += res > 0 ? res : 0;
		} else {
			u->rbusy = 0;
			t->roff += res > 0 ? res : 0;
		}
		prog = 1;
	}
	if (!t->sdone && !u->sbusy) {
		if (t->soff == lay->len) {
			t->sdone = prog = 1;
		} else {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
			unsigned n;

			if (lay->nseg) {
				layout_iov(lay, p->sbuf, t->soff, u->iov, MAX_SEGS, &n);
				io_uring_prep_writev(sqe, t->out->fd[1], u->iov, n, 0);
			} else {
				io_uring_prep_write(sqe, t->out->fd[1], p->sbuf + t->soff,
						    lay->len - t->soff, 0);
			}
			io_uring_sqe_set_data64(sqe, U_SEND);
			u->sbusy = queued = 1;
		}
	}
	if (!t->rdone && !u->rbusy) {
		if (t->roff == lay->len) {
			t->rdone = prog = 1;
		} else {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

			io_uring_prep_read(sqe, t->in->fd[0], p->rbuf + t->roff,
					   lay->len - t->roff, 0);
			io_uring_sqe_set_data64(sqe, U_RECV);
			u->rbusy = queued = 1;
		}
	}
	/* both directions go to the kernel in one io_uring_enter() */
	if (queued) {
		int err = io_uring_submit(&u->ring);

		if (err < 0)
			die("io_uring_submit: %s", strerror(-err));
		prog = 1;
	}
	return prog;
}

static void uring_wait(struct proc *p, struct xfer *t)
{
	struct uring_state *u = p->xstate;
	struct io_uring_cqe *cqe;
	int err;

	(void)t;
	if (p->spin) {
		/* enter the kernel so that completions posted as task work run */
		err = io_uring_get_events(&u->ring);
		if (err < 0 && err != -EINTR && err != -EAGAIN)
			die("io_uring_get_events: %s", strerror(-err));
		return;
	}
	err = io_uring_wait_cqe(&u->ring, &cqe);
	if (err < 0 && err != -EINTR)
		die("io_uring_wait_cqe: %s", strerror(-err));
}

int probe_uring(char *why, size_t len)
{
	struct io_uring ring;
	int err = io_uring_queue_init(2, &ring, 0);

	if (err < 0) {
		snprintf(why, len, "io_uring_setup: %s", strerror(-err));
		return 0;
	}
	io_uring_queue_exit(&ring);
	return 1;
}

/* ---- the table ---------------------------------------------------------------- */

const struct xport xports[X_NR] = {
	[X_SHM] = { .name = "shm", .needs_ring = 1,
		    .progress = shm_progress, .wait = bell_wait },
	[X_CMA_READ] = { .name = "cma-read", .attach = cma_attach,
			 .progress = cma_read_progress, .wait = bell_wait },
	[X_CMA_WRITE] = { .name = "cma-write", .attach = cma_attach,
			  .progress = cma_write_progress, .wait = bell_wait },
	[X_PIPE] = { .name = "pipe", .needs_pipe = 1, .nonblock_pipe = 1,
		     .progress = pipe_progress, .wait = fd_wait },
	[X_VMSPLICE] = { .name = "vmsplice", .needs_pipe = 1, .nonblock_pipe = 1, .needs_ack = 1,
			 .progress = vmsplice_progress, .wait = fd_wait },
	/* io_uring honours O_NONBLOCK on the file, so its pipe blocks */
	[X_URING] = { .name = "io_uring", .needs_pipe = 1, .attach = uring_attach,
		      .progress = uring_progress, .wait = uring_wait },
	[X_IDEAL] = { .name = "ideal", .needs_shbuf = 1,
		      .progress = ideal_progress, .wait = bell_wait },
	[X_MEMCPY] = { .name = "memcpy" },
};
