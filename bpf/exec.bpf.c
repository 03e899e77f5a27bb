// SPDX-License-Identifier: GPL-2.0
/*
 * exec.bpf.c - what a session may execute. The decision is on the file
 * the kernel is about to run (bprm->file), never on the name that was
 * asked for: a symlink, a hard link, /proc/self/fd/N or a relative path
 * all arrive here as the same inode. A script's interpreter is checked
 * too: binfmt_script comes back through this hook for it.
 *
 * Mapping a file executable is executing it: `ld.so ./binary` and
 * LD_PRELOAD never exec the file, they mmap it with PROT_EXEC (or
 * mprotect it to executable later), so those are checked the same way.
 * Anonymous executable memory stays allowed: every JIT (node, java,
 * browsers) needs it.
 */
#include "sbx_file.h"

#define PROT_EXEC	0x4
#define VM_EXEC		0x00000004

/* fs/internal.h from 6.5: an overlayfs "backing file" and the path the
 * user opened (absent on 6.1, where the real file keeps the overlay path) */
struct backing_file___sbx {
	struct file file;
	struct path user_path;
} __attribute__((preserve_access_index));

/* ll: from the landlock tier's programs, which have no verdict cache */
static __always_inline int sbx_check_exec(struct file *file, __u16 op, bool ll)
{
	struct vfsmount *mnt = BPF_CORE_READ(file, f_path.mnt);
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	struct inode *bi = ll ? NULL : file->f_inode;
	struct sbx_session *s;
	__u64 cgid = 0;
	__u32 kind;

	/*
	 * An overlayfs mapping holds the file of the layer below (vm_file is
	 * set to it), whose path is on a private mount of the layer: decide
	 * on the path the user opened, which the rules name. Its inode is not
	 * a BTF pointer here, so this rare check goes without the cache.
	 */
	if (bpf_core_type_exists(struct backing_file___sbx) && sbx_fmode_backing &&
	    (BPF_CORE_READ(file, f_mode) & sbx_fmode_backing)) {
		struct backing_file___sbx *bf = (void *)file;

		mnt = BPF_CORE_READ(bf, user_path.mnt);
		d = BPF_CORE_READ(bf, user_path.dentry);
		bi = NULL;
	}

	s = sbx_session_lookup(&cgid);	/* the hooks below passed the gate */
	if (!s)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	kind = sbx_exec_kind(s, file);
	if (kind)
		return sbx_file_refuse(s, cgid, mnt, d, SBX_ACC_EXEC, op, kind);
	if (sbx_internal_mount(mnt))
		return 0;	/* an allowed memfd: no path to decide on */
	return sbx_check_file_in(s, cgid, mnt, d, bi, false, SBX_ACCBIT(SBX_ACC_EXEC), op);
}

/*
 * A container session is adopted while its runtime still prepares it
 * (SBX_PF_ARMING). The runtime's one exec is of the container's program:
 * from then on everything in the cgroup is the agent's, and this exec is
 * already decided by the policy. The flag only ever goes off here; the
 * daemon's later updates never carry it (user/daemon/containers.c).
 */
static __always_inline void sbx_session_arm(void)
{
	__u64 id = bpf_get_current_ancestor_cgroup_id(sbx_session_level);
	struct sbx_session *s = id ? bpf_map_lookup_elem(&sbx_sessions, &id) : NULL;

	if (s && (s->pol.flags & SBX_PF_ARMING))
		__sync_fetch_and_and(&s->pol.flags, ~SBX_PF_ARMING);
}

SEC("lsm/bprm_check_security")
int BPF_PROG(sbx_bprm_check, struct linux_binprm *bprm, int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	sbx_session_arm();
	return sbx_check_exec(bprm->file, SBX_OP_EXEC, false);
}

SEC("lsm/mmap_file")
int BPF_PROG(sbx_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags, int ret)
{
	if (ret)
		return ret;
	if (!file || !(prot & PROT_EXEC) || !sbx_maybe_in_session())
		return 0;
	return sbx_check_exec(file, SBX_OP_MMAP_EXEC, false);
}

/*
 * The landlock tier: Landlock's EXECUTE right is checked on execve only,
 * so `ld.so ./binary`, LD_PRELOAD and dlopen of a file the policy keeps
 * from running map it executable unchecked. security_mmap_file takes the
 * prot asked for, before mmap_prot() adds PROT_EXEC for a process with
 * READ_IMPLIES_EXEC (personality(2), which a session may set): a
 * readable mapping counts as executable then.
 */
#define READ_IMPLIES_EXEC	0x0400000
#define PROT_READ		0x1

SEC("fmod_ret/security_mmap_file")
int BPF_PROG(sbx_ll_mmap_file, struct file *file, unsigned long prot, unsigned long flags,
	     int ret)
{
	bool exec;

	if (ret)
		return ret;
	if (!file || !sbx_maybe_in_session())
		return 0;
	exec = (prot & PROT_EXEC) ||
	       ((prot & PROT_READ) &&
		(bpf_get_current_task_btf()->personality & READ_IMPLIES_EXEC));
	return exec ? sbx_check_exec(file, SBX_OP_MMAP_EXEC, true) : 0;
}

static __always_inline int sbx_mprotect(struct vm_area_struct *vma, unsigned long prot, bool ll)
{
	struct file *file;

	if (!(prot & PROT_EXEC) || !sbx_maybe_in_session() || (BPF_CORE_READ(vma, vm_flags) & VM_EXEC))
		return 0;	/* not making anything newly executable */
	file = vma->vm_file;	/* a trusted pointer: sbx_check_exec reads its inode */
	if (!file)
		return 0;
	return sbx_check_exec(file, SBX_OP_MMAP_EXEC, ll);
}

SBX_TWINS(file_mprotect, file_mprotect, sbx_mprotect(vma, prot, ll),
	  struct vm_area_struct *vma, unsigned long reqprot, unsigned long prot)

/* kernel_cap_t: two 32-bit words on 6.1, one 64-bit word from 6.3; the
 * same 8 bytes either way */
static __always_inline __u64 sbx_caps(const struct cred *c, __u32 off)
{
	__u64 v = ~0ull;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)c + off);
	return v;
}

/*
 * Privilege gained on exec, whatever gave it: the setuid and setgid bits
 * (bprm_fill_uid) and file capabilities (security.capability, which the
 * capability module reads) all end in the credentials computed for the
 * new program, and this hook runs after the capability module has
 * computed them and before the point of no return. A new effective uid
 * or gid, or a permitted capability that the caller lacks, is a gain.
 * What gains nothing runs: a setuid file on a nosuid mount, under
 * no_new_privs, or one owned by the caller; root, whose capabilities are
 * full already. (A mode-bit check before this one, in bprm_check, missed
 * file capabilities and refused those that gain nothing.)
 */
SEC("lsm/bprm_creds_from_file")
int BPF_PROG(sbx_bprm_creds, struct linux_binprm *bprm, struct file *file, int ret)
{
	const struct cred *new, *old;
	struct sbx_session *s;
	__u32 off = bpf_core_field_offset(struct cred, cap_permitted);
	__u64 cgid = 0;

	if (ret || !sbx_maybe_in_session())
		return ret;
	s = sbx_session_lookup(&cgid);
	if (!s || (s->pol.flags & SBX_PF_ALLOW_SETUID))
		return 0;
	new = BPF_CORE_READ(bprm, cred);
	old = BPF_CORE_READ(bpf_get_current_task_btf(), cred);
	if (!new || !old)
		goto refuse;	/* fail closed */
	if (BPF_CORE_READ(new, euid.val) == BPF_CORE_READ(old, euid.val) &&
	    BPF_CORE_READ(new, egid.val) == BPF_CORE_READ(old, egid.val) &&
	    !(sbx_caps(new, off) & ~sbx_caps(old, off)))
		return 0;
refuse:
	sbx_stat_inc(SBX_STAT_CHECKS);
	return sbx_file_refuse(s, cgid, BPF_CORE_READ(file, f_path.mnt),
			       BPF_CORE_READ(file, f_path.dentry), SBX_ACC_EXEC, SBX_OP_EXEC,
			       SBX_RULE_EXEC_PRIV);
}
