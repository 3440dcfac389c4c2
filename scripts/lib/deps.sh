# Shared by scripts/test.sh and scripts/demo.sh: the Debian packages gpumemtrace needs and
# how to install only the missing ones.

GMT_PACKAGES=(
    build-essential cmake pkg-config
    libunwind-14-dev libspdlog-dev libfmt-dev nlohmann-json3-dev catch2 libcli11-dev
    libdw-dev libelf-dev libbenchmark-dev
    clang libclang-rt-14-dev python3
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

gmt_configure_and_build() {
    local dir=$1
    local cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$cuda_root" >/dev/null
    cmake --build "$dir" -j "$(nproc)"
}
