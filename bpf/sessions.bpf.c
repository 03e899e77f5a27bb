// SPDX-License-Identifier: GPL-2.0
/*
 * sessions.bpf.c - the subject: which processes are confined.
 *
 * A session is a cgroup under <cgroup2>/bpfsbx/. Every process in it, and
 * in any cgroup below it, is confined: fork, double fork, setsid, threads
 * and io_uring workers all inherit the cgroup, so there is no pid
 * tracking to race. This file owns the definitions of every map (the
 * other files see them as extern) and of the load-time constants.
 */
#define SBX_DEFINE_MAPS
#include "sbx_common.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 sbx_session_level = 2;
const volatile __u32 sbx_fmode_backing = 0;
const volatile __u32 sbx_lsm_connects = 0;
