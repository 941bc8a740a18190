// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-verify: exchange messages of 8 bytes to 16 MiB between all ranks and
 * check every byte.  For each size and round, every rank sends to each
 * other rank (MPI_Sendrecv in a shifted ring, shift 1 .. size-1) a buffer
 * whose contents depend on sender, receiver, size and round, at an odd
 * offset into a page-aligned allocation, and checks what it received.
 * Open MPI's vader BTL moves messages above its eager limit (4 KiB) with
 * one process_vm_readv() when btl_vader_single_copy_mechanism is cma.
 *
 * Before the exchange, rank 0 prints the single-copy mechanism vader ended
 * up with on every rank, read back through MPI_T from the MCA variable
 * btl_vader_single_copy_mechanism: vader rewrites it when it falls back
 * (e.g. when Yama forbids CMA), so it tells what was chosen, not only what
 * was asked for.
 *
 * Prints one line per size on rank 0 and a summary; exits 1 (MPI_Abort)
 * at the first wrong byte, naming it.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = {
	8, 100, 4095, 4096, 4097, 65536 + 13, 262144, 1048576 + 7, 4194304, 16777216,
};
#define ROUNDS 3
#define MAXSZ (16777216 + 64)

static uint64_t pattern(int from, int to, size_t size, int round, size_t i)
{
	uint64_t x = ((uint64_t)from << 48) ^ ((uint64_t)to << 40) ^ ((uint64_t)round << 32) ^ size ^ (i / 8);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void fill(unsigned char *p, int from, int to, size_t size, int round)
{
	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)(pattern(from, to, size, round, i) >> (8 * (i % 8)));
}

static size_t check(const unsigned char *p, int from, int to, size_t size, int round)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] != (unsigned char)(pattern(from, to, size, round, i) >> (8 * (i % 8))))
			return i;
	return size;
}

/* The value of vader's single-copy MCA variable, by name ("?" if unknown). */
static void single_copy_mechanism(char *name, int len)
{
	int provided, idx, val = -1, count, verb, bind, scope, nlen = 64, dlen = 0, elen = 64, n;
	char vname[64], ename[64];
	MPI_Datatype dt;
	MPI_T_enum et;
	MPI_T_cvar_handle h;

	snprintf(name, len, "?");
	if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
		return;
	if (MPI_T_cvar_get_index("btl_vader_single_copy_mechanism", &idx) != MPI_SUCCESS ||
	    MPI_T_cvar_get_info(idx, vname, &nlen, &verb, &dt, &et, NULL, &dlen, &bind, &scope) != MPI_SUCCESS ||
	    MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
		goto out;
	if (MPI_T_cvar_read(h, &val) == MPI_SUCCESS) {
		snprintf(name, len, "%d", val);
		if (et != MPI_T_ENUM_NULL && MPI_T_enum_get_info(et, &n, ename, &elen) == MPI_SUCCESS)
			for (int i = 0; i < n; i++) {
				int v;

				elen = sizeof(ename);
				if (MPI_T_enum_get_item(et, i, &v, ename, &elen) == MPI_SUCCESS && v == val)
					snprintf(name, len, "%s", ename);
			}
	}
	MPI_T_cvar_handle_free(&h);
out:
	MPI_T_finalize();
}

int main(int argc, char **argv)
{
	char mech[64], *all;
	int rank, n, round, shift;
	unsigned char *sbuf = NULL, *rbuf = NULL;
	unsigned long long msgs = 0, bytes = 0, tmsgs, tbytes;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (posix_memalign((void **)&sbuf, 4096, MAXSZ) || posix_memalign((void **)&rbuf, 4096, MAXSZ)) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	single_copy_mechanism(mech, sizeof(mech));
	all = malloc(64 * n);
	if (!all)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Gather(mech, 64, MPI_CHAR, all, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("mpi-verify: single copy mechanism:");
		for (int i = 0; i < n; i++)
			printf(" rank %d %s", i, all + 64 * i);
		printf("\n");
		fflush(stdout);
	}
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t size = sizes[s];
		/* An odd offset into the page for odd sizes: unaligned copies. */
		size_t off = size % 2 ? 13 : 0;

		for (round = 0; round < ROUNDS; round++) {
			for (shift = 1; shift < n; shift++) {
				int to = (rank + shift) % n, from = (rank - shift + n) % n;
				size_t bad;

				fill(sbuf + off, rank, to, size, round);
				memset(rbuf + off, 0xa5, size);
				MPI_Sendrecv(sbuf + off, (int)size, MPI_BYTE, to, s,
					     rbuf + off, (int)size, MPI_BYTE, from, s,
					     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				bad = check(rbuf + off, from, rank, size, round);
				if (bad != size) {
					fprintf(stderr, "mpi-verify: rank %d: %zu-byte message from rank %d, round %d: byte %zu wrong\n",
						rank, size, from, round, bad);
					MPI_Abort(MPI_COMM_WORLD, 1);
				}
				msgs++;
				bytes += size;
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			printf("mpi-verify: %zu bytes: ok\n", size);
	}
	MPI_Reduce(&msgs, &tmsgs, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bytes, &tbytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi-verify: %d ranks: %llu messages, %llu bytes verified, 0 wrong\n", n, tmsgs, tbytes);
	MPI_Finalize();
	return 0;
}
