# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# bash completion for tpkit's tools: their options and what completes an option's value (the
# tables above, generated from each tool's command line at build time: values, disks, files,
# fields), and for tplist, tpsnoop, tpcount, tphist and tplat the events of the live tracefs and
# the fields of the events chosen (tphist's field, -f, --by, --match).

# Where the tracepoints are: tracefs, or its old place under debugfs.
_tpkit_tracefs()
{
    local dir
    for dir in "${TPKIT_TRACEFS:-}" /sys/kernel/tracing /sys/kernel/debug/tracing; do
        [[ -n $dir && -r $dir/available_events ]] && { printf '%s\n' "$dir"; return 0; }
    done
    return 1
}

# SYSTEM:EVENT, every tracepoint tracefs lists.
_tpkit_events()
{
    local dir
    dir=$(_tpkit_tracefs) || return
    cat "$dir/available_events"
}

# The fields of EVENT (SYSTEM:EVENT) from its format file, common_* ones left out.
_tpkit_fields()
{
    local dir event=$1 line name
    dir=$(_tpkit_tracefs) || return
    [[ $event == *:* && $event != *[*?[]* ]] || return
    [[ -r $dir/events/${event%%:*}/${event#*:}/format ]] || return
    while IFS= read -r line; do
        [[ $line == *field:* ]] || continue
        name=${line#*field:}
        name=${name%%;*}
        name=${name##* }
        name=${name%%\[*}
        [[ $name == common_* ]] || printf '%s\n' "$name"
    done <"$dir/events/${event%%:*}/${event#*:}/format"
}

# Disks and their partitions, as the block tools' -d/--disk takes them (sda, sda1, loop3).
_tpkit_disks()
{
    local disk part
    for disk in /sys/block/*; do
        [[ -e $disk ]] || continue
        printf '%s\n' "${disk##*/}"
        for part in "$disk/${disk##*/}"*; do
            [[ -e $part/partition ]] && printf '%s\n' "${part##*/}"
        done
    done
}

# The words up to the cursor into _tpkit_words, with the words bash split at ':' and '=' (in
# COMP_WORDBREAKS) joined again: "sched" ":" "sched_proc" is one event, "pid" "==" "next_pid"
# one --match.
_tpkit_join_words()
{
    _tpkit_words=()
    local i word
    for ((i = 0; i <= COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if ((i > 1)) && [[ $word =~ ^[:=]+$ && $COMP_WORDBREAKS == *"${word:0:1}"* ||
            ${COMP_WORDS[i - 1]} =~ ^[:=]+$ && $COMP_WORDBREAKS == *"${COMP_WORDS[i - 1]:0:1}"* ]]; then
            _tpkit_words[-1]+=$word
        else
            _tpkit_words+=("$word")
        fi
    done
}

# COMPREPLY from the candidates on stdin that start with $1 (stdin from a process
# substitution: a pipe would set COMPREPLY in a subshell); when bash split the word at ':' or
# '=', it replaces only what follows the last of them, so that much is cut off each candidate.
_tpkit_reply()
{
    local cur=$1 candidate prefix= breaks=
    [[ $COMP_WORDBREAKS == *:* ]] && breaks+=:
    [[ $COMP_WORDBREAKS == *=* ]] && breaks+==
    [[ -n $breaks && $cur == *[$breaks]* ]] && prefix=${cur%"${cur##*[$breaks]}"}
    COMPREPLY=()
    while IFS= read -r candidate; do
        [[ $candidate == "$cur"* ]] && COMPREPLY+=("${candidate#"$prefix"}")
    done
}

_tpkit_complete()
{
    local _tpkit_words
    _tpkit_join_words
    # Not "words": zsh's completion has its own (zsh runs this through bashcompinit).
    local -a args=("${_tpkit_words[@]}")
    local tool=${args[0]##*/}
    if [[ $tool == tpkit ]]; then
        if ((${#args[@]} == 2)); then
            _tpkit_reply "${args[1]}" < <(printf '%s\n' $_tpkit_tools)
            return
        fi
        args=("${args[@]:1}")
        tool=${args[0]}
    fi
    [[ -n ${_tpkit_opts[$tool]:-} ]] || return
    local cur=${args[-1]} prev= value_opts=" ${_tpkit_value_opts[$tool]} "
    ((${#args[@]} > 1)) && prev=${args[-2]}
    # The positionals before the cursor: the events named (the first one's fields are those
    # completed; tplat's --match pairs the first two).
    local i word positionals=() skip=0
    for ((i = 1; i < ${#args[@]} - 1; i++)); do
        word=${args[i]}
        if ((skip)); then
            skip=0
        elif [[ $word == -* ]]; then
            [[ $word != *=* && $value_opts == *" $word "* ]] && skip=1
        else
            positionals+=("$word")
        fi
    done
    local event=${positionals[0]:-}

    # --name=VALUE: the value of --name
    local given=
    if [[ $cur == --*=* && $value_opts == *" ${cur%%=*} "* ]]; then
        prev=${cur%%=*} given=$prev=
        cur=${cur#*=}
    fi
    if [[ $value_opts == *" $prev "* ]]; then
        local -a what=(${_tpkit_values[$tool:$prev]:-})
        local done_values=
        # @list: VALUE,VALUE...: after the last comma
        [[ ${what[0]:-} == @list && $cur == *,* ]] && done_values=${cur%,*},
        _tpkit_reply "$given$cur" < <(
            for word in "${what[@]}"; do
                case $word in
                @list) ;;
                @disk) _tpkit_disks ;;
                @file) compgen -f -- "$cur" ;;
                @fields) _tpkit_fields "$event" ;;
                @match)
                    # FIELD of both, or START_FIELD==END_FIELD
                    if [[ $cur == *==* ]]; then
                        _tpkit_fields "${positionals[1]:-}" | sed "s/^/${cur%%==*}==/"
                    else
                        _tpkit_fields "$event"
                    fi
                    ;;
                *) printf '%s\n' "$word" ;;
                esac
            done | sed "s/^/$given$done_values/")
        [[ " ${what[*]} " == *" @file "* ]] && compopt -o filenames 2>/dev/null
        return
    fi
    if [[ $cur == -* ]]; then
        _tpkit_reply "$cur" < <(printf '%s\n' ${_tpkit_opts[$tool]})
        return
    fi
    case $tool in
    tplist | tpsnoop | tpcount) _tpkit_reply "$cur" < <(_tpkit_events) ;;
    tphist)
        case ${#positionals[@]} in
        0) _tpkit_reply "$cur" < <(_tpkit_events) ;;
        1) _tpkit_reply "$cur" < <(_tpkit_fields "$event") ;;
        esac
        ;;
    tplat) ((${#positionals[@]} < 2)) && _tpkit_reply "$cur" < <(_tpkit_events) ;;
    esac
}

complete -F _tpkit_complete $_tpkit_commands
