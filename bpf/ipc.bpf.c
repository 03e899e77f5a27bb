// SPDX-License-Identifier: GPL-2.0
/*
 * ipc.bpf.c - accomplices without sockets. A process outside the session
 * acts for whoever reaches it, whatever the channel: a unix socket
 * (network.bpf.c), and also a named FIFO it reads, a SysV message queue,
 * semaphore set or shared memory segment it serves, or a kernel keyring
 * where the person's tools keep tokens. Each is decided like a unix
 * socket, on who is at the other end: an object the session made is the
 * session's own; anything else (made outside, by another session, or
 * before the programs were loaded, when nobody recorded it) is refused,
 * except a FIFO that a connect rule names. POSIX message queues are files
 * of the mqueue file system, opened by mq_open through the kernel's
 * internal mount, which no file rule sees: they are decided here, on who
 * made them, like FIFOs.
 */
#include "sbx_chan.h"

#define KEY_ALLOC_UID_KEYRING	0x0010

static __always_inline void sbx_ipc_forget(void *map, void *obj)
{
	__u64 k = (__u64)obj;

	if (obj)
		bpf_map_delete_elem(map, &k);
}

/* ---- SysV IPC ------------------------------------------------------------- */

/* The object is the session's from its birth. An object whose maker
 * cannot be recorded is not made: it would be refused to its own maker. */
static __always_inline int sbx_ipc_alloc(struct kern_ipc_perm *perm)
{
	__u64 k = (__u64)perm, cgid = 0;

	if (!sbx_current_session(&cgid))
		return 0;
	if (bpf_map_update_elem(&sbx_ipc_owner, &k, &cgid, BPF_ANY)) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Every way to use an object: msgget/semget/shmget of an existing key
 * (ipc_permission, then associate), msgsnd, msgrcv, semop, shmat
 * (ipc_permission, then the operation's hook) and the *ctl calls (some,
 * IPC_RMID, IPC_SET and the *_STAT_ANY commands, reach only their ctl
 * hook). perm is NULL for the ctl commands that name no object
 * (IPC_INFO): those tell limits, not contents.
 */
static __always_inline int sbx_ipc_check(struct kern_ipc_perm *perm)
{
	struct sbx_session *s;
	struct sbx_event *e;
	__u64 k = (__u64)perm, cgid = 0, *owner;

	if (!perm || !sbx_maybe_in_session())
		return 0;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	owner = bpf_map_lookup_elem(&sbx_ipc_owner, &k);
	if (owner && *owner == cgid)
		return 0;
	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, SBX_OP_IPC, SBX_V_DENY, SBX_RULE_IPC_OUTSIDE, -EPERM);
	if (e) {
		e->aux = BPF_CORE_READ(perm, id);
		e->name_hash = (__u32)BPF_CORE_READ(perm, key);
		sbx_event_describe(0, 0);
		sbx_event_send(e);
	}
	return -EPERM;
}

/*
 * One program per hook: a program's name says which use it saw (bpftool
 * prog, the verifier budgets); ... are the hook's arguments after perm.
 * Each has a twin for the landlock tier (BPF-LSM off), named sbx_ll_*, on
 * the security_* function that calls the hook: fmod_ret where it decides
 * (the same context, the same return), fentry where it only forgets. The
 * owners are in hash maps, which every program type may use.
 */
#define SBX_IPC_ALLOC(hook, fn, name)					\
	SEC("lsm/" #hook)						\
	int BPF_PROG(sbx_##name, struct kern_ipc_perm *perm, int ret)	\
	{								\
		return ret ?: sbx_ipc_alloc(perm);			\
	}								\
	SEC("fmod_ret/" #fn)						\
	int BPF_PROG(sbx_ll_##name, struct kern_ipc_perm *perm, int ret)	\
	{								\
		return ret ?: sbx_ipc_alloc(perm);			\
	}
#define SBX_IPC_FREE(hook, fn, name)					\
	SEC("lsm/" #hook)						\
	int BPF_PROG(sbx_##name, struct kern_ipc_perm *perm)		\
	{								\
		sbx_ipc_forget(&sbx_ipc_owner, perm);			\
		return 0;						\
	}								\
	SEC("fentry/" #fn)						\
	int BPF_PROG(sbx_ll_##name, struct kern_ipc_perm *perm)		\
	{								\
		sbx_ipc_forget(&sbx_ipc_owner, perm);			\
		return 0;						\
	}
#define SBX_IPC_CHECK(hook, fn, name, ...)				\
	SEC("lsm/" #hook)						\
	int BPF_PROG(sbx_##name, struct kern_ipc_perm *perm, __VA_ARGS__, int ret)	\
	{								\
		return ret ?: sbx_ipc_check(perm);			\
	}								\
	SEC("fmod_ret/" #fn)						\
	int BPF_PROG(sbx_ll_##name, struct kern_ipc_perm *perm, __VA_ARGS__, int ret)	\
	{								\
		return ret ?: sbx_ipc_check(perm);			\
	}

SBX_IPC_ALLOC(msg_queue_alloc_security, security_msg_queue_alloc, msq_alloc)
SBX_IPC_ALLOC(sem_alloc_security, security_sem_alloc, sem_alloc)
SBX_IPC_ALLOC(shm_alloc_security, security_shm_alloc, shm_alloc)

/* freed after an RCU grace period: the address is not reused before */
SBX_IPC_FREE(msg_queue_free_security, security_msg_queue_free, msq_free)
SBX_IPC_FREE(sem_free_security, security_sem_free, sem_free)
SBX_IPC_FREE(shm_free_security, security_shm_free, shm_free)

SBX_IPC_CHECK(ipc_permission, security_ipc_permission, ipc_permission, short flag)
SBX_IPC_CHECK(msg_queue_associate, security_msg_queue_associate, msq_associate, int flg)
SBX_IPC_CHECK(msg_queue_msgctl, security_msg_queue_msgctl, msq_msgctl, int cmd)
SBX_IPC_CHECK(msg_queue_msgsnd, security_msg_queue_msgsnd, msq_msgsnd, struct msg_msg *msg,
	      int flg)
/* also run by a sender for each receiver it hands a message to: decided
 * on the task that runs it, as every hook here */
SBX_IPC_CHECK(msg_queue_msgrcv, security_msg_queue_msgrcv, msq_msgrcv, struct msg_msg *msg,
	      struct task_struct *target, long type, int mode)
SBX_IPC_CHECK(sem_associate, security_sem_associate, sem_associate, int flg)
SBX_IPC_CHECK(sem_semctl, security_sem_semctl, sem_semctl, int cmd)
SBX_IPC_CHECK(sem_semop, security_sem_semop, sem_semop, struct sembuf *sops, unsigned int nsops,
	      int alter)
SBX_IPC_CHECK(shm_associate, security_shm_associate, shm_associate, int flg)
SBX_IPC_CHECK(shm_shmctl, security_shm_shmctl, shm_shmctl, int cmd)
SBX_IPC_CHECK(shm_shmat, security_shm_shmat, shm_shmat, char *shmaddr, int flg)

/* ---- named FIFOs and POSIX message queues ---------------------------------- */

static __always_inline int sbx_chan_mark(struct dentry *dentry)
{
	struct sbx_tscratch *sc;
	__u64 cgid = 0;

	if (!sbx_session_lookup(&cgid))
		return 0;
	sc = sbx_scratch();
	if (!sc) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		return -EPERM;	/* unrecorded, it would be refused to its maker */
	}
	sc->mknod_dentry = (__u64)dentry;
	sc->mknod_cgid = cgid;
	sc->mknod_ns = bpf_ktime_get_boot_ns();
	return 0;
}

/*
 * Who made a FIFO is known only between path_mknod (the name, a negative
 * dentry) and the file system's d_instantiate of that dentry (the inode):
 * the task remembers the dentry in between. mq_open(O_CREAT) makes its
 * queue through inode_create and d_instantiate the same way. Overlayfs makes the upper
 * layer's FIFO on the way (a vfs_mknod of its own, with another dentry,
 * which the mark does not match) and instantiates the overlay dentry
 * last. A mark left by a mknod that failed is replaced by the next one,
 * and expires: only the creation it was made for may use it.
 */
#define SBX_MKNOD_MARK_NS	1000000000ull

SEC("lsm/path_mknod")
int BPF_PROG(sbx_fifo_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	if (ret || (mode & S_IFMT) != S_IFIFO || !sbx_maybe_in_session())
		return ret;
	return sbx_chan_mark(dentry);
}

SEC("lsm/inode_create")
int BPF_PROG(sbx_mqueue_create, struct inode *dir, struct dentry *dentry, umode_t mode, int ret)
{
	if (ret || dir->i_sb->s_magic != MQUEUE_MAGIC || !sbx_maybe_in_session())
		return ret;
	return sbx_chan_mark(dentry);
}

SEC("lsm/d_instantiate")
int BPF_PROG(sbx_fifo_instantiate, struct dentry *dentry, struct inode *inode)
{
	struct sbx_tscratch *sc;
	__u64 *owner;

	if (!inode || !sbx_is_chan(inode) || !sbx_maybe_in_session())
		return 0;
	sc = bpf_task_storage_get(&sbx_tscratch, bpf_get_current_task_btf(), 0, 0);
	if (!sc || sc->mknod_dentry != (__u64)dentry)
		return 0;	/* a lookup, not this task's mknod */
	sc->mknod_dentry = 0;
	if (bpf_ktime_get_boot_ns() - sc->mknod_ns > SBX_MKNOD_MARK_NS)
		return 0;
	owner = bpf_inode_storage_get(&sbx_chan_owner, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (owner)
		*owner = sc->mknod_cgid;
	else
		sbx_stat_inc(SBX_STAT_ERRORS);	/* it stays outside: refused */
	return 0;
}

/*
 * The landlock tier has no inode storage: the maker of a FIFO is kept by
 * the inode's address (sbx_fifo_maker), written when vfs_mknod returns
 * with the FIFO in place (overlayfs calls it twice, for the overlay
 * inode and the upper one: both are the session's). A POSIX message
 * queue is not recorded, so sbx_chan_open refuses every one there.
 */
SEC("fexit/vfs_mknod")
int BPF_PROG(sbx_ll_fifo_made, void *idmap, struct inode *dir, struct dentry *dentry,
	     umode_t mode, unsigned int dev, int ret)
{
	struct sbx_fifo_maker m = {};
	struct inode *inode;
	__u64 k;

	if (ret || (mode & S_IFMT) != S_IFIFO || !sbx_current_session(&m.cgid))
		return 0;
	inode = BPF_CORE_READ(dentry, d_inode);
	if (!inode)
		return 0;
	k = (__u64)inode;
	m.ino = BPF_CORE_READ(inode, i_ino);
	if (bpf_map_update_elem(&sbx_fifo_maker, &k, &m, BPF_ANY))
		sbx_stat_inc(SBX_STAT_ERRORS);	/* it stays outside: refused */
	return 0;
}

/* ---- kernel keys ------------------------------------------------------------ */

/*
 * Every key made is written down with its maker's session (0: outside).
 * The user's own keyrings (@u, @us) are made on first use by whoever
 * touches them first, maybe a session: they are always outside.
 */
static __always_inline int sbx_key_alloc_do(struct key *key, unsigned long flags)
{
	__u64 k = (__u64)key, owner = 0, cgid = 0;

	if (sbx_maybe_in_session() && sbx_session_lookup(&cgid) &&
	    !(flags & KEY_ALLOC_UID_KEYRING))
		owner = cgid;
	if (bpf_map_update_elem(&sbx_key_owner, &k, &owner, BPF_ANY)) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		if (owner)
			return -ENOMEM;	/* unrecorded, it would be refused to its maker */
		/* no stale session may stay on this address */
		bpf_map_delete_elem(&sbx_key_owner, &k);
	}
	return 0;
}

SEC("lsm/key_alloc")
int BPF_PROG(sbx_key_alloc, struct key *key, const struct cred *cred, unsigned long flags, int ret)
{
	return ret ?: sbx_key_alloc_do(key, flags);
}

SEC("fmod_ret/security_key_alloc")
int BPF_PROG(sbx_ll_key_alloc, struct key *key, const struct cred *cred, unsigned long flags,
	     int ret)
{
	return ret ?: sbx_key_alloc_do(key, flags);
}

/* 6.1 only (6.12 has no key_free hook): the loader keeps it where it fits
 * (user/daemon/verifier.c) */
SEC("lsm/key_free")
int BPF_PROG(sbx_key_free, struct key *key)
{
	sbx_ipc_forget(&sbx_key_owner, key);
	return 0;
}

/*
 * Every use of a key passes here once the key's own permissions allowed
 * it: read, search, link, view, write, setattr. A key the session did not
 * make is refused, whatever it asks. key_ref_t carries "possessed" in its
 * low bit, and points to a struct that is only declared: the verifier
 * does not let a program load such an argument from its context (6.12:
 * rejected at the load), so it is read as a number out of the context,
 * and the program is written without BPF_PROG, which would load it.
 */
static __always_inline int sbx_key_permission_do(unsigned long long *ctx)
{
	int ret = (int)ctx[3];
	__u32 need_perm = (__u32)ctx[2];
	struct sbx_session *s;
	struct sbx_event *e;
	__u64 key_ref = 0, k, cgid = 0, *owner;

	if (ret || !sbx_maybe_in_session())
		return ret;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	if (bpf_probe_read_kernel(&key_ref, sizeof(key_ref), ctx))
		key_ref = 0;	/* refused below: no key is at 0 */
	k = key_ref & ~1ull;
	owner = bpf_map_lookup_elem(&sbx_key_owner, &k);
	if (owner && *owner == cgid)
		return 0;
	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, SBX_OP_KEY, SBX_V_DENY, SBX_RULE_KEY_OUTSIDE, -EPERM);
	if (e) {
		e->aux = k ? BPF_CORE_READ((struct key *)k, serial) : 0;
		e->port = need_perm;
		sbx_event_describe(0, 0);
		sbx_event_send(e);
	}
	return -EPERM;
}

SEC("lsm/key_permission")
int sbx_key_permission(unsigned long long *ctx)
{
	return sbx_key_permission_do(ctx);
}

/* the landlock tier's twin: fmod_ret's context is the hook's, with the
 * return after the three arguments */
SEC("fmod_ret/security_key_permission")
int sbx_ll_key_permission(unsigned long long *ctx)
{
	return sbx_key_permission_do(ctx);
}
