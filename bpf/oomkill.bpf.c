/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every OOM kill, from oom:mark_victim, which fires once per task the OOM killer marks.
 *
 * Two programs see each call: the classic tracepoint reads the record, with the victim's memory
 * figures exactly as the kernel computed them (fields a kernel lacks stay absent); the raw
 * tracepoint reads the victim's task_struct, which alone gives its tgid (the record's pid is the
 * marked thread's id). Both run one after the other on the same CPU, with preemption off,
 * inside one trace_mark_victim() call, in an order that depends on attach history: whichever
 * runs first leaves its half in a per-CPU slot, the second completes and emits the event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/tools/oomkill.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tp/oom.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

#define HALF_RECORD 1
#define HALF_TASK 2

struct pending_victim {
	struct oomkill_event event;
	__u32 halves; /* HALF_* already filled for event.killed_tid */
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pending_victim);
} pending SEC(".maps");

/* The slot for the victim thread `tid`, with `half` marked filled. A slot left by another call
 * (a half that ran while the tool was still attaching its other program) is started afresh. */
static __always_inline struct pending_victim *slot_for(__u32 tid, __u32 half)
{
	__u32 zero = 0;
	struct pending_victim *p = bpf_map_lookup_elem(&pending, &zero);

	if (!p)
		return 0;
	if (p->event.killed_tid != tid || (p->halves & half)) {
		__builtin_memset(p, 0, sizeof(*p));
		p->event.killed_tid = tid;
		tpkit_fill_task_header(&p->event.trigger);
	}
	p->halves |= half;
	return p;
}

static __always_inline void emit_when_complete(void *ctx, struct pending_victim *p)
{
	if (p->halves != (HALF_RECORD | HALF_TASK))
		return;
	tpkit_emit(ctx, &p->event, sizeof(p->event));
	p->halves = 0;
	p->event.killed_tid = 0;
}

SEC("tracepoint/oom/mark_victim")
int mark_victim_record(void *ctx)
{
	struct trace_event_raw_mark_victim___v6_18 *rec = ctx;
	struct pending_victim *p;

	if (!tpkit_current_selected())
		return 0;
	p = slot_for(tpkit_mark_victim_pid(ctx), HALF_RECORD);
	if (!p)
		return 0;
	/* The figures came together ("mm: update mark_victim tracepoints fields", 6.8, also in
	 * stable kernels such as Debian's 6.1): before, the record has the pid alone. */
	if (bpf_core_field_exists(rec->total_vm)) {
		p->event.has_figures = 1;
		p->event.total_vm_kb = tpkit_mark_victim_total_vm(ctx);
		p->event.anon_rss_kb = tpkit_mark_victim_anon_rss(ctx);
		p->event.file_rss_kb = tpkit_mark_victim_file_rss(ctx);
		p->event.shmem_rss_kb = tpkit_mark_victim_shmem_rss(ctx);
		p->event.pgtables_kb = tpkit_mark_victim_pgtables(ctx);
		p->event.killed_uid = tpkit_mark_victim_uid(ctx);
		p->event.oom_score_adj = tpkit_mark_victim_oom_score_adj(ctx);
	}
	emit_when_complete(ctx, p);
	return 0;
}

SEC("raw_tp/mark_victim")
int mark_victim_task(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *victim = (struct task_struct *)ctx->args[0];
	struct pending_victim *p;

	if (!tpkit_current_selected())
		return 0;
	p = slot_for(BPF_CORE_READ(victim, pid), HALF_TASK);
	if (!p)
		return 0;
	p->event.killed_pid = BPF_CORE_READ(victim, tgid);
	BPF_CORE_READ_STR_INTO(&p->event.killed_comm, victim, comm);
	emit_when_complete(ctx, p);
	return 0;
}
