/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* The traced workload of the benchmarks: N read() calls of 1..4096 bytes from /dev/zero, N
 * fork()+exit+wait, N getppid() (the cheapest syscall: a storm for syscall counters), N
 * round trips of a byte through two pipes to a child on the same CPU (two wake-ups and two
 * context switches each: a storm for scheduler tracers), N 4 KiB O_DIRECT reads of a file of
 * its own in /var/tmp (one block request and one completion interrupt each: for the block and
 * interrupt tools), or N TCP connections accepted and closed on the loopback of a private
 * network namespace (ten TCP state changes each: for the TCP tools), timed in-process. It first waits for SIGUSR1 (sigwaitinfo: no read() of its
 * own before the measured loop), so a tracer attached in between sees exactly N events from this
 * process. --rate paces the calls evenly (busy wait on the vDSO clock, no syscalls in between).
 * `open` is N openat() of /dev/null and its close().
 *
 * For the scale benchmarks:
 *   --keys K     read() N times from /dev/null with sizes cycling over 1..K: K distinct values of
 *                the `count` field (a read of /dev/null copies nothing: a read costs the same
 *                whatever its size);
 *   --procs P    the N operations made by P child processes (P distinct pids), named
 *                "tpbk<this PID>" so that a tracer can pick them out with --comm;
 *   --threads P  the N operations made by P threads of this process (-p PID still sees them
 *                all), each at RATE / P: producers on every CPU.
 *
 *   tpbench-work read|fork|syscall|switch|blockio|connect|open N [--rate PER_SECOND] [--no-wait]
 *                [--keys K] [--procs P | --threads P]
 *
 * Prints one line: "ops=N ns_per_op=X chunk_median_ns_per_op=Z elapsed_ns=Y". The calls are
 * timed in chunks too (about 100 per run); the median chunk leaves out the moments another task
 * took the CPU, which on a shared machine add more noise than the costs being measured. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A child on this process's CPU (both pinned there) that sends back every byte it gets. */
static pid_t start_echo(int to_echo[2], int from_echo[2])
{
	cpu_set_t cpus;
	pid_t child;

	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) || pipe(to_echo) || pipe(from_echo)) {
		perror("tpbench-work: switch");
		return -1;
	}
	child = fork();
	if (child < 0) {
		perror("tpbench-work: fork");
		return -1;
	}
	if (child == 0) {
		char byte;

		close(to_echo[1]);
		close(from_echo[0]);
		while (read(to_echo[0], &byte, 1) == 1)
			if (write(from_echo[1], &byte, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(to_echo[0]);
	close(from_echo[1]);
	return child;
}

static int round_trip(int out, int in)
{
	char byte = 'x';

	if (write(out, &byte, 1) != 1 || read(in, &byte, 1) != 1) {
		perror("tpbench-work: round trip");
		return 1;
	}
	return 0;
}

#define BLOCKIO_FILE_BLOCKS 4096 /* 16 MiB of 4 KiB blocks */

/* A file of its own for O_DIRECT reads, unlinked at once so that nothing is left behind; -1 where
 * the filesystem there takes no O_DIRECT (tmpfs). */
static int open_blockio_file(void)
{
	static char block[4096];
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/var/tmp/tpbench-blockio.%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		perror("tpbench-work: blockio file");
		return -1;
	}
	unlink(path);
	memset(block, 0x5a, sizeof(block));
	for (int i = 0; i < BLOCKIO_FILE_BLOCKS; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
			perror("tpbench-work: blockio file");
			return -1;
		}
	if (fsync(fd)) {
		perror("tpbench-work: blockio fsync");
		return -1;
	}
	/* Reopen with O_DIRECT through /proc: the name is gone. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int direct = open(path, O_RDONLY | O_DIRECT);
	close(fd);
	if (direct < 0)
		perror("tpbench-work: O_DIRECT");
	return direct;
}

static int read_block(int fd, uint64_t i)
{
	static char buf[4096] __attribute__((aligned(4096)));
	off_t block = (off_t)((i * 2654435761u) % BLOCKIO_FILE_BLOCKS);

	if (pread(fd, buf, sizeof(buf), block * 4096) != (ssize_t)sizeof(buf)) {
		perror("tpbench-work: O_DIRECT read");
		return 1;
	}
	return 0;
}

/* A listener on 127.0.0.1 in a private network namespace with its loopback up: the connections'
 * TIME_WAIT sockets and ports stay there and go with the namespace. */
static int start_listener(struct sockaddr_in *address)
{
	struct ifreq lo = {0};
	socklen_t length = sizeof(*address);
	int s;

	if (unshare(CLONE_NEWNET)) {
		perror("tpbench-work: unshare(CLONE_NEWNET)");
		return -1;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(lo.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &lo) || (lo.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &lo))) {
		perror("tpbench-work: loopback up");
		return -1;
	}
	close(s);
	memset(address, 0, sizeof(*address));
	address->sin_family = AF_INET;
	address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)address, sizeof(*address)) || listen(s, 16) ||
	    getsockname(s, (struct sockaddr *)address, &length)) {
		perror("tpbench-work: listener");
		return -1;
	}
	return s;
}

/* One connection: connect, accept, the client closes first, then the server. */
static int connect_once(int listener, const struct sockaddr_in *address)
{
	int client = socket(AF_INET, SOCK_STREAM, 0), server;

	if (client < 0 || connect(client, (const struct sockaddr *)address, sizeof(*address))) {
		perror("tpbench-work: connect");
		return 1;
	}
	server = accept(listener, NULL, NULL);
	if (server < 0) {
		perror("tpbench-work: accept");
		return 1;
	}
	close(client);
	close(server);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: tpbench-work read|fork|syscall|switch|blockio|connect|open N "
			"[--rate PER_SECOND] [--no-wait] [--keys K] [--procs P | --threads P]\n");
	exit(2);
}

enum workload { READ, FORK, SYSCALL, SWITCH, BLOCKIO, CONNECT, OPEN };

static const char *const workload_names[] = {"read", "fork", "syscall", "switch", "blockio", "connect",
					     "open"};

/* What the operations work on, made before the measured loop. */
struct workload_state {
	enum workload kind;
	int fd; /* /dev/zero, the blockio file or the listener */
	int to_echo[2], from_echo[2];
	pid_t echo;
	struct sockaddr_in listening;
	uint64_t keys; /* read(): sizes 1..keys from /dev/null; 0: 1..4096 from /dev/zero */
};

static int prepare(struct workload_state *w)
{
	switch (w->kind) {
	case SWITCH:
		w->echo = start_echo(w->to_echo, w->from_echo);
		return w->echo < 0;
	case BLOCKIO:
		w->fd = open_blockio_file();
		return w->fd < 0;
	case CONNECT:
		w->fd = start_listener(&w->listening);
		return w->fd < 0;
	case READ:
		w->fd = open(w->keys ? "/dev/null" : "/dev/zero", O_RDONLY);
		if (w->fd < 0)
			perror("tpbench-work: open");
		return w->fd < 0;
	default:
		return 0;
	}
}

/* Operation i; non-zero when it failed (said on stderr). */
static int operate(struct workload_state *w, uint64_t i)
{
	static char buf[4096];
	pid_t child;
	size_t size;

	switch (w->kind) {
	case FORK:
		child = fork();
		if (child == 0)
			_exit(0);
		if (child < 0 || waitpid(child, NULL, 0) != child) {
			perror("tpbench-work: fork");
			return 1;
		}
		return 0;
	case SYSCALL:
		/* Raw: glibc may answer getppid() without a syscall. */
		syscall(SYS_getppid);
		return 0;
	case SWITCH:
		return round_trip(w->to_echo[1], w->from_echo[0]);
	case BLOCKIO:
		return read_block(w->fd, i);
	case CONNECT:
		return connect_once(w->fd, &w->listening);
	case OPEN: {
		int fd = openat(AT_FDCWD, "/dev/null", O_RDONLY);

		if (fd < 0) {
			perror("tpbench-work: openat");
			return 1;
		}
		close(fd);
		return 0;
	}
	case READ:
		if (w->keys) {
			/* /dev/null reads nothing and checks no more than the buffer's address. */
			if (read(w->fd, buf, 1 + i % w->keys) != 0) {
				perror("tpbench-work: read");
				return 1;
			}
			return 0;
		}
		/* 1..4096 bytes, spread over every log2 bucket of the histograms. */
		size = 1 + ((i * 2654435761u) >> 7) % 4096;
		if (read(w->fd, buf, size) != (ssize_t)size) {
			perror("tpbench-work: read");
			return 1;
		}
		return 0;
	}
	return 1;
}

/* The operations first, first + step, first + 2 step… below n, each not before its turn of an even
 * schedule of interval_ns from start (none: at full speed); non-zero when one failed. */
static int operate_share(struct workload_state *w, uint64_t first, uint64_t step, uint64_t n,
			 uint64_t start, uint64_t interval_ns)
{
	for (uint64_t i = first; i < n; i += step) {
		if (interval_ns) {
			uint64_t due = start + i * interval_ns;

			while (now_ns() < due)
				;
		}
		if (operate(w, i))
			return 1;
	}
	return 0;
}

/* --threads: every producer thread waits at the barrier for the start, then makes its share. */
struct producer {
	pthread_t thread;
	struct workload_state *w;
	uint64_t first, step, n, interval_ns;
	pthread_barrier_t *go;
	const uint64_t *start;
	int failed;
};

static void *produce(void *arg)
{
	struct producer *p = arg;

	pthread_barrier_wait(p->go);
	p->failed = operate_share(p->w, p->first, p->step, p->n, *p->start, p->interval_ns);
	return NULL;
}

static void print_result(uint64_t n, uint64_t elapsed, double chunk_median)
{
	printf("ops=%llu ns_per_op=%.2f chunk_median_ns_per_op=%.2f elapsed_ns=%llu\n",
	       (unsigned long long)n, n ? (double)elapsed / (double)n : 0.0, chunk_median,
	       (unsigned long long)elapsed);
}

static void wait_for_go(int wait_for_start, const sigset_t *usr1)
{
	if (!wait_for_start)
		return;
	/* Tell the harness we are blocked and ready. */
	kill(getppid(), SIGUSR2);
	while (sigwaitinfo(usr1, NULL) < 0 && errno == EINTR)
		;
}

/* --procs and --threads: P producers share the N operations; the figure is the mean over the
 * whole run (no chunks: the producers run side by side). */
static int run_producers(struct workload_state *w, uint64_t n, uint64_t interval_ns, int procs,
			 int threads, int wait_for_start, const sigset_t *usr1)
{
	uint64_t start = 0;
	int failed = 0;

	if (procs) {
		pid_t *children = calloc((size_t)procs, sizeof(*children));
		char name[16];

		if (!children)
			return 1;
		snprintf(name, sizeof(name), "tpbk%d", (int)getpid());
		for (int p = 0; p < procs; p++) {
			children[p] = fork();
			if (children[p] < 0) {
				perror("tpbench-work: fork");
				return 1;
			}
			if (children[p] == 0) {
				/* SIGUSR1 is blocked (inherited): a signal sent before this waits. */
				prctl(PR_SET_NAME, name);
				while (sigwaitinfo(usr1, NULL) < 0 && errno == EINTR)
					;
				_exit(operate_share(w, (uint64_t)p, (uint64_t)procs, n, now_ns(),
						    interval_ns) ? 1 : 0);
			}
		}
		wait_for_go(wait_for_start, usr1);
		start = now_ns();
		for (int p = 0; p < procs; p++)
			kill(children[p], SIGUSR1);
		for (int p = 0; p < procs; p++) {
			int status;

			if (waitpid(children[p], &status, 0) != children[p] || !WIFEXITED(status) ||
			    WEXITSTATUS(status))
				failed = 1;
		}
		free(children);
	} else {
		struct producer *producers = calloc((size_t)threads, sizeof(*producers));
		pthread_barrier_t go;

		if (!producers || pthread_barrier_init(&go, NULL, (unsigned)threads + 1))
			return 1;
		for (int t = 0; t < threads; t++) {
			producers[t] = (struct producer){.w = w, .first = (uint64_t)t, .step = (uint64_t)threads,
							 .n = n, .interval_ns = interval_ns, .go = &go,
							 .start = &start};
			if (pthread_create(&producers[t].thread, NULL, produce, &producers[t])) {
				fprintf(stderr, "tpbench-work: cannot start a thread\n");
				return 1;
			}
		}
		wait_for_go(wait_for_start, usr1);
		start = now_ns();
		pthread_barrier_wait(&go);
		for (int t = 0; t < threads; t++) {
			pthread_join(producers[t].thread, NULL);
			failed |= producers[t].failed;
		}
		free(producers);
	}
	uint64_t elapsed = now_ns() - start;

	if (failed)
		return 1;
	print_result(n, elapsed, n ? (double)elapsed / (double)n : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	struct workload_state w = {.fd = -1, .to_echo = {-1, -1}, .from_echo = {-1, -1}, .echo = -1};
	uint64_t n, rate = 0, start, end, interval_ns = 0;
	int wait_for_start = 1, known = 0, procs = 0, threads = 0;
	sigset_t set;

	if (argc < 3)
		usage();
	for (unsigned k = 0; k < sizeof(workload_names) / sizeof(workload_names[0]); k++)
		if (!strcmp(argv[1], workload_names[k])) {
			w.kind = (enum workload)k;
			known = 1;
		}
	if (!known)
		usage();
	n = strtoull(argv[2], NULL, 10);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-wait"))
			wait_for_start = 0;
		else if (!strcmp(argv[i], "--keys") && i + 1 < argc)
			w.keys = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
			procs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else
			usage();
	}
	/* Producers side by side only for operations that need nothing of their own. */
	if (procs < 0 || threads < 0 || (procs && threads) || (w.keys && w.kind != READ) ||
	    ((procs || threads) && w.kind != READ && w.kind != FORK && w.kind != SYSCALL && w.kind != OPEN))
		usage();
	if (rate)
		interval_ns = 1000000000u / rate;
	if (prepare(&w))
		return 1;
	/* Warm up (caches, page tables, the fork path) before any tracer attaches. */
	const uint64_t warmup_cap = w.kind == FORK || w.kind == BLOCKIO || w.kind == CONNECT ? 50 : 10000;

	for (uint64_t i = 0, warmup = n / 10 < warmup_cap ? n / 10 : warmup_cap; i < warmup; i++)
		if (operate(&w, i))
			return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (wait_for_start || procs)
		sigprocmask(SIG_BLOCK, &set, NULL);
	if (procs || threads)
		return run_producers(&w, n, interval_ns, procs, threads, wait_for_start, &set);
	wait_for_go(wait_for_start, &set);

	uint64_t chunk = n / 100 ? n / 100 : 1, chunks = 0, chunk_start;
	double *chunk_ns = calloc(n / chunk + 1, sizeof(*chunk_ns));

	if (!chunk_ns)
		return 1;
	start = chunk_start = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		if (i && i % chunk == 0) {
			uint64_t t = now_ns();

			chunk_ns[chunks++] = (double)(t - chunk_start) / (double)chunk;
			chunk_start = t;
		}
		if (interval_ns) {
			uint64_t due = start + i * interval_ns;

			while (now_ns() < due)
				;
		}
		if (operate(&w, i))
			return 1;
	}
	end = now_ns();
	if (n % chunk == 0 && n)
		chunk_ns[chunks++] = (double)(end - chunk_start) / (double)chunk;
	if (w.kind == SWITCH) {
		close(w.to_echo[1]); /* the echo reads end-of-file and exits */
		waitpid(w.echo, NULL, 0);
	}
	qsort(chunk_ns, chunks, sizeof(*chunk_ns), compare_doubles);
	print_result(n, end - start, chunks ? chunk_ns[chunks / 2] : 0.0);
	return 0;
}
