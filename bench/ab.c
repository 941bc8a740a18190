// SPDX-License-Identifier: GPL-2.0
/*
 * cma-ab: two implementations of process_vm_readv/writev in one kernel,
 * compared call for call.
 *
 * The A/B kernel (vm/ab-tree.sh) keeps mainline's code on the usual
 * syscall numbers (x86_64 310/311) and has ours on 470/471.  This program
 * measures both on the same buffers in the same boot: for every cell it
 * takes P pairs of samples, A then B or B then A in turn (so a drift of
 * the machine falls on both sides alike); a sample is N calls timed
 * together, N chosen so that a sample lasts about --target-ms.  The
 * figure of a cell is the median over the pairs of time(A) / time(B):
 * above 1 means B (ours) is faster.  The quartiles of those per-pair
 * ratios and the count of pairs B won say how firm the median is.
 *
 * Run with -b 310,311 (B the same as A), it is an A/A control: the spread
 * it shows is the resolution of the method on this machine.
 *
 * The caller is the parent; the target is a child that allocates its own
 * buffers (so no copy-on-write sharing is involved) and waits.  Every
 * cell's bytes are checked after its samples, for A and for B.
 *
 * Cells: `one` is a single element of each -s size; the shape cells
 * (-S, -e) are -e remote elements (default 1024, IOV_MAX) laid out in the
 * target's 4 KiB-page arena (at least 16 MiB) from a fixed seed, against
 * one contiguous local buffer:
 *   gather  64 B elements in 16 pages (1024 slots, spread evenly), shuffled
 *   vector  64 B elements at a 128 B stride, in order
 *   s8k     one 64 B element per page at an 8 KiB stride, in order (an MPI
 *           matrix column)
 *   s4k64   64 B elements at a 4 KiB + 64 B stride
 *   sparse  64 B elements over 300 pages, every other page (a 600-page
 *           span), shuffled
 *   alt2    alternating between two pages two apart, the offset in each
 *           cycling through its 64 slots (so slots repeat past 128 elements)
 *   rev     one 64 B element per page, pages in reverse order
 *   mix     64 B elements, each with probability 1/2 on one of 16 "near"
 *           pages, else on a random page of the rest of a 16 MiB arena;
 *           random order (elements may repeat)
 *   1byte   1-byte elements, consecutive bytes
 * gather and vector at 1024 elements are the layouts of the earlier runs.
 *
 * Output: a table, and with --csv FILE one line per cell.  With --calls N
 * it times nothing: per cell it checks both sides and makes N pairs of
 * single calls, for vm/icount.sh to count the instructions of under gdb.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procinfo.h"

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE	14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE	15
#endif

#define HUGE		(2UL << 20)
#define PAGE		4096UL
#define NSEG		1024	/* elements of a shape cell at most: IOV_MAX */
#define SEGLEN		64
#define ARENA		(16UL << 20)	/* the shape cells' remote arena, at least */
#define MAX_PAIRS	101
#define MAX_SIZES	16

enum shape {
	SH_ONE, SH_GATHER, SH_VECTOR, SH_S8K, SH_S4K64, SH_SPARSE, SH_ALT2, SH_REV,
	SH_MIX, SH_1BYTE, SH_NR
};
/* at most 6 characters: the table's column */
static const char *const shape_name[SH_NR] = {
	"one", "gather", "vector", "s8k", "s4k64", "sparse", "alt2", "rev", "mix", "1byte"
};

struct side {
	long nr[2];		/* readv, writev */
	char label[16];
};

static struct {
	struct side a, b;
	size_t sizes[MAX_SIZES];
	unsigned nsizes;
	int pages_4k, pages_thp;
	int dir_read, dir_write;
	enum shape shapes[SH_NR];	/* the shape cells to run, in this order */
	unsigned nshapes;
	unsigned elems;		/* remote elements of a shape cell */
	unsigned pairs;
	unsigned calls;		/* --calls: untimed rounds for vm/icount.sh */
	double target_ms;
	FILE *csv;
} opt;

/* The target's buffers, as the child published them. */
struct target_bufs {
	pid_t pid;
	char *small;		/* 4 KiB pages, small_len bytes */
	char *huge;		/* THP (if the kernel gives any), max_size() bytes */
	long thp_kb;		/* AnonHugePages of the child after setup */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("cma-ab: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static size_t max_size(void)
{
	size_t m = 2 * NSEG * SEGLEN;	/* the vector's span */
	unsigned i;

	for (i = 0; i < opt.nsizes; i++)
		if (opt.sizes[i] > m)
			m = opt.sizes[i];
	return (m + HUGE - 1) & ~(HUGE - 1);
}

/* The target's 4 KiB-page region: room for every shape cell's layout. */
static size_t small_len(void)
{
	size_t m = max_size();

	return opt.nshapes && m < ARENA ? ARENA : m;
}

static char *region(size_t len, int huge)
{
	size_t map = len + (huge ? HUGE : 0);
	char *p = mmap(NULL, map, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu bytes: %s", map, strerror(errno));
	if (huge) {
		p = (char *)(((uintptr_t)p + HUGE - 1) & ~(HUGE - 1));
		madvise(p, len, MADV_HUGEPAGE);
	} else {
		madvise(p, len, MADV_NOHUGEPAGE);
	}
	return p;
}

static inline char pattern(size_t i, unsigned gen)
{
	return (char)(i * 131 + 7 + gen * 29);
}

static void fill(char *p, size_t len, unsigned gen)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(i, gen);
}

/* The child: allocate, fill, publish, wait to be killed. */
static void target(int wfd, size_t len)
{
	struct target_bufs t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	t.pid = getpid();
	t.small = region(small_len(), 0);
	fill(t.small, small_len(), 0);
	t.huge = NULL;
	if (opt.pages_thp) {
		t.huge = region(len, 1);
		fill(t.huge, len, 0);
	}
	t.thp_kb = anon_huge_kb();
	if (write(wfd, &t, sizeof(t)) != sizeof(t))
		_exit(1);
	for (;;)
		pause();
}

struct cell {
	int write;
	enum shape shape;
	int huge;
	size_t size;		/* bytes moved per call */
	char *remote;		/* in the target */
	char *local;
	struct iovec liov[NSEG], riov[NSEG];
	unsigned nl, nr;
	size_t lo, hi;		/* the remote span: offsets from remote */
};

/* xorshift64*: the same layouts from a seed with any libc */
static uint64_t rnd_state;

static unsigned rnd(unsigned n)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return (unsigned)((rnd_state * 0x2545F4914F6CDD1DULL) >> 32) % n;
}

static void shuffle(struct iovec *v, unsigned n, int libc)
{
	unsigned i;

	for (i = n - 1; i > 0; i--) {
		unsigned j = libc ? (unsigned)rand() % (i + 1) : rnd(i + 1);
		struct iovec t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * Lay out the iovecs of a cell: the element lists sit on the remote side,
 * the local side is one buffer.  The size is the sum of the elements.
 */
static void layout(struct cell *c, unsigned seed)
{
	unsigned i, n = opt.elems;
	size_t len = c->shape == SH_1BYTE ? 1 : SEGLEN;

	c->nl = c->nr = 1;
	if (c->shape != SH_ONE)
		c->size = (size_t)n * len;
	c->liov[0] = (struct iovec){ c->local, c->size };
	c->riov[0] = (struct iovec){ c->remote, c->size };
	c->lo = 0;
	c->hi = c->size;
	if (c->shape == SH_ONE)
		return;
	c->nr = n;
	rnd_state = 0x9E3779B97F4A7C15ULL * (seed + 1);
	for (i = 0; i < n; i++) {
		size_t off = 0;

		switch (c->shape) {
		case SH_GATHER:		/* 1024 slots in 16 pages; at 1024 elements, all */
			off = (size_t)i * NSEG / n * SEGLEN;
			break;
		case SH_VECTOR:
			off = (size_t)i * 2 * SEGLEN;
			break;
		case SH_S8K:
			off = (size_t)i * 2 * PAGE;
			break;
		case SH_S4K64:
			off = (size_t)i * (PAGE + SEGLEN);
			break;
		case SH_SPARSE:		/* page 2k of 600, k = i * 300 / n */
			off = (size_t)i * 300 / n * 2 * PAGE + (i % (PAGE / SEGLEN)) * SEGLEN;
			break;
		case SH_ALT2:		/* pages 0 and 2 in turn, slots in order */
			off = (i & 1) * 2 * PAGE + (i / 2 % (PAGE / SEGLEN)) * SEGLEN;
			break;
		case SH_REV:
			off = (size_t)(n - 1 - i) * PAGE;
			break;
		case SH_MIX:		/* near: pages 0..15; far: 16.. of the arena */
			if (rnd(2))
				off = (size_t)rnd(16 * PAGE / SEGLEN) * SEGLEN;
			else
				off = (16 + (size_t)rnd(ARENA / PAGE - 16)) * PAGE +
				      rnd(PAGE / SEGLEN) * SEGLEN;
			break;
		case SH_1BYTE:
			off = i;
			break;
		default:
			die("layout: shape %d", c->shape);
		}
		c->riov[i] = (struct iovec){ c->remote + off, len };
		if (!i || off < c->lo)
			c->lo = off;
		if (!i || off + len > c->hi)
			c->hi = off + len;
	}
	if (c->hi > small_len())
		die("layout: %s needs %zu bytes of the target's %zu", shape_name[c->shape],
		    c->hi, small_len());
	if (c->shape == SH_GATHER) {
		/* the elements come in a random order (libc's, as ever) */
		srand(seed);
		shuffle(c->riov, n, 1);
	} else if (c->shape == SH_SPARSE) {
		shuffle(c->riov, n, 0);
	}
}

static ssize_t call(const struct side *s, pid_t pid, struct cell *c)
{
	return syscall(s->nr[c->write], pid, c->liov, c->nl, c->riov, c->nr, 0UL);
}

/* n calls, timed together; seconds per call. */
static double sample(const struct side *s, pid_t pid, struct cell *c, unsigned n)
{
	double t0 = now_s();
	unsigned i;

	for (i = 0; i < n; i++) {
		ssize_t r = call(s, pid, c);

		if (r != (ssize_t)c->size)
			die("%s %s (syscall %ld): returned %zd of %zu: %s", s->label,
			    c->write ? "writev" : "readv", s->nr[c->write], r, c->size,
			    r < 0 ? strerror(errno) : "short");
	}
	return (now_s() - t0) / n;
}

/* Read the cell's remote span [lo, hi) into buf with A, one element. */
static void read_span(pid_t pid, const struct cell *c, char *buf)
{
	size_t len = c->hi - c->lo;
	struct iovec l = { buf, len }, r = { c->remote + c->lo, len };

	memset(buf, 0, len);
	if (syscall(opt.a.nr[0], pid, &l, 1UL, &r, 1UL, 0UL) != (ssize_t)len)
		die("check: reading the target's span back failed");
}

/*
 * Check one implementation on the cell: a readv into a cleared buffer must
 * bring exactly the remote elements; a writev of fresh bytes must leave
 * the target's span as a shadow copy says: the span as read before (with
 * A), the elements written into it in their order (so a repeated element
 * ends with its last bytes), read back with A.  That also proves the
 * bytes between the elements untouched.  A one-element cell needs no
 * shadow: its span is its element (and its calls stay as they were).
 */
static void check(const struct side *s, pid_t pid, struct cell *c, unsigned gen)
{
	static char *back, *shadow;
	size_t done = 0, k;
	unsigned i;

	if (c->write) {
		const char *want = c->local;

		if (!back) {
			back = region(small_len(), 0);
			shadow = region(small_len(), 0);
		}
		fill(c->local, c->size, gen);
		if (c->nr > 1) {
			read_span(pid, c, shadow);
			for (i = 0; i < c->nr; i++) {
				size_t off = (size_t)((char *)c->riov[i].iov_base - c->remote);

				memcpy(shadow + off - c->lo, c->local + done, c->riov[i].iov_len);
				done += c->riov[i].iov_len;
			}
			want = shadow;
		}
		if (call(s, pid, c) != (ssize_t)c->size)
			die("%s: writev failed while checking", s->label);
		read_span(pid, c, back);
		for (k = 0; k < c->hi - c->lo; k++)
			if (back[k] != want[k])
				die("%s: wrong byte in the target at offset %zu after writev "
				    "(%s, %zu)", s->label, c->lo + k, shape_name[c->shape], c->size);
		return;
	}
	memset(c->local, 0, c->size);
	if (call(s, pid, c) != (ssize_t)c->size)
		die("%s: readv failed while checking", s->label);
	for (i = 0; i < c->nr; i++) {
		size_t off = (size_t)((char *)c->riov[i].iov_base - c->remote), k;

		for (k = 0; k < c->riov[i].iov_len; k++)
			if (c->local[done + k] != pattern(off + k, 0))
				die("%s: wrong byte %zu after readv (%s, %zu)", s->label,
				    done + k, shape_name[c->shape], c->size);
		done += c->riov[i].iov_len;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double quantile(double *v, unsigned n, double q)
{
	double pos, frac;
	unsigned i;

	qsort(v, n, sizeof(*v), cmp_double);
	pos = q * (n - 1);
	i = (unsigned)pos;
	frac = pos - i;
	return i + 1 < n ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

static const char *fmt_size(size_t v)
{
	static char buf[4][24];
	static int k;
	char *b = buf[k++ & 3];

	if (v >= (1UL << 20) && !(v % (1UL << 20)))
		snprintf(b, 24, "%zuM", v >> 20);
	else if (v >= 1024 && !(v % 1024))
		snprintf(b, 24, "%zuK", v >> 10);
	else
		snprintf(b, 24, "%zu", v);
	return b;
}

/* Pair p: A then B when p is even, B then A when it is odd. */
static void pair(struct cell *c, pid_t pid, unsigned n, unsigned p, double *ta, double *tb)
{
	if (p & 1) {
		*tb = sample(&opt.b, pid, c, n);
		*ta = sample(&opt.a, pid, c, n);
	} else {
		*ta = sample(&opt.a, pid, c, n);
		*tb = sample(&opt.b, pid, c, n);
	}
}

/*
 * --calls N: check both sides, then N untimed pairs of single calls.
 * vm/icount.sh traces the last pairs under gdb and counts on this order:
 * before the pairs, each side's own syscall runs exactly once (in its
 * check; a writev check also reads the span with A's readv, after the
 * writev and, for a shape cell, before it).  Alternating the order matters
 * there: every second touch of a page that is not yet active asks for its
 * activation, so with A always first, B would pay.
 */
static void run_calls(struct cell *c, pid_t pid)
{
	double ta, tb;
	unsigned p;

	check(&opt.b, pid, c, 101);
	check(&opt.a, pid, c, 102);
	for (p = 0; p < opt.calls; p++)
		pair(c, pid, 1, p, &ta, &tb);
	printf("%-6s %-6s %-3s %6s | %u pairs of calls\n", c->write ? "writev" : "readv",
	       shape_name[c->shape], c->huge ? "thp" : "4k", fmt_size(c->size), opt.calls);
	fflush(stdout);
}

static void run_cell(struct cell *c, pid_t pid)
{
	double ta[MAX_PAIRS], tb[MAX_PAIRS], ratio[MAX_PAIRS];
	double t, med_a, med_b, q1, q2, q3;
	unsigned n = 1, p, won = 0;
	const char *what;

	/* warm up both, then find N for one sample of about target_ms */
	sample(&opt.a, pid, c, 1);
	sample(&opt.b, pid, c, 1);
	for (;;) {
		t = sample(&opt.a, pid, c, n) * n;
		if (t * 1e3 >= opt.target_ms / 4 || n >= (1u << 24))
			break;
		n *= 2;
	}
	n = (unsigned)(n * (opt.target_ms / 1e3) / t);
	if (n < 1)
		n = 1;

	for (p = 0; p < opt.pairs; p++) {
		pair(c, pid, n, p, &ta[p], &tb[p]);
		ratio[p] = ta[p] / tb[p];
		won += tb[p] < ta[p];
	}
	check(&opt.b, pid, c, 101);
	check(&opt.a, pid, c, 102);

	med_a = quantile(ta, opt.pairs, 0.5);
	med_b = quantile(tb, opt.pairs, 0.5);
	q1 = quantile(ratio, opt.pairs, 0.25);
	q2 = quantile(ratio, opt.pairs, 0.5);
	q3 = quantile(ratio, opt.pairs, 0.75);
	what = c->write ? "writev" : "readv";
	printf("%-6s %-6s %-3s %6s | %10.2f %10.2f | %6.3f  [%5.3f %5.3f] %3u/%u\n",
	       what, shape_name[c->shape], c->huge ? "thp" : "4k", fmt_size(c->size),
	       med_a * 1e6, med_b * 1e6, q2, q1, q3, won, opt.pairs);
	fflush(stdout);
	if (opt.csv)
		fprintf(opt.csv, "%s,%s,%s,%zu,%u,%.4f,%.4f,%.4f,%.4f,%.4f,%u,%u\n",
			what, shape_name[c->shape], c->huge ? "thp" : "4k", c->size, n,
			med_a * 1e6, med_b * 1e6, q2, q1, q3, won, opt.pairs);
}

static void parse_side(struct side *s, const char *arg, const char *label)
{
	if (sscanf(arg, "%ld,%ld", &s->nr[0], &s->nr[1]) != 2)
		die("want READV,WRITEV syscall numbers, not '%s'", arg);
	snprintf(s->label, sizeof(s->label), "%s", label);
}

static void set_shapes(char *list)
{
	char *tok, *save = NULL;
	unsigned i;

	opt.nshapes = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			opt.nshapes = 0;
			for (i = SH_GATHER; i < SH_NR; i++)
				opt.shapes[opt.nshapes++] = i;
			return;
		}
		for (i = SH_GATHER; i < SH_NR && strcmp(tok, shape_name[i]); i++)
			;
		if (i == SH_NR)
			die("no shape '%s' (-S takes gather,vector,s8k,s4k64,sparse,alt2,rev,"
			    "mix,1byte or all)", tok);
		if (opt.nshapes == SH_NR - 1)
			die("-S: too many shapes");
		opt.shapes[opt.nshapes++] = i;
	}
}

static void add_sizes(char *list)
{
	char *tok, *save = NULL, *end;

	opt.nsizes = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t v = strtoul(tok, &end, 10);

		if (*end == 'K' || *end == 'k')
			v <<= 10;
		else if (*end == 'M' || *end == 'm')
			v <<= 20;
		if (!v || opt.nsizes == MAX_SIZES)
			die("bad size list");
		opt.sizes[opt.nsizes++] = v;
	}
}

static void usage(void)
{
	fprintf(stderr,
"usage: cma-ab [options]\n"
"  -a R,W          syscall numbers of A (default 310,311: the kernel's own)\n"
"  -b R,W          syscall numbers of B (default 470,471: ours in the A/B kernel)\n"
"  -s LIST         sizes of the one-element cells (default 4K,64K,256K,1M,4M,16M)\n"
"  -P LIST         pages: 4k,thp (default both)\n"
"  -d LIST         read,write (default both)\n"
"  -S LIST         shape cells, in this order (default all: gather,vector,s8k,\n"
"                  s4k64,sparse,alt2,rev,mix,1byte; see the top of ab.c)\n"
"  -G              no shape cells (as an empty -S)\n"
"  -e N            remote elements of a shape cell, 1..%d (default %d)\n"
"  -n PAIRS        sample pairs per cell, odd, 5..%d (default 15)\n"
"  -t MS           length of one sample (default 20)\n"
"  --csv FILE      one line per cell\n"
"  --calls N       no timing: per cell, check both sides, then N pairs of\n"
"                  single calls, A first in even pairs (for vm/icount.sh)\n",
		NSEG, NSEG, MAX_PAIRS);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "csv", 1, 0, 'c' }, { "calls", 1, 0, 'C' }, { 0, 0, 0, 0 }
	};
	char sizes[] = "4K,64K,256K,1M,4M,16M", all[] = "all";
	static struct cell cell;
	struct cell *c = &cell;
	struct target_bufs tb;
	int fds[2], o, dir, huge;
	char *lsmall, *lhuge = NULL;
	unsigned i;
	size_t len;
	pid_t pid;

	parse_side(&opt.a, "310,311", "A");
	parse_side(&opt.b, "470,471", "B");
	add_sizes(sizes);
	opt.pages_4k = opt.pages_thp = 1;
	opt.dir_read = opt.dir_write = 1;
	set_shapes(all);
	opt.elems = NSEG;
	opt.pairs = 15;
	opt.target_ms = 20;
	while ((o = getopt_long(argc, argv, "a:b:s:P:d:GS:e:n:t:", lo, NULL)) != -1) {
		switch (o) {
		case 'a': parse_side(&opt.a, optarg, "A"); break;
		case 'b': parse_side(&opt.b, optarg, "B"); break;
		case 's': add_sizes(optarg); break;
		case 'P':
			opt.pages_4k = !!strstr(optarg, "4k");
			opt.pages_thp = !!strstr(optarg, "thp");
			break;
		case 'd':
			opt.dir_read = !!strstr(optarg, "read");
			opt.dir_write = !!strstr(optarg, "write");
			break;
		case 'G': opt.nshapes = 0; break;
		case 'S': set_shapes(optarg); break;
		case 'e': opt.elems = atoi(optarg); break;
		case 'n': opt.pairs = atoi(optarg); break;
		case 't': opt.target_ms = atof(optarg); break;
		case 'C': opt.calls = atoi(optarg); break;
		case 'c':
			opt.csv = fopen(optarg, "w");
			if (!opt.csv)
				die("%s: %s", optarg, strerror(errno));
			break;
		default: usage();
		}
	}
	if (opt.pairs < 5 || opt.pairs > MAX_PAIRS || !(opt.pairs & 1) || opt.target_ms <= 0 ||
	    opt.elems < 1 || opt.elems > NSEG || optind < argc)
		usage();

	len = max_size();
	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		close(fds[0]);
		target(fds[1], len);
	}
	close(fds[1]);
	if (read(fds[0], &tb, sizeof(tb)) != sizeof(tb))
		die("the target died during setup");

	lsmall = region(len, 0);
	memset(lsmall, 0, len);
	if (opt.pages_thp) {
		lhuge = region(len, 1);
		memset(lhuge, 0, len);
	}

	printf("cma-ab: A = syscalls %ld/%ld, B = syscalls %ld/%ld%s\n", opt.a.nr[0], opt.a.nr[1],
	       opt.b.nr[0], opt.b.nr[1],
	       opt.a.nr[0] == opt.b.nr[0] ? " (A/A control: both sides the same code)" : "");
	if (opt.nshapes)
		printf("  shape cells: %u remote elements of %d B (1byte: of 1 B) in a %zu MiB arena"
		       " of 4 KiB pages;\n  size = bytes per call\n", opt.elems, SEGLEN,
		       small_len() >> 20);
	if (opt.calls) {
		printf("  --calls %u: no timing, only calls\n", opt.calls);
	} else {
		printf("  %u pairs of samples per cell, ~%.0f ms a sample, A and B alternating first;\n"
		       "  target AnonHugePages %ld kB, caller %ld kB\n", opt.pairs, opt.target_ms,
		       tb.thp_kb, anon_huge_kb());
		printf("  A/B = time(A) / time(B), median over the pairs [quartiles]; above 1: B faster\n"
		       "  won = pairs in which B was faster\n\n");
		printf("%-6s %-6s %-3s %6s | %10s %10s | %6s  %-13s %s\n", "call", "shape", "pg",
		       "size", "A us/call", "B us/call", "A/B", "[q1 q3]", "won");
	}
	if (opt.csv)
		fprintf(opt.csv, "call,shape,pages,size,calls_per_sample,a_us,b_us,"
			"ratio_median,ratio_q1,ratio_q3,b_won,pairs\n");

	for (dir = 0; dir < 2; dir++) {
		if ((dir == 0 && !opt.dir_read) || (dir == 1 && !opt.dir_write))
			continue;
		for (huge = 0; huge < 2; huge++) {
			if ((!huge && !opt.pages_4k) || (huge && !opt.pages_thp))
				continue;
			for (i = 0; i < opt.nsizes; i++) {
				c->write = dir;
				c->shape = SH_ONE;
				c->huge = huge;
				c->size = opt.sizes[i];
				c->remote = huge ? tb.huge : tb.small;
				c->local = huge ? lhuge : lsmall;
				if (dir)
					fill(c->local, c->size, 1 + i);
				layout(c, 1);
				(opt.calls ? run_calls : run_cell)(c, tb.pid);
			}
			if (huge)
				continue;
			for (i = 0; i < opt.nshapes; i++) {
				c->write = dir;
				c->shape = opt.shapes[i];
				c->huge = huge;
				c->remote = tb.small;
				c->local = lsmall;
				layout(c, 1);
				if (dir)
					fill(c->local, c->size, 7 + c->shape);
				(opt.calls ? run_calls : run_cell)(c, tb.pid);
			}
		}
	}
	kill(tb.pid, SIGKILL);
	waitpid(tb.pid, NULL, 0);
	if (opt.csv)
		fclose(opt.csv);
	return 0;
}
