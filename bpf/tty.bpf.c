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
