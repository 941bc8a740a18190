// SPDX-License-Identifier: GPL-2.0
/*
 * Cross Memory Attach demo: two processes exchange data with one copy.
 *
 * The child owns a message and an empty reply buffer and tells the parent
 * where they are (through a pipe: only addresses cross it, never data).
 * The parent pulls the message out of the child with process_vm_readv(),
 * pushes a reply into it with process_vm_writev(), gathers three pieces
 * of the child's memory in one call, and, where the kernel has it, does
 * the same through a pidfd with PROCESS_VM_PIDFD.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	(1UL << 0)
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif

struct where {
	uintptr_t msg, reply, pieces[3];
	size_t msg_len, reply_len;
};

static char message[] = "hello from the child, copied once";
static char reply[64];
static char piece_a[] = "scatter", piece_b[] = "/gather", piece_c[] = " works";

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int child(int wfd, int rfd)
{
	struct where w = {
		.msg = (uintptr_t)message, .msg_len = sizeof(message),
		.reply = (uintptr_t)reply, .reply_len = sizeof(reply),
		.pieces = { (uintptr_t)piece_a, (uintptr_t)piece_b, (uintptr_t)piece_c },
	};
	char go;

	if (write(wfd, &w, sizeof(w)) != sizeof(w))
		die("child: write");
	/* Wait until the parent is done with our memory. */
	if (read(rfd, &go, 1) != 1)
		die("child: read");
	printf("child : my reply buffer now says \"%s\"\n", reply);
	return strcmp(reply, "hello back from the parent") != 0;
}

int main(void)
{
	int to_parent[2], to_child[2], status, pidfd;
	struct iovec local, remote, gather_l, gather_r[3];
	char buf[64] = "", gathered[32] = "", answer[] = "hello back from the parent";
	struct where w;
	ssize_t n;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (pipe(to_parent) || pipe(to_child))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		exit(child(to_parent[1], to_child[0]));

	if (read(to_parent[0], &w, sizeof(w)) != sizeof(w))
		die("parent: read");
	printf("parent: child %d has its message at %#lx\n", pid, (unsigned long)w.msg);

	local = (struct iovec){ buf, sizeof(buf) };
	remote = (struct iovec){ (void *)w.msg, w.msg_len };
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		die("process_vm_readv");
	printf("parent: process_vm_readv  -> %zd bytes: \"%s\"\n", n, buf);

	local = (struct iovec){ answer, sizeof(answer) };
	remote = (struct iovec){ (void *)w.reply, sizeof(answer) };
	n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		die("process_vm_writev");
	printf("parent: process_vm_writev -> %zd bytes into the child\n", n);

	/* Three remote pieces gathered into one local buffer, one call. */
	gather_l = (struct iovec){ gathered, sizeof(gathered) };
	gather_r[0] = (struct iovec){ (void *)w.pieces[0], strlen(piece_a) };
	gather_r[1] = (struct iovec){ (void *)w.pieces[1], strlen(piece_b) };
	gather_r[2] = (struct iovec){ (void *)w.pieces[2], strlen(piece_c) + 1 };
	n = process_vm_readv(pid, &gather_l, 1, gather_r, 3, 0);
	if (n < 0)
		die("process_vm_readv (gather)");
	printf("parent: gather of 3 remote pieces -> %zd bytes: \"%s\"\n", n, gathered);

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	memset(buf, 0, sizeof(buf));
	local = (struct iovec){ buf, sizeof(buf) };
	remote = (struct iovec){ (void *)w.msg, w.msg_len };
	n = pidfd < 0 ? -1 : process_vm_readv(pidfd, &local, 1, &remote, 1, PROCESS_VM_PIDFD);
	if (n >= 0)
		printf("parent: PROCESS_VM_PIDFD  -> %zd bytes through pidfd %d: \"%s\"\n",
		       n, pidfd, buf);
	else
		printf("parent: PROCESS_VM_PIDFD not supported by this kernel (%s)\n",
		       strerror(errno));

	if (write(to_child[1], "g", 1) != 1)
		die("parent: write");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("demo: FAILED\n");
		return 1;
	}
	printf("demo: OK, every byte crossed between the two processes once\n");
	return 0;
}
