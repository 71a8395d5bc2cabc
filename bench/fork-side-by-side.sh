#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# forksnoop's in-kernel cost per fork next to the floors', all attached at once to the same N
# forks of one process (so the machine's load moves every figure alike): Σ run_time_ns of each
# contender's programs over the forks / N, with bpf_stats on for the run. Run as root:
#   bench/fork-side-by-side.sh [BUILD_DIR] [N]
# Prints "contender BPF-ns/fork runs" and each tool's delivered count; the runs include other
# processes' forks on the machine (turned away by -p in the program), alike for all.
set -eu
build=${1:-build}
n=${2:-3000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
trap '' USR2 # tpbench-work tells its parent it is ready

prog_stats() { # PID -> "run_time_ns run_cnt" summed over the programs it holds
	python3 - "$1" <<'PY'
import json, os, subprocess, sys
pid = sys.argv[1]
ids = set()
for fd in os.listdir(f"/proc/{pid}/fdinfo"):
    try:
        for line in open(f"/proc/{pid}/fdinfo/{fd}"):
            if line.startswith("prog_id:"):
                ids.add(int(line.split()[1]))
    except OSError:
        pass
t = c = 0
for i in ids:
    p = json.loads(subprocess.run(["bpftool", "prog", "show", "id", str(i), "-j"],
                                  capture_output=True, text=True, check=True).stdout)
    t += p.get("run_time_ns", 0)
    c += p.get("run_cnt", 0)
print(t, c)
PY
}

"$build/bench/tpbench-work" fork "$n" >"$out/work" &
work=$!
declare -A pid before
start() { local name=$1; shift; "$@" >"$out/$name" 2>&1 & pid[$name]=$!; }
start floor-ring "$build/bench/tpbench-floor" stream-fork -p "$work"
start floor-perf "$build/bench/tpbench-floor" stream-fork --perf-buffer -p "$work"
start forksnoop "$build/bin/forksnoop" -p "$work" --json
start forksnoop-perf "$build/bin/forksnoop" -p "$work" --json --perf-buffer
start forksnoop-raw "$build/bin/forksnoop" -p "$work" --json --raw
start forksnoop-raw-perf "$build/bin/forksnoop" -p "$work" --json --raw --perf-buffer
sleep 3 # every contender attached (each loads within ~1 s here, even under load)
was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
for name in "${!pid[@]}"; do before[$name]=$(prog_stats "${pid[$name]}"); done
kill -USR1 "$work"
wait "$work"
for name in $(printf '%s\n' "${!pid[@]}" | sort); do
	read -r t0 c0 <<<"${before[$name]}"
	read -r t1 c1 <<<"$(prog_stats "${pid[$name]}")"
	echo "$name $(((t1 - t0) / n)) $((c1 - c0))"
done
sysctl -qw kernel.bpf_stats_enabled="$was"
for name in "${!pid[@]}"; do kill -INT "${pid[$name]}"; done
wait
for name in forksnoop forksnoop-perf forksnoop-raw forksnoop-raw-perf; do
	echo "$name delivered $(grep -c '"child_pid"' "$out/$name") $(tail -1 "$out/$name")"
done
