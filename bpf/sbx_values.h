/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_values.h - the values of the datagram and file verdict caches
 * (sbx_storage.h), in plain types: the daemon never reads them, but the
 * per-program tests (tests/kernel/prog) do, with the programs' layout.
 */
#ifndef SBX_VALUES_H
#define SBX_VALUES_H

#include "bpfsbx.h"

/* see sbx_dcache (sbx_storage.h) */
struct sbx_dcache {
	__u32 gen;
	__u32 _pad;
	__u64 cgid;		/* the session that decided; 0: a socket outside */
	__u64 epoch;		/* SBX_EPOCH_NET when decided; 0 outside */
	__u64 lo_epoch;		/* SBX_EPOCH_PORTS when its listener was looked
				 * up; 0: not this host's; ~0: look each time */
	__u64 expires_ns;	/* CLOCK_BOOTTIME; ~0: no learned address */
	union {			/* 8-aligned: compared as two words */
		__u8  addr[16];
		__u64 w[2];
	};
	__u16 port;
	__u8  family;
	__u8  proto;
};

/* see sbx_vcache (sbx_storage.h) */
struct sbx_vcache {
	__u32 policy_id;
	__u8  valid;			/* SBX_ACCBIT()s that are filled in */
	__u8  v[SBX_ACC_MAX];
	__u32 rule[SBX_ACC_MAX];
	__u32 _pad;
	__u64 mnt;
	__u64 rename_epoch;
	__u64 daemon_epoch;
};

#endif /* SBX_VALUES_H */
