// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "lib/names.h"

static const char *const verdict_names[SBX_V_MAX] = {
	[SBX_V_NONE] = "none",
	[SBX_V_ALLOW] = "allow",
	[SBX_V_AUDIT] = "audit",
	[SBX_V_ASK] = "ask",
	[SBX_V_DENY] = "deny",
};

const char *sbx_verdict_name(uint8_t v)
{
	return v < SBX_V_MAX ? verdict_names[v] : "invalid";
}

int sbx_verdict_parse(const char *s)
{
	/* "none" is internal: a policy cannot write it */
	for (int v = SBX_V_ALLOW; v < SBX_V_MAX; v++)
		if (s && !strcmp(s, verdict_names[v]))
			return v;
	return -1;
}

static const char *const access_names[SBX_ACC_MAX] = {
	[SBX_ACC_READ] = "read",
	[SBX_ACC_WRITE] = "write",
	[SBX_ACC_EXEC] = "exec",
	[SBX_ACC_CONNECT] = "connect",
};

const char *sbx_access_name(enum sbx_access a)
{
	return (unsigned)a < SBX_ACC_MAX ? access_names[a] : "invalid";
}

int sbx_access_parse(const char *s)
{
	for (int a = 0; a < SBX_ACC_MAX; a++)
		if (s && !strcmp(s, access_names[a]))
			return a;
	return -1;
}

static const char *const op_names[SBX_OP_MAX] = {
	[SBX_OP_NONE] = "none",
	[SBX_OP_OPEN_READ] = "open_read",
	[SBX_OP_OPEN_WRITE] = "open_write",
	[SBX_OP_CREATE] = "create",
	[SBX_OP_MKDIR] = "mkdir",
	[SBX_OP_UNLINK] = "unlink",
	[SBX_OP_RMDIR] = "rmdir",
	[SBX_OP_RENAME_FROM] = "rename_from",
	[SBX_OP_RENAME_TO] = "rename_to",
	[SBX_OP_LINK_FROM] = "link_from",
	[SBX_OP_LINK_TO] = "link_to",
	[SBX_OP_SYMLINK] = "symlink",
	[SBX_OP_TRUNCATE] = "truncate",
	[SBX_OP_CHMOD] = "chmod",
	[SBX_OP_CHOWN] = "chown",
	[SBX_OP_EXEC] = "exec",
	[SBX_OP_MMAP_EXEC] = "mmap_exec",
	[SBX_OP_CONNECT] = "connect",
	[SBX_OP_SENDMSG] = "sendmsg",
	[SBX_OP_UNIX_CONNECT] = "unix_connect",
	[SBX_OP_SOCKET_CREATE] = "socket_create",
	[SBX_OP_BPF] = "bpf",
	[SBX_OP_PTRACE] = "ptrace",
	[SBX_OP_SIGNAL] = "signal",
	[SBX_OP_MOUNT] = "mount",
	[SBX_OP_USERNS] = "userns",
	[SBX_OP_CGROUP_ESCAPE] = "cgroup_escape",
	[SBX_OP_PROC_ACCESS] = "proc_access",
	[SBX_OP_SETXATTR] = "setxattr",
	[SBX_OP_IOCTL] = "ioctl",
	[SBX_OP_KERNEL] = "kernel",
	[SBX_OP_FILE_RECEIVE] = "file_receive",
	[SBX_OP_SETATTR] = "setattr",
	[SBX_OP_SIGNAL_OWNER] = "signal_owner",
	[SBX_OP_DNS] = "dns",
	[SBX_OP_IPC] = "ipc",
	[SBX_OP_KEY] = "key",
	[SBX_OP_BIND] = "bind",
	[SBX_OP_INBOUND] = "inbound",
};

const char *sbx_op_name(unsigned op)
{
	return op < SBX_OP_MAX && op_names[op] ? op_names[op] : "unknown";
}

const char *sbx_proto_name(uint8_t proto)
{
	return proto == IPPROTO_TCP ? "tcp" : proto == IPPROTO_UDP ? "udp" : proto == 0 ? "any" : "?";
}

/*
 * Socket families by AF_ number. `optional` ones are refused in a session
 * unless sandbox.socket_families names them (bpf/protect.bpf.c); the
 * others are always allowed (unix, inet, inet6) or decided by their own
 * switch (netlink, packet by raw_sockets).
 */
static const struct { const char *name; uint8_t af; bool optional; } family_table[] = {
	{ "unix", 1, false }, { "inet", 2, false }, { "ax25", 3, true }, { "ipx", 4, true },
	{ "appletalk", 5, true }, { "netrom", 6, true }, { "bridge", 7, true },
	{ "atmpvc", 8, true }, { "x25", 9, true }, { "inet6", 10, false }, { "rose", 11, true },
	{ "decnet", 12, true }, { "netbeui", 13, true }, { "key", 15, true },
	{ "netlink", 16, false }, { "packet", 17, false }, { "econet", 19, true },
	{ "atmsvc", 20, true }, { "rds", 21, true }, { "irda", 23, true }, { "pppox", 24, true },
	{ "wanpipe", 25, true }, { "llc", 26, true }, { "ib", 27, true }, { "mpls", 28, true },
	{ "can", 29, true }, { "tipc", 30, true }, { "bluetooth", 31, true },
	{ "iucv", 32, true }, { "rxrpc", 33, true }, { "isdn", 34, true }, { "phonet", 35, true },
	{ "ieee802154", 36, true }, { "caif", 37, true }, { "alg", 38, true }, { "nfc", 39, true },
	{ "vsock", 40, true }, { "kcm", 41, true }, { "qipcrtr", 42, true }, { "smc", 43, true },
	{ "xdp", 44, true }, { "mctp", 45, true },
};

/*
 * Environment variables that hand a program a way to reach a server
 * outside the session: an agent, a multiplexer, a desktop bus, a display,
 * a container engine, an editor's IPC. `bpfsbx run` removes them unless
 * sandbox.keep_env names them. The kernel refuses such connects anyway
 * (bpf/network.bpf.c); without the variables, tools do not try, and
 * their errors are the ones of a machine without the server.
 */
static const char *const scrubbed_env[] = {
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GNOME_KEYRING_CONTROL",
	"TMUX", "TMUX_PANE", "STY", "ZELLIJ", "ZELLIJ_SESSION_NAME",
	"DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
	"PULSE_SERVER", "PIPEWIRE_REMOTE", "DOCKER_HOST", "CONTAINER_HOST",
	"KITTY_LISTEN_ON", "WEZTERM_UNIX_SOCKET", "NVIM", "NVIM_LISTEN_ADDRESS",
	"VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "GIT_ASKPASS", "SSH_ASKPASS",
	"XDG_ACTIVATION_TOKEN", "DESKTOP_STARTUP_ID", "EMACS_SOCKET_NAME",
};

const char *sbx_scrubbed_env(size_t i)
{
	return i < sizeof(scrubbed_env) / sizeof(scrubbed_env[0]) ? scrubbed_env[i] : NULL;
}

_Static_assert(sizeof(scrubbed_env) / sizeof(scrubbed_env[0]) <= 32, "keep_env is 32 bits");

void sbx_scrub_env(uint32_t keep)
{
	for (size_t i = 0; i < sizeof(scrubbed_env) / sizeof(scrubbed_env[0]); i++)
		if (!(keep & (1u << i)))
			unsetenv(scrubbed_env[i]);
}

int sbx_scrubbed_env_index(const char *name)
{
	for (size_t i = 0; i < sizeof(scrubbed_env) / sizeof(scrubbed_env[0]); i++)
		if (!strcmp(scrubbed_env[i], name))
			return (int)i;
	return -1;
}

const char *sbx_family_name(unsigned af)
{
	for (size_t i = 0; i < sizeof(family_table) / sizeof(family_table[0]); i++)
		if (family_table[i].af == af)
			return family_table[i].name;
	return "unknown family";
}

const char *sbx_optional_family(size_t i, int *af)
{
	size_t k = 0;

	for (size_t j = 0; j < sizeof(family_table) / sizeof(family_table[0]); j++) {
		if (!family_table[j].optional)
			continue;
		if (k++ == i) {
			*af = family_table[j].af;
			return family_table[j].name;
		}
	}
	return NULL;
}

size_t sbx_optional_family_count(void)
{
	size_t n = 0;

	for (size_t j = 0; j < sizeof(family_table) / sizeof(family_table[0]); j++)
		n += family_table[j].optional;
	return n;
}

const char *sbx_builtin_rule_text(uint32_t id)
{
	switch (id) {
	case SBX_RULE_SANDBOX_DIR:
		return "built-in sandbox-dir: .sandbox directories (policy, queue, audit log) "
		       "are never writable";
	case SBX_RULE_PROTECTED:
		return "built-in protected: the policy files of a session are never writable";
	case SBX_RULE_PSEUDOFS:
		return "built-in pseudofs: bpffs, cgroupfs, securityfs, debugfs, tracefs, sysfs "
		       "and other processes' /proc files are never writable";
	case SBX_RULE_WALK_LIMIT:
		return "built-in walk-limit: the walk up the parent directories could not finish "
		       "(fail closed)";
	case SBX_RULE_ERROR:
		return "built-in error: the object could not be resolved or identified, or an "
		       "internal error (fail closed)";
	case SBX_RULE_LAUNDER:
		return "built-in launder: renaming or linking a protected object";
	case SBX_RULE_SELF_PROTECT:
		return "built-in self-protection: bpf(), the daemon, mounts, namespaces, kernel "
		       "interfaces and processes outside the session";
	case SBX_RULE_GRANT:
		return "allowed by a person's decision";
	case SBX_RULE_PROC:
		return "built-in proc: /proc of processes outside the session";
	case SBX_RULE_EXEC_KIND:
		return "built-in exec-kind: memfd or deleted executables";
	case SBX_RULE_SOCKET_FAMILY:
		return "built-in socket-family: a socket family or protocol the policy does not allow "
		       "(unix, inet, inet6 and netlink route and sock_diag are; see sandbox: in "
		       "docs/POLICY.md)";
	case SBX_RULE_PINNED:
		return "built-in pinned: a directory on the way down to a protected path cannot be "
		       "renamed, exchanged or removed (it would take the protection with it)";
	case SBX_RULE_LISTENER_OUTSIDE:
		return "built-in listener-outside: the socket's listener is a process outside the "
		       "session, which would act for it; no rule allows this socket";
	case SBX_RULE_LISTENER_HIDDEN:
		return "built-in listener-hidden: an approver's socket (the dashboard) is never "
		       "reachable from a session";
	case SBX_RULE_DEST_UNPARSED:
		return "built-in dest-unparsed: a destination address the network hooks cannot read "
		       "(fail closed)";
	case SBX_RULE_LOOPBACK_OUTSIDE:
		return "built-in loopback-outside: the loopback listener is a process outside the "
		       "session, which would act for it";
	case SBX_RULE_DNS_PATH:
		return "built-in dns-path: names are resolved by bpfsbx; DNS over TLS, mDNS/LLMNR, "
		       "DoH to public resolvers by address and the resolvers' own addresses are refused";
	case SBX_RULE_TERMINAL:
		return "built-in terminal: a terminal that is not the session's own (another pty, "
		       "a VT, a serial line, the console, /dev/vcs*): it could draw on the "
		       "approver's screen or read what the person types";
	case SBX_RULE_IPC_OUTSIDE:
		return "built-in ipc-outside: a FIFO, POSIX message queue or SysV message queue, "
		       "semaphore or shared memory that the session did not make; whoever holds "
		       "its other end outside would act for the session";
	case SBX_RULE_KEY_OUTSIDE:
		return "built-in key-outside: a kernel key or keyring that the session did not "
		       "make (the user's keyrings, where tools keep tokens)";
	case SBX_RULE_EXEC_PRIV:
		return "built-in exec-privilege: the program would gain privileges (setuid, setgid "
		       "or file capabilities); see sandbox: setuid_exec in docs/POLICY.md";
	case SBX_RULE_RESERVED_PORT:
		return "built-in reserved-port: network.reserved_ports: outside clients use this "
		       "port with credentials, so no session may serve on it";
	case SBX_RULE_INBOUND:
		return "built-in inbound: a client outside every session may not connect to a "
		       "session's listener (network.inbound, network.inbound_ports)";
	case SBX_RULE_INBOUND_PORT:
		return "built-in inbound-port: network.inbound_ports lets outside clients reach "
		       "the session's listener on this port";
	case SBX_RULE_LANDLOCK:
		return "built-in landlock: Landlock refused what the policy allows here; the "
		       "landlock tier grants by place, so a name made next to a denied one since "
		       "the session began, or a second name of a file in a denied directory, is "
		       "refused too (docs/FALLBACK.md)";
	case SBX_RULE_SOCKET_OUTSIDE:
		return "built-in socket-outside: an IPv4 or IPv6 socket made outside the session "
		       "(by another session or outside every one) and passed in; its datagrams "
		       "would be checked for whoever made it, so a session makes its own";
	case SBX_RULE_DEVICE_NODE:
		return "built-in device-node: a block or character device node; it would be the "
		       "device (a disk, memory) to whoever opens it later, outside the session too";
	case SBX_RULE_MOUNT_MOVED:
		return "built-in mount-moved: a directory mounted into the container was moved, "
		       "removed or replaced on the host since the container started, so what the "
		       "policy decides there is no longer known";
	default:
		return "built-in rule";
	}
}

const char *sbx_builtin_rule_name(uint32_t id)
{
	static const char *const names[] = {
		[SBX_RULE_SANDBOX_DIR - SBX_RULE_BUILTIN] = "sandbox-dir",
		[SBX_RULE_PROTECTED - SBX_RULE_BUILTIN] = "protected",
		[SBX_RULE_PSEUDOFS - SBX_RULE_BUILTIN] = "pseudofs",
		[SBX_RULE_WALK_LIMIT - SBX_RULE_BUILTIN] = "walk-limit",
		[SBX_RULE_ERROR - SBX_RULE_BUILTIN] = "error",
		[SBX_RULE_LAUNDER - SBX_RULE_BUILTIN] = "launder",
		[SBX_RULE_SELF_PROTECT - SBX_RULE_BUILTIN] = "self-protection",
		[SBX_RULE_GRANT - SBX_RULE_BUILTIN] = "grant",
		[SBX_RULE_PROC - SBX_RULE_BUILTIN] = "proc",
		[SBX_RULE_EXEC_KIND - SBX_RULE_BUILTIN] = "exec-kind",
		[SBX_RULE_SOCKET_FAMILY - SBX_RULE_BUILTIN] = "socket-family",
		[SBX_RULE_PINNED - SBX_RULE_BUILTIN] = "pinned",
		[SBX_RULE_LISTENER_OUTSIDE - SBX_RULE_BUILTIN] = "listener-outside",
		[SBX_RULE_LISTENER_HIDDEN - SBX_RULE_BUILTIN] = "listener-hidden",
		[SBX_RULE_DEST_UNPARSED - SBX_RULE_BUILTIN] = "dest-unparsed",
		[SBX_RULE_LOOPBACK_OUTSIDE - SBX_RULE_BUILTIN] = "loopback-outside",
		[SBX_RULE_DNS_PATH - SBX_RULE_BUILTIN] = "dns-path",
		[SBX_RULE_TERMINAL - SBX_RULE_BUILTIN] = "terminal",
		[SBX_RULE_IPC_OUTSIDE - SBX_RULE_BUILTIN] = "ipc-outside",
		[SBX_RULE_KEY_OUTSIDE - SBX_RULE_BUILTIN] = "key-outside",
		[SBX_RULE_EXEC_PRIV - SBX_RULE_BUILTIN] = "exec-privilege",
		[SBX_RULE_RESERVED_PORT - SBX_RULE_BUILTIN] = "reserved-port",
		[SBX_RULE_INBOUND - SBX_RULE_BUILTIN] = "inbound",
		[SBX_RULE_INBOUND_PORT - SBX_RULE_BUILTIN] = "inbound-port",
		[SBX_RULE_LANDLOCK - SBX_RULE_BUILTIN] = "landlock",
		[SBX_RULE_SOCKET_OUTSIDE - SBX_RULE_BUILTIN] = "socket-outside",
		[SBX_RULE_DEVICE_NODE - SBX_RULE_BUILTIN] = "device-node",
		[SBX_RULE_MOUNT_MOVED - SBX_RULE_BUILTIN] = "mount-moved",
	};
	uint32_t i = id - SBX_RULE_BUILTIN;

	if (id < SBX_RULE_BUILTIN)
		return NULL;
	return i < sizeof(names) / sizeof(names[0]) && names[i] ? names[i] : "built-in";
}

const char *sbx_rule_id_label(uint32_t id, char *buf, size_t len)
{
	if (id >= SBX_RULE_BUILTIN)
		snprintf(buf, len, "built-in:%s", sbx_builtin_rule_name(id));
	else
		snprintf(buf, len, "%u", id);
	return buf;
}
