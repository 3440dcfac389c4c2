# The Debian packages, by CPack's DEB generator from the install rules (scripts/package.sh
# runs `cpack -G DEB`; docs/packaging.md): `gpumemtrace` (the CLI, the preload library, its
# header and CMake package, the pytest plugin, docs, the man page, bash completion) and
# `gpumemtrace-cudasim` (the simulated CUDA, the `cudasim` install component).

# The license and notices, the man page (from the CLI's --help, at build time) and completion.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/THIRD_PARTY.md
    DESTINATION ${CMAKE_INSTALL_DOCDIR})
set(GMT_MANPAGE ${CMAKE_BINARY_DIR}/man/gpumemtrace.1)
add_custom_command(OUTPUT ${GMT_MANPAGE}
    COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:gpumemtrace> -DOUT=${GMT_MANPAGE}
        -DVERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_LIST_DIR}/packaging/manpage.cmake
    DEPENDS gpumemtrace ${CMAKE_CURRENT_LIST_DIR}/packaging/manpage.cmake
    COMMENT "Man page gpumemtrace.1 from the CLI's --help")
add_custom_target(gmt_manpage ALL DEPENDS ${GMT_MANPAGE})
install(FILES ${GMT_MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/packaging/gpumemtrace.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gpumemtrace)

# cpack builds only what the packages hold (scripts/package.sh builds those targets first),
# not the whole test suite of a test build, as `install`'s default dependency on `all` would.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

set(CPACK_PACKAGE_NAME gpumemtrace)
set(CPACK_PACKAGE_VENDOR gpumemtrace)
set(CPACK_PACKAGE_CONTACT "gpumemtrace maintainers <gpumemtrace@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU memory leaks of CUDA programs: a recorder, reports, CI gates, a pytest plugin")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/gpumemtrace/gpumemtrace")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Unspecified cudasim)
set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_NAME gpumemtrace)
set(CPACK_DEBIAN_CUDASIM_PACKAGE_NAME gpumemtrace-cudasim)
set(CPACK_COMPONENT_CUDASIM_DESCRIPTION
    "A simulated CUDA (libcuda, libcudart) to run gpumemtrace's gate without a GPU")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends computed from the binaries when dpkg-shlibdeps is there (dpkg-dev).
find_program(GMT_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(GMT_DPKG_SHLIBDEPS)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
    set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libdw1")
endif()
include(CPack)
