# bash completion of gpumemtrace: its subcommands, then the options the subcommand's own
# --help lists (asked at completion time, so they match the installed CLI), else file names.
_gpumemtrace() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --help 2>/dev/null |
            sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\) .*/\1/p') --help --version" -- "$cur"))
        return
    fi
    # After `record ... --`, the recorded command's own words.
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -- ]] && { COMPREPLY=($(compgen -f -- "$cur")); return; }
    done
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${COMP_WORDS[1]}" --help 2>/dev/null |
            grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _gpumemtrace gpumemtrace
