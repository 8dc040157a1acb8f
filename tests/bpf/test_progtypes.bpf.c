// SPDX-License-Identifier: MIT
/*
 * test_progtypes.bpf.c - perflib_instance_create / perflib_instance_delete from program types
 * other than syscall and tracing, each on a real event, for
 * tests/bpf/test_bpf_instances.c. Each program is loaded alone (the test turns the others'
 * autoload off), so a type the kernel refuses does not hide the others. Instance names and
 * ids: "lsm" / "cgroup" / "socket" / "tc" / "xdp", id pt_id + PT_<kind>; the result of the last
 * create and delete of each kind is left in created[] / deleted[] (-1: not run yet).
 *  - LSM (lsm/file_open): process target_tgid opening the file with inode create_ino creates,
 *    delete_ino deletes; the hook always allows the open.
 *  - cgroup (cgroup/sock_create, attached to a cgroup of the test's): an AF_INET socket
 *    created in the cgroup creates, AF_INET6 deletes; the socket is always allowed.
 *  - socket filter (socket, SO_ATTACH_BPF on a UDP socket): a datagram whose last byte is
 *    'c' creates, 'd' deletes; every packet is kept.
 *  - tc (sched_cls, clsact ingress of a veth, direct action): an IPv4 UDP frame to port PT_PORT whose last byte is 'c'
 *    creates, 'd' deletes; every packet passes.
 *  - XDP (generic mode on a veth): the same frames.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

#include "perflib_bpf.h"

#define PT_LSM 0
#define PT_CGROUP 1
#define PT_SOCKET 2
#define PT_TC 3
#define PT_XDP 4
#define PT_PORT 20550 /* tc: UDP destination port of the test's frames */

char LICENSE[] SEC("license") = "Dual MIT/GPL";

PERFLIB_DATA_MAP_RAW(slots);
PERFLIB_INDEX_MAP(idx);
PERFLIB_LIVE_MAP(live);
PERFLIB_GEOMETRY(pt_geo);
const volatile __u8 pt_guid[16] = {};

__u32 pt_id = 0;
__u32 target_tgid = 0; /* LSM: only this process's opens */
__u64 create_ino = 0, delete_ino = 0;
__s64 created[5] = {-1, -1, -1, -1, -1};
__s64 deleted[5] = {-1, -1, -1, -1, -1};

/* create ("c") or delete ("d") the instance of @kind */
static __always_inline void act(__u32 kind, char what)
{
	char name[PERFLIB_BPF_KEY_MAX] = {};

	if (kind > PT_XDP)
		return;
	if (what == 'c') {
		if (kind == PT_LSM)
			__builtin_memcpy(name, "lsm", 4);
		else if (kind == PT_CGROUP)
			__builtin_memcpy(name, "cgroup", 7);
		else if (kind == PT_SOCKET)
			__builtin_memcpy(name, "socket", 7);
		else if (kind == PT_TC)
			__builtin_memcpy(name, "tc", 3);
		else
			__builtin_memcpy(name, "xdp", 4);
		created[kind] = perflib_instance_create_ascii(&slots, &idx, &live, &pt_geo, pt_guid,
							      name, pt_id + kind, 0);
	} else if (what == 'd' && created[kind] >= 0) {
		deleted[kind] =
			perflib_instance_delete(&slots, &idx, &live, &pt_geo, (__u32)created[kind]);
	}
}

SEC("lsm/file_open")
int BPF_PROG(pt_file_open, struct file *file)
{
	__u64 ino = file->f_inode->i_ino;

	if (!pt_id || bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	if (ino == create_ino)
		act(PT_LSM, 'c');
	else if (ino == delete_ino)
		act(PT_LSM, 'd');
	return 0;
}

SEC("cgroup/sock_create")
int pt_sock_create(struct bpf_sock *sk)
{
	if (sk->family == 2) /* AF_INET */
		act(PT_CGROUP, 'c');
	else if (sk->family == 10) /* AF_INET6 */
		act(PT_CGROUP, 'd');
	return 1;
}

/* the last byte of @skb's data */
static __always_inline char last_byte(struct __sk_buff *skb)
{
	char c = 0;

	if (skb->len && bpf_skb_load_bytes(skb, skb->len - 1, &c, 1))
		c = 0;
	return c;
}

SEC("socket")
int pt_socket(struct __sk_buff *skb)
{
	act(PT_SOCKET, last_byte(skb));
	return skb->len;
}

SEC("tc")
int pt_tc(struct __sk_buff *skb)
{
	__u16 port = 0;
	__u8 proto = 0;

	if (skb->protocol != bpf_htons(0x0800) || bpf_skb_load_bytes(skb, 14 + 9, &proto, 1) ||
	    proto != 17 || bpf_skb_load_bytes(skb, 14 + 20 + 2, &port, 2) ||
	    port != bpf_htons(PT_PORT))
		return 0; /* TC_ACT_OK */
	act(PT_TC, last_byte(skb));
	return 0;
}

SEC("xdp")
int pt_xdp(struct xdp_md *ctx)
{
	unsigned char *d = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	/* Ethernet, IPv4 without options, UDP to PT_PORT, one byte of payload */
	if (d + 43 > end || d[12] != 0x08 || d[13] != 0 || d[23] != 17 || d[36] != (PT_PORT >> 8) ||
	    d[37] != (PT_PORT & 0xff))
		return XDP_PASS;
	act(PT_XDP, (char)d[42]);
	return XDP_PASS;
}
