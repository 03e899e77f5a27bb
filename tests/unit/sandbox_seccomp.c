// SPDX-License-Identifier: GPL-2.0
/*
 * The fallback tier's never-list filter (user/sandbox/seccomp.c), judged
 * by effect: a child installs it and makes the real system call. Each
 * call is made once more in a child without the filter, to show that the
 * refusal is the filter's and not the host's (printed beside it). Calls
 * that must keep working (open, fork, exec, sockets, threads through
 * clone3's fallback) are made under the filter too.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "user/sandbox/seccomp.h"
#include "tests/unit/unit.h"

extern char **environ;

struct outcome {
	long rc;
	int err;
	int sig;		/* the signal that killed the child, or 0 */
	int install;		/* sbx_seccomp_install's result */
};

/* fn's result in a fresh child, with the filter installed first or not */
static struct outcome in_child(bool filtered, unsigned flags, long (*fn)(void))
{
	struct outcome o = { .rc = -1, .err = 0, .sig = 0, .install = 0 };
	int pfd[2], st;
	pid_t pid;

	if (pipe(pfd))
		return o;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char *err = NULL;

		close(pfd[0]);
		if (filtered)
			o.install = sbx_seccomp_install(flags, &err);
		if (!o.install) {
			errno = 0;
			o.rc = fn();
			o.err = o.rc < 0 ? errno : 0;
		}
		if (write(pfd[1], &o, sizeof(o)) != sizeof(o))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &o, sizeof(o)) != sizeof(o))
		o.err = -1;
	close(pfd[0]);
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
		o.sig = WTERMSIG(st);
	return o;
}

static const char *show(struct outcome o)
{
	static char buf[4][96];
	static int i;
	char *b = buf[i++ % 4];

	if (o.sig)
		snprintf(b, 96, "killed by %s", strsignal(o.sig));
	else if (o.install)
		snprintf(b, 96, "install failed: %s", strerror(-o.install));
	else if (o.rc < 0)
		snprintf(b, 96, "%s", strerrorname_np(o.err) ? strerrorname_np(o.err) : "?");
	else
		snprintf(b, 96, "returns %ld", o.rc);
	return b;
}

/* each returns the call's result; errno is read right after */
static long t_bpf(void) { return syscall(__NR_bpf, -1, NULL, 0); }
static long t_perf(void) { return syscall(__NR_perf_event_open, NULL, 0, -1, -1, 0); }
static long t_init_module(void) { return syscall(__NR_init_module, NULL, 0, ""); }
static long t_finit_module(void) { return syscall(__NR_finit_module, -1, "", 0); }
static long t_delete_module(void) { return syscall(__NR_delete_module, "bpfsbx-none", 0); }
static long t_kexec_load(void) { return syscall(__NR_kexec_load, 0, 0, NULL, 0xdead0000UL); }
static long t_kexec_file_load(void) { return syscall(__NR_kexec_file_load, -1, -1, 0, NULL, 0); }
static long t_ptrace(void) { return syscall(__NR_ptrace, PTRACE_TRACEME, 0, 0, 0); }
static long t_vm_readv(void) { return syscall(__NR_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0); }
static long t_vm_writev(void) { return syscall(__NR_process_vm_writev, getpid(), NULL, 0, NULL, 0, 0); }
static long t_pidfd_getfd(void) { return syscall(__NR_pidfd_getfd, -1, 0, 0); }
static long t_mount(void) { return syscall(__NR_mount, (void *)8, (void *)8, (void *)8, 0, NULL); }
static long t_umount2(void) { return syscall(__NR_umount2, "/bpfsbx-none", 0); }
static long t_move_mount(void) { return syscall(__NR_move_mount, -1, "", -1, "", 0); }
static long t_fsopen(void) { return syscall(__NR_fsopen, "bpfsbx-none", 0); }
static long t_fsmount(void) { return syscall(__NR_fsmount, -1, 0, 0); }
static long t_fsconfig(void) { return syscall(__NR_fsconfig, -1, 0, NULL, NULL, 0); }
static long t_fspick(void) { return syscall(__NR_fspick, -1, "", 0); }
static long t_open_tree(void) { return syscall(__NR_open_tree, -1, "/bpfsbx-none", 0); }
static long t_mount_setattr(void) { return syscall(__NR_mount_setattr, -1, "", 0, NULL, 0); }
static long t_pivot_root(void) { return syscall(__NR_pivot_root, "/bpfsbx-none", "/bpfsbx-none"); }
static long t_chroot(void) { return syscall(__NR_chroot, "/bpfsbx-none"); }
static long t_unshare_user(void) { return syscall(__NR_unshare, CLONE_NEWUSER); }
static long t_unshare_user_ns(void) { return syscall(__NR_unshare, CLONE_NEWUSER | CLONE_NEWNS); }
static long t_setns(void) { return syscall(__NR_setns, -1, 0); }
static long t_clone3(void) { return syscall(__NR_clone3, NULL, 0); }

static long t_clone_user(void)
{
	long r = syscall(__NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return r;
}

static long ioctl_devnull(unsigned long cmd)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	char c = 'x';

	return syscall(__NR_ioctl, fd, cmd, &c);
}

static long t_tiocsti(void) { return ioctl_devnull(TIOCSTI); }
/* the kernel reads the command as 32 bits: the upper half must not hide it */
static long t_tiocsti_high(void) { return ioctl_devnull(TIOCSTI | (1UL << 32)); }
static long t_tioclinux(void) { return ioctl_devnull(TIOCLINUX); }

static long sock_owner_ioctl(unsigned long cmd)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int who = getpid();

	return syscall(__NR_ioctl, fd, cmd, &who);
}

static long t_fiosetown(void) { return sock_owner_ioctl(FIOSETOWN); }
static long t_siocspgrp(void) { return sock_owner_ioctl(SIOCSPGRP); }

static long fcntl_devnull(unsigned long cmd, unsigned long arg)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	return syscall(__NR_fcntl, fd, cmd, arg);
}

static long t_setown(void) { return fcntl_devnull(F_SETOWN, (unsigned long)getpid()); }
static long t_setown_high(void) { return fcntl_devnull(F_SETOWN | (1UL << 32), (unsigned long)getpid()); }
static long t_setsig(void) { return fcntl_devnull(F_SETSIG, SIGUSR1); }

static long t_setown_ex(void)
{
	struct f_owner_ex ex = { .type = F_OWNER_PID, .pid = getpid() };

	return fcntl_devnull(F_SETOWN_EX, (unsigned long)&ex);
}

static long t_memfd_plain(void) { return syscall(__NR_memfd_create, "t", 0); }
static long t_memfd_exec(void) { return syscall(__NR_memfd_create, "t", MFD_EXEC); }
static long t_memfd_exec_high(void)
{
	return syscall(__NR_memfd_create, "t", MFD_EXEC | (1UL << 40));
}
static long t_execveat_empty(void)
{
	char *argv[] = { "true", NULL };

	return syscall(__NR_execveat, -1, "", argv, environ, AT_EMPTY_PATH);
}
static long t_uring_setup(void) { return syscall(__NR_io_uring_setup, 1, NULL); }
static long t_uring_enter(void) { return syscall(__NR_io_uring_enter, -1, 0, 0, 0, NULL, 0); }
static long t_uring_register(void) { return syscall(__NR_io_uring_register, -1, 0, NULL, 0); }

struct never_case {
	const char *what;
	long (*fn)(void);
	int want;		/* the filter's errno */
	bool memfd;		/* only where the kernel knows MFD_NOEXEC_SEAL */
};

static const struct never_case never_cases[] = {
	{ "bpf", t_bpf, EPERM, false },
	{ "perf_event_open", t_perf, EPERM, false },
	{ "init_module", t_init_module, EPERM, false },
	{ "finit_module", t_finit_module, EPERM, false },
	{ "delete_module", t_delete_module, EPERM, false },
	{ "kexec_load", t_kexec_load, EPERM, false },
	{ "kexec_file_load", t_kexec_file_load, EPERM, false },
	{ "ptrace(PTRACE_TRACEME)", t_ptrace, EPERM, false },
	{ "process_vm_readv", t_vm_readv, EPERM, false },
	{ "process_vm_writev", t_vm_writev, EPERM, false },
	{ "pidfd_getfd", t_pidfd_getfd, EPERM, false },
	{ "mount", t_mount, EPERM, false },
	{ "umount2", t_umount2, EPERM, false },
	{ "move_mount", t_move_mount, EPERM, false },
	{ "fsopen", t_fsopen, EPERM, false },
	{ "fsmount", t_fsmount, EPERM, false },
	{ "fsconfig", t_fsconfig, EPERM, false },
	{ "fspick", t_fspick, EPERM, false },
	{ "open_tree", t_open_tree, EPERM, false },
	{ "mount_setattr", t_mount_setattr, EPERM, false },
	{ "pivot_root", t_pivot_root, EPERM, false },
	{ "chroot", t_chroot, EPERM, false },
	{ "unshare(CLONE_NEWUSER)", t_unshare_user, EPERM, false },
	{ "unshare(CLONE_NEWUSER|CLONE_NEWNS)", t_unshare_user_ns, EPERM, false },
	{ "clone(CLONE_NEWUSER)", t_clone_user, EPERM, false },
	{ "clone3 (any flags)", t_clone3, ENOSYS, false },
	{ "setns", t_setns, EPERM, false },
	{ "ioctl(TIOCSTI)", t_tiocsti, EPERM, false },
	{ "ioctl(TIOCSTI | 1<<32)", t_tiocsti_high, EPERM, false },
	{ "ioctl(TIOCLINUX)", t_tioclinux, EPERM, false },
	{ "ioctl(FIOSETOWN)", t_fiosetown, EPERM, false },
	{ "ioctl(SIOCSPGRP)", t_siocspgrp, EPERM, false },
	{ "fcntl(F_SETOWN)", t_setown, EPERM, false },
	{ "fcntl(F_SETOWN | 1<<32)", t_setown_high, EPERM, false },
	{ "fcntl(F_SETOWN_EX)", t_setown_ex, EPERM, false },
	{ "fcntl(F_SETSIG)", t_setsig, EPERM, false },
	{ "memfd_create(0)", t_memfd_plain, EPERM, true },
	{ "memfd_create(MFD_EXEC)", t_memfd_exec, EPERM, true },
	{ "memfd_create(MFD_EXEC | 1<<40)", t_memfd_exec_high, EPERM, true },
	{ "execveat(AT_EMPTY_PATH)", t_execveat_empty, EPERM, false },
	{ "io_uring_setup", t_uring_setup, EPERM, false },
	{ "io_uring_enter", t_uring_enter, EPERM, false },
	{ "io_uring_register", t_uring_register, EPERM, false },
};

SBX_TEST(sandbox, seccomp_refuses_the_never_list)
{
	bool memfd = sbx_memfd_noexec_known();
	unsigned told_apart = 0, n = 0;

	if (!sbx_seccomp_available())
		SBX_SKIP("this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)");
	for (size_t i = 0; i < sizeof(never_cases) / sizeof(never_cases[0]); i++) {
		const struct never_case *c = &never_cases[i];
		struct outcome with, without;

		if (c->memfd && !memfd) {
			printf("    seccomp: %-36s not refused: this kernel lacks MFD_NOEXEC_SEAL\n",
			       c->what);
			continue;
		}
		without = in_child(false, 0, c->fn);
		with = in_child(true, 0, c->fn);
		printf("    seccomp: %-36s %-8s (without the filter: %s)\n", c->what, show(with),
		       show(without));
		CU_ASSERT_EQUAL(with.install, 0);
		CU_ASSERT_EQUAL(with.sig, 0);
		CU_ASSERT_EQUAL(with.rc, -1);
		CU_ASSERT_EQUAL(with.err, c->want);
		n++;
		if (!(without.rc == -1 && without.err == c->want) && !without.sig)
			told_apart++;
	}
	/* as root nearly every control call gets past the permission check;
	 * if most failed with the same errno, the test would prove nothing */
	printf("    seccomp: %u of %u refusals differ from the unfiltered call\n", told_apart, n);
	if (geteuid() == 0)
		CU_ASSERT(told_apart * 4 >= n * 3);
}

static long t_uring_allowed(void) { return syscall(__NR_io_uring_setup, 1, NULL); }

SBX_TEST(sandbox, seccomp_io_uring_when_the_policy_allows_it)
{
	struct outcome with, without;

	if (!sbx_seccomp_available())
		SBX_SKIP("this kernel has no seccomp filters");
	/* NULL params: the kernel's own answer (EFAULT), the same with the
	 * filter as without it */
	without = in_child(false, 0, t_uring_allowed);
	with = in_child(true, SBX_SECCOMP_ALLOW_IO_URING, t_uring_allowed);
	printf("    seccomp: io_uring_setup(1, NULL) when allowed: %s (without the filter: %s)\n",
	       show(with), show(without));
	CU_ASSERT_EQUAL(with.install, 0);
	CU_ASSERT_EQUAL(with.sig, 0);
	CU_ASSERT_EQUAL(with.rc, without.rc);
	CU_ASSERT_EQUAL(with.err, without.err);
}

/* ---- what must keep working under the filter ---- */

static long t_open(void)
{
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

/* 0 if the child pid exits with status want */
static long exited_with(pid_t pid, int want)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == want ? 0 : (errno = ECHILD, -1);
}

static long t_fork(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(7);
	return exited_with(pid, 7);
}

/* /bin/true in a child, by execve or by execveat(AT_FDCWD, path, 0) */
static long exec_true(bool at)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { "true", NULL };

		if (at)
			syscall(__NR_execveat, AT_FDCWD, "/bin/true", argv, environ, 0);
		else
			execve("/bin/true", argv, environ);
		_exit(127);
	}
	return exited_with(pid, 0);
}

static long t_exec_true(void) { return exec_true(false); }
static long t_execveat_path(void) { return exec_true(true); }

/* posix_spawn and pthread_create go through glibc's clone3 first */
static long t_spawn(void)
{
	char *argv[] = { "true", NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);

	if (rc)
		return errno = rc, -1;
	return exited_with(pid, 0);
}

static void *thread_fn(void *arg) { return arg; }

static long t_thread(void)
{
	pthread_t t;
	void *r = NULL;
	int rc = pthread_create(&t, NULL, thread_fn, (void *)7);

	if (rc)
		return errno = rc, -1;
	pthread_join(t, &r);
	return r == (void *)7 ? 0 : (errno = EINVAL, -1);
}

static long t_sockets(void)
{
	int a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int u = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = a >= 0 && u >= 0 ? 0 : -1;

	close(a);
	close(u);
	return rc;
}

static long t_other_ioctl(void)
{
	/* TIOCGWINSZ on a non-tty: the kernel's ENOTTY, not the filter's */
	long r = ioctl_devnull(TIOCGWINSZ);

	return r < 0 && errno == ENOTTY ? 0 : (errno = EINVAL, -1);
}

static long t_other_fcntl(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	return fcntl(fd, F_GETOWN) >= 0 && fcntl(fd, F_SETFL, O_NONBLOCK) == 0 ? 0 : -1;
}

static long t_unshare_ok(void) { return syscall(__NR_unshare, 0); }
static long t_memfd_sealed(void) { return syscall(__NR_memfd_create, "t", MFD_NOEXEC_SEAL); }
static long t_nnp(void) { return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : -1; }

SBX_TEST(sandbox, seccomp_leaves_ordinary_calls_alone)
{
	static const struct { const char *what; long (*fn)(void); bool memfd; } ok[] = {
		{ "open(/etc/passwd)", t_open, false },
		{ "fork (clone)", t_fork, false },
		{ "execve(/bin/true)", t_exec_true, false },
		{ "execveat(AT_FDCWD, /bin/true)", t_execveat_path, false },
		{ "posix_spawn (clone3 -> clone)", t_spawn, false },
		{ "pthread_create (clone3 -> clone)", t_thread, false },
		{ "socket(AF_INET), socket(AF_UNIX)", t_sockets, false },
		{ "ioctl(TIOCGWINSZ)", t_other_ioctl, false },
		{ "fcntl(F_GETOWN, F_SETFL)", t_other_fcntl, false },
		{ "unshare(0)", t_unshare_ok, false },
		{ "memfd_create(MFD_NOEXEC_SEAL)", t_memfd_sealed, true },
		{ "no_new_privs is set", t_nnp, false },
	};
	bool memfd = sbx_memfd_noexec_known();

	if (!sbx_seccomp_available())
		SBX_SKIP("this kernel has no seccomp filters");
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct outcome o;

		if (ok[i].memfd && !memfd)
			continue;
		o = in_child(true, 0, ok[i].fn);
		printf("    seccomp: %-36s %s\n", ok[i].what,
		       o.rc >= 0 && !o.sig && !o.install ? "works" : show(o));
		CU_ASSERT_EQUAL(o.install, 0);
		CU_ASSERT_EQUAL(o.sig, 0);
		CU_ASSERT(o.rc >= 0);
	}
}

#if defined(__x86_64__)
static long t_x32_getpid(void) { return syscall(__X32_SYSCALL_BIT + __NR_getpid); }

static long t_int80_getpid(void)
{
	long r = 20;	/* i386's getpid */

	/* where there is no ia32 emulation this faults: die of it, not of
	 * the sanitizer's report */
	signal(SIGSEGV, SIG_DFL);

	__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
	return r;
}
#endif

SBX_TEST(sandbox, seccomp_kills_other_abis)
{
#if defined(__x86_64__)
	struct outcome x32, i386, i386_bare;

	if (!sbx_seccomp_available())
		SBX_SKIP("this kernel has no seccomp filters");
	x32 = in_child(true, 0, t_x32_getpid);
	i386 = in_child(true, 0, t_int80_getpid);
	/* a kernel without ia32 emulation (ia32_emulation=0, or not built)
	 * faults int 0x80 before any filter sees it: no way in to refuse */
	i386_bare = in_child(false, 0, t_int80_getpid);
	printf("    seccomp: x32 getpid: %s; int 0x80 getpid: %s (without the filter: %s)\n",
	       show(x32), show(i386), show(i386_bare));
	CU_ASSERT_EQUAL(x32.sig, SIGSYS);
	if (i386_bare.rc >= 0 && !i386_bare.sig) {
		CU_ASSERT_EQUAL(i386.sig, SIGSYS);
	} else {
		CU_ASSERT(i386.rc < 0 || i386.sig);	/* it never ran there either */
	}
#else
	SBX_SKIP("x32 and int 0x80 exist on x86_64 only");
#endif
}

/* A filter that cannot be loaded is reported, never skipped: where an
 * earlier filter refuses seccomp() and prctl(PR_SET_SECCOMP) (and, in a
 * second run, prctl altogether), the install must return an error */
static void install_refused(bool all_prctl)
{
	int pfd[2], st, rc = 0;
	char buf[512] = "";
	ssize_t n;
	pid_t pid;

	CU_ASSERT_FATAL(pipe(pfd) == 0);
	fflush(stdout);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		char *err = NULL;

		close(pfd[0]);
		if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(seccomp), 0) ||
		    (all_prctl ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 0) :
		     seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1,
				      SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP))) ||
		    seccomp_load(ctx))
			_exit(3);
		rc = sbx_seccomp_install(0, &err);
		dprintf(pfd[1], "%d %s", rc, err ? err : "(no message)");
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], buf, sizeof(buf) - 1);
	close(pfd[0]);
	CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	buf[n > 0 ? n : 0] = 0;
	printf("    seccomp: install where seccomp() and %s are refused: %s\n",
	       all_prctl ? "prctl()" : "prctl(PR_SET_SECCOMP)", buf);
	CU_ASSERT(sscanf(buf, "%d", &rc) == 1 && rc < 0);
	CU_ASSERT_PTR_NULL(strstr(buf, "(no message)"));
}

SBX_TEST(sandbox, seccomp_install_fails_closed)
{
	if (!sbx_seccomp_available())
		SBX_SKIP("this kernel has no seccomp filters");
	install_refused(false);
	install_refused(true);
}

/* one socket() in this process: 0 or errno */
static int try_socket(long family, int type, int proto)
{
	long fd = syscall(__NR_socket, family, type, proto);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/*
 * The families filter refuses what cgroup/sock_create never sees: a
 * netlink protocol or a family the policy does not allow, also with the
 * upper half of the argument set, and leaves unix, inet and the allowed
 * netlink protocols alone. Each refused call is made unfiltered first, so
 * the EPERM is the filter's.
 */
SBX_TEST(sandbox, seccomp_families_refuses_what_the_policy_does_not_allow)
{
	const struct sbx_seccomp_families f = { .netlink_allow = (1u << NETLINK_ROUTE) };
	int st = 0;
	pid_t pid;

	if (!sbx_seccomp_available())
		SBX_SKIP("this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)");
	if (try_socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT))
		SBX_SKIP("a netlink audit socket cannot be made here even unfiltered");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char *err = NULL;
		int bad = 0;

		if (sbx_seccomp_install_families(&f, &err))
			_exit(100);
		bad |= (try_socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT) != EPERM) << 0;
		bad |= (try_socket((1L << 32) | AF_NETLINK, SOCK_RAW, NETLINK_AUDIT) != EPERM) << 1;
		bad |= (try_socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE) != 0) << 2;
		bad |= (try_socket(AF_UNIX, SOCK_STREAM, 0) != 0) << 3;
		bad |= (try_socket(AF_INET, SOCK_DGRAM, 0) != 0) << 4;
		bad |= (try_socket(AF_PACKET, SOCK_RAW, 0) != EPERM) << 5;
		bad |= (try_socket(AF_ALG, SOCK_SEQPACKET, 0) != EPERM) << 6;
		_exit(bad);
	}
	CU_ASSERT_FATAL(pid > 0);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		printf("    seccomp families: child status %#x (bit N: check N failed)\n", st);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
