# `find_package(maskprior)`: installs every layer library, its headers under
# include/maskprior/<layer>/, and maskpriorTargets.cmake with maskprior::<layer> targets
# (maskprior::compiler, maskprior::validate, ... and maskprior::runtime when built with LibTorch).
include(CMakePackageConfigHelpers)

install(TARGETS ${MASKPRIOR_EXPORTED_TARGETS} EXPORT maskpriorTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/maskprior)
install(EXPORT maskpriorTargets NAMESPACE maskprior::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/maskprior)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/maskpriorConfig.cmake.in
  ${CMAKE_BINARY_DIR}/maskpriorConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/maskprior)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/maskpriorConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/maskpriorConfig.cmake
  ${CMAKE_BINARY_DIR}/maskpriorConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/maskprior)
