# The command line of scripts/install.sh and scripts/package.sh: a destination, made absolute
# before they cd into the checkout; --build-dir DIR (relative to the checkout); on/off flags.
#   gmt_parse_args "USAGE" DEFAULT_BUILD_DIR FLAG... -- "$@"
# sets GMT_DEST, GMT_BUILD and, for each FLAG (a name such as with-cudasim), GMT_FLAG_with_cudasim
# to 1 when --with-cudasim was given, else 0. Anything else prints USAGE and exits 2.
gmt_parse_args() {
    local usage=$1
    GMT_BUILD=$2
    shift 2
    local flags=() f
    while [[ $1 != -- ]]; do
        flags+=("$1")
        printf -v "GMT_FLAG_${1//-/_}" 0
        shift
    done
    shift
    if [[ $# -lt 1 || $1 == -* ]]; then
        echo "usage: $usage" >&2
        exit 2
    fi
    GMT_DEST=$(realpath -m "$1")
    shift
    while [[ $# -gt 0 ]]; do
        if [[ $1 == --build-dir && $# -ge 2 ]]; then
            GMT_BUILD=$2
            shift
        elif [[ $1 == --* && " ${flags[*]} " == *" ${1#--} "* ]]; then
            f=${1#--}
            printf -v "GMT_FLAG_${f//-/_}" 1
        else
            echo "usage: $usage" >&2
            exit 2
        fi
        shift
    done
}
