// SPDX-License-Identifier: GPL-2.0
/*
 * queue-fixture - writes a daemon-less queue for the dashboard's browser
 * tests through the queue library, exactly as the daemon writes it:
 *
 *   queue-fixture submit PROJECT            < request.json    prints the id
 *   queue-fixture audit PROJECT SESSION     < records.jsonl   appends each line
 *
 * A request is sbx_queue_submit() (pending/ and issued/, the id, created
 * and deadline filled in); an audit record is sbx_audit_append() (seq,
 * prev and hash of the chain). PROJECT/.sandbox is created if missing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "queue/queue.h"

static int fail(const char *what, const char *err)
{
	fprintf(stderr, "queue-fixture: %s: %s\n", what, err ? err : "failed");
	return 1;
}

int main(int argc, char **argv)
{
	struct sbx_queue *q;
	char *err = NULL, *sbx;
	int rc = 0;

	if (argc < 3 || (strcmp(argv[1], "submit") && strcmp(argv[1], "audit")) ||
	    (!strcmp(argv[1], "audit") && argc != 4)) {
		fprintf(stderr, "usage: queue-fixture submit PROJECT < request.json\n"
				"       queue-fixture audit PROJECT SESSION < records.jsonl\n");
		return 2;
	}
	if (asprintf(&sbx, "%s/.sandbox", argv[2]) < 0)
		return 1;
	mkdir(sbx, 0700);
	free(sbx);
	q = sbx_queue_open(argv[2], SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, &err);
	if (!q)
		return fail(argv[2], err);
	if (!strcmp(argv[1], "submit")) {
		json_error_t jerr;
		json_t *req = json_loadf(stdin, 0, &jerr);
		char *id = NULL;

		if (!json_is_object(req))
			rc = fail("stdin", jerr.text);
		else if (sbx_queue_submit(q, req, &id, &err))
			rc = fail("submit", err);
		else
			printf("%s\n", id);
		free(id);
		json_decref(req);
	} else {
		struct sbx_audit *a = sbx_audit_open(q, argv[3], &err);
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		if (!a) {
			rc = fail(argv[3], err);
		} else {
			while (!rc && (n = getline(&line, &cap, stdin)) > 0) {
				json_error_t jerr;
				json_t *rec = json_loadb(line, (size_t)n, 0, &jerr);

				if (!json_is_object(rec))
					rc = fail("stdin", jerr.text);
				else if (sbx_audit_append(a, rec, &err))
					rc = fail("append", err);
				json_decref(rec);
			}
			sbx_audit_close(a);
		}
		free(line);
	}
	free(err);
	sbx_queue_close(q);
	return rc;
}
