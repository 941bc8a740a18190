// SPDX-License-Identifier: GPL-2.0
/*
 * A write pin of pages that fork() left shared copy-on-write must break
 * the COW of every page it pins, not only of the first one: the parent
 * forks a child over a buffer, then writes into the child's copy with
 * process_vm_writev() (pin_user_pages_remote() with FOLL_WRITE over many
 * pages) and checks that its own copy did not change and the child's did.
 * Cases: all pages shared; every other page already unshared by the
 * child (so read-only and writable PTEs alternate); the pages shared with
 * a second child too.  TAP output, for vm/gup-tests.sh; built static.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define NPAGES 64

static long psz;
static int tests, failed;

/* The child: apply @pattern, report, wait, then check its copy holds 'W'. */
static int child(char *buf, int pattern, int to_parent, int from_parent)
{
	char c;
	long i;

	if (pattern == 1)
		for (i = 0; i < NPAGES; i += 2)
			buf[i * psz] = 'P';	/* same byte, now a private copy */
	if (write(to_parent, "r", 1) != 1 || read(from_parent, &c, 1) != 1)
		return 2;
	for (i = 0; i < NPAGES * psz; i++)
		if (buf[i] != 'W')
			return 1;
	return 0;
}

static void one_case(const char *name, int pattern)
{
	int up[2], down[2], st = 0, bad = 0;
	pid_t pid, other = -1;
	struct iovec l, r;
	char *buf, *src, c;
	ssize_t n;
	long i;

	buf = mmap(NULL, NPAGES * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = malloc(NPAGES * psz);
	if (buf == MAP_FAILED || !src || pipe(up) || pipe(down)) {
		printf("not ok %d %s # setup failed\n", ++tests, name);
		return;
	}
	madvise(buf, NPAGES * psz, MADV_NOHUGEPAGE);
	memset(buf, 'P', NPAGES * psz);
	memset(src, 'W', NPAGES * psz);
	if (pattern == 2) {
		other = fork();
		if (other == 0) {
			pause();
			_exit(0);
		}
	}
	pid = fork();
	if (pid == 0)
		_exit(child(buf, pattern, up[1], down[0]));
	if (read(up[0], &c, 1) != 1)
		bad = 1;
	l.iov_base = src;
	l.iov_len = NPAGES * psz;
	r.iov_base = buf;
	r.iov_len = NPAGES * psz;
	n = process_vm_writev(pid, &l, 1, &r, 1, 0);
	if (n != NPAGES * psz) {
		printf("# process_vm_writev: %zd of %ld\n", n, NPAGES * psz);
		bad = 1;
	}
	for (i = 0; i < NPAGES * psz; i++) {
		if (buf[i] != 'P') {
			printf("# the parent's page %ld changed: the write went to a shared page\n",
			       i / psz);
			bad = 1;
			break;
		}
	}
	if (write(down[1], "g", 1) != 1 || waitpid(pid, &st, 0) != pid ||
	    !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("# the child's copy is not what was written (status %#x)\n", st);
		bad = 1;
	}
	if (other > 0) {
		kill(other, SIGKILL);
		waitpid(other, NULL, 0);
	}
	printf("%sok %d %s\n", bad ? "not " : "", ++tests, name);
	failed += bad;
	munmap(buf, NPAGES * psz);
	free(src);
	close(up[0]); close(up[1]); close(down[0]); close(down[1]);
}

int main(void)
{
	psz = sysconf(_SC_PAGESIZE);
	printf("TAP version 13\n1..3\n");
	one_case("writev into pages shared after fork", 0);
	one_case("writev into pages every other one unshared", 1);
	one_case("writev into pages shared with two children", 2);
	return failed ? 1 : 0;
}
