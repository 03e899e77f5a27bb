/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_tty.h - a session opens no terminal but its own.
 *
 * The person approves requests in `bpfsbx watch`, in a terminal outside
 * every session whose device node usually belongs to the agent's uid. A
 * session that could open it would draw a fake request on the screen, or
 * read what the person types in another window. So terminals are decided
 * by device (the inode's i_rdev: a mknod'd copy, a node on any mount and
 * a /proc/PID/fd/N re-open reach the same check), before any file rule:
 *
 *  - /dev/tty (5:0) is the caller's own controlling terminal and
 *    /dev/ptmx (5:2) makes a new pty: allowed;
 *  - a pty slave (majors 136-143) when the session made the pty (its
 *    devpts inode carries the session's mark, tty.bpf.c; on the landlock
 *    tier the mark is kept by the inode's address) or it is the
 *    caller's controlling terminal (the tty its devpts dentry stands for:
 *    slave numbers repeat across devpts instances, dentries do not);
 *  - a VT or serial line (4), another architecture's serial console
 *    (204), a hypervisor console (229) or a legacy BSD pty (2, 3) only
 *    when it is the caller's controlling terminal;
 *  - never /dev/console (5:1, whichever terminal the kernel's console
 *    is), ttyprintk (5:3: lines in the kernel's log), the VTs' screen
 *    memory (7: vcs, vcsu, vcsa), pty masters by node (128-135).
 *
 * An open with access mode 3 (ioctl only) is decided like any other. A
 * descriptor received over SCM_RIGHTS or pidfd_getfd is decided the
 * same way, except that a received /dev/tty stands for the terminal it
 * was opened on (allowed when that is the receiver's own), and a received
 * pty master is refused: which pty it drives cannot be tied to a session
 * here (its slave's inode is out of reach of the inode storage helper),
 * and a master outside is the person's screen and keyboard (a terminal
 * emulator's, tmux's).
 *
 * Reads, writes and ioctls on a terminal descriptor the session already
 * holds are not checked again. A descriptor enters a session by an open
 * or a receipt (both checked here) or by inheritance from the process
 * that ran `bpfsbx run`: that is the person's hand, and it is nearly
 * always the controlling terminal itself (stdin, stdout, stderr); another
 * one is given on purpose (`3>/dev/pts/5`). A check of every read and
 * write (file_permission) would tax the hottest path of every confined
 * process for that case alone. TIOCSTI and TIOCLINUX, which type into a
 * terminal, are refused on every descriptor (protect.bpf.c).
 */
#ifndef SBX_TTY_H
#define SBX_TTY_H

#include "sbx_common.h"

#define S_IFMT			0170000
#define S_IFCHR			0020000
#define DEVPTS_SUPER_MAGIC	0x1cd1

enum sbx_tty_class {
	SBX_TTY_NO = 0,		/* not a terminal */
	SBX_TTY_ALIAS,		/* /dev/tty, /dev/ptmx */
	SBX_TTY_PTS,		/* a UNIX 98 pty slave */
	SBX_TTY_LINE,		/* a device of its own: VT, serial, console, BSD pty */
	SBX_TTY_NEVER,
};

/* i_rdev is the kernel's dev_t: major << 20 | minor */
static __always_inline int sbx_tty_class(__u32 rdev)
{
	__u32 major = rdev >> 20, minor = rdev & 0xfffff;

	if (major == 5)
		return minor == 0 || minor == 2 ? SBX_TTY_ALIAS : SBX_TTY_NEVER;
	if (major >= 136 && major <= 143)
		return SBX_TTY_PTS;
	if (major == 4 || major == 2 || major == 3 || major == 204 || major == 229)
		return SBX_TTY_LINE;
	if (major == 7 || (major >= 128 && major <= 135))
		return SBX_TTY_NEVER;
	return SBX_TTY_NO;
}

static __always_inline bool sbx_is_chr(struct inode *inode)
{
	return (inode->i_mode & S_IFMT) == S_IFCHR;
}

/* The device a tty is: its driver's major, minor_start + its index. */
static __always_inline __u32 sbx_tty_rdev(struct tty_struct *tty)
{
	struct tty_driver *drv = BPF_CORE_READ(tty, driver);

	return ((__u32)BPF_CORE_READ(drv, major) << 20) |
	       (__u32)(BPF_CORE_READ(drv, minor_start) + BPF_CORE_READ(tty, index));
}

/* The tty an open tty file is on (tty_io.c keeps it in private_data). */
static __always_inline struct tty_struct *sbx_file_tty(struct file *file)
{
	struct tty_file_private *p = BPF_CORE_READ(file, private_data);

	return p ? BPF_CORE_READ(p, tty) : NULL;
}

static __always_inline int sbx_tty_refuse(const struct sbx_session *s, __u64 cgid,
					  struct file *file, struct inode *inode, __u16 op,
					  __u8 acc)
{
	struct sbx_event *e;

	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, op, SBX_V_DENY, SBX_RULE_TERMINAL, -EPERM);
	if (e) {
		e->access = acc;
		e->flags = SBX_EVF_FILE;
		e->dev = inode->i_sb->s_dev;
		e->ino = inode->i_ino;
		e->aux = inode->i_rdev;
		/* a global function takes scalars, not the hook's pointers */
		sbx_event_describe((__u64)BPF_CORE_READ(file, f_path.mnt),
				   (__u64)BPF_CORE_READ(file, f_path.dentry));
		sbx_event_send(e);
	}
	return -EPERM;
}

/* Whether the session cgid made the pty whose slave is inode. ll: the
 * landlock tier's programs, which have no inode storage (a constant). */
static __always_inline bool sbx_pty_made_by(struct inode *inode, __u64 cgid, bool ll)
{
	__u64 *owner, k = (__u64)inode;
	struct sbx_pty_mark *m;

	if (ll) {
		m = bpf_map_lookup_elem(&sbx_pty_maker, &k);
		return m && m->cgid == cgid && m->ino == inode->i_ino &&
		       m->sb == (__u64)inode->i_sb;
	}
	owner = bpf_inode_storage_get(&sbx_pty_owner, inode, 0, 0);
	return owner && *owner == cgid;
}

/*
 * 0, or the refusal of a terminal that is not the caller's own. file and
 * inode (file->f_inode) are the hook's BTF pointers; the caller passed
 * the gate and saw a character device. received: file_receive's file,
 * opened elsewhere. ll: called from the landlock tier's programs.
 */
static __always_inline int sbx_tty_check(struct file *file, struct inode *inode, __u16 op,
					 bool received, bool ll)
{
	__u32 rdev = inode->i_rdev;
	int cls = sbx_tty_class(rdev);
	struct tty_struct *ctty;
	struct sbx_session *s;
	__u64 cgid = 0;

	if (cls == SBX_TTY_NO || (cls == SBX_TTY_ALIAS && !received))
		return 0;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	ctty = BPF_CORE_READ(bpf_get_current_task_btf(), signal, tty);
	switch (cls) {
	case SBX_TTY_ALIAS:
		if ((rdev & 0xfffff) == 0 && ctty && sbx_file_tty(file) == ctty)
			return 0;
		break;
	case SBX_TTY_PTS:
		if (inode->i_sb->s_magic != DEVPTS_SUPER_MAGIC)
			break;	/* a copy of the node: no pty behind it */
		if (sbx_pty_made_by(inode, cgid, ll))
			return 0;
		if (ctty && BPF_CORE_READ(file, f_path.dentry, d_fsdata) == (void *)ctty)
			return 0;
		break;
	case SBX_TTY_LINE:
		if (ctty && sbx_tty_rdev(ctty) == rdev)
			return 0;
		break;
	}
	return sbx_tty_refuse(s, cgid, file, inode, op,
			      (file->f_mode & FMODE_WRITE) ? SBX_ACC_WRITE : SBX_ACC_READ);
}

#endif /* SBX_TTY_H */
