/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* Loader of the floor programs: the least a libbpf tool can do around them.
 *
 *   tpbench-floor hist-tp|hist-raw -d SECONDS
 *   tpbench-floor stream-read|stream-fork [--wakeup-each] [--perf-buffer] [--stall] [-p PID]
 *                 -d SECONDS
 *
 * Runs until SIGINT/SIGTERM or the duration, then prints one JSON line: the histogram total, or
 * the events delivered and lost. The ring buffer reader consumes every 1 ms when the program
 * does not wake it (and polls with a 1 ms timeout otherwise). --stall: a reader that reads
 * nothing until the end, to overflow the buffer and count the drops. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floor_hist_raw.skel.h"
#include "floor_hist_tp.skel.h"
#include "floor_stream.skel.h"
#include "floor_stream_fork.skel.h"

static volatile sig_atomic_t stop;
static unsigned long long delivered;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int on_ring(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	delivered++;
	return 0;
}

static void on_perf(void *ctx, int cpu, void *data, __u32 size)
{
	(void)ctx, (void)cpu, (void)data, (void)size;
	delivered++;
}

static unsigned long long sum_percpu(struct bpf_map *map, size_t values_per_cpu)
{
	int cpus = libbpf_num_possible_cpus();
	size_t n = (size_t)cpus * values_per_cpu;
	unsigned long long *values = calloc(n, sizeof(*values)), sum = 0;
	__u32 zero = 0;

	if (values && !bpf_map__lookup_elem(map, &zero, sizeof(zero), values, n * sizeof(*values), 0))
		for (size_t i = 0; i < n; i++)
			sum += values[i];
	free(values);
	return sum;
}

static int fail(const char *what)
{
	fprintf(stderr, "tpbench-floor: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Like the tools, the duration counts from the moment the program is attached. */
static double duration, deadline;

static void start_clock(void)
{
	deadline = duration > 0 ? now_s() + duration : 0;
}

static bool running(void)
{
	return !stop && (deadline == 0 || now_s() < deadline);
}

static int run_hist(bool raw)
{
	unsigned long long total;

	if (raw) {
		struct floor_hist_raw_bpf *skel = floor_hist_raw_bpf__open_and_load();

		if (!skel || floor_hist_raw_bpf__attach(skel))
			return fail("hist-raw");
		start_clock();
		while (running())
			usleep(10000);
		total = sum_percpu(skel->maps.hist, 64);
		floor_hist_raw_bpf__destroy(skel);
	} else {
		struct floor_hist_tp_bpf *skel = floor_hist_tp_bpf__open_and_load();

		if (!skel || floor_hist_tp_bpf__attach(skel))
			return fail("hist-tp");
		start_clock();
		while (running())
			usleep(10000);
		total = sum_percpu(skel->maps.hist, 64);
		floor_hist_tp_bpf__destroy(skel);
	}
	printf("{\"events\":%llu}\n", total);
	return 0;
}

/* Both streamer objects have the same rodata and maps (floor_stream.bpf.h). */
#define OPEN_STREAMER(type, skel, pid, wakeup_each, perf_buffer)                 \
	do {                                                                       \
		skel = type##__open();                                             \
		if (!skel)                                                         \
			return fail("open");                                       \
		skel->rodata->target_tgid = pid;                                   \
		skel->rodata->wakeup_each = wakeup_each;                           \
		skel->rodata->use_perf_buffer = perf_buffer;                       \
		if (type##__load(skel))                                            \
			return fail("load");                                       \
		maps[0] = skel->maps.ring;                                         \
		maps[1] = skel->maps.perf;                                         \
		maps[2] = skel->maps.drops;                                        \
	} while (0)

static int run_stream(bool fork_event, bool wakeup_each, bool perf_buffer, bool stall,
		      unsigned pid)
{
	struct floor_stream_bpf *read_skel = NULL;
	struct floor_stream_fork_bpf *fork_skel = NULL;
	struct bpf_map *maps[3];
	struct ring_buffer *ring = NULL;
	struct perf_buffer *perf = NULL;
	unsigned long long lost;

	if (fork_event)
		OPEN_STREAMER(floor_stream_fork_bpf, fork_skel, pid, wakeup_each, perf_buffer);
	else
		OPEN_STREAMER(floor_stream_bpf, read_skel, pid, wakeup_each, perf_buffer);
	if (perf_buffer)
		perf = perf_buffer__new(bpf_map__fd(maps[1]), 64, on_perf, NULL, NULL, NULL);
	else
		ring = ring_buffer__new(bpf_map__fd(maps[0]), on_ring, NULL, NULL);
	if (!perf && !ring)
		return fail("buffer");
	/* Attach only once the reader exists: until perf_buffer__new() fills the perf event
	 * array, bpf_perf_event_output() fails and the event is gone without a trace. */
	if (fork_skel ? floor_stream_fork_bpf__attach(fork_skel) : floor_stream_bpf__attach(read_skel))
		return fail("attach");
	start_clock();
	while (running()) {
		if (stall)
			usleep(10000);
		else if (perf)
			perf_buffer__poll(perf, 1);
		else if (wakeup_each)
			ring_buffer__poll(ring, 1);
		else {
			usleep(1000);
			ring_buffer__consume(ring);
		}
	}
	/* Everything still buffered, whether or not a wake-up announced it. */
	if (perf)
		perf_buffer__consume(perf);
	else
		ring_buffer__consume(ring);
	/* Counted in BPF, where the output fails (floor_stream.bpf.h). */
	lost = sum_percpu(maps[2], 1);
	printf("{\"delivered\":%llu,\"lost_events\":%llu}\n", delivered, lost);
	perf_buffer__free(perf);
	ring_buffer__free(ring);
	floor_stream_bpf__destroy(read_skel);
	floor_stream_fork_bpf__destroy(fork_skel);
	return 0;
}

int main(int argc, char **argv)
{
	bool wakeup_each = false, perf_buffer = false, stall = false;
	unsigned pid = 0;
	const char *mode;

	if (argc < 2) {
		fprintf(stderr, "usage: tpbench-floor hist-tp|hist-raw|stream-read|stream-fork "
				"[--wakeup-each] [--perf-buffer] [--stall] [-p PID] [-d SECONDS]\n");
		return 2;
	}
	mode = argv[1];
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--wakeup-each"))
			wakeup_each = true;
		else if (!strcmp(argv[i], "--stall"))
			stall = true;
		else if (!strcmp(argv[i], "--perf-buffer"))
			perf_buffer = true;
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			pid = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-d") && i + 1 < argc)
			duration = strtod(argv[++i], NULL);
		else {
			fprintf(stderr, "tpbench-floor: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!strcmp(mode, "hist-tp") || !strcmp(mode, "hist-raw"))
		return run_hist(!strcmp(mode, "hist-raw"));
	if (!strcmp(mode, "stream-read") || !strcmp(mode, "stream-fork"))
		return run_stream(!strcmp(mode, "stream-fork"), wakeup_each, perf_buffer, stall,
				  pid);
	fprintf(stderr, "tpbench-floor: unknown mode %s\n", mode);
	return 2;
}
