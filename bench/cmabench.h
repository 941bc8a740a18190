/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cmabench: move the same bytes between processes with every transport a
 * user could pick (shared-memory double copy, Cross Memory Attach read and
 * write, pipes, vmsplice, io_uring, the single-copy ideal and plain memcpy)
 * and report bandwidth and latency, medians of several runs.
 *
 * Structure:
 *   main.c      options, the list of measurements, tables and CSV
 *   engine.c    forking the processes, barriers, doorbells, buffers,
 *               stamping and verifying bytes, the timed loop, statistics
 *   xport.c     the transports, each a small state machine with a
 *               non-blocking progress() and a wait()
 *
 * Every byte a receiver gets is compared with what the sender stamped for
 * that iteration; a mismatch aborts the whole benchmark.  Stamping and
 * verifying happen outside the timed region, separated by a barrier.
 */
#ifndef CMABENCH_H
#define CMABENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define MAX_PROCS	32
#define MAX_RUNS	64
#define MAX_ITERS	4096
#define MAX_SEGS	1024		/* IOV_MAX: one CMA call takes at most this */
#define CACHELINE	64
#define HUGE_SZ		(2UL << 20)

/* Exit codes of a worker process. */
#define EXIT_SKIP	77		/* transport not available on this kernel */
#define EXIT_VERIFY	3		/* a received byte was wrong */

enum xport_id {
	X_SHM, X_CMA_READ, X_CMA_WRITE, X_PIPE, X_VMSPLICE, X_URING,
	X_IDEAL, X_MEMCPY, X_NR
};

enum pattern_id { P_PINGPONG, P_RING, P_RANDOM, P_SWEEP, P_GATHER, P_NR };

enum pages_id { PG_4K, PG_THP };

enum wait_mode { W_AUTO, W_SPIN, W_FUTEX };

/* Layout of a message in the sender's memory; the receiver always gets it
 * packed.  nseg == 0 means one contiguous run of len bytes. */
struct layout {
	size_t len;		/* bytes in the message */
	size_t span;		/* bytes of sender memory the layout covers */
	unsigned nseg;
	size_t seglen;
	size_t segoff[MAX_SEGS];
};

/* Options that shape a transport. */
struct xopts {
	size_t frag;		/* shm fragment size */
	unsigned slots;		/* shm ring depth in fragments */
	size_t pipe_size;	/* F_SETPIPE_SZ request */
};

/* One measurement: a transport, a pattern, a size, a process count. */
struct cell {
	enum xport_id x;
	enum pattern_id pat;	/* P_SWEEP is measured as ping-pong */
	enum pages_id pages;
	unsigned nprocs;
	size_t size;
	const char *shape;	/* gather: "gather", "vector" or "contig" */
};

/* Per-run figures of a cell, filled by engine.c. */
struct result {
	int status;		/* 0 ok, EXIT_SKIP, or other failure */
	char note[160];		/* why skipped, THP state, ... */
	unsigned runs, iters;
	double bw[MAX_RUNS];	/* MB/s (10^6 bytes per second) */
	double us[MAX_RUNS];	/* microseconds per message */
	double call_us[MAX_RUNS]; /* CMA: microseconds inside the syscall */
	int has_call;
	char wait[8];		/* "spin" or "futex" */
	long thp_kb;		/* AnonHugePages of rank 0 after setup, -1 unknown */
};

struct bench_opts {
	unsigned runs;
	double target_ms;	/* time of one timed run */
	enum wait_mode wait;
	int pin;
	unsigned seed;
	unsigned timeout;	/* seconds per cell */
	int mean;		/* a run's figure: mean, not median, of its iterations */
	struct xopts xo;
};

/* Shared, cache-line separated state of one directed link. */
struct link_shm {
	_Atomic uint64_t ready __attribute__((aligned(CACHELINE)));
	_Atomic uint64_t head __attribute__((aligned(CACHELINE)));
	_Atomic uint64_t done __attribute__((aligned(CACHELINE)));
	_Atomic uint64_t rready;
	_Atomic uint64_t tail __attribute__((aligned(CACHELINE)));
	pid_t spid __attribute__((aligned(CACHELINE)));
	pid_t rpid;
	void *sbuf;		/* sender's buffer, published once */
	void *rbuf;		/* receiver's buffer, published once */
	uint32_t slotlen[64];
};

struct link {
	struct link_shm *sh;
	unsigned from, to;	/* ranks */
	char *ring;		/* shm: slots * frag bytes, shared */
	char *shbuf;		/* ideal: sender's buffer in shared memory */
	int fd[2];		/* pipe, vmsplice, io_uring */
	int efd;		/* vmsplice: the receiver's acknowledgement */
};

/* Shared per-process state. */
struct proc_shm {
	_Atomic uint32_t bell __attribute__((aligned(CACHELINE)));
	_Atomic uint32_t sleeping;
};

/* What one process does in one iteration, and its progress. */
struct xfer {
	struct link *out, *in;		/* NULL: nothing to send/receive */
	uint64_t seq;
	size_t soff, roff;		/* bytes sent / received so far */
	int sdone, rdone;
	int sposted, rposted;		/* the announcement for seq went out */
	uint64_t call_ns;		/* CMA: time inside the syscalls */
	uint32_t snap;			/* doorbell value before progress() */
};

struct proc;

struct xport {
	const char *name;
	int needs_pipe, nonblock_pipe, needs_ack, needs_ring, needs_shbuf;
	/* after fork, in each worker; may exit(EXIT_SKIP) */
	void (*attach)(struct proc *p);
	/* try to move bytes without blocking; return nonzero on progress */
	int (*progress)(struct proc *p, struct xfer *t);
	/* block until progress may be possible */
	void (*wait)(struct proc *p, struct xfer *t);
};

/* The worker's view of the world. */
struct proc {
	unsigned rank, nprocs;
	const struct cell *c;
	const struct bench_opts *o;
	const struct xport *xp;
	struct proc_shm *me;
	struct proc_shm *peers;		/* all procs, indexed by rank */
	struct link *links;		/* all links */
	unsigned nlinks;
	int spin;
	const struct layout *lay;	/* the message layout of this cell */
	char *sbuf;			/* what this process sends from */
	char *rbuf;			/* where it receives, lay->len bytes */
	void *xstate;			/* transport-private (io_uring ring) */
};

extern const struct xport xports[X_NR];
extern const char *const pattern_names[P_NR];

/* engine.c */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t now_ns(void);
void ring_bell(struct proc *p, unsigned rank);
void wait_bell(struct proc *p, uint32_t snap);
void *alloc_buf(size_t len, enum pages_id pages, int shared);
size_t layout_iov(const struct layout *l, char *base, size_t off,
		  struct iovec *iov, unsigned max, unsigned *n);
void layout_copy_out(const struct layout *l, const char *base, size_t off,
		     char *dst, size_t n);
void run_cell(const struct cell *c, const struct bench_opts *o, struct result *r);
int probe_cma(char *why, size_t len);
int probe_uring(char *why, size_t len);
int thp_available(void);
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

#endif
