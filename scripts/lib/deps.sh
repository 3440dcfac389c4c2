# Shared by scripts/test.sh and scripts/demo.sh: the Debian packages gpumemtrace needs and
# how to install only the missing ones.

GMT_PACKAGES=(
    build-essential cmake pkg-config
    libunwind-14-dev libspdlog-dev libfmt-dev nlohmann-json3-dev catch2 libcli11-dev libutfcpp-dev
    libdw-dev libelf-dev libbenchmark-dev
    clang clang-format libclang-rt-14-dev python3 git libxml2-utils
)

gmt_install_deps() {
    local missing=()
    for p in "${GMT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    echo "gpumemtrace: installing missing packages: ${missing[*]}" >&2
    local sudo=""
    if [[ $(id -u) -ne 0 ]]; then
        sudo="sudo"
    fi
    $sudo apt-get update -qq
    # libunwind-14-dev conflicts with Debian's libunwind-dev; apt removes the latter.
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# gmt_configure_and_build BUILD_DIR [CMAKE_ARGS...]
gmt_configure_and_build() {
    local dir=$1
    local cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
    local unwind
    unwind=$(gmt_fetch_libunwind_source "$dir/deps")
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$cuda_root" \
        -DGPUMEMTRACE_LIBUNWIND_TARBALL="$unwind" "${@:2}" >/dev/null
    cmake --build "$dir" -j "$(nproc)"
}

# The preload library unwinds with the non-GNU libunwind built as a static PIC archive:
# Debian ships that library, but its static archive is not position-independent, so it
# cannot go into a shared object. Its Debian source package is fetched here (through the
# machine's own apt sources, as deb-src, without touching the system's package lists)
# and built by CMake. Prints the tarball's path; prints nothing when it cannot be had,
# in which case CMake falls back to LLVM's (slower) libunwind and says so.
gmt_fetch_libunwind_source() {
    local dest=$1
    mkdir -p "$dest"
    local have
    have=$(ls "$dest"/libunwind_*.orig.tar.gz 2>/dev/null | head -1 || true)
    if [[ -n $have ]]; then
        echo "$have"
        return 0
    fi
    local work
    work=$(mktemp -d)
    mkdir -p "$work/parts" "$work/lists/partial"
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] && sed 's/^Types: deb$/Types: deb-src/' "$f" >"$work/parts/$(basename "$f")"
    done
    if [[ -f /etc/apt/sources.list ]]; then
        grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >"$work/parts/legacy.list" || true
    fi
    local opts=(-o "Dir::Etc::SourceList=$work/parts/none.list" -o "Dir::Etc::SourceParts=$work/parts"
        -o "Dir::State::Lists=$work/lists" -o "APT::Sandbox::User=root")
    if apt-get "${opts[@]}" update -qq >/dev/null 2>&1 &&
        (cd "$dest" && apt-get "${opts[@]}" source --download-only -qq libunwind >/dev/null 2>&1); then
        ls "$dest"/libunwind_*.orig.tar.gz 2>/dev/null | head -1
    fi
    rm -rf "$work"
}
