// SPDX-License-Identifier: GPL-2.0
/*
 * Who may read and write whom: ptrace_may_access() in ATTACH_REALCREDS mode,
 * Yama included.  A refusal is always EPERM, never EACCES.
 *
 * The fixture forks a cooperating target; each case changes one thing about
 * the target or about the caller, a child of the test that drops privileges
 * on its own, so that the test keeps root to restore what it changed.  The
 * cases need root: run by anyone else, they skip.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

#include <sys/fsuid.h>
#include <sys/statvfs.h>

#define SETUP_FAILED	(-100)
#define N1		CMA_NOBODY
#define N2		CMA_NOBODY2

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

FIXTURE(perm) {
	struct cma_target t;
	struct cma_xfer *x;
	size_t page;
	long yama_saved;	/* -1: not changed */
};

FIXTURE_SETUP(perm)
{
	self->page = cma_page();
	self->yama_saved = -1;
	if (geteuid())
		SKIP(return, "not root: the cases change uids, namespaces and sysctls");
	ASSERT_EQ(0, cma_target_start(&self->t));
	self->x = &self->t.mb->x;
	ASSERT_EQ(0, cma_xfer_setup(&self->t, 2 * self->page, 2 * self->page, CMA_ANON));
	cma_liov(self->x, 30, self->page + 100);
	cma_riov(self->x, 70, self->page + 100);
}

FIXTURE_TEARDOWN(perm)
{
	cma_target_stop(&self->t);
	if (self->yama_saved >= 0)
		cma_write_long(CMA_YAMA, self->yama_saved);
}

struct caller {
	struct cma_target *t;
	bool write;
	long uid;		/* become this uid (and gid) first; -1: stay root */
	bool drop_ptrace;	/* drop CAP_SYS_PTRACE first */
	bool unshare_user;	/* move to a new user namespace first */
	bool own_child;		/* target a child of the caller instead */
	bool ids;		/* take the six ids below first (with uid -1) */
	uid_t ru, eu, su;	/* real, effective (and fs), saved uid */
	gid_t rg, eg, sg;
	bool by_pidfd;		/* name the target by a pidfd (PROCESS_VM_PIDFD) */
	bool new_pidns;		/* call from pid 1 of a new pid namespace */
	bool in_pidns;		/* set by call_from_new_pidns() */
	int pidfd;		/* set by caller_fn() when by_pidfd, else -1 */
};

/* Take the caller's six ids, and check them: fsuid and fsgid follow the effective ids. */
static int caller_ids(struct caller *c)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;

	if (setgroups(0, NULL) || setresgid(c->rg, c->eg, c->sg) ||
	    setresuid(c->ru, c->eu, c->su))
		return -1;
	if (getresuid(&r, &e, &s) || getresgid(&gr, &ge, &gs))
		return -1;
	if (r != c->ru || e != c->eu || s != c->su || gr != c->rg || ge != c->eg ||
	    gs != c->sg || (uid_t)setfsuid(-1) != c->eu || (gid_t)setfsgid(-1) != c->eg) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static int caller_prepare(struct caller *c)
{
	if (c->unshare_user && unshare(CLONE_NEWUSER))
		return -1;
	if (c->uid >= 0 && cma_become(c->uid, c->uid))
		return -1;
	if (c->ids && caller_ids(c))
		return -1;
	if (c->drop_ptrace && cma_drop_cap(CAP_SYS_PTRACE))
		return -1;
	return 0;
}

/* Read a child of the caller: a descendant, for Yama. */
static long read_own_child(struct caller *c)
{
	size_t len = 3 * cma_page();
	struct cma_region r, l;
	struct iovec lv, rv;
	ssize_t ret;
	pid_t pid;
	int err;

	if (cma_region_alloc(&r, len, 0x21, CMA_ANON) || cma_region_alloc(&l, len, 0x22, CMA_ANON))
		return SETUP_FAILED;
	pid = fork();
	if (pid < 0)
		return SETUP_FAILED;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	lv.iov_base = l.addr + 5;
	lv.iov_len = len - 10;
	rv.iov_base = r.addr + 9;
	rv.iov_len = len - 10;
	ret = cma_readv(pid, &lv, 1, &rv, 1, 0);
	err = errno;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (ret > 0 && cma_verify(&l, &lv, 1, &rv, 1, r.seed, ret, ret) != -1) {
		errno = EILSEQ;
		return -1;
	}
	errno = err;
	return ret;
}

static long caller_fn(void *arg);

/*
 * From the caller, which has the pidfd if it needs one: move to a new pid
 * namespace, and make the call from its first process, pid 1 there.
 */
static long call_from_new_pidns(struct caller *c)
{
	struct cma_res res;

	if (unshare(CLONE_NEWPID))
		return SETUP_FAILED;
	c->new_pidns = false;
	c->in_pidns = true;
	res = cma_in_child(caller_fn, c);
	if (!res.done)
		return SETUP_FAILED;
	errno = res.err;
	return res.ret;
}

static long caller_fn(void *arg)
{
	struct caller *c = arg;
	struct cma_xfer *x = &c->t->mb->x;
	ssize_t ret;
	int err;

	/* A pidfd is opened in the test's pid namespace, before any unshare. */
	if (c->by_pidfd && c->pidfd < 0) {
		c->pidfd = cma_pidfd_open(c->t->pid, 0);
		if (c->pidfd < 0)
			return SETUP_FAILED;
	}
	if (c->new_pidns)
		return call_from_new_pidns(c);
	if (c->in_pidns && getpid() != 1) {
		errno = EINVAL;
		return SETUP_FAILED;
	}
	if (caller_prepare(c))
		return SETUP_FAILED;
	if (c->own_child)
		return read_own_child(c);
	if (c->by_pidfd)
		ret = cma_rw(c->write, c->pidfd, x->liov, x->ln, x->riov, x->rn, PROCESS_VM_PIDFD);
	else
		ret = cma_xfer_run(c->t, c->write, 0);
	err = errno;
	/* The local side is this child's copy: check it here. */
	if (cma_check_local(x, c->write, ret > 0 ? ret : 0, ret > 0 ? ret : 0) != -1) {
		errno = EILSEQ;
		return -1;
	}
	errno = err;
	return ret;
}

/* Run the transfer both ways from a caller set up as @proto, and expect @err (0: success). */
static void expect_access(struct __test_metadata *_metadata, struct cma_target *t,
			  struct caller proto, int err)
{
	/* read_own_child() moves its own amount: all but 10 bytes of 3 pages */
	size_t want = proto.own_child ? 3 * cma_page() - 10 : cma_page() + 100;
	struct cma_res res;
	long bad;
	int w;

	for (w = 0; w < 2; w++) {
		struct caller c = proto;

		c.t = t;
		c.write = w;
		c.pidfd = -1;
		res = cma_in_child(caller_fn, &c);
		ASSERT_TRUE(res.done);
		ASSERT_NE(SETUP_FAILED, res.ret) TH_LOG("caller setup: %s", strerror(res.err));
		if (err) {
			EXPECT_EQ(-1, res.ret);
			EXPECT_EQ(err, res.err) TH_LOG("%s: %s", w ? "writev" : "readv",
						       strerror(res.err));
		} else {
			EXPECT_EQ((long)want, res.ret) TH_LOG("%s: %s", w ? "writev" : "readv",
							      strerror(res.err));
		}
		if (proto.own_child)
			break;
		bad = cma_call3(t, cma_t_check, w, res.ret > 0 ? res.ret : 0,
				res.ret > 0 ? res.ret : 0) - 1;
		EXPECT_EQ(-1, bad) TH_LOG("remote byte %ld wrong", bad);
		cma_call(t, cma_t_rreg_refill);
	}
}

#define ROOT		{ .uid = -1 }
#define NOBODY		{ .uid = CMA_NOBODY }

static void target_ids(struct __test_metadata *_metadata, struct cma_target *t,
		       long uid, int dumpable)
{
	ASSERT_EQ(0, cma_call3(t, cma_t_setids, uid, uid, dumpable))
		TH_LOG("target setresuid: %s", strerror(errno));
}

TEST_F(perm, same_uid_root)
{
	expect_access(_metadata, &self->t, (struct caller)ROOT, 0);
}

TEST_F(perm, same_uid_unprivileged)
{
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, (struct caller)NOBODY, 0);
}

TEST_F(perm, other_uid_root_target)
{
	expect_access(_metadata, &self->t, (struct caller)NOBODY, EPERM);
}

TEST_F(perm, other_uid_unprivileged)
{
	target_ids(_metadata, &self->t, CMA_NOBODY2, 1);
	expect_access(_metadata, &self->t, (struct caller)NOBODY, EPERM);
}

TEST_F(perm, cap_sys_ptrace_other_uid)
{
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, (struct caller)ROOT, 0);
}

TEST_F(perm, uid0_without_cap_sys_ptrace)
{
	struct caller c = { .uid = -1, .drop_ptrace = true };

	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, c, EPERM);
}

TEST_F(perm, nondumpable_same_uid)
{
	target_ids(_metadata, &self->t, CMA_NOBODY, 0);
	expect_access(_metadata, &self->t, (struct caller)NOBODY, EPERM);
}

TEST_F(perm, nondumpable_cap_sys_ptrace)
{
	target_ids(_metadata, &self->t, CMA_NOBODY, 0);
	expect_access(_metadata, &self->t, (struct caller)ROOT, 0);
}

/* After the dumpable flag comes back, the same caller gets in again. */
TEST_F(perm, dumpable_restored)
{
	target_ids(_metadata, &self->t, CMA_NOBODY, 0);
	expect_access(_metadata, &self->t, (struct caller)NOBODY, EPERM);
	ASSERT_EQ(0, cma_call1(&self->t, cma_t_dumpable, 1));
	expect_access(_metadata, &self->t, (struct caller)NOBODY, 0);
}

/*
 * A denied caller learns nothing of the target's address space: a remote
 * element on a page the target does not map fails with EPERM, not EFAULT;
 * once the caller is allowed, the same call fails with EFAULT.
 */
TEST_F(perm, eperm_before_remote_efault)
{
	self->x->riov[0].iov_base = self->x->rreg.map;	/* its PROT_NONE guard */
	expect_access(_metadata, &self->t, (struct caller)NOBODY, EPERM);
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, (struct caller)NOBODY, EFAULT);
}

static long prepare_only(void *arg)
{
	return caller_prepare(arg);
}

static bool userns_works(void)
{
	struct caller c = { .uid = -1, .unshare_user = true };
	struct cma_res res = cma_in_child(prepare_only, &c);

	return res.done && res.ret == 0;
}

/* A caller in a child user namespace has no capability over its parent's. */
TEST_F(perm, userns_child_cannot_reach_parent)
{
	struct caller c = { .uid = -1, .unshare_user = true };

	if (!userns_works())
		SKIP(return, "cannot create a user namespace");
	expect_access(_metadata, &self->t, c, EPERM);
}

static long t_unshare_user(struct cma_mbox *mb)
{
	return unshare(CLONE_NEWUSER);
}

/* The parent's namespace can reach a target that moved to a child namespace. */
TEST_F(perm, userns_parent_reaches_child)
{
	if (!userns_works())
		SKIP(return, "cannot create a user namespace");
	ASSERT_EQ(0, cma_call(&self->t, t_unshare_user));
	expect_access(_metadata, &self->t, (struct caller)ROOT, 0);
}

/* ---- each id on its own ---------------------------------------------- */

/*
 * arg: ruid, euid, suid, rgid, egid, sgid; the target stays dumpable.  Once
 * it is not root, it can only move each id to one of the values it has.
 */
static long t_setresids(struct cma_mbox *mb)
{
	if ((!geteuid() && setgroups(0, NULL)) || setresgid(mb->arg[3], mb->arg[4], mb->arg[5]) ||
	    setresuid(mb->arg[0], mb->arg[1], mb->arg[2]))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* The "Uid:" or "Gid:" line of /proc/PID/status: real, effective, saved, fs. */
static int proc_ids(pid_t pid, const char *key, long id[4])
{
	char path[64], line[256];
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			n = sscanf(line + strlen(key), "%ld %ld %ld %ld", &id[0], &id[1], &id[2],
				   &id[3]);
	fclose(f);
	return n == 4 ? 0 : -1;
}

/* Give the target these six ids, and check in /proc that it has them. */
static void target_resids(struct __test_metadata *_metadata, struct cma_target *t,
			  uid_t ru, uid_t eu, uid_t su, gid_t rg, gid_t eg, gid_t sg)
{
	long u[4], g[4];

	t->mb->arg[0] = ru;
	t->mb->arg[1] = eu;
	t->mb->arg[2] = su;
	t->mb->arg[3] = rg;
	t->mb->arg[4] = eg;
	t->mb->arg[5] = sg;
	ASSERT_EQ(0, cma_call(t, t_setresids)) TH_LOG("target ids: %s", strerror(errno));
	ASSERT_EQ(0, proc_ids(t->pid, "Uid:", u));
	ASSERT_EQ(0, proc_ids(t->pid, "Gid:", g));
	ASSERT_TRUE(u[0] == ru && u[1] == eu && u[2] == su && u[3] == eu)
		TH_LOG("target uids %ld %ld %ld %ld", u[0], u[1], u[2], u[3]);
	ASSERT_TRUE(g[0] == rg && g[1] == eg && g[2] == sg && g[3] == eg)
		TH_LOG("target gids %ld %ld %ld %ld", g[0], g[1], g[2], g[3]);
}

#define CALLER_IDS(r, e, s, gr, ge, gs) \
	{ .uid = -1, .ids = true, .ru = r, .eu = e, .su = s, .rg = gr, .eg = ge, .sg = gs }

/*
 * PTRACE_MODE_ATTACH_REALCREDS: the caller's real uid is compared with the
 * target's, not its effective or fs uid.  With FSCREDS both cases swap.
 */
TEST_F(perm, realcreds_ruid_matches_euid_differs)
{
	struct caller c = CALLER_IDS(N1, N2, N2, N1, N1, N1);

	target_ids(_metadata, &self->t, N1, 1);
	expect_access(_metadata, &self->t, c, 0);
}

TEST_F(perm, realcreds_euid_matches_ruid_differs)
{
	struct caller c = CALLER_IDS(N2, N1, N1, N1, N1, N1);

	target_ids(_metadata, &self->t, N1, 1);
	expect_access(_metadata, &self->t, c, EPERM);
}

/* The same for the group ids: the real gid counts. */
TEST_F(perm, realcreds_rgid_matches_egid_differs)
{
	struct caller c = CALLER_IDS(N1, N1, N1, N1, N2, N2);

	target_ids(_metadata, &self->t, N1, 1);
	expect_access(_metadata, &self->t, c, 0);
}

TEST_F(perm, realcreds_egid_matches_rgid_differs)
{
	struct caller c = CALLER_IDS(N1, N1, N1, N2, N1, N1);

	target_ids(_metadata, &self->t, N1, 1);
	expect_access(_metadata, &self->t, c, EPERM);
}

/* Same uid everywhere, but the caller is in another group. */
TEST_F(perm, same_uid_caller_gid_differs)
{
	struct caller c = CALLER_IDS(N1, N1, N1, N2, N2, N2);

	target_ids(_metadata, &self->t, N1, 1);
	expect_access(_metadata, &self->t, c, EPERM);
}

/*
 * The caller's real uid (gid) must match all three of the target's uids
 * (gids).  Each case gives one of the target's ids another value: EPERM;
 * once the target has the caller's ids throughout again, the caller is let in.
 */
static void target_one_id_differs(struct __test_metadata *_metadata, struct cma_target *t,
				  int which)
{
	uid_t u[3] = { N1, N1, N1 };
	gid_t g[3] = { N1, N1, N1 };

	if (which < 3)
		u[which] = N2;
	else
		g[which - 3] = N2;
	target_resids(_metadata, t, u[0], u[1], u[2], g[0], g[1], g[2]);
	expect_access(_metadata, t, (struct caller)NOBODY, EPERM);
	target_resids(_metadata, t, N1, N1, N1, N1, N1, N1);
	expect_access(_metadata, t, (struct caller)NOBODY, 0);
}

TEST_F(perm, target_ruid_differs)
{
	target_one_id_differs(_metadata, &self->t, 0);
}

TEST_F(perm, target_euid_differs)
{
	target_one_id_differs(_metadata, &self->t, 1);
}

TEST_F(perm, target_suid_differs)
{
	target_one_id_differs(_metadata, &self->t, 2);
}

TEST_F(perm, target_rgid_differs)
{
	target_one_id_differs(_metadata, &self->t, 3);
}

TEST_F(perm, target_egid_differs)
{
	target_one_id_differs(_metadata, &self->t, 4);
}

TEST_F(perm, target_sgid_differs)
{
	target_one_id_differs(_metadata, &self->t, 5);
}

/* ---- pid namespaces -------------------------------------------------- */

/* The target's pid means nothing in a child pid namespace: ESRCH. */
TEST_F(perm, pidns_child_cannot_name_outer_pid)
{
	struct caller c = { .uid = -1, .new_pidns = true };

	expect_access(_metadata, &self->t, c, ESRCH);
}

/* A pidfd names its process whatever the caller's pid namespace. */
TEST_F(perm, pidns_child_reaches_outer_by_pidfd)
{
	struct caller c = { .uid = -1, .new_pidns = true, .by_pidfd = true };

	if (!cma_flag_supported(PROCESS_VM_PIDFD))
		SKIP(return, "kernel without PROCESS_VM_PIDFD");
	expect_access(_metadata, &self->t, c, 0);
}

#define NS_SEED_TEST	0x31
#define NS_SEED_INIT	0x32

struct ns_shared {
	pid_t init_outer;	/* the namespace's pid 1, as the test sees it */
	pid_t init_inner;	/* as it sees itself */
	int ready;
	pid_t caller_inner;
	long ret;		/* the call made from inside the namespace */
	int err;
	long bad;		/* offset of a wrong byte read, or -1 */
	int done;
};

/*
 * In a new pid namespace: pid 1 takes its own pattern over the region it
 * inherited; a second process there reads pid 1 by that number.
 */
static void ns_maker(struct ns_shared *sh, struct cma_region *r)
{
	pid_t init, caller;
	char *buf;

	if (unshare(CLONE_NEWPID))
		_exit(1);
	init = fork();
	if (init < 0)
		_exit(1);
	if (!init) {
		cma_fill(r->addr, r->len, NS_SEED_INIT);
		sh->init_inner = getpid();
		__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
		for (;;)
			pause();
	}
	sh->init_outer = init;
	while (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	caller = fork();
	if (!caller) {
		struct iovec l, rv = { r->addr, r->len };

		buf = malloc(r->len);
		if (!buf)
			_exit(1);
		l.iov_base = buf;
		l.iov_len = r->len;
		sh->caller_inner = getpid();
		errno = 0;
		sh->ret = cma_readv(1, &l, 1, &rv, 1, 0);
		sh->err = errno;
		sh->bad = cma_cmp_pat(buf, r->len, (uintptr_t)r->addr, NS_SEED_INIT);
		__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	if (caller > 0)
		waitpid(caller, NULL, 0);
	waitpid(init, NULL, 0);
	_exit(0);
}

/* Read @len bytes at @addr of @pid (a pidfd with @flags) and compare them with @seed's pattern. */
static long read_pattern(long pid, unsigned long flags, void *addr, size_t len, int seed)
{
	struct iovec l, r = { addr, len };
	ssize_t ret;
	char *buf;
	long bad;

	buf = malloc(len);
	if (!buf)
		return -2;
	l.iov_base = buf;
	l.iov_len = len;
	ret = cma_readv(pid, &l, 1, &r, 1, flags);
	bad = ret == (ssize_t)len ? cma_cmp_pat(buf, len, (uintptr_t)addr, seed) : -3;
	free(buf);
	return bad;
}

/*
 * A process in a child pid namespace: there, pid 1 names it (not the init
 * of the test's namespace); the test reaches it by the pid it sees, and by
 * a pidfd.
 */
TEST_F(perm, pidns_inner_and_outer_pid)
{
	struct ns_shared *sh;
	struct cma_region r;
	pid_t maker;
	double end;
	int fd;

	ASSERT_EQ(0, cma_region_alloc(&r, 3 * self->page, NS_SEED_TEST, CMA_ANON));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	fflush(stdout);
	maker = fork();
	ASSERT_LE(0, maker);
	if (!maker)
		ns_maker(sh, &r);
	end = cma_now() + 10;
	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) && cma_now() < end)
		usleep(1000);
	ASSERT_EQ(1, sh->done) TH_LOG("the namespace's processes did not report");
	EXPECT_EQ(1, sh->init_inner);
	EXPECT_EQ(2, sh->caller_inner);
	EXPECT_EQ((long)r.len, sh->ret) TH_LOG("pid 1 from inside: %s", strerror(sh->err));
	EXPECT_EQ(-1, sh->bad) TH_LOG("pid 1 from inside: byte %ld is not the namespace init's",
				      sh->bad);
	EXPECT_EQ(-1, read_pattern(sh->init_outer, 0, r.addr, r.len, NS_SEED_INIT))
		TH_LOG("pid %d from outside: %s", sh->init_outer, strerror(errno));
	if (cma_flag_supported(PROCESS_VM_PIDFD)) {
		fd = cma_pidfd_open(sh->init_outer, 0);
		EXPECT_LE(0, fd);
		EXPECT_EQ(-1, read_pattern(fd, PROCESS_VM_PIDFD, r.addr, r.len, NS_SEED_INIT))
			TH_LOG("pidfd from outside: %s", strerror(errno));
		close(fd);
	}
	kill(sh->init_outer, SIGKILL);
	waitpid(maker, NULL, 0);
	munmap(sh, sizeof(*sh));
	cma_region_free(&r);
}

/* ---- a thread-group leader that has exited --------------------------- */

static void *zl_sleeper(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

/* Start a thread; returns its tid. */
static long t_thread(struct cma_mbox *mb)
{
	static int tid;
	pthread_t th;
	int v;

	errno = pthread_create(&th, NULL, zl_sleeper, &tid);
	if (errno)
		return -1;
	while (!(v = __atomic_load_n(&tid, __ATOMIC_ACQUIRE)))
		usleep(1000);
	return v;
}

/* The leader leaves; the thread group goes on.  No answer comes. */
static long t_leader_exit(struct cma_mbox *mb)
{
	pthread_exit(NULL);
	return 0;
}

/*
 * A leader that has exited while another thread runs is a zombie with no mm:
 * its pid (or a pidfd for the process) gives ESRCH, as in mainline, and the
 * live thread's id reaches the memory.
 */
TEST_F(perm, zombie_leader_live_thread)
{
	struct cma_xfer *x = self->x;
	uintptr_t fn = (uintptr_t)t_leader_exit;
	size_t want = self->page + 100;
	int i, pidfd = -1;
	ssize_t ret;
	double end;
	long tid;

	tid = cma_call(&self->t, t_thread);
	ASSERT_LT(0, tid);
	if (cma_flag_supported(PROCESS_VM_PIDFD)) {
		pidfd = cma_pidfd_open(self->t.pid, 0);
		ASSERT_LE(0, pidfd);
	}
	ASSERT_EQ(sizeof(fn), write(self->t.cmd, &fn, sizeof(fn)));
	end = cma_now() + 5;
	while (cma_proc_state(self->t.pid) != 'Z' && cma_now() < end)
		usleep(1000);
	ASSERT_EQ('Z', cma_proc_state(self->t.pid));
	ASSERT_EQ('S', cma_proc_state(tid));

	for (i = 0; i < 2; i++) {
		errno = 0;
		ret = cma_rw(i, self->t.pid, x->liov, x->ln, x->riov, x->rn, 0);
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(ESRCH, errno) TH_LOG("leader's pid: %s", strerror(errno));
		if (pidfd < 0)
			continue;
		errno = 0;
		ret = cma_rw(i, pidfd, x->liov, x->ln, x->riov, x->rn, PROCESS_VM_PIDFD);
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(ESRCH, errno) TH_LOG("pidfd: %s", strerror(errno));
	}
	EXPECT_EQ(-1, cma_check_local(x, false, 0, 0));
	ret = cma_rw(false, tid, x->liov, x->ln, x->riov, x->rn, 0);
	EXPECT_EQ((ssize_t)want, ret) TH_LOG("live thread's id: %s", strerror(errno));
	EXPECT_EQ(-1, cma_check_local(x, false, want, want));
	if (pidfd >= 0)
		close(pidfd);
}

/* ---- a set-user-ID program exec'd by the target ----------------------- */

/*
 * This very program serves as the set-user-ID image: copied to a directory
 * on a file system that honours the bit, owned by root, mode 04755, and run
 * as "cma_perm --cma-setuid-image REPORT-FD STOP-FD ADDR LEN" (main() below).
 * It maps LEN bytes at ADDR, where the old image had its region, fills them
 * with its own pattern, reports its euid on REPORT-FD and waits for EOF on
 * STOP-FD.
 */
#define SUID_ARG	"--cma-setuid-image"
#define SUID_OLD_SEED	0x41
#define SUID_NEW_SEED	0x42
#define SUID_LEN	(8UL << 20)
/*
 * Where the target maps the region: away from where the new image's loader
 * and stack go, so that it can map the same range (ASLR places them anew),
 * and inside the smallest address spaces it runs in (User-Mode Linux gives
 * a process 512 GiB, as a 39-bit arm64 kernel does): 64 GiB, or 1 GiB.
 */
#define SUID_ADDR	((void *)(sizeof(long) == 8 ? 0x1000000000UL : 0x40000000UL))

struct suid_report {
	long euid;
	long err;	/* errno of the mapping at ADDR, or 0 */
};

static int setuid_image(char **argv)
{
	int rep = atoi(argv[2]), stop = atoi(argv[3]);
	void *addr = (void *)strtoul(argv[4], NULL, 0);
	size_t len = strtoul(argv[5], NULL, 0);
	struct suid_report r = { .euid = geteuid() };
	void *p;
	char c;

	p = mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_FIXED_NOREPLACE, -1, 0);
	if (p != addr)
		r.err = p == MAP_FAILED ? errno : EEXIST;
	else
		cma_fill(p, len, SUID_NEW_SEED);
	if (write(rep, &r, sizeof(r)) != sizeof(r))
		return 1;
	while (read(stop, &c, 1) > 0)
		;
	return 0;
}

/* Copy /proc/self/exe to @path, set-user-ID root.  Returns 0 or -1 with errno. */
static int install_setuid_copy(const char *path)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	if (n < 0 || fchown(out, 0, 0) || fchmod(out, 04755)) {
		close(in);
		close(out);
		return -1;
	}
	close(in);
	return close(out);
}

/* A new directory where a set-user-ID program runs as such, or NULL. */
static char *setuid_dir(char *dir, size_t len)
{
	static const char * const cand[] = { "/tmp", "/var/tmp", "/dev/shm", "/run" };
	struct statvfs vfs;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cand); i++) {
		if (statvfs(cand[i], &vfs) || (vfs.f_flag & (ST_NOSUID | ST_RDONLY)))
			continue;
		snprintf(dir, len, "%s/cma-setuid-XXXXXX", cand[i]);
		if (!mkdtemp(dir))
			continue;
		if (!chmod(dir, 0755))
			return dir;
		rmdir(dir);
	}
	return NULL;
}

struct suid_shared {
	void *addr;		/* the target's region, in the old image and the new */
	int ready;		/* 1: the new image has its pattern at addr */
	int stop;
	long ok_before;		/* calls that gave the old image's bytes, started before ready */
	long ok_after;		/* calls that gave the old image's bytes, started after ready */
	long new_image;		/* calls that gave any byte that is not the old image's */
	long bad_ret;		/* the first of them: its result, */
	long bad_off;		/* its first wrong byte, */
	long bad_new;		/* whether that byte is the new image's */
	long eperm_after;	/* calls started after ready that failed with EPERM */
	long calls_after;	/* calls started after ready */
	long eperm_esrch;	/* calls that failed with EPERM or ESRCH, in all */
	long other;		/* any other result */
	long other_ret;
	int other_err;
	long straddled;		/* calls in flight when the target started its exec */
	long straddle_ret;	/* the first of them: its result */
	int straddle_err;
	int exec_started;
};

/* The caller: an unprivileged process that reads the target's region again and again. */
static void suid_caller(struct suid_shared *sh, pid_t target)
{
	struct iovec l, r = { sh->addr, SUID_LEN };
	int before, exec_before;
	char *buf, *old;
	ssize_t ret;

	/*
	 * A full count writes every byte: after the first call, checked
	 * against the pattern, memcmp() with its bytes is enough (and quick,
	 * so that the calls fill most of the loop).
	 */
	buf = malloc(SUID_LEN);
	old = calloc(1, SUID_LEN);
	if (!buf || !old || cma_become(N1, N1))
		_exit(1);
	l.iov_base = buf;
	l.iov_len = SUID_LEN;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		exec_before = __atomic_load_n(&sh->exec_started, __ATOMIC_ACQUIRE);
		before = __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE);
		errno = 0;
		ret = cma_readv(target, &l, 1, &r, 1, 0);
		if (!exec_before && __atomic_load_n(&sh->exec_started, __ATOMIC_ACQUIRE) &&
		    !sh->straddled++) {
			sh->straddle_ret = ret;
			sh->straddle_err = ret < 0 ? errno : 0;
		}
		sh->calls_after += before;
		if (ret == (ssize_t)SUID_LEN && !sh->ok_before && !before &&
		    cma_cmp_pat(buf, SUID_LEN, (uintptr_t)sh->addr, SUID_OLD_SEED) == -1)
			memcpy(old, buf, SUID_LEN);
		if (ret == (ssize_t)SUID_LEN && !memcmp(buf, old, SUID_LEN)) {
			if (before)
				sh->ok_after++;
			else
				sh->ok_before++;
		} else if (ret > 0) {
			if (!sh->new_image++) {
				sh->bad_ret = ret;
				sh->bad_off = cma_cmp_pat(buf, ret, (uintptr_t)sh->addr,
							  SUID_OLD_SEED);
				sh->bad_new = sh->bad_off >= 0 &&
					cma_cmp_pat(buf + sh->bad_off, 1,
						    (uintptr_t)sh->addr + sh->bad_off,
						    SUID_NEW_SEED) == -1;
			}
		} else if (ret == -1 && (errno == EPERM || errno == ESRCH)) {
			sh->eperm_esrch++;
			sh->eperm_after += before && errno == EPERM;
		} else {
			sh->other++;
			sh->other_ret = ret;
			sh->other_err = errno;
		}
	}
	_exit(0);
}

/* The target: the test's uid, then it execs the set-user-ID copy at @go. */
static void suid_target(struct suid_shared *sh, const char *image, int go, int rep, int stop)
{
	char a_rep[16], a_stop[16], a_addr[32], a_len[32];
	char *argv[7];
	void *addr;
	char c;

	if (cma_become(N1, N1))
		_exit(1);
	addr = mmap(SUID_ADDR, SUID_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_FIXED_NOREPLACE, -1, 0);
	if (addr != SUID_ADDR)
		_exit(1);
	cma_fill(addr, SUID_LEN, SUID_OLD_SEED);
	/* Only now may the caller start reading. */
	__atomic_store_n(&sh->addr, addr, __ATOMIC_RELEASE);
	if (read(go, &c, 1) != 1)
		_exit(1);
	snprintf(a_rep, sizeof(a_rep), "%d", rep);
	snprintf(a_stop, sizeof(a_stop), "%d", stop);
	snprintf(a_addr, sizeof(a_addr), "%#lx", (unsigned long)sh->addr);
	snprintf(a_len, sizeof(a_len), "%#lx", SUID_LEN);
	if (fcntl(rep, F_SETFD, 0) || fcntl(stop, F_SETFD, 0))
		_exit(1);
	argv[0] = (char *)image;
	argv[1] = SUID_ARG;
	argv[2] = a_rep;
	argv[3] = a_stop;
	argv[4] = a_addr;
	argv[5] = a_len;
	argv[6] = NULL;
	__atomic_store_n(&sh->exec_started, 1, __ATOMIC_RELEASE);
	execv(image, argv);
	_exit(1);
}

/* Wait for the target to map its region: false if it exits first, or after @s seconds. */
static bool suid_mapped(struct suid_shared *sh, pid_t target, double s)
{
	double end = cma_now() + s;

	while (!__atomic_load_n(&sh->addr, __ATOMIC_ACQUIRE)) {
		if (waitpid(target, NULL, WNOHANG) == target || cma_now() >= end)
			return false;
		usleep(1000);
	}
	return true;
}

static bool wait_for(long *v, long min, double s)
{
	double end = cma_now() + s;

	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < min && cma_now() < end)
		usleep(1000);
	return __atomic_load_n(v, __ATOMIC_ACQUIRE) >= min;
}

/*
 * The target, the caller's uid, execs a set-user-ID root program while the
 * caller reads 8 MiB of it again and again.  A call that got the old mm
 * may finish with the old image's bytes; every call that starts once the
 * new image is in place fails with EPERM; no call ever returns a byte of
 * the new image (which the test, with CAP_SYS_PTRACE, reads at the same
 * address to show that it differs).
 */
TEST_F_TIMEOUT(perm, setuid_exec_during_transfer, 120)
{
	char dir[128], image[160];
	int go[2], rep[2], stop[2];
	struct suid_shared *sh;
	struct suid_report r;
	pid_t target, caller;
	struct pollfd pfd;
	long bad;

	if (!setuid_dir(dir, sizeof(dir)))
		SKIP(return, "no file system here honours set-user-ID programs");
	snprintf(image, sizeof(image), "%s/cma_perm", dir);
	if (install_setuid_copy(image)) {
		TH_LOG("%s: %s", image, strerror(errno));
		unlink(image);
		rmdir(dir);
		ASSERT_TRUE(0);
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(rep, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(stop, O_CLOEXEC));
	fflush(stdout);
	target = fork();
	ASSERT_LE(0, target);
	if (!target) {
		close(stop[1]);
		suid_target(sh, image, go[0], rep[1], stop[0]);
	}
	close(rep[1]);
	close(stop[0]);
	if (!suid_mapped(sh, target, 30)) {
		kill(target, SIGKILL);
		waitpid(target, NULL, 0);
		unlink(image);
		rmdir(dir);
		ASSERT_TRUE(0) TH_LOG("the target could not map its region");
	}
	caller = fork();
	ASSERT_LE(0, caller);
	if (!caller)
		suid_caller(sh, target);

	/* The caller reads the old image first; then the exec. */
	EXPECT_TRUE(wait_for(&sh->ok_before, 2, 30));
	ASSERT_EQ(1, write(go[1], "", 1));
	pfd.fd = rep[0];
	pfd.events = POLLIN;
	memset(&r, 0, sizeof(r));
	if (poll(&pfd, 1, 30000) != 1 || read(rep[0], &r, sizeof(r)) != sizeof(r))
		r.err = -1;
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	if (!r.err && !r.euid)
		EXPECT_TRUE(wait_for(&sh->calls_after, 3, 30));
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	waitpid(caller, NULL, 0);
	bad = r.err ? -4 : read_pattern(target, 0, sh->addr, SUID_LEN, SUID_NEW_SEED);
	close(stop[1]);
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	unlink(image);
	rmdir(dir);

	ASSERT_EQ(0, r.err) TH_LOG("the set-user-ID image did not start or map its region: %s",
				   r.err > 0 ? strerror(r.err) : "no report");
	if (r.euid)
		SKIP(return, "the set-user-ID image runs with euid %ld, not 0", r.euid);
	EXPECT_EQ(-1, bad) TH_LOG("the test reading the new image: byte %ld", bad);
	TH_LOG("calls: %ld of the old image, %ld after the exec (%ld EPERM)",
	       sh->ok_before, sh->calls_after, sh->eperm_after);
	TH_LOG("%ld in flight at the exec, the first returned %ld %s", sh->straddled,
	       sh->straddle_ret, sh->straddle_err ? strerror(sh->straddle_err) : "");
	EXPECT_LE(2, sh->ok_before);
	EXPECT_EQ(0, sh->new_image)
		TH_LOG("not the old image's bytes: a call returned %ld, byte %ld is %s",
		       sh->bad_ret, sh->bad_off,
		       sh->bad_new ? "the new image's" : "neither image's");
	EXPECT_EQ(0, sh->ok_after) TH_LOG("the old image's bytes, from a call after the exec");
	EXPECT_EQ(0, sh->other) TH_LOG("returned %ld: %s", sh->other_ret, strerror(sh->other_err));
	EXPECT_LE(3, sh->calls_after);
	EXPECT_EQ(sh->calls_after, sh->eperm_after);
	munmap(sh, sizeof(*sh));
}

/* Yama: set ptrace_scope, remembering the old value for teardown. */
static int yama_set(long *saved, long scope)
{
	long old;

	if (cma_read_long(CMA_YAMA, &old))
		return -1;
	if (*saved < 0)
		*saved = old;
	return cma_write_long(CMA_YAMA, scope);
}

/* Set ptrace_scope for a case: NULL, or why the case must skip. */
static const char *yama(long *saved, long scope)
{
	if (access(CMA_YAMA, F_OK))
		return "no Yama";
	if (yama_set(saved, scope))
		return "cannot set Yama ptrace_scope";
	return NULL;
}

TEST_F(perm, yama0_non_descendant)
{
	const char *why = yama(&self->yama_saved, 0);

	if (why)
		SKIP(return, "%s", why);
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, (struct caller)NOBODY, 0);
}

/* The caller is a sibling of the target, not an ancestor. */
TEST_F(perm, yama1_non_descendant_denied)
{
	const char *why = yama(&self->yama_saved, 1);

	if (why)
		SKIP(return, "%s", why);
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, (struct caller)NOBODY, EPERM);
}

TEST_F(perm, yama1_ptracer_any)
{
	const char *why = yama(&self->yama_saved, 1);

	if (why)
		SKIP(return, "%s", why);
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	ASSERT_EQ(0, cma_call1(&self->t, cma_t_ptracer, (long)PR_SET_PTRACER_ANY));
	expect_access(_metadata, &self->t, (struct caller)NOBODY, 0);
}

/* Naming the test process as tracer admits its descendants: the caller. */
TEST_F(perm, yama1_ptracer_pid)
{
	const char *why = yama(&self->yama_saved, 1);

	if (why)
		SKIP(return, "%s", why);
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	ASSERT_EQ(0, cma_call1(&self->t, cma_t_ptracer, getpid()));
	expect_access(_metadata, &self->t, (struct caller)NOBODY, 0);
}

TEST_F(perm, yama1_descendant)
{
	const char *why = yama(&self->yama_saved, 1);
	struct caller c = { .uid = CMA_NOBODY, .own_child = true };

	if (why)
		SKIP(return, "%s", why);
	expect_access(_metadata, &self->t, c, 0);
}

TEST_F(perm, yama1_cap_sys_ptrace)
{
	const char *why = yama(&self->yama_saved, 1);

	if (why)
		SKIP(return, "%s", why);
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, (struct caller)ROOT, 0);
}

TEST_F(perm, yama2_descendant_denied)
{
	const char *why = yama(&self->yama_saved, 2);
	struct caller c = { .uid = CMA_NOBODY, .own_child = true };

	if (why)
		SKIP(return, "%s", why);
	expect_access(_metadata, &self->t, c, EPERM);
}

TEST_F(perm, yama2_cap_sys_ptrace)
{
	const char *why = yama(&self->yama_saved, 2);

	if (why)
		SKIP(return, "%s", why);
	target_ids(_metadata, &self->t, CMA_NOBODY, 1);
	expect_access(_metadata, &self->t, (struct caller)ROOT, 0);
}

/* Scope 3 cannot be lowered again until reboot: only on request. */
TEST_F(perm, yama3_everyone_denied)
{
	const char *ok = getenv("CMA_YAMA_3");

	if (access(CMA_YAMA, F_OK))
		SKIP(return, "no Yama");
	if (!ok || strcmp(ok, "1"))
		SKIP(return, "set CMA_YAMA_3=1 to test ptrace_scope 3 (irreversible until reboot)");
	ASSERT_EQ(0, yama_set(&self->yama_saved, 3));
	expect_access(_metadata, &self->t, (struct caller)ROOT, EPERM);
}

/* The harness, or the set-user-ID image of setuid_exec_during_transfer. */
int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], SUID_ARG))
		return setuid_image(argv);
	return test_harness_run(argc, argv);
}
