#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# /init of the test VM (busybox ash). Runs every check in CHECKS against the kernel it boots on
# and reports on the serial console, one marker line each, for run-kernel-test.sh to assert:
#   TPK-KERNEL <uname -r>
#   TPK-PLAN <check> ...
#   TPK-CHECK <check> ok | TPK-CHECK <check> FAIL <why>   (+ TPK-LOG <check>: <line> on failure)
#   TPK-DONE
# A check is a shell function check_NAME that returns 0 when the tool's output is exactly what
# the check caused; `fail "why"` says what was wrong. To add one: write the function, add NAME to
# CHECKS (or to the block that adds checks for tools present in this image).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/tpkit/bin
BIN=/tpkit/bin
OUT=/tmp/check

/bin/busybox mkdir -p /usr/bin /usr/sbin /proc /sys /dev /tmp
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing
mount -t bpf bpf /sys/fs/bpf
ip link set lo up
echo 1 > /proc/sys/kernel/printk # only emergencies interleave with the markers
exec 2>&1

CHECKS="forksnoop_tracepoint forksnoop_raw forksnoop_perf_buffer forksnoop_raw_perf_buffer
        netrxlen_receive_skb netrxlen_netif_rx netrxlen_per_dev"
[ -x $BIN/tphist ] && CHECKS="$CHECKS tphist_netif_receive_skb tphist_fork_child_pid"
[ -x $BIN/tpsnoop ] && CHECKS="$CHECKS tpsnoop_fork"

# ---- helpers --------------------------------------------------------------------------------

fail() { echo "$*" | head -c 400 > $OUT/why; return 1; }

# Starts a tool in the background, stdout to $OUT/tool.out, stderr to $OUT/tool.err; TOOL_PID.
start_tool() {
	timeout 120 "$@" > $OUT/tool.out 2> $OUT/tool.err &
	TOOL_PID=$!
}

# Stops the started tool with SIGINT; succeeds when it exits 0.
stop_tool() {
	kill -INT $TOOL_PID 2>/dev/null
	wait $TOOL_PID
	TOOL_RC=$?
	[ $TOOL_RC = 0 ] || fail "tool exit status $TOOL_RC: $(head -c 300 $OUT/tool.err)"
}

# Waits until the tool's output matches the extended regex $1, running command $2 (a marker
# event) before each look: proof that the tool is attached and reading.
handshake() {
	for attempt in $(seq 100); do
		eval "$2" > /dev/null
		grep -qE "$1" $OUT/tool.out && return 0
		kill -0 $TOOL_PID 2>/dev/null || { wait $TOOL_PID; fail "tool died (status $?): $(head -c 300 $OUT/tool.err)"; return 1; }
		usleep 100000
	done
	fail "no marker event in the tool's output after 10 s"
}

# Forks N children from a shell whose comm is tpkforker; prints its pid, then each child's pid.
FORKS=30
fork_batch() {
	(exec -a sh /bin/tpkforker -c \
		'echo $$; i=0; while [ $i -lt '$FORKS' ]; do : & echo $!; i=$((i+1)); done; wait')
}
THREADS=5

# awk functions shared by checks: field value of a flat JSON line (numbers and plain strings).
AWK_JSON='function field(line, key,   m) {
	if (match(line, "\"" key "\":(\"[^\"]*\"|[^,}]*)") == 0) return "";
	m = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3);
	gsub(/^"|"$/, "", m); return m;
}'

# ---- forksnoop: each child of a batch exactly once, with the right parent and comms ----------

forksnoop_exact() {
	start_tool $BIN/forksnoop --json "$@"
	handshake '"child_pid":[0-9]+' ': &' || return 1
	# The marker forks come from this shell; the counted ones from tpkforker and tpk-vmhelper.
	fork_batch > $OUT/forks
	tpk-vmhelper threads $THREADS > $OUT/threads || { fail "tpk-vmhelper threads failed"; return 1; }
	stop_tool || return 1
	[ "$(tail -n 1 $OUT/tool.out)" = '{"lost_events":0}' ] || { fail "last line is not {\"lost_events\":0}"; return 1; }
	awk "$AWK_JSON"'
		FILENAME == ARGV[1] { if (FNR == 1) forker = $1; else { want[$1] = "process"; n++ } next }
		FILENAME == ARGV[2] { if (FNR == 1) threader = $1; else { want[$1] = "thread"; n++ } next }
		{
			pp = field($0, "parent_pid"); if (pp != forker && pp != threader) next;
			seen++; tid = field($0, "child_tid"); comm = pp == forker ? "tpkforker" : "tpk-vmhelper";
			if (!(tid in want)) { print "unexpected child " $0; bad++; next }
			if (got[tid]++) { print "twice: " $0; bad++ }
			if (field($0, "kind") != want[tid]) { print "wrong kind: " $0; bad++ }
			if (field($0, "parent_tid") != pp) { print "wrong parent_tid: " $0; bad++ }
			if (field($0, "parent_comm") != comm || field($0, "child_comm") != comm) { print "wrong comm: " $0; bad++ }
			if (field($0, "child_pid") != (want[tid] == "process" ? tid : pp)) { print "wrong child_pid: " $0; bad++ }
		}
		END {
			for (t in want) if (!(t in got)) { print "missing child " t; bad++ }
			printf "%d events for %d children (%d processes, %d threads)\n", seen, n, n - '$THREADS', '$THREADS';
			exit bad ? 1 : 0
		}' $OUT/forks $OUT/threads $OUT/tool.out > $OUT/verdict
	verdict=$?
	cat $OUT/verdict
	[ $verdict = 0 ] && grep -q "^$((FORKS + THREADS)) events for" $OUT/verdict ||
		fail "$(head -n 3 $OUT/verdict | tr '\n' ';')"
}

check_forksnoop_tracepoint() { forksnoop_exact; }
check_forksnoop_raw() { forksnoop_exact --raw; }
check_forksnoop_perf_buffer() { forksnoop_exact --perf-buffer; }
check_forksnoop_raw_perf_buffer() { forksnoop_exact --raw --perf-buffer; }

# ---- histograms: UDP datagrams of known sizes on lo, in exactly the expected log2 buckets ----

# "low:count ..." summed over the tool's JSON histogram lines whose key is $1 (empty buckets and
# the [1024,2047] marker bucket left out), sorted by low.
hist_buckets() {
	awk "$AWK_JSON"'
		index($0, "\"buckets\"") && field($0, "key") == "'"$1"'" {
			n = split($0, parts, "\"low\":");
			for (i = 2; i <= n; i++) {
				split(parts[i], v, /[,}]/); low = v[1];
				if (match(parts[i], /"count":[0-9]+/)) count[low] += substr(parts[i], RSTART + 8, RLENGTH - 8);
			}
		}
		END { for (low in count) if (count[low] && low != 1024) print low ":" count[low] }' \
		$OUT/tool.out | sort -n | tr '\n' ' '
}

# Runs a histogram tool printing every 0.2 s ($2...), sends the datagrams and compares the
# histogram of key $1. IP lengths (payload + 28) 38, 60, 128, 200, 328 → buckets [32,63] 7+5,
# [128,255] 11+3, [256,511] 13. The 1200-byte markers land in [1024,2047] and are left out.
udp_hist_exact() {
	key=$1; shift
	start_tool "$@" 0.2
	handshake '"low":1024' 'tpk-vmhelper udp 1200 1' || return 1
	for sent in "10 7" "32 5" "100 11" "172 3" "300 13"; do
		tpk-vmhelper udp $sent || { fail "tpk-vmhelper udp $sent failed"; return 1; }
	done
	stop_tool || return 1
	got=$(hist_buckets "$key")
	echo "buckets (low:count): $got"
	[ "$got" = "32:12 128:14 256:13 " ] || fail "buckets $got, expected 32:12 128:14 256:13"
}

check_netrxlen_receive_skb() { udp_hist_exact "" $BIN/netrxlen --json --dev lo; }
check_netrxlen_netif_rx() { udp_hist_exact "" $BIN/netrxlen --json --dev lo --event netif_rx; }
check_netrxlen_per_dev() { udp_hist_exact lo $BIN/netrxlen --json --dev lo --per-dev; }
# lo is the VM's only device: every packet of the event is one of ours.
check_tphist_netif_receive_skb() { udp_hist_exact "" $BIN/tphist net:netif_receive_skb len --json; }

# ---- generic tools on the 6.1 fork layout: a string filter on the inline comm, child_pid ----

# Both filter on parent_comm ~ "tpk*": tpk-vmhelper's thread is the marker, tpkforker's children
# are counted, and the forks of everything else (this shell, kernel threads) must not show.

# tphist: one histogram per comm; tpkforker's is exactly the log2 buckets of its children's pids.
check_tphist_fork_child_pid() {
	start_tool $BIN/tphist sched:sched_process_fork child_pid --by comm --json \
		--filter 'parent_comm ~ "tpk*"' 0.2
	handshake '"key":"tpk-vmhelper"' 'tpk-vmhelper threads 1' || return 1
	fork_batch > $OUT/forks
	stop_tool || return 1
	want=$(awk 'FNR > 1 { low = 1; while (low * 2 <= $1) low *= 2; n[low]++ }
		END { for (low in n) print low ":" n[low] }' $OUT/forks | sort -n | tr '\n' ' ')
	got=$(hist_buckets tpkforker)
	echo "tpkforker buckets (low:count): $got"
	[ "$got" = "$want" ] || { fail "buckets $got, expected $want"; return 1; }
	others=$(grep -o '"key":"[^"]*"' $OUT/tool.out | sort -u | grep -vE 'tpkforker|tpk-vmhelper')
	[ -z "$others" ] || fail "the filter let through $others"
}

# tpsnoop: each child of tpkforker exactly once, with the pids and comms of the batch (the
# event's own fields, nested under "fields", and the task's comm and pid around them).
check_tpsnoop_fork() {
	start_tool $BIN/tpsnoop sched:sched_process_fork --json --filter 'parent_comm ~ "tpk*"'
	handshake '"parent_comm":"tpk-vmhelper"' 'tpk-vmhelper threads 1' || return 1
	fork_batch > $OUT/forks
	stop_tool || return 1
	awk "$AWK_JSON"'
		FILENAME == ARGV[1] { if (FNR == 1) forker = $1; else { want[$1] = 1; n++ } next }
		!index($0, "\"parent_comm\"") { next }
		field($0, "parent_comm") !~ /^tpk/ { print "the filter let through " $0; bad++; next }
		field($0, "parent_comm") != "tpkforker" { next }
		{
			seen++; child = field($0, "child_pid");
			if (!(child in want)) { print "unexpected child " $0; bad++; next }
			if (got[child]++) { print "twice: " $0; bad++ }
			if (field($0, "parent_pid") != forker || field($0, "pid") != forker ||
			    field($0, "child_comm") != "tpkforker" || field($0, "comm") != "tpkforker") {
				print "wrong parent or comm: " $0; bad++
			}
		}
		END {
			for (c in want) if (!(c in got)) { print "missing child " c; bad++ }
			printf "%d events for %d children\n", seen, n;
			exit (bad || seen != '$FORKS') ? 1 : 0
		}' $OUT/forks $OUT/tool.out > $OUT/verdict
	verdict=$?
	cat $OUT/verdict
	[ $verdict = 0 ] || fail "$(head -n 3 $OUT/verdict | tr '\n' ';')"
}

# ---- run ------------------------------------------------------------------------------------

echo "TPK-KERNEL $(uname -r)"
# Which sched_process_fork layout this kernel has (inline char[16] comm, or __data_loc).
echo "TPK-INFO sched_process_fork $(grep -o 'field:[^;]*parent_comm[^;]*;[^;]*;[^;]*;' \
	/sys/kernel/tracing/events/sched/sched_process_fork/format | tr -s '\t' ' ')"
echo "TPK-PLAN" $CHECKS
for check in $CHECKS; do
	rm -rf $OUT && mkdir -p $OUT
	start=$(date +%s)
	if check_$check > $OUT/log 2>&1; then
		echo "TPK-CHECK $check ok ($(($(date +%s) - start)) s) $(tail -n 1 $OUT/log)"
	else
		echo "TPK-CHECK $check FAIL $(cat $OUT/why 2>/dev/null)"
		for f in log tool.err tool.out; do
			[ -s $OUT/$f ] && tail -n 8 $OUT/$f | cut -c 1-300 | sed "s/^/TPK-LOG $check $f: /"
		done
	fi
done
echo "TPK-DONE"
sync
poweroff -f
