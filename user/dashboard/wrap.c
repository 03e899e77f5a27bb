// SPDX-License-Identifier: GPL-2.0
/* wrap.c - a request as the page gets it (wrap.h). */
#include <stdlib.h>
#include <string.h>
#include "queue/propose.h"
#include "queue/render.h"
#include "queue/request.h"
#include "user/dashboard/wrap.h"

json_t *sbx_api_wrap(const char *project, enum sbx_qdir state, json_t *rec)
{
	struct sbx_request r;
	struct sbx_render rd;
	json_t *w = json_pack("{s:s,s:s,s:O}", "project", project, "state", sbx_qdir_name(state),
			      "request", rec);
	char *what;

	/* a record that does not decode is shown unrendered: the page then
	 * says it cannot be approved there */
	if (!w || !sbx_request_decode(rec, state == SBX_QDIR_DONE, &r, NULL))
		return w;
	/* the words watch uses for the object, so the two read the same */
	what = sbx_request_what(&r);
	if (what)
		json_object_set_new(w, "what", json_string(what));
	free(what);
	/* the page shows the request as watch does: by queue/render.c, here */
	sbx_render_request(&r, project, &rd);
	json_object_set_new(w, "render", sbx_render_json(&rd));
	sbx_render_free(&rd);
	/* asks one rule would answer share it: the page marks them */
	if (state == SBX_QDIR_PENDING) {
		char *key = sbx_request_rule_key(&r);

		if (key)
			json_object_set_new(w, "rule_key", json_string(key));
		free(key);
	}
	sbx_request_release(&r);
	return w;
}
