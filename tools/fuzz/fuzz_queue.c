// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the readers of the folder queue. The first byte
 * picks what the rest becomes:
 *   0  a pending/ and a done/ file of an unknown id
 *   1  the decision file of a request that was really issued
 *   2  .sandbox/remembered.yaml
 *   3  an audit log (its head is kept from a real append)
 * The queue's readers (list, read, recover, check_done, the YAML parser,
 * audit verify) must never crash, and every file they leave under a
 * record's name must be one that validates: the rest is quarantined.
 *
 *   make fuzz && build/fuzz/fuzz_queue tools/fuzz/corpus/fuzz_queue
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "queue/queue.h"

#define ODD_ID "20261130T101503.123456Z-4242-1a2b3c4d"

static struct sbx_queue *q;
static char *issued_id;
static char root[64];

static void wipe(enum sbx_qdir sub)
{
	int fd = sbx_queue_dirfd(q, sub), dfd = dup(fd);
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d)
		abort();
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, 0) < 0)
			unlinkat(fd, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

static void put(int dirfd, const char *name, const uint8_t *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	if (len && write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

/* every record-named file left in sub must validate */
static void check_clean(enum sbx_qdir sub)
{
	int fd = sbx_queue_dirfd(q, sub), dfd = dup(fd);
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	rewinddir(d);
	while ((de = readdir(d))) {
		char id[SBX_ID_MAX + 1], *why = NULL, *buf = NULL;
		size_t n = strlen(de->d_name), len;
		json_t *j;
		bool ok;

		if (de->d_name[0] == '.')
			continue;
		if (n < 6 || n - 5 > SBX_ID_MAX || strcmp(de->d_name + n - 5, ".json"))
			abort();	/* a foreign file survived */
		memcpy(id, de->d_name, n - 5);
		id[n - 5] = 0;
		if (sbx_read_file_at(fd, de->d_name, SBX_QUEUE_FILE_MAX, &buf, &len, NULL))
			abort();
		j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
		ok = sub == SBX_QDIR_DONE ? sbx_queue_validate_done(j, id, &why)
					  : sbx_queue_validate_request(j, id, &why);
		if (!ok) {
			fprintf(stderr, "%s/%s survived: %s\n", sbx_qdir_name(sub), de->d_name, why);
			abort();
		}
		json_decref(j);
		free(why);
		free(buf);
	}
	closedir(d);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(p);
}

static void teardown(void)
{
	if (root[0])
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
	json_t *req;
	char *err = NULL;

	/* tmpfs when there is one: the queue fsyncs a lot */
	snprintf(root, sizeof(root), "/dev/shm/fuzz-queue-XXXXXX");
	if (!mkdtemp(root)) {
		snprintf(root, sizeof(root), "/tmp/fuzz-queue-XXXXXX");
		if (!mkdtemp(root))
			abort();
	}
	atexit(teardown);
	q = sbx_queue_open(root, SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, &err);
	if (!q) {
		fprintf(stderr, "fuzz_queue: %s\n", err);
		abort();
	}
	req = json_pack("{s:s, s:s, s:{s:s, s:s}}", "kind", "file", "session", "fz",
			"object", "path", "/home/u/.aws/credentials", "access", "read");
	if (sbx_queue_submit(q, req, &issued_id, &err))
		abort();
	json_decref(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL, *why = NULL, name[SBX_ID_MAX + 8];
	json_t *arr = NULL, *j = NULL;
	int mode;

	if (!q)
		setup();
	if (size < 1)
		return 0;
	mode = data[0] & 3;
	data++;
	size--;

	switch (mode) {
	case 0:
		put(sbx_queue_dirfd(q, SBX_QDIR_PENDING), ODD_ID ".json", data, size);
		put(sbx_queue_dirfd(q, SBX_QDIR_DONE), ODD_ID ".json", data, size);
		put(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), "x" ODD_ID ".json", data, size);
		if (sbx_queue_read(q, SBX_QDIR_PENDING, ODD_ID, &j, &err) == 0)
			json_decref(j);
		free(err);
		err = NULL;
		if (sbx_queue_list(q, SBX_QDIR_PENDING, &arr, &err) == 0)
			json_decref(arr);
		free(err);
		err = NULL;
		/* an unknown id: the daemon's check must refuse it */
		if (sbx_queue_check_done(q, ODD_ID ".json", SBX_CHECK_QUARANTINE, NULL, NULL,
					 &why) == SBX_DONE_OK)
			abort();
		free(why);
		why = NULL;
		sbx_queue_recover(q, &err);
		free(err);
		err = NULL;
		check_clean(SBX_QDIR_PENDING);
		check_clean(SBX_QDIR_CLAIMED);
		check_clean(SBX_QDIR_DONE);
		break;
	case 1:
		snprintf(name, sizeof(name), "%s.json", issued_id);
		put(sbx_queue_dirfd(q, SBX_QDIR_DONE), name, data, size);
		{
			int rc = sbx_queue_check_done(q, name, SBX_CHECK_QUARANTINE, &j, NULL, &why);

			/* whatever it accepted is a valid decision for this id */
			if (rc == SBX_DONE_OK && !sbx_queue_validate_done(j, issued_id, NULL))
				abort();
			json_decref(j);
		}
		free(why);
		why = NULL;
		if (sbx_queue_list(q, SBX_QDIR_DONE, &arr, &err) == 0)
			json_decref(arr);
		free(err);
		err = NULL;
		check_clean(SBX_QDIR_DONE);
		break;
	case 2: {
		struct sbx_remembered *v = NULL;
		size_t n = 0;

		put(sbx_queue_sandbox_fd(q), "remembered.yaml", data, size);
		if (sbx_remembered_load(q, &v, &n, &err) == 0) {
			/* what loads must survive a write and load the same */
			char *text = NULL;
			size_t len;

			if (sbx_remembered_format(v, n, &text, &len) == 0) {
				struct sbx_remembered *w = NULL;
				size_t m = 0;
				char *e2 = NULL;

				if (sbx_remembered_parse(text, len, &w, &m, &e2) || m != n) {
					fprintf(stderr, "round trip failed: %s\n", e2 ? e2 : "count");
					abort();
				}
				sbx_remembered_free(w, m);
				free(e2);
				free(text);
			}
		} else if (!err || !strstr(err, "remembered.yaml")) {
			abort();	/* an error must name the file */
		}
		sbx_remembered_free(v, n);
		free(err);
		err = NULL;
		break;
	}
	case 3: {
		char path[128];
		struct sbx_audit_report r;
		int fd;

		snprintf(path, sizeof(path), "%s/log.jsonl", root);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
			abort();
		close(fd);
		if (sbx_audit_verify(path, &r) == 1 && !r.problem)
			abort();
		sbx_audit_report_free(&r);
		break;
	}
	}
	/* json_loadb on the raw bytes too, through the validator */
	j = json_loadb((const char *)data, size, 0, NULL);
	if (j) {
		sbx_queue_validate_request(j, NULL, &why);
		free(why);
		why = NULL;
		sbx_queue_validate_done(j, NULL, &why);
		free(why);
		json_decref(j);
	}
	wipe(SBX_QDIR_QUARANTINE);
	wipe(SBX_QDIR_PENDING);
	wipe(SBX_QDIR_CLAIMED);
	{
		/* keep the issued request; drop decisions and markers */
		wipe(SBX_QDIR_DONE);
		wipe(SBX_QDIR_APPLIED);
	}
	return 0;
}
