/* forksnoop's event, shared by its BPF program and user space: largest fields first. */
#ifndef TPKIT_FORKSNOOP_H
#define TPKIT_FORKSNOOP_H

#define TPKIT_COMM_LEN 16

struct forksnoop_event {
	__u64 timestamp_ns; /* CLOCK_MONOTONIC */
	__u32 parent_pid;   /* tgid */
	__u32 parent_tid;
	__u32 child_pid;    /* tgid */
	__u32 child_tid;
	__u32 is_thread;
	__u32 cpu;
	char parent_comm[TPKIT_COMM_LEN];
	char child_comm[TPKIT_COMM_LEN];
};

#endif
