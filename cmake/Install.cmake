# What `cmake --install build --prefix P` adds beyond the targets' own rules: the package
# config for find_package(gpumemtrace) and the documentation. The layout is relative
# (bin/, lib/, include/, share/), so a prefix can be moved or copied to a GPU host.

include(CMakePackageConfigHelpers)

# The public API target: the preload library with its header. Exported under the
# project's name, so consumers write gpumemtrace::gpumemtrace.
set_target_properties(gpumemtrace_preload PROPERTIES EXPORT_NAME gpumemtrace)
install(TARGETS gpumemtrace_preload EXPORT gpumemtraceTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(GMT_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpumemtrace)
install(EXPORT gpumemtraceTargets
    NAMESPACE gpumemtrace::
    DESTINATION ${GMT_CMAKE_INSTALL_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpumemtraceConfig.cmake.in
    ${CMAKE_BINARY_DIR}/cmake/gpumemtraceConfig.cmake
    INSTALL_DESTINATION ${GMT_CMAKE_INSTALL_DIR}
    PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/gpumemtraceConfigVersion.cmake
    VERSION ${PROJECT_VERSION}
    COMPATIBILITY SameMajorVersion)
install(FILES
    ${CMAKE_BINARY_DIR}/cmake/gpumemtraceConfig.cmake
    ${CMAKE_BINARY_DIR}/cmake/gpumemtraceConfigVersion.cmake
    DESTINATION ${GMT_CMAKE_INSTALL_DIR})

# Documentation: README and docs/*.md (whatever exists at configure time).
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)
file(GLOB GMT_DOC_FILES ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/*.json)
if(GMT_DOC_FILES)
    install(FILES ${GMT_DOC_FILES} DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()
