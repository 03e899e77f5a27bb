/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrap.h - a request as the page gets it, for the API's answers (api.c)
 * and the feed's pushes (feed_queue.c) alike.
 */
#ifndef SBX_DASH_WRAP_H
#define SBX_DASH_WRAP_H

#include <jansson.h>
#include "queue/queue.h"

/* {project, state, request, what, render}: rec (borrowed) in state under
 * project, with what watch calls it and as queue/render.c renders it; a
 * record that is not valid gets neither what nor render */
json_t *sbx_api_wrap(const char *project, enum sbx_qdir state, json_t *rec);

#endif
