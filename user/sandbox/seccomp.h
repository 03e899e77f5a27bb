/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

/* the memfd flags of 6.3, for older headers */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL	0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC	0x0010U
#endif

/*
 * The fallback tier's "never, whatever the policy" list (docs/KERNELS.md,
 * "The fallback tier: seccomp"): a seccomp filter that `run` installs in
 * itself just before it execs CMD, where BPF-LSM is not active. It is
 * inherited by every descendant and cannot be removed.
 *
 * Unlike protect.bpf.c, seccomp sees only a syscall's number and its
 * register arguments: it cannot tell whether a ptrace target is in the
 * session, read clone3's flags (they are in a struct), or follow a path.
 * So each rule here is the whole class: ptrace is refused for every
 * target, descriptor owners for every owner, clone3 altogether (ENOSYS,
 * on which libc falls back to clone, whose flags it can read).
 *
 * Fail closed: if sbx_seccomp_install() returns an error, the caller must
 * not run CMD.
 */

/* io_uring's operations bypass every syscall filter: it stays refused
 * unless the policy allows it */
#define SBX_SECCOMP_ALLOW_IO_URING	0x1u

/*
 * Set no_new_privs (a setuid or file-capability program then gains
 * nothing), build the filter for the native architecture and load it into
 * the calling thread (and, with TSYNC, every other thread of the process).
 * Returns 0, or -errno and *err (malloc'd: one sentence) on failure.
 */
int sbx_seccomp_install(unsigned flags, char **err);

/*
 * Build the filter without loading it, to check that it can be built here
 * (doctor). 0 or -errno and *err, as above.
 */
int sbx_seccomp_check(unsigned flags, char **err);

/* The kernel knows MFD_NOEXEC_SEAL (6.3 and later): memfd_create without
 * it, or with MFD_EXEC, is then refused. Older kernels make every memfd
 * executable and refuse the flag, so there the rule cannot apply. */
bool sbx_memfd_noexec_known(void);

/* seccomp filters whose action is SECCOMP_RET_ERRNO can be loaded here
 * (CONFIG_SECCOMP_FILTER) */
bool sbx_seccomp_available(void);

/*
 * The socket families a session may create, as its compiled policy says
 * (struct sbx_policy_hdr): the part of lsm/socket_create's decision
 * (bpf/sbx_family.h) that cgroup/sock_create cannot take, because the
 * kernel runs that program for IPv4 and IPv6 sockets only. Unix, IPv4 and
 * IPv6 pass here; every other family is refused (EPERM) unless allowed:
 * netlink by protocol, packet with raw sockets, the rest by family_allow.
 */
struct sbx_seccomp_families {
	uint64_t family_allow;	/* bit F: family F */
	uint32_t netlink_allow;	/* bit P: netlink protocol P */
	bool packet;		/* AF_PACKET (sandbox.raw_sockets) */
};

/*
 * Load a second filter that refuses socket() and socketpair() of the
 * families f does not allow, after sbx_seccomp_install() (which set
 * no_new_privs). 0, or -errno with *err; on error the caller must not run
 * CMD.
 */
int sbx_seccomp_install_families(const struct sbx_seccomp_families *f, char **err);

#endif
