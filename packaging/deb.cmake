# The Debian packages (cpack -G DEB in the build directory, or scripts/package.sh): `outboard`
# (everything but CUDA) and, where the CUDA plugin or dcuda was built, `outboard-cuda`.
set(OUTBOARD_PACKAGE_MAINTAINER "Outboard maintainers <outboard@localhost>" CACHE STRING
    "The Maintainer field of the Debian packages")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME outboard)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${OUTBOARD_PACKAGE_MAINTAINER}")
# The maintainer scripts and the unit name /usr and /etc: the package installs there, with the
# install-time paths of install-files.cmake (CPACK_SET_DESTDIR keeps the prefix /usr while staging).
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)  # the prefix CPack installs with when it stages through DESTDIR
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL server)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME outboard)
# The first line of a description is the package's synopsis.
set(CPACK_DEBIAN_SERVER_DESCRIPTION "BLAS, LAPACK, FFTW and OpenCL offload of unmodified programs to other hosts
The outboard command (server, client launcher, status, benchmarks), the drop-in
BLAS, LAPACK and FFTW libraries, the OpenCL ICD, and the outboard systemd service.")
# Linked libraries (the server's FFTW and OpenCL loader among them) come from dpkg-shlibdeps; the
# drop-in libraries also load the system's libblas.so.3 and liblapack.so.3 at run time.
set(CPACK_DEBIAN_SERVER_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "adduser, libblas3 | libblas.so.3, liblapack3 | liblapack.so.3")
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS "python3-matplotlib")
set(CPACK_DEBIAN_SERVER_PACKAGE_SUGGESTS "pocl-opencl-icd")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_SOURCE_DIR}/debian/postinst;${CMAKE_CURRENT_SOURCE_DIR}/debian/prerm;${CMAKE_CURRENT_SOURCE_DIR}/debian/postrm;${CMAKE_CURRENT_SOURCE_DIR}/debian/conffiles")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

if(TARGET outboard-cuda OR TARGET dcuda)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
  set(CPACK_DEBIAN_CUDA_PACKAGE_NAME outboard-cuda)
  set(CPACK_DEBIAN_CUDA_DESCRIPTION "Outboard's CUDA backend and dcuda
liboutboard-cuda.so (cuBLAS, cuSOLVER and cuFFT for the outboard server) and
libdcuda with its headers. They need NVIDIA's CUDA runtime libraries, which are
not Debian packages: no dependency on them is declared.")
  # The CUDA toolkit's libraries are not in the dpkg database.
  set(CPACK_DEBIAN_CUDA_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS "outboard (= ${PROJECT_VERSION})")
endif()

include(CPack)
