// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx policy sign|verify: the machine policy's signatures (lib/sign.h).
 *
 *   sign --key KEY FILE...   FILE.sig beside each FILE
 *   verify FILE...           is each signed by a key of the machine policy's
 *                            keys/, exactly as the daemon would take it
 *
 * Where the floor is written (a build host, the fleet's repository) the
 * private key signs; machines hold only the public keys, in keys/.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/exit.h"
#include "lib/fileio.h"
#include "lib/sign.h"
#include "policy/policy.h"
#include "user/cmd/policy_cli.h"

#define FILE_MAX	(1 << 20)	/* as the machine policy's loader reads */

static int read_or_say(const char *path, size_t max, char **buf, size_t *len)
{
	int rc = sbx_read_file(path, max, buf, len);

	if (rc < 0)
		fprintf(stderr, "%s: error: %s\n", path, rc == -EFBIG ? "too large" : strerror(-rc));
	return rc;
}

int policy_sign(const struct popts *o)
{
	char *key = NULL, *buf = NULL, *sig, *err = NULL;
	size_t klen = 0, len = 0;
	int failed = 0;

	if (read_or_say(o->key, 64 * 1024, &key, &klen) < 0)
		return SBX_EXIT_FAIL;
	for (size_t i = 0; i < o->nfiles; i++) {
		const char *f = o->files[i];
		char *out;
		int rc;

		if (read_or_say(f, FILE_MAX, &buf, &len) < 0) {
			failed++;
			continue;
		}
		sig = sbx_sign(key, klen, buf, len, &err);
		free(buf);
		buf = NULL;
		if (!sig) {
			fprintf(stderr, "%s: error: %s: %s\n", f, o->key, err);
			free(err);
			err = NULL;
			failed++;
			continue;
		}
		out = sbx_asprintf("%s" SBX_SIG_SUFFIX, f);
		rc = sbx_write_file_atomic(out, sig, strlen(sig), 0644);
		if (rc < 0) {
			fprintf(stderr, "%s: error: writing %s: %s\n", f, out, strerror(-rc));
			failed++;
		} else {
			printf("%s: signed, %s\n", f, out);
		}
		free(out);
		free(sig);
	}
	/* the key's bytes are not left in freed memory */
	explicit_bzero(key, klen);
	free(key);
	return failed ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

int policy_verify(const struct popts *o)
{
	struct sbx_diags d = { 0 };
	struct sbx_keyring *kr = NULL;
	int failed = 0;

	if (sbx_machine_keys(NULL, &kr, &d)) {
		sbx_diags_print(&d, stderr);
		sbx_diags_free(&d);
		return SBX_EXIT_FAIL;
	}
	sbx_diags_free(&d);
	if (!kr) {
		fprintf(stderr, "bpfsbx policy verify: %s/keys is not there: this machine takes "
			"unsigned machine policy files, and there is no key to verify against\n",
			sbx_machine_dir(NULL));
		return SBX_EXIT_FAIL;
	}
	for (size_t i = 0; i < o->nfiles; i++) {
		const char *f = o->files[i], *by;
		char *buf = NULL, *sig = NULL, *err = NULL, *sp = sbx_asprintf("%s" SBX_SIG_SUFFIX, f);
		size_t len = 0;

		if (read_or_say(f, FILE_MAX, &buf, &len) < 0 ||
		    read_or_say(sp, SBX_SIG_MAX, &sig, NULL) < 0)
			failed++;
		else if (!sbx_verify(kr, buf, len, sig, &by, &err)) {
			fprintf(stderr, "%s: error: %s: %s\n", f, sp, err);
			failed++;
		} else {
			printf("%s: signed by %s\n", f, by);
		}
		free(err);
		free(sig);
		free(buf);
		free(sp);
	}
	sbx_keyring_free(kr);
	free(kr);
	return failed ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}
