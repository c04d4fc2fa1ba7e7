# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT

# The install's NCCL home, <prefix>/<libdir>/mscclpp_nccl: the layout NCCL's own consumers look for
# (nccl-tests' `make NCCL_HOME=<home>`, `-I<home>/include -L<home>/lib -lnccl`), holding
#   include/nccl.h, include/nccl_device.h   our headers (nccl_device.h declares names only)
#   lib/libnccl.so, lib/libnccl.so.2         links to ../../libmscclpp_nccl.so
# It is a directory of its own, so it shadows no other NCCL: a program runs ours when its RUNPATH (or
# LD_LIBRARY_PATH) names <home>/lib. Programs link libnccl.so.2 (the soname of libmscclpp_nccl.so)
# however they link us, so that is where the dynamic linker must find ours.

# A Python wheel (scikit-build-core) has no NCCL home: a wheel cannot hold links, so each would be
# another copy of the library; the wheel's libmscclpp_nccl.so serves LD_PRELOAD as it is.
if(SKBUILD)
  return()
endif()

set(MSCCLPP_NCCL_HOME ${CMAKE_INSTALL_LIBDIR}/mscclpp_nccl)

install(FILES ${PROJECT_SOURCE_DIR}/include/mscclpp/nccl.h ${PROJECT_SOURCE_DIR}/include/mscclpp/nccl_device.h
        DESTINATION ${MSCCLPP_NCCL_HOME}/include)
install(CODE "
  set(home \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${MSCCLPP_NCCL_HOME}/lib\")
  file(MAKE_DIRECTORY \"\${home}\")
  foreach(name libnccl.so libnccl.so.2)
    message(STATUS \"Installing: \${home}/\${name} -> ../../libmscclpp_nccl.so\")
    file(CREATE_LINK ../../libmscclpp_nccl.so \"\${home}/\${name}\" SYMBOLIC)
  endforeach()")

# Consumers of the exported target mscclpp::mscclpp_nccl record libnccl.so.2 too: the RUNPATH entry
# makes them run ours wherever the installed tree is moved ($<INSTALL_PREFIX> becomes the package's
# prefix as found). In the build tree the link beside the library does that job.
target_link_options(mscclpp_nccl INTERFACE
                    "$<INSTALL_INTERFACE:LINKER:-rpath,$<INSTALL_PREFIX>/${MSCCLPP_NCCL_HOME}/lib>")
