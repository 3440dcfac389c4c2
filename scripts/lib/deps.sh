# Shared by scripts/test.sh and scripts/demo.sh: the Debian packages gpumemtrace needs and
# how to install only the missing ones.

GMT_PACKAGES=(
    build-essential cmake pkg-config
    libunwind-14-dev libspdlog-dev libfmt-dev nlohmann-json3-dev catch2 libcli11-dev libutfcpp-dev
    libdw-dev libelf-dev libbenchmark-dev
    clang clang-format libclang-rt-14-dev python3 git libxml2-utils
)
# Only for the test suite (scripts/test.sh): the browser the HTML report is tested in (not
# for scripts/install.sh: Ubuntu's `chromium` is a snap that containers cannot run); pytest,
# which the pytest plugin's test runs (users bring their own); jsonschema, which the CI
# formats' tests validate `check --format json` and `--sarif` output with.
GMT_TEST_PACKAGES=(chromium python3-pytest python3-jsonschema)
# Only for the release (scripts/package.sh, and the package tests): the wheel is built with
# Debian's python3-build, -setuptools and -wheel (never PyPI), its vendored libraries get
# $ORIGIN run paths with patchelf, and CPack's .deb its Depends from dpkg-shlibdeps
# (dpkg-dev); python3-venv installs the wheel in the tests.
GMT_PACKAGE_TOOLS=(python3-build python3-setuptools python3-wheel patchelf dpkg-dev python3-venv)

# gmt_install_deps [EXTRA_PACKAGE...]
gmt_install_deps() {
    local missing=()
    for p in "${GMT_PACKAGES[@]}" "$@"; do
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

# The npm packages, at the exact versions their package-lock.json files pin: uPlot, which
# the build compiles into the HTML report (analyzer/views/html); puppeteer-core, which drives
# Debian's chromium in the browser tests (tests/browser; it never downloads a browser);
# DuckDB's node binding, speedscope and playwright-core, which the export tests read their
# output with (tests/export); and @microsoft/jest-sarif, for the SARIF 2.1.0 schema its
# lib/schemas holds (no Debian package ships it), which the CI formats' test validates
# `check --sarif` output against (tests/cli/sarif).
# node and npm come with the machine (CI: node 20); Debian's are installed when missing.
# Fetched again only when the lock file is newer than what npm installed from it.
#   gmt_install_npm FOLDER...
gmt_install_npm() {
    if ! command -v npm >/dev/null 2>&1; then
        local sudo=""
        [[ $(id -u) -ne 0 ]] && sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
            nodejs npm >/dev/null
    fi
    local folder
    for folder in "$@"; do
        # npm writes node_modules/.package-lock.json when it installs.
        if [[ $folder/node_modules/.package-lock.json -nt $folder/package-lock.json ]]; then
            continue
        fi
        echo "gpumemtrace: npm ci in $folder" >&2
        (cd "$folder" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    done
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
