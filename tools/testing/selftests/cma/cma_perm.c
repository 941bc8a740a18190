// SPDX-License-Identifier: GPL-2.0
/*
 * Who may read and write whom: ptrace_may_access() in ATTACH_REALCREDS mode,
 * Yama included.  A refusal is always EPERM, never EACCES.
 *
 * The fixture forks a cooperating target; each case changes one thing about
 * the target or about the caller, a child of the test that drops privileges
 * on its own, so that the test keeps root to restore what it changed.
 */
#include "../kselftest_harness.h"
#include "cma_common.h"

#define SETUP_FAILED	(-100)

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
};

static int caller_prepare(struct caller *c)
{
	if (c->unshare_user && unshare(CLONE_NEWUSER))
		return -1;
	if (c->uid >= 0 && cma_become(c->uid, c->uid))
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

static long caller_fn(void *arg)
{
	struct caller *c = arg;
	struct cma_xfer *x = &c->t->mb->x;
	ssize_t ret;
	int err;

	if (caller_prepare(c))
		return SETUP_FAILED;
	if (c->own_child)
		return read_own_child(c);
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

TEST_HARNESS_MAIN
