#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# /init of the test VM (busybox ash). Runs the live test binary's exactness suites (`*Exact.*`,
# the same tests the host runs) against the kernel it boots on, and reports on the serial console:
#   TPK-KERNEL <uname -r>
#   TPK-INFO <what differs between kernels, for the reader>
#   googletest's own lines ([ RUN ], [ OK ], [ FAILED ], [ SKIPPED ])
#   TPK-DONE <the test binary's exit status>
# run-kernel-test.sh holds the list of tests the host expects and asserts each one passed.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/tpkit/bin

/bin/busybox mkdir -p /usr/bin /usr/sbin /proc /sys /dev /tmp
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up
# Loop devices for the block tools' tests (run-kernel-test.sh packs the kernel's own module).
[ -f /tpkit/loop.ko ] && insmod /tpkit/loop.ko
echo 1 > /proc/sys/kernel/printk # only emergencies interleave with the test's lines
exec 2>&1

echo "TPK-KERNEL $(uname -r)"
# Which sched_process_fork layout this kernel has (inline char[16] comm, or __data_loc).
echo "TPK-INFO sched_process_fork $(grep -o 'field:[^;]*parent_comm[^;]*;[^;]*;[^;]*;' \
	/sys/kernel/tracing/events/sched/sched_process_fork/format | tr -s '\t' ' ')"
echo "TPK-INFO loop devices: $(ls /sys/class/block | grep -c '^loop') block events: $(ls /sys/kernel/tracing/events/block | tr '\n' ' ')"

cd /tmp
# A run that prints nothing for 5 minutes is stuck somewhere: where each process waits (its
# kernel stack) goes to the console, once, so that a hang can be read from the log.
watch_progress() {
	last=-1 quiet=0
	while sleep 30; do
		size=$(wc -c < /tmp/tests.out)
		if [ "$size" != "$last" ]; then last=$size quiet=0; continue; fi
		quiet=$((quiet + 30))
		[ $quiet -eq 300 ] || continue
		echo "TPK-INFO no test output for $quiet s; each process and where it waits:"
		for p in /proc/[0-9]*; do
			command=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null) # a kernel thread's is empty
			[ -n "$command" ] || continue
			echo "TPK-INFO ${p#/proc/} $command state=$(sed -n 's/^State:\t//p' "$p/status")"
			sed 's/^/TPK-INFO   /' "$p/stack" 2>/dev/null
		done
	done
}
: > /tmp/tests.out
watch_progress &
{
	TPKIT_BIN_DIR=/tpkit/bin TPKIT_REQUIRE_BPF=1 TPKIT_TEST_SLOWDOWN=$(cat /tpkit/slowdown) \
		/tpkit/bin/tpkit_live_tests --gtest_filter="$(cat /tpkit/filter)" --gtest_color=no \
		--gtest_repeat="$(cat /tpkit/repeat)"
	echo "TPK-DONE $?"
} 2>&1 | tee /tmp/tests.out
kill %1 2>/dev/null
sync
poweroff -f
