/* SPDX-License-Identifier: GPL-2.0 */
/*
 * names.h - the names people and files read for the ABI's enums
 * (bpf/bpfsbx.h): verdicts, access classes, operations, and the texts of
 * the built-in rules. One table each: the event log, the audit log, the
 * queue's requests and `policy explain` all say the same thing.
 */
#ifndef SBX_NAMES_H
#define SBX_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/bpfsbx.h"

const char *sbx_verdict_name(uint8_t v);	/* "allow", ..., "invalid" */
int sbx_verdict_parse(const char *s);		/* -1: not a verdict a policy may write */
const char *sbx_access_name(enum sbx_access a);	/* "read", "write", "exec", "invalid" */
int sbx_access_parse(const char *s);		/* -1: not an access class */
const char *sbx_op_name(unsigned op);		/* "open_read", ..., "unknown" */
/* "tcp" (IPPROTO_TCP), "udp" (IPPROTO_UDP), "any" (0), "?" */
const char *sbx_proto_name(uint8_t proto);
/* The variables `bpfsbx run` removes (at most 32; bit i of the policy
 * header's keep_env keeps entry i), i from 0; NULL past the end. */
const char *sbx_scrubbed_env(size_t i);
int sbx_scrubbed_env_index(const char *name);	/* -1: not one of them */
/* unsetenv() each of them that keep has no bit for */
void sbx_scrub_env(uint32_t keep);
/* "can" for AF_CAN, "unknown family" */
const char *sbx_family_name(unsigned af);
/* The families a policy may name in sandbox.socket_families, i from 0;
 * NULL past the end. */
const char *sbx_optional_family(size_t i, int *af);
size_t sbx_optional_family_count(void);
/* "built-in sandbox-dir: .sandbox directories ... are never writable" */
const char *sbx_builtin_rule_text(uint32_t id);
/* "sandbox-dir": the short name of a built-in rule (id >= SBX_RULE_BUILTIN;
 * "built-in" for one this table lacks), NULL for a policy's own rule */
const char *sbx_builtin_rule_name(uint32_t id);
/* "7" for a policy's rule, "built-in:listener-outside" for a built-in one:
 * how a person reads a rule id (policy compile --dump) */
const char *sbx_rule_id_label(uint32_t id, char *buf, size_t len);

#endif
