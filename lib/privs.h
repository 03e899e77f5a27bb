/* SPDX-License-Identifier: GPL-2.0 */
/*
 * privs.h - becoming another user for good.
 *
 * Root processes of bpfsbx act for users three times: the daemon compiles
 * a user's policy, `sudo bpfsbx run` starts the user's command, and an
 * approver running as root runs an approved command as the project's
 * owner. Each must end up with nothing of root left: no id, no group and
 * no capability, and no way back.
 */
#ifndef SBX_PRIVS_H
#define SBX_PRIVS_H

#include <stdbool.h>
#include <sys/types.h>

enum sbx_drop_flags {
	/* HOME, USER and LOGNAME of the user, from the password database */
	SBX_DROP_SET_ENV = 1u << 0,
};

/*
 * Become uid:gid with the user's supplementary groups (from the group
 * database; none if the user has no entry) as the real, effective and
 * saved ids, then check it: every id and group is the target's, no
 * capability is left, and setuid(0) fails. A target of uid 0 changes
 * nothing. 0, or -errno; on failure the process may be half dropped and
 * must exit without doing the work it dropped for.
 */
int sbx_drop_privileges(uid_t uid, gid_t gid, unsigned flags);

/*
 * Is uid the user named who, or, for "@group", a member of that group (as
 * its primary group or listed)? What the machine policy's approvers list
 * means, for the daemon and for an approver that writes a rule.
 */
bool sbx_uid_is(uid_t uid, const char *who);

#endif
