/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* What busybox cannot do inside the test VM, kept small and static so it needs no libraries:
 *   tpk-vmhelper threads N      start N threads; print our pid, then each thread's tid
 *   tpk-vmhelper udp SIZE COUNT send COUNT UDP datagrams of SIZE payload bytes to a bound
 *                               socket on 127.0.0.1, receiving each one (no ICMP, no drops)
 * Exit status 0 only when everything happened as asked. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_barrier_t started;

static void *thread_main(void *arg)
{
	(void)arg;
	printf("%d\n", gettid());
	fflush(stdout);
	pthread_barrier_wait(&started);
	return NULL;
}

static int threads(int count)
{
	pthread_t ids[64];

	if (count < 1 || count > 64)
		return 2;
	printf("%d\n", getpid());
	fflush(stdout);
	/* All threads stay alive until every one has started: no tid is reused within a run. */
	pthread_barrier_init(&started, NULL, count);
	for (int i = 0; i < count; i++)
		if (pthread_create(&ids[i], NULL, thread_main, NULL) != 0)
			return 1;
	for (int i = 0; i < count; i++)
		pthread_join(ids[i], NULL);
	return 0;
}

static int udp(size_t size, int count)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(addr);
	int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
	static char data[65536], buf[65536];

	if (size > sizeof(data) - 28 || count < 0)
		return 2;
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    getsockname(rx, (struct sockaddr *)&addr, &len) != 0) {
		perror("tpk-vmhelper: socket");
		return 1;
	}
	memset(data, 'x', size);
	for (int i = 0; i < count; i++) {
		if (sendto(tx, data, size, 0, (struct sockaddr *)&addr, sizeof(addr)) != (ssize_t)size ||
		    recv(rx, buf, sizeof(buf), 0) != (ssize_t)size) {
			perror("tpk-vmhelper: udp");
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "threads") == 0)
		return threads(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "udp") == 0)
		return udp(strtoul(argv[2], NULL, 10), atoi(argv[3]));
	fprintf(stderr, "usage: tpk-vmhelper threads N | udp SIZE COUNT\n");
	return 2;
}
