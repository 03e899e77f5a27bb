// SPDX-License-Identifier: GPL-2.0
/*
 * tty.bpf.c - which ptys a session made, for the terminal check in
 * sbx_tty.h: a session opens its own ptys (script, tmux, expect, an
 * agent's pty library) and no one else's.
 *
 * ptmx_open() makes the pair in the opener's context, and the slave's
 * devpts inode is allocated there (devpts_pty_new -> new_inode): no other
 * inode is made on a devpts mount after the mount itself, which no
 * session may do. The mark is inode storage, so it goes with the inode
 * when the pty is gone; a key of (devpts instance, index) would be taken
 * again by the next pty of that number, outside, unless a second hook
 * removed every entry in time. The same point exists, with the same
 * arguments, on 6.1 and 6.12; an fexit on devpts_pty_new could not hold
 * the mark (inode storage is for LSM programs on 6.1).
 */
#include "sbx_tty.h"

SEC("lsm/inode_alloc_security")
int BPF_PROG(sbx_pty_made, struct inode *inode, int ret)
{
	__u64 cgid = 0, *owner;

	if (ret || !sbx_maybe_in_session())
		return ret;
	if (inode->i_sb->s_magic != DEVPTS_SUPER_MAGIC || !sbx_session_lookup(&cgid))
		return 0;
	owner = bpf_inode_storage_get(&sbx_pty_owner, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!owner)
		return -ENOMEM;	/* a pty the session could not open is no use to it */
	*owner = cgid;
	return 0;
}

/*
 * The landlock tier: the same mark, kept by the slave inode's address
 * (sbx_pty_maker), written when devpts_pty_new returns in ptmx_open's
 * context and removed when devpts_pty_kill takes the slave away.
 */
SEC("fexit/devpts_pty_new")
int BPF_PROG(sbx_ll_pty_made, void *fsi, int index, void *priv, struct dentry *ret)
{
	struct sbx_pty_mark m = {};
	struct inode *inode;
	__u64 k;

	if ((unsigned long)ret >= (unsigned long)-4095 || !sbx_current_session(&m.cgid))
		return 0;	/* IS_ERR(ret), or made outside every session */
	inode = BPF_CORE_READ(ret, d_inode);
	if (!inode)
		return 0;
	k = (__u64)inode;
	m.ino = BPF_CORE_READ(inode, i_ino);
	m.sb = (__u64)BPF_CORE_READ(inode, i_sb);
	if (bpf_map_update_elem(&sbx_pty_maker, &k, &m, BPF_ANY))
		sbx_stat_inc(SBX_STAT_ERRORS);	/* unmarked: refused to its session too */
	return 0;
}

SEC("fentry/devpts_pty_kill")
int BPF_PROG(sbx_ll_pty_gone, struct dentry *dentry)
{
	__u64 k = (__u64)BPF_CORE_READ(dentry, d_inode);

	bpf_map_delete_elem(&sbx_pty_maker, &k);
	return 0;
}
