#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# completion-test.sh COMPLETION_FILE BIN_DIR TOOL...
# Drives the bash completion as bash does (COMP_WORDS split at COMP_WORDBREAKS, COMP_CWORD,
# then COMPREPLY): every tool's long options are those its --help lists, values are completed
# (--unit's, disks from /sys/class/block, files); events come from the live tracefs and fields
# from the event's format file, both read here independently.
# Exit 77 (skip) for the tracefs part when tracefs cannot be read, unless TPKIT_REQUIRE_BPF=1.
set -u
completion=$1 bin=$2
shift 2
tools=("$@")
# shellcheck disable=SC1090
source "$completion"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# Completes the words given (the last one the word under the cursor), split at ':' and '=' as
# bash's COMP_WORDBREAKS splits them (a run of them is a word); prints COMPREPLY sorted, one per
# line.
complete_words() {
    local -a split=()
    local word
    for word in "$@"; do
        while [[ $word =~ ^([^:=]*)([:=]+)(.*)$ ]]; do
            [[ -n ${BASH_REMATCH[1]} ]] && split+=("${BASH_REMATCH[1]}")
            split+=("${BASH_REMATCH[2]}")
            word=${BASH_REMATCH[3]}
        done
        [[ -n $word || ${#split[@]} -eq 0 || ! ${split[-1]} =~ ^[:=]+$ ]] && split+=("$word")
    done
    COMP_WORDS=("${split[@]}")
    COMP_CWORD=$((${#split[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _tpkit_complete "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]:-}"
    printf '%s\n' "${COMPREPLY[@]}" | sort -u | sed '/^$/d'
}

expect() { # NAME EXPECTED ACTUAL
    [[ $2 == "$3" ]] || fail "$1: expected [$(echo $2)], got [$(echo $3)]"
}

# Options: each tool's long options as --help shows them, no more, no fewer.
for tool in "${tools[@]}"; do
    from_help=$("$bin/$tool" --help | grep -E '^  -' |
        grep -oE -- '--[a-z0-9][a-z0-9-]*(\.[a-z0-9-]+)*' | sort -u)
    completed=$(complete_words "$tool" "--")
    [[ -n $from_help ]] || fail "$tool --help lists no option"
    expect "$tool --<Tab>" "$from_help" "$completed"
done
expect "forksnoop --ti<Tab>" "--tid
--timestamp" "$(complete_words forksnoop --ti)"
expect "forksnoop -p <Tab> (a value)" "" "$(complete_words forksnoop -p "")"
expect "tpkit tph<Tab>" "tphist" "$(complete_words tpkit tph)"
expect "tpkit forksnoop --ra<Tab>" "--raw" "$(complete_words tpkit forksnoop --ra)"
expect "tpkit tpk<Tab> (tpkit-exporter is no tool of tpkit's)" "" "$(complete_words tpkit tpk)"

# Registered by name: tpkit's own names; not those Debian's libbpf-tools has too (runqlat is its
# program then), which are completed as `tpkit runqlat` and by their path in libexec/tpkit/.
for command in tpkit forksnoop tphist tpkit-exporter; do
    [[ $(complete -p "$command" 2>/dev/null) == *" -F _tpkit_complete "* ]] ||
        fail "$command: not completed by tpkit's completion"
done
for command in runqlat execsnoop biolatency; do
    complete -p "$command" &>/dev/null && fail "$command: tpkit's completion registers libbpf-tools' name"
done
expect "tpkit runqlat --js<Tab>" "--json" "$(complete_words tpkit runqlat --js)"
expect "/usr/libexec/tpkit/runqlat --js<Tab>" "--json" "$(complete_words /usr/libexec/tpkit/runqlat --js)"

# Values: one_of()'s, and files.
expect "tphist --unit <Tab>" "$(printf '%s\n' ms ns us)" "$(complete_words tphist --unit "")"
expect "tplat --unit=m<Tab>" "ms" "$(complete_words tplat --unit=m)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
touch "$scratch/exporter.yaml" "$scratch/other.yaml"
expect "tpkit-exporter --config .../exp<Tab>" "$scratch/exporter.yaml" \
    "$(complete_words tpkit-exporter --config "$scratch/exp")"
expect "tpkit-exporter --config.c<Tab>" "--config.check" "$(complete_words tpkit-exporter --config.c)"

# Disks: each block tool's option that --completion-options says takes a disk (bcc's -d, but
# the letters are the tool's) offers every disk and partition.
disks=$(ls /sys/class/block | sort -u)
for tool in biolatency biosnoop bitesize biopattern biotop; do
    disk_options=$("$bin/$tool" --completion-options | sed -n 's/ = @disk$//p')
    [[ -n $disk_options ]] || fail "$tool --completion-options: no option takes a disk"
    for option in $disk_options; do
        expect "$tool $option <Tab>" "$disks" "$(complete_words "$tool" "$option" "")"
    done
done
some_disk=$(head -n1 <<<"$disks")
long=$(grep -oE -- '--[a-z-]+' <<<"$disk_options" | head -n1)
[[ -n $some_disk && -n $long ]] &&
    expect "biotop $long=${some_disk:0:2}<Tab>" "$(grep "^${some_disk:0:2}" <<<"$disks")" \
        "$(complete_words biotop "$long=${some_disk:0:2}")"

# Events and fields from the live tracefs.
tracefs=
for dir in /sys/kernel/tracing /sys/kernel/debug/tracing; do
    [[ -r $dir/available_events ]] && { tracefs=$dir; break; }
done
if [[ -z $tracefs && $(id -u) == 0 ]] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
    tracefs=/sys/kernel/tracing
fi
if [[ -z $tracefs ]]; then
    if [[ ${TPKIT_REQUIRE_BPF:-} == 1 ]]; then
        fail "TPKIT_REQUIRE_BPF=1 but tracefs cannot be read"
    else
        echo "completion-test: options checked; events and fields need a readable tracefs" >&2
        ((failures)) && exit 1
        exit 77
    fi
fi
events_matching() { grep "^$1" "$tracefs/available_events" | sort -u; }
fields_of() { # SYSTEM:EVENT: the non-common fields of its format file
    sed -n 's/^[[:space:]]*field:[^;]* \([A-Za-z_][A-Za-z0-9_]*\)\(\[[^]]*\]\)*;.*/\1/p' \
        "$tracefs/events/${1%%:*}/${1#*:}/format" | grep -v '^common_' | sort -u
}

fork_events=$(events_matching sched:sched_proc)
[[ $fork_events == *sched:sched_process_fork* ]] || fail "tracefs lists no sched:sched_process_fork"
# bash replaces what follows the last ':' only, so the candidates are cut there.
expect "tphist sched:sched_proc<Tab>" "$(sed 's/^sched://' <<<"$fork_events")" \
    "$(complete_words tphist sched:sched_proc)"
expect "tplist sched:sched_proc<Tab>" "$(sed 's/^sched://' <<<"$fork_events")" \
    "$(complete_words tplist sched:sched_proc)"
expect "tpsnoop sched<Tab>" "$(events_matching sched)" "$(complete_words tpsnoop sched)"
expect "tpkit tpcount sched:sched_proc<Tab>" "$(sed 's/^sched://' <<<"$fork_events")" \
    "$(complete_words tpkit tpcount sched:sched_proc)"

fork_fields=$(fields_of sched:sched_process_fork)
[[ $fork_fields == *child_pid* ]] || fail "sched:sched_process_fork's format has no child_pid"
expect "tphist sched:sched_process_fork <Tab>" "$fork_fields" \
    "$(complete_words tphist sched:sched_process_fork "")"
expect "tphist --by comm sched:sched_process_fork <Tab>" "$fork_fields" \
    "$(complete_words tphist --by comm sched:sched_process_fork "")"
expect "tphist sched:sched_process_fork child_pid <Tab> (the interval)" "" \
    "$(complete_words tphist sched:sched_process_fork child_pid "")"
expect "tphist sched:sched_process_fork --by <Tab>" \
    "$(printf '%s\n' comm pid tid cpu kstack ustack $fork_fields | sort -u)" \
    "$(complete_words tphist sched:sched_process_fork --by "")"
expect "tpcount sched:sched_process_fork --by child_<Tab>" "$(grep '^child_' <<<"$fork_fields")" \
    "$(complete_words tpcount sched:sched_process_fork --by child_)"
expect "tpsnoop sched:sched_process_fork -f child_<Tab>" "$(grep '^child_' <<<"$fork_fields")" \
    "$(complete_words tpsnoop sched:sched_process_fork -f child_)"
expect "tpsnoop sched:sched_process_fork --fields parent_pid,child_<Tab>" \
    "$(grep '^child_' <<<"$fork_fields" | sed 's/^/parent_pid,/')" \
    "$(complete_words tpsnoop sched:sched_process_fork --fields parent_pid,child_)"

# --by: stacks where the tool offers them, several keys after commas.
expect "tpcount sched:sched_process_fork --by <Tab>" \
    "$(printf '%s\n' comm pid tid cpu kstack ustack $fork_fields | sort -u)" \
    "$(complete_words tpcount sched:sched_process_fork --by "")"
expect "tphist sched:sched_process_fork child_pid --by comm,k<Tab>" "comm,kstack" \
    "$(complete_words tphist sched:sched_process_fork child_pid --by comm,k)"
expect "tpcount --by=us<Tab>" "ustack" "$(complete_words tpcount --by=us)"

# tplat: two events, --by the start's fields, --match FIELD or START_FIELD==END_FIELD.
wakeup_fields=$(fields_of sched:sched_wakeup)
switch_fields=$(fields_of sched:sched_switch)
expect "tplat sched:sched_wakeup sched:sched_sw<Tab>" "$(events_matching sched:sched_sw | sed 's/^sched://')" \
    "$(complete_words tplat sched:sched_wakeup sched:sched_sw)"
expect "tplat sched:sched_wakeup sched:sched_switch --by <Tab>" \
    "$(printf '%s\n' comm pid tid $wakeup_fields | sort -u)" \
    "$(complete_words tplat sched:sched_wakeup sched:sched_switch --by "")"
expect "tplat sched:sched_wakeup sched:sched_switch --match <Tab>" "$wakeup_fields" \
    "$(complete_words tplat sched:sched_wakeup sched:sched_switch --match "")"
# bash replaces what follows the '==' only.
expect "tplat sched:sched_wakeup sched:sched_switch --match pid==next_<Tab>" \
    "$(grep '^next_' <<<"$switch_fields")" \
    "$(complete_words tplat sched:sched_wakeup sched:sched_switch --match pid==next_)"

((failures)) && { echo "completion-test: $failures failures" >&2; exit 1; }
echo "completion-test: ${#tools[@]} tools' options, events and fields completed as expected"
