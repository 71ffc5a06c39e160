# Installs the libraries, their headers and a package config so that a consumer's
# find_package(tprop CONFIG REQUIRED) and target_link_libraries(app PRIVATE tprop::tprop) work.
include(CMakePackageConfigHelpers)

set(TPROP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tprop)
set(tprop_install_targets tprop_hierarchy)
if(TARGET tprop)
  list(APPEND tprop_install_targets tprop)
endif()
install(TARGETS ${tprop_install_targets} EXPORT tpropTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The `tprop` command and the scene it loads by default (samples/cli_assets.cpp finds it
# relative to the executable).
if(TARGET tprop_cli)
  install(TARGETS tprop_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/assets/solar_system.json
          DESTINATION ${CMAKE_INSTALL_DATADIR}/tprop)
endif()
install(EXPORT tpropTargets NAMESPACE tprop:: DESTINATION ${TPROP_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tpropConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/tpropConfig.cmake
                              INSTALL_DESTINATION ${TPROP_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tpropConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tpropConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tpropConfigVersion.cmake
        DESTINATION ${TPROP_INSTALL_CMAKEDIR})
