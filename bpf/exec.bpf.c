// SPDX-License-Identifier: GPL-2.0
/*
 * exec.bpf.c - what a session may execute. The decision is on the file
 * the kernel is about to run (bprm->file), never on the name that was
 * asked for: a symlink, a hard link, /proc/self/fd/N or a relative path
 * all arrive here as the same inode. A script's interpreter is checked
 * too: binfmt_script comes back through this hook for it.
 */
#include "sbx_walk.h"

SEC("lsm/bprm_check_security")
int BPF_PROG(sbx_bprm_check, struct linux_binprm *bprm, int ret)
{
	struct file *file;

	if (ret)
		return ret;
	file = BPF_CORE_READ(bprm, file);
	return sbx_check_file(BPF_CORE_READ(file, f_path.mnt), BPF_CORE_READ(file, f_path.dentry),
			      SBX_ACCBIT(SBX_ACC_EXEC), SBX_OP_EXEC);
}
