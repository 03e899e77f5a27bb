/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SBX_DAEMON_NOTICE_H
#define SBX_DAEMON_NOTICE_H
#include "queue/request.h"

struct sbx_session_rt;

/* keep a copy of fd (run's stderr) if it is a terminal */
void sbx_notice_adopt(struct sbx_session_rt *s, int fd);
void sbx_notice_close(struct sbx_session_rt *s);
/* one line on that terminal: request id was filed for what req asks */
void sbx_notice_request(struct sbx_session_rt *s, const char *id, const struct sbx_request *req);
/* the daemon's timer: write what the terminal had no room for */
void sbx_notice_retry(struct sbx_session_rt *s);

#endif
