// SPDX-License-Identifier: GPL-2.0
/*
 * event.bpf.c - what an event tells a person: the path of the object and
 * who asked (exe, cwd, command line). Paths are rebuilt from dentries
 * after the decision and are never used for one.
 *
 * The context is read here, in the kernel, at the moment of the decision:
 * by the time the daemon could read /proc, a short-lived process is gone.
 */
#include "sbx_common.h"

#define SBX_PATH_END	(SBX_SCRATCH_PATH - 256 - 1)	/* 1023: the NUL */

/* One component, prepended (a bpf_loop callback; ctx holds the scratch) */
static long sbx_path_step(__u32 i, void *ctx)
{
	struct sbx_tscratch *sc = *(struct sbx_tscratch **)ctx;
	struct sbx_pathw *p = &sc->pw;
	struct dentry *d = (struct dentry *)p->dentry;
	struct mount *m = (struct mount *)p->mnt;
	struct dentry *parent;
	__u32 len, off;

	if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (up == m || !up)
			return 1;
		p->dentry = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
		p->mnt = (__u64)up;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d)
		return 1;
	len = BPF_CORE_READ(d, d_name.len) & SBX_NAME_MAX;
	off = p->off;
	if (off < p->floor + len + 1) {
		p->trunc = 1;
		return 1;
	}
	off -= len;
	bpf_probe_read_kernel(&sc->path[off & 1023], len, BPF_CORE_READ(d, d_name.name));
	off -= 1;
	sc->path[off & 1023] = '/';
	p->off = off;
	p->dentry = (__u64)parent;
	return 0;
}

static __always_inline struct mount *sbx_real_mount(struct vfsmount *mnt)
{
	return (void *)mnt - bpf_core_field_offset(struct mount, mnt);
}

/*
 * Build the path of (vmnt, d) right-aligned in sc->path, keeping at most
 * size bytes with the NUL, and copy it right-aligned into dst[size].
 * Returns where the string starts in dst; *trunc: its head was cut off.
 */
static __always_inline __u32 sbx_build_path(struct sbx_tscratch *sc, struct vfsmount *vmnt,
					    struct dentry *d, char *dst, __u32 size, __u8 *trunc)
{
	struct sbx_pathw *p = &sc->pw;
	__u32 off;

	p->dentry = (__u64)d;
	p->mnt = (__u64)sbx_real_mount(vmnt);
	p->floor = SBX_PATH_END + 1 - size;
	p->off = SBX_PATH_END;
	p->trunc = 0;
	sc->path[SBX_PATH_END] = 0;
	bpf_loop(SBX_WALK_MAX, sbx_path_step, &sc, 0);
	off = p->off;
	if (off >= SBX_PATH_END) {
		off = SBX_PATH_END - 1;
		sc->path[SBX_PATH_END - 1] = '/';
	}
	*trunc = p->trunc;
	if (bpf_probe_read_kernel(dst, size, &sc->path[SBX_PATH_END + 1 - size]))
		return size - 1;
	return (off - p->floor) & (size - 1);
}

__noinline int sbx_event_describe(__u64 vfsmount, __u64 dentry)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sbx_tscratch *sc = sbx_scratch();
	struct sbx_event *e;
	struct file *exe;
	__u8 trunc = 0;
	__u64 a0, a1;

	if (!sc)
		return 0;
	e = &sc->ev;
	if (dentry) {
		e->path_off = sbx_build_path(sc, (struct vfsmount *)vfsmount,
					     (struct dentry *)dentry, e->path,
					     SBX_EVENT_PATH_MAX, &trunc);
		if (trunc)
			e->flags |= SBX_EVF_PATH_TRUNC;
	}
	exe = BPF_CORE_READ(t, mm, exe_file);
	if (exe)
		e->exe_off = sbx_build_path(sc, BPF_CORE_READ(exe, f_path.mnt),
					    BPF_CORE_READ(exe, f_path.dentry), e->exe,
					    SBX_EVENT_CTX_MAX, &trunc);
	e->cwd_off = sbx_build_path(sc, BPF_CORE_READ(t, fs, pwd.mnt),
				    BPF_CORE_READ(t, fs, pwd.dentry), e->cwd,
				    SBX_EVENT_CTX_MAX, &trunc);

	a0 = BPF_CORE_READ(t, mm, arg_start);
	a1 = BPF_CORE_READ(t, mm, arg_end);
	if (a1 > a0) {
		__u32 n = a1 - a0 > SBX_EVENT_CTX_MAX ? SBX_EVENT_CTX_MAX : a1 - a0;

		n &= SBX_EVENT_CTX_MAX * 2 - 1;
		if (n > SBX_EVENT_CTX_MAX)
			n = SBX_EVENT_CTX_MAX;
		if (!bpf_probe_read_user(e->args, n, (void *)a0))
			e->args_len = n;
	}
	return 0;
}
