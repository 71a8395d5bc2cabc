# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# bash completion for tpkit's tools: their options (the tables above, generated from each
# tool's command line at build time), and for tplist, tpsnoop, tpcount and tphist the events of
# the live tracefs and the fields of the event chosen (-f, --by, tphist's field).

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

# The words up to the cursor into _tpkit_words, with the words bash split at ':' (it is in
# COMP_WORDBREAKS) joined again: "sched" ":" "sched_proc" is one event.
_tpkit_join_words()
{
    _tpkit_words=()
    local i word
    for ((i = 0; i <= COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if ((i > 1)) && [[ $COMP_WORDBREAKS == *:* ]] &&
            [[ $word == : || ${COMP_WORDS[i - 1]} == : ]]; then
            _tpkit_words[-1]+=$word
        else
            _tpkit_words+=("$word")
        fi
    done
}

# COMPREPLY from the candidates on stdin that start with $1 (stdin from a process
# substitution: a pipe would set COMPREPLY in a subshell); when bash split the word at ':', it
# replaces only what follows the last ':', so that much is cut off each candidate.
_tpkit_reply()
{
    local cur=$1 candidate prefix=
    [[ $COMP_WORDBREAKS == *:* && $cur == *:* ]] && prefix=${cur%"${cur##*:}"}
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
    # -f, --by and the positionals before the cursor: the first event named is the one whose
    # fields are completed.
    local i word event= positionals=0 skip=0
    for ((i = 1; i < ${#args[@]} - 1; i++)); do
        word=${args[i]}
        if ((skip)); then
            skip=0
        elif [[ $word == -* ]]; then
            [[ $word != *=* && $value_opts == *" $word "* ]] && skip=1
        else
            [[ -z $event ]] && event=$word
            positionals=$((positionals + 1))
        fi
    done

    if [[ $value_opts == *" $prev "* ]]; then
        case $tool:$prev in
        tpsnoop:-f | tpsnoop:--fields)
            # FIELD,FIELD...: after the last comma
            local done_fields=
            [[ $cur == *,* ]] && done_fields=${cur%,*},
            _tpkit_reply "$cur" < <(_tpkit_fields "$event" | sed "s/^/$done_fields/")
            ;;
        tpcount:--by | tphist:--by)
            _tpkit_reply "$cur" < <(printf '%s\n' comm pid tid cpu; _tpkit_fields "$event")
            ;;
        *) COMPREPLY=() ;; # a value: nothing to offer
        esac
        return
    fi
    if [[ $cur == -* ]]; then
        _tpkit_reply "$cur" < <(printf '%s\n' ${_tpkit_opts[$tool]})
        return
    fi
    case $tool in
    tplist | tpsnoop | tpcount) _tpkit_reply "$cur" < <(_tpkit_events) ;;
    tphist)
        case $positionals in
        0) _tpkit_reply "$cur" < <(_tpkit_events) ;;
        1) _tpkit_reply "$cur" < <(_tpkit_fields "$event") ;;
        esac
        ;;
    esac
}

complete -F _tpkit_complete tpkit $_tpkit_tools
