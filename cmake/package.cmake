include(CMakePackageConfigHelpers)
install(EXPORT isaacTargets NAMESPACE isaac:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/isaac COMPONENT runtime)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/isaacConfig.cmake.in
  ${PROJECT_BINARY_DIR}/isaacConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/isaac)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/isaacConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/isaacConfig.cmake ${PROJECT_BINARY_DIR}/isaacConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/isaac COMPONENT runtime)

set(CPACK_PACKAGE_NAME isaac)
set(CPACK_PACKAGE_VENDOR "isaac developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "JIT compiler for tensor contractions on NVIDIA GPUs")
set(CPACK_GENERATOR TXZ)
set(CPACK_ARCHIVE_THREADS 0)
# Binaries in the archive are stripped (libisaac: 33 MB -> 28 MB, test executables shrink more).
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_FILE_NAME isaac-${PROJECT_VERSION}-Linux-x86_64)
include(CPack)
