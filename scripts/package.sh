#!/usr/bin/env bash
# The release: the Python wheel and the Debian package(s), written into OUT_DIR, from an
# existing build directory (--build-dir, default build-package, configured and built when it
# has no CMake cache yet). Only Debian-packaged tools (scripts/lib/deps.sh: python3-build,
# -setuptools, -wheel, patchelf, dpkg-dev); nothing from PyPI (docs/packaging.md).
#   scripts/package.sh dist
#   scripts/package.sh dist --build-dir build
# --no-install: never apt-get the tools; exit 77 when one is missing (the test suite's way,
# tests/package).
set -euo pipefail
source "$(dirname "$0")/lib/args.sh"
gmt_parse_args "$0 OUT_DIR [--build-dir DIR] [--no-install]" build-package no-install -- "$@"
out=$GMT_DEST
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
build=$(realpath -m "$GMT_BUILD")
if ((!GMT_FLAG_no_install)); then
    gmt_install_deps "${GMT_PACKAGE_TOOLS[@]}"
else
    for p in "${GMT_PACKAGE_TOOLS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || {
            echo "package.sh: $p is not installed (scripts/lib/deps.sh: GMT_PACKAGE_TOOLS)" >&2
            exit 77
        }
    done
fi
if [[ ! -f $build/CMakeCache.txt ]]; then
    gmt_install_npm analyzer/views/html # uPlot, compiled into the HTML report
    gmt_configure_and_build "$build" -DGPUMEMTRACE_BUILD_TESTS=OFF \
        -DGPUMEMTRACE_BUILD_BENCHMARKS=OFF
else
    # Only what the packages hold (a test build has much more to build).
    cmake --build "$build" -j "$(nproc)" --target gpumemtrace gpumemtrace_preload \
        gmt_manpage cudasim_cuda cudasim_cudart cudasim_cudart_static >/dev/null
fi
mkdir -p "$out"
# Debian's python (with its python3-build); not whichever python3 comes first on PATH.
python=${GMT_PACKAGE_PYTHON:-/usr/bin/python3}
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")

# --- The Debian package(s): CPack's DEB generator over the install rules (cmake/Package.cmake).
(cd "$build" && cpack -G DEB -B "$build/cpack" >/dev/null)
cp "$build"/cpack/*.deb "$out"/

# --- The wheel: a staging copy of python/ with the stripped binaries in gpumemtrace/_prefix.
stage=$build/wheel
rm -rf "$stage"
mkdir -p "$stage"
cp -r python/pyproject.toml python/setup.py python/gpumemtrace README.md LICENSE \
    THIRD_PARTY.md "$stage"/
rm -rf "$stage"/gpumemtrace/__pycache__
prefix=$stage/gpumemtrace/_prefix
cmake --install "$build" --prefix "$stage/install" --strip >/dev/null
mkdir -p "$prefix/bin" "$prefix/lib"
cp "$stage/install/bin/gpumemtrace" "$prefix/bin/"
cp "$stage/install/lib/libgpumemtrace.so" "$prefix/lib/"
# The CLI's shared libraries beyond glibc and the C++ runtime (libdw and what it needs), beside
# the preload library, found through $ORIGIN run paths. The preload library needs none.
gmt_system_lib() {
    [[ $1 =~ ^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s)[.-] ]]
}
for lib in libgpumemtrace.so; do
    while read -r name _ path _; do
        gmt_system_lib "$name" || {
            echo "package.sh: $lib needs $name; it must need only glibc and the C++ runtime" >&2
            exit 1
        }
    done < <(ldd "$prefix/lib/$lib" | grep '=>')
done
while read -r name _ path _; do
    gmt_system_lib "$name" && continue
    cp -L "$path" "$prefix/lib/$name"
    chmod 0755 "$prefix/lib/$name"
    strip --strip-unneeded "$prefix/lib/$name"
    patchelf --set-rpath '$ORIGIN' "$prefix/lib/$name"
done < <(ldd "$prefix/bin/gpumemtrace" | grep '=>')
patchelf --set-rpath '$ORIGIN/../lib' "$prefix/bin/gpumemtrace"
# The platform tag (docs/packaging.md): linux_x86_64, not manylinux_2_X. The contents are built
# on Debian 12 against its libstdc++ (GCC 12: GLIBCXX_3.4.30) and not audited against a
# manylinux policy (auditwheel is not a Debian package), so no manylinux claim is made.
platform=linux_$(uname -m)
(cd "$stage" && GPUMEMTRACE_VERSION=$version GPUMEMTRACE_WHEEL_PLATFORM=$platform \
    "$python" -m build --no-isolation --wheel --outdir "$out" . >"$stage/build.log" 2>&1) || {
    cat "$stage/build.log" >&2
    exit 1
}
rm -rf "$stage/build" "$stage"/*.egg-info
ls -l "$out"
