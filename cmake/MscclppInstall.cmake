# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT

# Installs headers, the libraries, a CMake package (find_package(mscclpp CONFIG) gives
# mscclpp::mscclpp, mscclpp::mscclpp_static, and the NCCL API as mscclpp::mscclpp_nccl and
# mscclpp::mscclpp_nccl_static), a pkg-config file (mscclpp.pc) and the NCCL home
# (MscclppNcclHome.cmake).

include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mscclpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/mscclpp/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mscclpp)

install(TARGETS mscclpp mscclpp_static EXPORT mscclppTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
include(MscclppNcclHome)
install(EXPORT mscclppTargets NAMESPACE mscclpp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mscclpp)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mscclppConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/mscclppConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mscclpp)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mscclppConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mscclppConfig.cmake ${PROJECT_BINARY_DIR}/mscclppConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mscclpp)

# The .pc file finds the prefix relative to itself, so it works wherever the tree is installed.
file(RELATIVE_PATH MSCCLPP_PC_PREFIX_FROM_PCDIR "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
# The toolkit's include directories are a list (CUDA 13 adds include/cccl): one -I each.
list(TRANSFORM CUDAToolkit_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE _cuda_include_flags)
list(JOIN _cuda_include_flags " " MSCCLPP_PC_CUDA_CFLAGS)
configure_file(${CMAKE_CURRENT_LIST_DIR}/mscclpp.pc.in ${PROJECT_BINARY_DIR}/mscclpp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mscclpp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
