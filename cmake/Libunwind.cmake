# The unwinder of the preload library, as the target gmt_libunwind.
#
# Preferred: the non-GNU libunwind (Debian source package "libunwind", fetched by
# scripts/lib/deps.sh) built here as a static, position-independent, hidden-visibility
# archive. Its unw_backtrace caches each return address's unwind rule per thread, which
# makes a 64-frame stack cost well under a microsecond. Debian's own libunwind-dev cannot
# be used: its static archive is not PIC, and a shared libunwind would be a runtime
# dependency the GPU hosts may lack.
#
# Fallback: LLVM's libunwind (Debian package libunwind-14-dev), static and PIC but
# without such a cache: about 40x slower per frame. Configuration says which one is used.

set(GPUMEMTRACE_LIBUNWIND_TARBALL "" CACHE FILEPATH
    "libunwind_*.orig.tar.gz of the Debian source package (scripts/lib/deps.sh fetches it)")

add_library(gmt_libunwind INTERFACE)

if(GPUMEMTRACE_LIBUNWIND_TARBALL AND EXISTS "${GPUMEMTRACE_LIBUNWIND_TARBALL}")
    include(ExternalProject)
    set(_unw_prefix ${CMAKE_BINARY_DIR}/deps/libunwind)
    # The tarball is checked against the Debian source description beside it (.dsc),
    # whose checksums apt verified against the archive's signed index when it fetched them.
    get_filename_component(_unw_dir ${GPUMEMTRACE_LIBUNWIND_TARBALL} DIRECTORY)
    get_filename_component(_unw_name ${GPUMEMTRACE_LIBUNWIND_TARBALL} NAME)
    file(GLOB _unw_dsc ${_unw_dir}/libunwind_*.dsc)
    set(_unw_hash)
    if(_unw_dsc)
        list(GET _unw_dsc 0 _unw_dsc)
        file(STRINGS ${_unw_dsc} _unw_lines REGEX "^ [0-9a-f]+ [0-9]+ ${_unw_name}$")
        foreach(_line IN LISTS _unw_lines)
            string(LENGTH "${_line}" _len)
            if(_len GREATER 70)
                string(SUBSTRING "${_line}" 1 64 _sha)
                set(_unw_hash URL_HASH SHA256=${_sha})
            endif()
        endforeach()
    endif()
    ExternalProject_Add(libunwind_nongnu
        URL ${GPUMEMTRACE_LIBUNWIND_TARBALL}
        ${_unw_hash}
        PREFIX ${_unw_prefix}
        BUILD_IN_SOURCE TRUE
        CONFIGURE_COMMAND <SOURCE_DIR>/configure --quiet
            "CFLAGS=-O2 -g -fPIC -fvisibility=hidden"
            --enable-static --disable-shared --disable-minidebuginfo --disable-zlibdebuginfo
            --disable-documentation --disable-tests --disable-coredump --disable-ptrace
            --disable-setjmp --prefix=<INSTALL_DIR>
        BUILD_COMMAND make -s -C src
        INSTALL_COMMAND make -s -C src install
        BUILD_BYPRODUCTS <INSTALL_DIR>/lib/libunwind.a
        LOG_CONFIGURE TRUE LOG_BUILD TRUE LOG_INSTALL TRUE)
    ExternalProject_Get_Property(libunwind_nongnu SOURCE_DIR INSTALL_DIR)
    target_include_directories(gmt_libunwind SYSTEM INTERFACE ${SOURCE_DIR}/include)
    target_link_libraries(gmt_libunwind INTERFACE ${INSTALL_DIR}/lib/libunwind.a)
    target_compile_definitions(gmt_libunwind INTERFACE GMT_UNWIND_NONGNU=1)
    add_dependencies(gmt_libunwind libunwind_nongnu)
    message(STATUS "gpumemtrace: unwinding with libunwind built from ${GPUMEMTRACE_LIBUNWIND_TARBALL}")
else()
    find_path(LIBUNWIND_INCLUDE_DIR libunwind.h PATHS /usr/include/libunwind NO_DEFAULT_PATH)
    find_library(LIBUNWIND_STATIC NAMES libunwind.a PATHS /usr/lib/llvm-14/lib NO_DEFAULT_PATH)
    if(NOT LIBUNWIND_INCLUDE_DIR OR NOT LIBUNWIND_STATIC)
        gmt_missing("a static PIC libunwind (GPUMEMTRACE_LIBUNWIND_TARBALL, or LLVM's)"
                    "libunwind-14-dev")
    endif()
    target_include_directories(gmt_libunwind SYSTEM INTERFACE ${LIBUNWIND_INCLUDE_DIR})
    target_link_libraries(gmt_libunwind INTERFACE ${LIBUNWIND_STATIC})
    message(WARNING "gpumemtrace: GPUMEMTRACE_LIBUNWIND_TARBALL not set; unwinding with LLVM's "
                    "libunwind, which is much slower per frame. scripts/test.sh sets it up.")
endif()
