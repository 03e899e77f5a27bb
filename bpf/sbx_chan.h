/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_chan.h - opening a named FIFO or a POSIX message queue: a channel
 * to whoever holds its other end (ipc.bpf.c records who made one). Run
 * by each tier's file_open program (files.bpf.c), so that an open pays
 * for one program, not two.
 */
#ifndef SBX_CHAN_H
#define SBX_CHAN_H

#include "sbx_file.h"
#include "sbx_tty.h"

#define S_IFIFO			0010000
#define S_IFSOCK		0140000
#define S_IFREG			0100000
#define MQUEUE_MAGIC		0x19800202

static __always_inline bool sbx_is_mqueue(struct inode *inode)
{
	return (inode->i_mode & S_IFMT) == S_IFREG && inode->i_sb->s_magic == MQUEUE_MAGIC;
}

/* a FIFO or a POSIX message queue: a channel to whoever holds its other end */
static __always_inline bool sbx_is_chan(struct inode *inode)
{
	return (inode->i_mode & S_IFMT) == S_IFIFO || sbx_is_mqueue(inode);
}

/*
 * Opening a FIFO is connecting to whoever holds its other end. One the
 * session made is its own; any other is decided by the connect rules of
 * its path, as a unix socket's is, and refused when none names it. A
 * message queue that the session did not make is refused: mq_open reaches
 * it through the kernel's internal mount, where no rule's path leads.
 * Anonymous pipes are on the kernel's internal mount: they reach file_open
 * only through /proc/self/fd (`> /dev/stdout`), are the session's stdio or
 * its own, and /proc/PID/fd of processes outside is refused already.
 */
static __always_inline int sbx_chan_open(struct file *file, __u64 owner)
{
	struct vfsmount *mnt;
	struct sbx_session *s;
	struct sbx_file_io *io;
	__u64 cgid = 0;
	bool mq;

	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	mnt = file->f_path.mnt;
	mq = sbx_is_mqueue(file->f_inode);
	if (!mq && sbx_internal_mount(mnt))
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	if (owner == cgid)
		return 0;
	if (mq)
		return sbx_file_refuse(s, cgid, mnt, file->f_path.dentry, SBX_ACC_CONNECT,
				       SBX_OP_IPC, SBX_RULE_IPC_OUTSIDE);
	io = sbx_file_io_get(s, cgid, mnt, file->f_path.dentry, SBX_ACCBIT(SBX_ACC_CONNECT),
			     (file->f_mode & FMODE_WRITE) ? SBX_OP_OPEN_WRITE : SBX_OP_OPEN_READ);
	if (!io)
		return -EPERM;
	sbx_file_walk(io);
	if (io->v[SBX_ACC_CONNECT] <= SBX_V_ALLOW)
		return 0;
	if (io->rule[SBX_ACC_CONNECT] == SBX_RULE_LISTENER_OUTSIDE)
		io->rule[SBX_ACC_CONNECT] = SBX_RULE_IPC_OUTSIDE;	/* the default */
	return sbx_file_report(io);
}

#endif /* SBX_CHAN_H */
