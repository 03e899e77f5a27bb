// SPDX-License-Identifier: GPL-2.0
/*
 * mhd.c - the libmicrohttpd functions the dashboard calls, opened when
 * the dashboard starts rather than loaded by every bpfsbx (lib/dynload.c
 * says what that costs). Each function has the library's own name and
 * prototype (from microhttpd.h), so server.c and feed.c read as plain
 * libmicrohttpd code; each looks its symbol up once.
 *
 * MHD_start_daemon looks every symbol up, before the library's thread
 * exists, so the pointers are written once and only read afterwards.
 * Without the library (or with one that lacks a symbol) the dashboard
 * does not start: MHD_start_daemon says why and returns NULL, which
 * server.c reports. The other functions are reached only through a
 * running MHD daemon; were a pointer still NULL they would fail as the
 * library does on bad input (NULL, MHD_NO), never call through it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>
#include "lib/dynload.h"
#include "lib/log.h"

static const char *const libmhd_names[] = { "libmicrohttpd.so.12", "libmicrohttpd.so", NULL };
static struct sbx_dynlib libmhd = { .sonames = libmhd_names };

static struct {
	__typeof__(MHD_start_daemon_va) *start_daemon_va;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
} mhd;

#define LOOKUP(name) (mhd.name = sbx_dynsym(&libmhd, "MHD_" #name))

static bool load(void)
{
	return LOOKUP(start_daemon_va) && LOOKUP(stop_daemon) && LOOKUP(add_response_header) &&
	       LOOKUP(create_response_from_buffer) && LOOKUP(create_response_from_callback) &&
	       LOOKUP(destroy_response) && LOOKUP(get_connection_info) &&
	       LOOKUP(lookup_connection_value) && LOOKUP(queue_response) &&
	       LOOKUP(suspend_connection) && LOOKUP(resume_connection);
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	if (!mhd.resume_connection && !load()) {
		sbx_err("libmicrohttpd: %s", libmhd.error ? libmhd.error : "a symbol is missing");
		return NULL;
	}
	va_start(ap, dh_cls);
	d = mhd.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
	if (mhd.stop_daemon)
		mhd.stop_daemon(daemon);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
					const char *content)
{
	return mhd.add_response_header ? mhd.add_response_header(response, header, content)
					 : MHD_NO;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
						     enum MHD_ResponseMemoryMode mode)
{
	return mhd.create_response_from_buffer ?
		       mhd.create_response_from_buffer(size, buffer, mode) : NULL;
}

struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size,
						       MHD_ContentReaderCallback crc, void *crc_cls,
						       MHD_ContentReaderFreeCallback crfc)
{
	return mhd.create_response_from_callback ?
		       mhd.create_response_from_callback(size, block_size, crc, crc_cls, crfc) :
		       NULL;
}

void MHD_destroy_response(struct MHD_Response *response)
{
	if (mhd.destroy_response)
		mhd.destroy_response(response);
}

/* the dashboard asks only for information that takes no further argument */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
							enum MHD_ConnectionInfoType info_type,
							...)
{
	return mhd.get_connection_info ? mhd.get_connection_info(connection, info_type)
					 : NULL;
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection,
					enum MHD_ValueKind kind, const char *key)
{
	return mhd.lookup_connection_value ? mhd.lookup_connection_value(connection, kind, key)
					     : NULL;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
				   struct MHD_Response *response)
{
	return mhd.queue_response ? mhd.queue_response(connection, status_code, response)
				    : MHD_NO;
}

void MHD_suspend_connection(struct MHD_Connection *connection)
{
	if (mhd.suspend_connection)
		mhd.suspend_connection(connection);
}

void MHD_resume_connection(struct MHD_Connection *connection)
{
	if (mhd.resume_connection)
		mhd.resume_connection(connection);
}
