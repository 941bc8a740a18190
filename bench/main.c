// SPDX-License-Identifier: GPL-2.0
/*
 * cmabench: options, the list of cells to measure, and the output: tables
 * for people (rows = transports, columns = process counts or sizes, each
 * cell "median (min-max)" over the timed runs) and CSV for scripts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmabench.h"

#define MAX_SIZES	32
#define GATHER_LEN	65536

static const char *const shapes[] = { "gather", "vector", "contig" };

static struct {
	struct bench_opts b;
	int xsel[X_NR];
	int psel[P_NR];
	int pages_sel[2];
	enum pages_id table_pages;
	size_t sizes[MAX_SIZES];
	unsigned nsizes;
	unsigned procs[MAX_PROCS];
	unsigned nprocs;
	size_t msg, lat;
	FILE *csv;
	const char *note;
	unsigned rounds;
	int quick;
} opt;

static int x_ok[X_NR];
static unsigned thp_cells, thp_missing;	/* THP cells; those without huge pages */
static char x_why[X_NR][128];

/* ---- small helpers ------------------------------------------------------- */

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (end == s || *end || !v || v % 8 || v > (1ull << 30))
		die("bad size '%s': want a multiple of 8 bytes up to 1G (suffixes K, M, G)", s);
	return v;
}

static const char *fmt_size(size_t v)
{
	static char buf[8][24];
	static unsigned k;
	char *b = buf[k++ % 8];

	if (v >= (1 << 20) && v % (1 << 20) == 0)
		snprintf(b, 24, "%zuM", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(b, 24, "%zuK", v >> 10);
	else
		snprintf(b, 24, "%zu", v);
	return b;
}

/* Split a comma-separated list, calling fn for each element. */
static void each(const char *list, void (*fn)(const char *))
{
	char *dup = strdup(list), *save = NULL, *t;

	if (!dup)
		die("out of memory");
	for (t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
		fn(t);
	free(dup);
}

static void sel_xport(const char *s)
{
	int i;

	if (!strcmp(s, "all")) {
		for (i = 0; i < X_NR; i++)
			opt.xsel[i] = 1;
		return;
	}
	for (i = 0; i < X_NR; i++)
		if (!strcmp(s, xports[i].name)) {
			opt.xsel[i] = 1;
			return;
		}
	die("unknown transport '%s' (shm cma-read cma-write pipe vmsplice io_uring ideal memcpy all)", s);
}

static void sel_pattern(const char *s)
{
	int i;

	if (!strcmp(s, "all")) {
		for (i = 0; i < P_NR; i++)
			opt.psel[i] = 1;
		return;
	}
	for (i = 0; i < P_NR; i++)
		if (!strcmp(s, pattern_names[i])) {
			opt.psel[i] = 1;
			return;
		}
	die("unknown pattern '%s' (pingpong ring random sweep gather all)", s);
}

static void sel_pages(const char *s)
{
	if (!strcmp(s, "4k"))
		opt.pages_sel[PG_4K] = 1;
	else if (!strcmp(s, "thp"))
		opt.pages_sel[PG_THP] = 1;
	else
		die("unknown page kind '%s' (4k thp)", s);
}

static void add_size(const char *s)
{
	if (opt.nsizes == MAX_SIZES)
		die("at most %d sizes", MAX_SIZES);
	opt.sizes[opt.nsizes++] = parse_size(s);
}

static void add_procs(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < 2 || v > MAX_PROCS)
		die("bad process count '%s': want 2..%d", s, MAX_PROCS);
	if (opt.nprocs == MAX_PROCS)
		die("too many process counts");
	opt.procs[opt.nprocs++] = v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat3 {
	double med, min, max;
};

static struct stat3 stats(const double *v, unsigned n)
{
	double s[MAX_RUNS];
	struct stat3 r;

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	r.min = s[0];
	r.max = s[n - 1];
	return r;
}

/* "12345 (12001-12800)" with a precision that suits the magnitude. */
static const char *fmt_stat(struct stat3 s)
{
	static char buf[8][48];
	static unsigned k;
	char *b = buf[k++ % 8];
	int prec = s.med >= 100 ? 0 : s.med >= 10 ? 1 : 2;

	snprintf(b, 48, "%.*f (%.*f-%.*f)", prec, s.med, prec, s.min, prec, s.max);
	return b;
}

/* ---- the machine --------------------------------------------------------- */

/* The 1-minute load average: other work on the machine skews every figure. */
static const char *loadavg(void)
{
	static char buf[16];
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(buf, sizeof(buf), "unknown");
	if (f) {
		if (fscanf(f, "%15s", buf) != 1)
			snprintf(buf, sizeof(buf), "unknown");
		fclose(f);
	}
	return buf;
}

static void machine(char *buf, size_t len)
{
	char line[256], model[128] = "unknown CPU";
	struct utsname u;
	cpu_set_t set;
	FILE *f = fopen("/proc/cpuinfo", "r");
	time_t t = time(NULL);
	char date[32];
	int usable = 0;

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *c = strchr(line, ':');

			if (c && !strncmp(line, "model name", 10)) {
				snprintf(model, sizeof(model), "%s", c + 2);
				model[strcspn(model, "\n")] = 0;
				break;
			}
		}
		fclose(f);
	}
	uname(&u);
	if (!sched_getaffinity(0, sizeof(set), &set))
		usable = CPU_COUNT(&set);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
	snprintf(buf, len, "%s, %ld CPUs (%d usable); Linux %s %s; %s; load average %s",
		 model, sysconf(_SC_NPROCESSORS_ONLN), usable, u.release, u.machine, date,
		 loadavg());
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "unavailable");
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static void header(void)
{
	char m[512], thp[128], shmem[128];

	machine(m, sizeof(m));
	read_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp));
	read_line("/sys/kernel/mm/transparent_hugepage/shmem_enabled", shmem, sizeof(shmem));
	printf("cmabench: %s\n", m);
	if (opt.note)
		printf("note: %s\n", opt.note);
	printf("THP: %s; shmem THP: %s%s\n", thp, shmem,
	       thp_available() ? "" : "  (THP unavailable: 'thp' rows use 4 KiB pages)");
	printf("settings: %u round(s) of %u timed runs, each after 1 warm-up run, ~%.0f ms a run;\n"
	       "  a run's figure is the %s of its iterations; a cell shows the median (min-max)\n"
	       "  over all its runs; rounds interleave the cells;\n"
	       "  flow control %s; workers %s; shm fragments %s x %u; pipe %s\n",
	       opt.rounds, opt.b.runs, opt.b.target_ms, opt.b.mean ? "mean" : "median",
	       opt.b.wait == W_SPIN ? "spin" : opt.b.wait == W_FUTEX ? "futex" :
	       "spin where processes <= CPUs, futex beyond",
	       opt.b.pin ? "pinned round-robin to CPUs" : "not pinned",
	       fmt_size(opt.b.xo.frag), opt.b.xo.slots, fmt_size(opt.b.xo.pipe_size));
	printf("  every received byte verified; MB/s = 10^6 bytes/s\n");
	if (opt.csv) {
		fprintf(opt.csv, "# cmabench: %s\n", m);
		if (opt.note)
			fprintf(opt.csv, "# note: %s\n", opt.note);
		fprintf(opt.csv, "# THP: %s; shmem THP: %s\n", thp, shmem);
		fprintf(opt.csv, "# rounds %u, runs %u, target %.0f ms, run figure %s of iterations, "
			"frag %zu x %u, pipe %zu\n",
			opt.rounds, opt.b.runs, opt.b.target_ms, opt.b.mean ? "mean" : "median", opt.b.xo.frag, opt.b.xo.slots,
			opt.b.xo.pipe_size);
		fprintf(opt.csv, "pattern,transport,pages,procs,size,shape,metric,median,min,max,runs,iters,wait\n");
	}
	for (int i = 0; i < X_NR; i++)
		if (opt.xsel[i] && !x_ok[i]) {
			printf("SKIPPED %s: %s\n", xports[i].name, x_why[i]);
			if (opt.csv)
				fprintf(opt.csv, "# skipped %s: %s\n", xports[i].name, x_why[i]);
		}
	fflush(stdout);
}

/* ---- measuring ------------------------------------------------------------- */

/*
 * The tables are walked rounds + 1 times: each of the first --rounds walks
 * measures every cell once (opts.runs timed runs), the last one prints.
 * With more than one round, a burst of foreign load on this noisy machine
 * hits all transports alike instead of the few measured during the burst.
 */
struct acc {
	struct cell c;
	unsigned n, iters;
	double bw[MAX_RUNS], us[MAX_RUNS], call[MAX_RUNS];
	int has_call, skipped;
	long thp_kb;
	char wait[8];
};

static struct acc accs[1024];
static unsigned naccs, ncells_done;
static int collecting;

/* printf for the tables: silent while collecting */
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	if (collecting)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static struct acc *find_acc(const struct cell *c)
{
	unsigned i;

	for (i = 0; i < naccs; i++) {
		const struct cell *d = &accs[i].c;

		if (d->x == c->x && d->pat == c->pat && d->pages == c->pages &&
		    d->nprocs == c->nprocs && d->size == c->size && d->shape == c->shape)
			return &accs[i];
	}
	if (naccs == sizeof(accs) / sizeof(accs[0]))
		die("too many cells");
	accs[naccs].c = *c;
	accs[naccs].thp_kb = -1;
	return &accs[naccs++];
}

static void csv_row(const struct acc *a, const char *metric, struct stat3 s)
{
	const struct cell *c = &a->c;

	if (!opt.csv)
		return;
	fprintf(opt.csv, "%s,%s,%s,%u,%zu,%s,%s,%.6g,%.6g,%.6g,%u,%u,%s\n",
		pattern_names[c->pat], xports[c->x].name, c->pages == PG_THP ? "thp" : "4k",
		c->nprocs, c->size, c->shape ? c->shape : "-", metric, s.med, s.min, s.max,
		a->n, a->iters, a->wait);
	fflush(opt.csv);
}

/*
 * Collecting: measure one cell and keep its runs.  Printing: the figures
 * of the cell over all rounds, written to the CSV too; false if the
 * transport is unavailable.
 */
static int measure(struct cell *c, struct stat3 *bw, struct stat3 *us, struct stat3 *call)
{
	struct result r;
	struct acc *a;
	unsigned i;

	if (!x_ok[c->x])
		return 0;
	if (c->x == X_MEMCPY && c->pat != P_RING && c->pat != P_RANDOM)
		c->nprocs = 1;
	a = find_acc(c);
	if (collecting) {
		if (isatty(2))
			fprintf(stderr, "\rcmabench: round %u/%u, %u cells measured ",
				ncells_done / (naccs ? naccs : 1) + 1, opt.rounds, ncells_done);
		ncells_done++;
		run_cell(c, &opt.b, &r);
		if (r.status) {
			a->skipped = 1;
			return 0;
		}
		for (i = 0; i < r.runs && a->n < MAX_RUNS; i++, a->n++) {
			a->bw[a->n] = r.bw[i];
			a->us[a->n] = r.us[i];
			a->call[a->n] = r.call_us[i];
		}
		a->has_call = r.has_call;
		a->iters = r.iters;
		memcpy(a->wait, r.wait, sizeof(a->wait));
		if (a->thp_kb < 0 || r.thp_kb < a->thp_kb)
			a->thp_kb = r.thp_kb;
		return 0;
	}
	if (a->skipped || !a->n)
		return 0;
	*bw = stats(a->bw, a->n);
	*us = stats(a->us, a->n);
	csv_row(a, "MB/s", *bw);
	csv_row(a, "us", *us);
	if (a->has_call) {
		*call = stats(a->call, a->n);
		csv_row(a, "call_us", *call);
	}
	if (c->pages == PG_THP) {
		thp_cells++;
		if (a->thp_kb <= 0)
			thp_missing++;
	}
	return 1;
}

static void pingpong_table(void)
{
	int x;

	out("\n== Ping-pong, 2 processes, %s pages: bandwidth at %s, latency at %s "
	    "(half round trip)\n", opt.table_pages == PG_THP ? "THP" : "4 KiB",
	    fmt_size(opt.msg), fmt_size(opt.lat));
	out("%-10s %-26s %-26s\n", "transport", "MB/s", "latency us");
	for (x = 0; x < X_NR; x++) {
		struct cell c = { .x = x, .pat = P_PINGPONG, .pages = opt.table_pages, .nprocs = 2 };
		struct stat3 bw, us, call, lbw;

		if (!opt.xsel[x])
			continue;
		out("%-10s ", xports[x].name);
		c.size = opt.msg;
		if (measure(&c, &bw, &us, &call))
			out("%-26s ", fmt_stat(bw));
		else
			out("%-26s ", "n/a");
		c.size = opt.lat;
		c.nprocs = 2;
		if (measure(&c, &lbw, &us, &call))
			out("%s%s\n", fmt_stat(us), x == X_MEMCPY ? "  (one copy, one process)" : "");
		else
			out("n/a\n");
	}
}

static void ring_table(enum pattern_id pat)
{
	unsigned i;
	int x;

	out("\n== %s ring, %s per message, %s pages: MB/s per process\n",
	    pat == P_RING ? "Naturally ordered" : "Randomly ordered", fmt_size(opt.msg),
	    opt.table_pages == PG_THP ? "THP" : "4 KiB");
	out("%-10s", "transport");
	for (i = 0; i < opt.nprocs; i++)
		out(" %-2u %-23s", opt.procs[i], "procs");
	out("\n");
	for (x = 0; x < X_NR; x++) {
		if (!opt.xsel[x])
			continue;
		out("%-10s", xports[x].name);
		for (i = 0; i < opt.nprocs; i++) {
			struct cell c = { .x = x, .pat = pat, .pages = opt.table_pages,
					  .nprocs = opt.procs[i], .size = opt.msg };
			struct stat3 bw, us, call;

			if (measure(&c, &bw, &us, &call))
				out(" %-26s", fmt_stat(bw));
			else
				out(" %-26s", "n/a");
		}
		out("\n");
	}
}

static void sweep_table(enum pages_id pages)
{
	unsigned i;
	int x;

	out("\n== Size sweep, ping-pong between 2 processes, %s: MB/s (median)\n",
	    pages == PG_THP ? "THP-backed buffers (MADV_HUGEPAGE)" : "4 KiB pages");
	out("%-10s", "transport");
	for (i = 0; i < opt.nsizes; i++)
		out(" %8s", fmt_size(opt.sizes[i]));
	out("\n");
	for (x = 0; x < X_NR; x++) {
		if (!opt.xsel[x])
			continue;
		out("%-10s", xports[x].name);
		for (i = 0; i < opt.nsizes; i++) {
			struct cell c = { .x = x, .pat = P_SWEEP, .pages = pages, .nprocs = 2,
					  .size = opt.sizes[i] };
			struct stat3 bw, us, call;

			if (measure(&c, &bw, &us, &call))
				out(" %8.0f", bw.med);
			else
				out(" %8s", "n/a");
		}
		out("\n");
	}
}

static void gather_table(void)
{
	struct stat3 cma_call[X_NR][3];
	int have_call[X_NR] = { 0 };
	unsigned s;
	int x;

	out("\n== Fine-grained gather, 2 processes, one-way message of 64 KiB, %s pages: us per message\n"
	    "   gather = 1024 x 64 B elements of 16 pages in shuffled order; vector = 1024 x 64 B,\n"
	    "   stride 128 B; contig = one 64 KiB element.  The layout is in the sender;\n"
	    "   shm/pipe/io_uring/vmsplice pack it (writev/vmsplice take the 1024 iovecs)\n",
	    opt.table_pages == PG_THP ? "THP" : "4 KiB");
	out("%-10s %-24s %-24s %-24s\n", "transport", shapes[0], shapes[1], shapes[2]);
	for (x = 0; x < X_NR; x++) {
		if (!opt.xsel[x])
			continue;
		out("%-10s", xports[x].name);
		for (s = 0; s < 3; s++) {
			struct cell c = { .x = x, .pat = P_GATHER, .pages = opt.table_pages,
					  .nprocs = 2, .size = GATHER_LEN, .shape = shapes[s] };
			struct stat3 bw, us, call;

			if (measure(&c, &bw, &us, &call)) {
				out(" %-24s", fmt_stat(us));
				if (c.x == X_CMA_READ || c.x == X_CMA_WRITE) {
					cma_call[x][s] = call;
					have_call[x] = 1;
				}
			} else {
				out(" %-24s", "n/a");
			}
		}
		out("\n");
	}
	for (x = 0; x < X_NR; x++) {
		if (!have_call[x])
			continue;
		out("%-10s per call (us inside %s): gather %s, vector %s, contig %s; "
		    "gather/contig %.1fx\n", xports[x].name,
		    x == X_CMA_READ ? "process_vm_readv, 1024 remote iovecs" :
		    "process_vm_writev, 1024 local iovecs",
		    fmt_stat(cma_call[x][0]), fmt_stat(cma_call[x][1]),
		    fmt_stat(cma_call[x][2]), cma_call[x][0].med / cma_call[x][2].med);
	}
}

/* ---- options -------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: cmabench [options]\n"
"Move the same bytes between processes with each transport; print tables\n"
"(median (min-max) of the timed runs) and optionally CSV.\n"
"  -t, --transports LIST  shm,cma-read,cma-write,pipe,vmsplice,io_uring,ideal,memcpy\n"
"                         or all (default all)\n"
"  -p, --patterns LIST    pingpong,ring,random,sweep,gather or all (default all)\n"
"  -n, --procs LIST       ring process counts, 2..%d (default: number of CPUs, min 2)\n"
"  -m, --msg SIZE         ping-pong and ring message size (default 2M)\n"
"  -l, --lat SIZE         ping-pong latency message size (default 8)\n"
"  -s, --sizes LIST       sweep sizes (default 4K,16K,64K,256K,1M,4M,16M,64M)\n"
"  -P, --pages LIST       sweep page kinds: 4k,thp (default both)\n"
"      --table-pages KIND pages for the ping-pong, ring and gather tables (default 4k)\n"
"  -r, --runs N           timed runs per cell, >= 5 (default 5), after 1 warm-up run\n"
"  -R, --rounds K         measure every cell K times, interleaved (default 1); the\n"
"                         figures are then over K x N runs\n"
"      --target-ms MS     length of one timed run (default 40)\n"
"      --mean             a run's figure is the mean of its iterations (as hpcc),\n"
"                         not their median; sensitive to other load\n"
"      --wait MODE        auto, spin or futex (default auto: spin when processes <= CPUs)\n"
"      --frag SIZE        shm fragment size (default 32K)\n"
"      --slots N          shm ring depth in fragments, 1..64 (default 8)\n"
"      --pipe-size SIZE   F_SETPIPE_SZ request (default 1M)\n"
"      --no-pin           do not pin workers to CPUs\n"
"      --seed N           random ring order and gather shuffle (default 1)\n"
"      --timeout SEC      give up on a cell after SEC seconds (default 600)\n"
"  -q, --quick            4K,64K,1M,4M sweep, 1M messages, short runs\n"
"  -c, --csv FILE         also write every figure as CSV to FILE (- for stdout)\n"
"      --note TEXT        print TEXT with the machine line and in the CSV, e.g.\n"
"                         \"QEMU TCG, emulated: only ratios between kernels mean anything\"\n"
"  -h, --help\n", MAX_PROCS);
}

enum { O_TABLE_PAGES = 256, O_TARGET, O_WAIT, O_FRAG, O_SLOTS, O_PIPE, O_NOPIN, O_SEED, O_TIMEOUT,
       O_NOTE, O_MEAN };

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "transports", 1, 0, 't' }, { "patterns", 1, 0, 'p' }, { "procs", 1, 0, 'n' },
		{ "msg", 1, 0, 'm' }, { "lat", 1, 0, 'l' }, { "sizes", 1, 0, 's' },
		{ "pages", 1, 0, 'P' }, { "table-pages", 1, 0, O_TABLE_PAGES },
		{ "runs", 1, 0, 'r' }, { "rounds", 1, 0, 'R' }, { "target-ms", 1, 0, O_TARGET }, { "wait", 1, 0, O_WAIT },
		{ "frag", 1, 0, O_FRAG }, { "slots", 1, 0, O_SLOTS }, { "pipe-size", 1, 0, O_PIPE },
		{ "no-pin", 0, 0, O_NOPIN }, { "seed", 1, 0, O_SEED }, { "timeout", 1, 0, O_TIMEOUT },
		{ "quick", 0, 0, 'q' }, { "csv", 1, 0, 'c' }, { "note", 1, 0, O_NOTE },
		{ "mean", 0, 0, O_MEAN },
		{ "help", 0, 0, 'h' }, { 0 }
	};
	const char *xs = "all", *ps = "all", *pgs = "4k,thp", *sizes = NULL, *procs = NULL;
	const char *csv = NULL, *msg = NULL;
	int c;

	opt.b.runs = 5;
	opt.rounds = 1;
	opt.b.target_ms = 40;
	opt.b.pin = 1;
	opt.b.seed = 1;
	opt.b.timeout = 600;
	opt.b.xo = (struct xopts){ .frag = 32768, .slots = 8, .pipe_size = 1 << 20 };
	opt.lat = 8;
	opt.table_pages = PG_4K;

	while ((c = getopt_long(argc, argv, "t:p:n:m:l:s:P:r:R:qc:h", lo, NULL)) != -1) {
		switch (c) {
		case 't': xs = optarg; break;
		case 'p': ps = optarg; break;
		case 'n': procs = optarg; break;
		case 'm': msg = optarg; break;
		case 'l': opt.lat = parse_size(optarg); break;
		case 's': sizes = optarg; break;
		case 'P': pgs = optarg; break;
		case O_TABLE_PAGES:
			if (strcmp(optarg, "4k") && strcmp(optarg, "thp"))
				die("--table-pages wants 4k or thp");
			opt.table_pages = strcmp(optarg, "thp") ? PG_4K : PG_THP;
			break;
		case 'r':
			opt.b.runs = atoi(optarg);
			if (opt.b.runs < 5 || opt.b.runs > MAX_RUNS)
				die("--runs wants 5..%d: a median of fewer runs is not a figure", MAX_RUNS);
			break;
		case 'R':
			opt.rounds = atoi(optarg);
			if (opt.rounds < 1)
				die("--rounds wants a positive number");
			break;
		case O_TARGET:
			opt.b.target_ms = atof(optarg);
			if (opt.b.target_ms <= 0)
				die("--target-ms wants a positive number");
			break;
		case O_WAIT:
			if (!strcmp(optarg, "auto"))
				opt.b.wait = W_AUTO;
			else if (!strcmp(optarg, "spin"))
				opt.b.wait = W_SPIN;
			else if (!strcmp(optarg, "futex"))
				opt.b.wait = W_FUTEX;
			else
				die("--wait wants auto, spin or futex");
			break;
		case O_FRAG: opt.b.xo.frag = parse_size(optarg); break;
		case O_SLOTS:
			opt.b.xo.slots = atoi(optarg);
			if (opt.b.xo.slots < 1 || opt.b.xo.slots > 64)
				die("--slots wants 1..64");
			break;
		case O_PIPE: opt.b.xo.pipe_size = parse_size(optarg); break;
		case O_NOPIN: opt.b.pin = 0; break;
		case O_MEAN: opt.b.mean = 1; break;
		case O_SEED: opt.b.seed = strtoul(optarg, NULL, 0); break;
		case O_TIMEOUT: opt.b.timeout = strtoul(optarg, NULL, 0); break;
		case 'q': opt.quick = 1; break;
		case 'c': csv = optarg; break;
		case O_NOTE:
			if (strpbrk(optarg, "\n,"))
				die("--note: no commas or newlines, please (it goes into the CSV)");
			opt.note = optarg;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (opt.rounds * opt.b.runs > MAX_RUNS)
		die("--rounds x --runs is at most %d", MAX_RUNS);

	if (opt.quick) {
		opt.b.target_ms = 4;
		if (!sizes)
			sizes = "4K,64K,1M,4M";
		if (!msg)
			msg = "1M";
	}
	opt.msg = parse_size(msg ? msg : "2M");
	each(xs, sel_xport);
	each(ps, sel_pattern);
	each(pgs, sel_pages);
	each(sizes ? sizes : "4K,16K,64K,256K,1M,4M,16M,64M", add_size);
	if (procs) {
		each(procs, add_procs);
	} else {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		opt.procs[opt.nprocs++] = n < 2 ? 2 : n > MAX_PROCS ? MAX_PROCS : n;
	}
	if (csv) {
		/* with "-" the CSV takes stdout and the tables are dropped */
		opt.csv = strcmp(csv, "-") ? fopen(csv, "w") : fdopen(dup(1), "w");
		if (!opt.csv)
			die("%s: %s", csv, strerror(errno));
		if (!strcmp(csv, "-") && !freopen("/dev/null", "w", stdout))
			die("cannot drop the tables for --csv -");
	}
}

static void tables(void)
{
	if (opt.psel[P_PINGPONG])
		pingpong_table();
	if (opt.psel[P_RING])
		ring_table(P_RING);
	if (opt.psel[P_RANDOM])
		ring_table(P_RANDOM);
	if (opt.psel[P_GATHER])
		gather_table();
	if (!opt.psel[P_SWEEP])
		return;
	if (opt.pages_sel[PG_4K])
		sweep_table(PG_4K);
	if (!opt.pages_sel[PG_THP])
		return;
	sweep_table(PG_THP);
	if (!thp_available())
		out("THP is unavailable on this kernel: the THP rows ran on 4 KiB pages\n");
	else if (thp_missing)
		out("THP check: in %u of %u cells no huge page backed the buffers\n",
		    thp_missing, thp_cells);
	else
		out("THP check: huge pages backed the private buffers in all %u cells "
		    "(AnonHugePages); shared ones (shm ring, ideal) follow shmem THP\n", thp_cells);
}

int main(int argc, char **argv)
{
	unsigned round;
	int x;

	parse(argc, argv);
	for (x = 0; x < X_NR; x++)
		x_ok[x] = 1;
	if (!probe_cma(x_why[X_CMA_READ], sizeof(x_why[0]))) {
		x_ok[X_CMA_READ] = x_ok[X_CMA_WRITE] = 0;
		memcpy(x_why[X_CMA_WRITE], x_why[X_CMA_READ], sizeof(x_why[0]));
	}
	if (!probe_uring(x_why[X_URING], sizeof(x_why[0])))
		x_ok[X_URING] = 0;

	header();
	for (round = 0; round <= opt.rounds; round++) {
		collecting = round < opt.rounds;
		tables();
	}
	if (isatty(2))
		fprintf(stderr, "\n");
	printf("\nload average at the end: %s\n", loadavg());
	if (opt.csv) {
		fprintf(opt.csv, "# load average at the end: %s\n", loadavg());
		fclose(opt.csv);
	}
	return 0;
}
