#!/usr/bin/env bash
# Copies what scripts/gpu-validate.sh needs from a build tree into DEST, small enough to
# carry to a GPU host that cannot build: the preload library, the CLI (stripped) with the
# libraries it needs beyond glibc and the C++ runtime (gpu-libs/), the samples, the GPU
# validation programs, the recorder's test programs, the synthetic trace writer and
# malloc loop of scripts/bench-fleet.sh and scripts/bench-analyzer.sh, and (where they are
# installed) heaptrack_print and GNU time with their libraries in tools/, the anchor and
# the timer of scripts/bench-analyzer.sh, and perf in tools/ with its own libraries in
# tools/perf-lib/, for the framework bench's profile (scripts/gpu_framework_bench.py).
#   cmake --build build --target gpu_programs && scripts/gpu-bundle.sh build .carry/build
set -euo pipefail
if [[ $# -ne 2 ]]; then
    echo "usage: $0 BUILD_DIR DEST" >&2
    exit 2
fi
build=$1
dest=$2
# copy_libs BINARY DIR: the shared libraries BINARY needs beyond glibc and the C++ runtime,
# which the GPU host has.
copy_libs() {
    mkdir -p "$2"
    ldd "$1" | awk '/=> \// {print $3}' |
        { grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' || true; } |
        xargs -r -I{} cp -L {} "$2/"
}
# Without them most of scripts/gpu-validate.sh's groups could only fail on the GPU host,
# where nothing can be built: refuse here, before anything is copied.
if ! compgen -G "$build/gpu/*" >/dev/null; then
    echo "gpu-bundle: $build/gpu holds no GPU programs; build them first:" \
        "cmake --build $build --target gpu_programs (needs nvcc)" >&2
    exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"/{lib,bin,gpu-libs,tests/recorder/programs}
cp "$build/lib/libgpumemtrace.so" "$dest/lib/"
cp "$build/bin/gpumemtrace" "$dest/bin/"
strip --strip-debug "$dest/lib/libgpumemtrace.so" "$dest/bin/gpumemtrace"
cp -r "$build/gpu" "$dest/"
[[ -d $build/samples ]] && cp -r "$build/samples" "$dest/"
# For scripts/bench-fleet.sh and scripts/bench-analyzer.sh on a many-core host: the
# synthetic trace writer, and the malloc loop that heaptrack records for the comparison.
for b in gen_trace malloc_loop; do
    if [[ -x $build/bin/bench/$b ]]; then
        mkdir -p "$dest/bin/bench"
        cp "$build/bin/bench/$b" "$dest/bin/bench/"
    fi
done
for p in runtime_calls driver_calls lifecycle exit_race context_switch; do
    cp "$build/tests/recorder/programs/$p" "$dest/tests/recorder/programs/"
done
# The CLI's own shared libraries (elfutils and its compressors); never preloaded.
copy_libs "$build/bin/gpumemtrace" "$dest/gpu-libs"
# scripts/bench-analyzer.sh's anchor and timer, which the GPU host lacks.
for t in heaptrack_print "${GNU_TIME:-/usr/bin/time}"; do
    if p=$(command -v "$t"); then
        mkdir -p "$dest/tools"
        cp -L "$p" "$dest/tools/$(basename "$t")"
        copy_libs "$p" "$dest/tools/lib"
    fi
done
# perf for the framework bench's profile row, which a GPU host may lack. Its libraries
# are found through its own RPATH, not LD_LIBRARY_PATH: the bench attaches it to the
# traced workers (perf record -p), and nothing of it may reach their environment. DT_RPATH
# (--force-rpath), unlike RUNPATH, is searched before LD_LIBRARY_PATH, so the CLI's
# gpu-libs/ on that path cannot replace perf's own.
if p=$(command -v perf) && command -v patchelf >/dev/null; then
    mkdir -p "$dest/tools"
    cp -L "$p" "$dest/tools/perf"
    copy_libs "$p" "$dest/tools/perf-lib"
    patchelf --force-rpath --set-rpath '$ORIGIN/perf-lib' "$dest/tools/perf"
    "$dest/tools/perf" --version >/dev/null
elif [[ -n $p ]]; then
    echo "gpu-bundle: perf left out: patchelf is not installed" >&2
fi
du -sh "$dest"
