/* SPDX-License-Identifier: GPL-2.0 */
/*
 * grants.h - a person's answers in the kernel. A grant turns an ask into
 * an allow for one session and one object (bpf/bpfsbx.h, struct
 * sbx_grant_key); it never lifts a deny.
 */
#ifndef SBX_GRANTS_H
#define SBX_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "queue/request.h"
#include "user/daemon/state.h"

struct sbx_objid;

/* What a grant is for: the object of a request, or of a remembered answer. */
struct sbx_grant_obj {
	enum { SBX_GO_FILE, SBX_GO_NET, SBX_GO_HOST } type;
	int access;		/* FILE: enum sbx_access */
	const char *path;	/* FILE: as the person saw it */
	bool has_ident;		/* FILE: the identity the kernel reported */
	uint32_t dev;
	uint64_t ino;
	bool new_name;		/* FILE not there yet: dev/ino are its parent's */
	bool abstract;		/* FILE: an abstract unix socket, path "@name" */
	uint64_t name_hash;
	const char *ftype;	/* FILE: the type the person saw, or NULL */
	const char *btime;	/* FILE: its birth time, or NULL */
	const char *addr;	/* NET */
	const char *host;	/* HOST: granted by name; its lookups resolve */
	int port;		/* NET, HOST; 0 = any */
};

/* The object of a request; false for a command (no grant: it runs outside). */
bool sbx_grant_obj_of_request(const struct sbx_request *r, struct sbx_grant_obj *o);
/* The object of a remembered answer; false for an entry of no known kind. */
bool sbx_grant_obj_of_remembered(const struct sbx_remembered *r, struct sbx_grant_obj *o);
/*
 * The keys for o in session s (a host gives one per address). 0, or
 * -errno with *why (malloc'd) for people. *keys is malloc'd.
 */
int sbx_grant_keys(const struct sbx_session_rt *s, const struct sbx_grant_obj *o,
		   struct sbx_grant_key **keys, size_t *n, char **why);

int sbx_grant_add(struct sbx_daemon *d, struct sbx_session_rt *s,
		  const struct sbx_grant_key *key, uint64_t expires_ns, const char *request);
/* Every key of o, until expires_ns (0: the session's end). */
int sbx_grant_obj_add(struct sbx_daemon *d, struct sbx_session_rt *s,
		      const struct sbx_grant_obj *o, uint64_t expires_ns, const char *request,
		      char **why);
/* A name's lookups resolve for s (a request of kind host, or access to a
 * host, approved); expires_ns 0: until the session ends. */
int sbx_name_grant_add(struct sbx_session_rt *s, const char *host, int port,
		       uint64_t expires_ns, const char *request, char **why);
void sbx_grants_expire(struct sbx_daemon *d);
/* Remove the grants of a session from the kernel (the ones it records). */
void sbx_grants_forget(struct sbx_daemon *d, const struct sbx_session_rt *s);
/* At the daemon's start: remove every grant no live session records. */
void sbx_grants_sweep(struct sbx_daemon *d);
/* The session's entry in the kernel: its policy header, and whether it
 * has grants to look up. */
int sbx_session_push_hdr(struct sbx_daemon *d, struct sbx_session_rt *s);
/* remembered.yaml's "always" answers, for a session that starts. An
 * entry whose path no longer leads to the object it names is not applied;
 * the reason is kept for the request that will ask again. */
void sbx_grants_apply_remembered(struct sbx_daemon *d, struct sbx_session_rt *s);

/*
 * The object of a file request the kernel made, as a person will judge
 * it: its type and hard links (when the path still leads to the inode
 * the kernel reported), and the notice of a remembered answer that no
 * longer applied. Sets r's type, nlink and btime (strings in *id, which
 * the caller keeps until r is encoded) and returns the notice (the
 * session's string) or NULL.
 */
const char *sbx_grant_annotate(const struct sbx_session_rt *s, struct sbx_request *r,
			       struct sbx_objid *id);
/*
 * An agent's request_access for a path: the daemon, not the agent, says
 * which object it is. The directories are resolved (a path through a
 * symlinked directory is shown resolved), the last component is not
 * followed: a symlink there is refused, with its target, so that the
 * agent asks for the target and the person sees that. Sets r's path
 * (to *full, malloc'd, the caller's), dev, ino, type, nlink and btime
 * (strings in *id, which the caller keeps until r is encoded), or new_name
 * and name_hash; what r said of identity before is dropped. 0, or -errno
 * with *why for the agent.
 */
int sbx_grant_ident_of_access(struct sbx_request *r, struct sbx_objid *id, char **full,
			      char **why);

#endif
