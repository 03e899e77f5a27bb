/* SPDX-License-Identifier: GPL-2.0 */
/* json.h - the one accessor for a string member of a JSON object. */
#ifndef SBX_JSON_H
#define SBX_JSON_H

#include <jansson.h>

/*
 * The string at KEY, or NULL when it is missing or not a string: every
 * reader of requests, hook input, control messages and events treats a
 * wrong type as absent, so that a malformed field is reported by the
 * caller that knows which field it needed, never read as something else.
 */
static inline const char *sbx_json_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

#endif
