// SPDX-License-Identifier: GPL-2.0
/*
 * Who may decide a session's requests under the machine policy's
 * projects.approvers (user/daemon/state.c): a listed user, a member of a
 * listed @group, and root; anyone without a list.
 */
#include <string.h>
#include <jansson.h>
#include "user/daemon/state.h"
#include "tests/unit/unit.h"

static bool may(const char *approvers_json, uid_t uid)
{
	struct sbx_session_rt s;
	json_t *a = approvers_json ? json_loads(approvers_json, 0, NULL) : NULL;
	bool ok;

	memset(&s, 0, sizeof(s));
	sbx_session_set_approval(&s, a);
	json_decref(a);
	ok = sbx_session_approver_ok(&s, uid);
	json_decref(s.approval);
	return ok;
}

SBX_TEST(daemon_approvers, listed_users_groups_and_root)
{
	/* nobody (65534, primary group nogroup) on Debian */
	CU_ASSERT_TRUE(may(NULL, 65534));
	CU_ASSERT_TRUE(may("{\"max_always_ttl_s\": 0}", 65534));
	CU_ASSERT_FALSE(may("{\"approvers\": [\"alice\"]}", 65534));
	CU_ASSERT_TRUE(may("{\"approvers\": [\"alice\"]}", 0));
	CU_ASSERT_TRUE(may("{\"approvers\": [\"alice\", \"nobody\"]}", 65534));
	CU_ASSERT_TRUE(may("{\"approvers\": [\"@nogroup\"]}", 65534));
	CU_ASSERT_FALSE(may("{\"approvers\": [\"@root\"]}", 65534));
	CU_ASSERT_FALSE(may("{\"approvers\": [\"@no-such-group\", \"nobody2\"]}", 65534));
	/* a uid with no account is nobody's approver */
	CU_ASSERT_FALSE(may("{\"approvers\": [\"nobody\"]}", 4000123));
	/* the limit travels with it */
	{
		struct sbx_session_rt s;
		json_t *a = json_pack("{s:i}", "max_always_ttl_s", 86400);

		memset(&s, 0, sizeof(s));
		sbx_session_set_approval(&s, a);
		CU_ASSERT_EQUAL(s.max_always_ttl_s, 86400);
		sbx_session_set_approval(&s, NULL);
		CU_ASSERT_EQUAL(s.max_always_ttl_s, 0);
		json_decref(a);
	}
}
