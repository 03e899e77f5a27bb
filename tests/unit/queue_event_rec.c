// SPDX-License-Identifier: GPL-2.0
/*
 * The event log's line decoded once (queue/event_rec.c): the shapes
 * user/daemon/events.c writes (a kernel event, its folded repeats, a
 * resolver's decision, a connect with the name it was learned from) and
 * what is not an event record.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <jansson.h>
#include "tests/unit/unit.h"
#include "queue/event_rec.h"
#include "bpf/bpfsbx.h"

static int decode(const char *text, struct sbx_event_rec *r, json_t **j, char **why)
{
	json_error_t e;

	*j = json_loads(text, 0, &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*j);
	return sbx_event_rec_decode(*j, r, why);
}

SBX_TEST(event_rec, kernel_file_event_and_its_repeats)
{
	struct sbx_event_rec r;
	char *why;
	json_t *j;

	CU_ASSERT_EQUAL(decode("{\"time\":\"t\",\"session\":\"s1\",\"pid\":7,\"tid\":7,\"uid\":1000,"
			       "\"comm\":\"cat\",\"exe\":\"/usr/bin/cat\",\"operation\":\"open_read\","
			       "\"access\":\"read\",\"object\":\"/home/u/.ssh/id_rsa\",\"rule\":{\"id\":33,"
			       "\"pattern\":\"~/.ssh/\",\"verdict\":\"deny\",\"reason\":\"keys\"},"
			       "\"verdict\":\"deny\",\"errno\":13}", &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.kind, SBX_EVREC_FILE);
	CU_ASSERT_EQUAL(r.access, SBX_ACC_READ);
	CU_ASSERT_EQUAL(r.verdict, SBX_V_DENY);
	CU_ASSERT_EQUAL(r.count, 1);
	CU_ASSERT_STRING_EQUAL(r.path, "/home/u/.ssh/id_rsa");
	CU_ASSERT_STRING_EQUAL(r.session, "s1");
	CU_ASSERT_EQUAL(r.rule.id, 33);
	CU_ASSERT_STRING_EQUAL(r.rule.pattern, "~/.ssh/");
	json_decref(j);
	/* a folded line has no access: the operation says it; the path was cut */
	CU_ASSERT_EQUAL(decode("{\"session\":\"s1\",\"operation\":\"create\",\"object\":\".../x/y\","
			       "\"rule\":null,\"verdict\":\"ask\",\"repeats\":41}", &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.kind, SBX_EVREC_FILE);
	CU_ASSERT_EQUAL(r.access, SBX_ACC_WRITE);
	CU_ASSERT_EQUAL(r.count, 41);
	CU_ASSERT_TRUE(r.truncated);
	CU_ASSERT_STRING_EQUAL(r.path, "/x/y");
	CU_ASSERT_FALSE(r.rule.present);
	json_decref(j);
}

SBX_TEST(event_rec, network_and_names)
{
	struct sbx_event_rec r;
	uint8_t want[16];
	char *why;
	json_t *j;

	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"connect\",\"object\":"
			       "\"140.82.112.3:443 (github.com)\",\"name\":\"github.com\","
			       "\"verdict\":\"ask\"}", &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.kind, SBX_EVREC_NET);
	CU_ASSERT_EQUAL(r.family, AF_INET);
	CU_ASSERT_EQUAL(r.port, 443);
	CU_ASSERT_EQUAL(r.addr[0], 140);
	CU_ASSERT_EQUAL(r.addr[3], 3);
	CU_ASSERT_STRING_EQUAL(r.host, "github.com");
	json_decref(j);
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"sendmsg\",\"object\":"
			       "\"[2001:db8::5]:53\",\"verdict\":\"deny\"}", &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.kind, SBX_EVREC_NET);
	CU_ASSERT_EQUAL(r.family, AF_INET6);
	inet_pton(AF_INET6, "2001:db8::5", want);
	CU_ASSERT_EQUAL(memcmp(r.addr, want, 16), 0);
	CU_ASSERT_EQUAL(r.port, 53);
	CU_ASSERT_PTR_NULL(r.host);
	json_decref(j);
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"dns\",\"object\":\"x.example (A)\","
			       "\"name\":\"x.example\",\"verdict\":\"ask\",\"repeats\":2}", &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.kind, SBX_EVREC_DNS);
	CU_ASSERT_STRING_EQUAL(r.host, "x.example");
	CU_ASSERT_EQUAL(r.count, 2);
	json_decref(j);
	/* no object a rule names */
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"ptrace\",\"object\":\"pid 1\","
			       "\"verdict\":\"deny\"}", &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.kind, SBX_EVREC_OTHER);
	json_decref(j);
}

SBX_TEST(event_rec, what_is_not_an_event)
{
	struct sbx_event_rec r;
	char *why = NULL;
	json_t *j;

	/* an audit log's own records are skipped, not errors */
	CU_ASSERT_EQUAL(decode("{\"event\":\"session_start\",\"session\":\"s\"}", &r, &j, &why), 0);
	CU_ASSERT_PTR_NULL(why);
	json_decref(j);
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"object\":\"/x\",\"verdict\":\"deny\"}", &r, &j,
			       &why), -1);
	CU_ASSERT_TRUE(why && strstr(why, "\"operation\""));
	free(why);
	json_decref(j);
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"open_read\",\"object\":\"/x\","
			       "\"verdict\":\"never\"}", &r, &j, &why), -1);
	CU_ASSERT_TRUE(why && strstr(why, "unknown verdict 'never'"));
	free(why);
	json_decref(j);
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"open_read\",\"object\":\"/x\","
			       "\"verdict\":\"ask\",\"repeats\":0}", &r, &j, &why), -1);
	CU_ASSERT_TRUE(why && strstr(why, "repeats"));
	free(why);
	json_decref(j);
	CU_ASSERT_EQUAL(decode("[1,2]", &r, &j, &why), -1);
	free(why);
	json_decref(j);
}

SBX_TEST(event_rec, a_learning_sessions_audit_says_what_it_would_have_been)
{
	struct sbx_event_rec r;
	char *why = NULL;
	json_t *j;

	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"open_read\",\"access\":\"read\","
			       "\"object\":\"/srv/x\",\"verdict\":\"audit\",\"rule\":{\"id\":4,"
			       "\"verdict\":\"audit\",\"would\":\"deny\",\"pattern\":\"/srv/\"}}",
			       &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.verdict, SBX_V_AUDIT);
	CU_ASSERT_EQUAL(r.would, SBX_V_DENY);
	CU_ASSERT_STRING_EQUAL(r.rule.would, "deny");
	json_decref(j);
	/* an ordinary audit would nothing */
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"open_read\",\"object\":\"/srv/x\","
			       "\"verdict\":\"audit\",\"rule\":{\"id\":4}}", &r, &j, &why), 1);
	CU_ASSERT_EQUAL(r.would, 0);
	json_decref(j);
	/* "would" only on an audit, and only deny or ask */
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"open_read\",\"object\":\"/srv/x\","
			       "\"verdict\":\"deny\",\"rule\":{\"would\":\"deny\"}}", &r, &j, &why), -1);
	CU_ASSERT_TRUE(why && strstr(why, "not an audit"));
	free(why);
	json_decref(j);
	CU_ASSERT_EQUAL(decode("{\"session\":\"s\",\"operation\":\"open_read\",\"object\":\"/srv/x\","
			       "\"verdict\":\"audit\",\"rule\":{\"would\":\"allow\"}}", &r, &j, &why), -1);
	CU_ASSERT_TRUE(why && strstr(why, "not deny or ask"));
	free(why);
	json_decref(j);
}
