# aarch64-linux-gnu.cmake - cross-build gputri for linux/arm64 on a Debian 12 amd64 host with
# Debian's cross toolchain and multiarch libraries (scripts/lib.sh CROSS_PACKAGES installs them:
# crossbuild-essential-arm64, qemu-user and libcurl4-openssl-dev:arm64, libjson-c-dev:arm64,
# libssl-dev:arm64, libmicrohttpd-dev:arm64, libyaml-dev:arm64, libcmocka-dev:arm64).
#
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   ninja -C build-arm64 && ctest --test-dir build-arm64
#
# The arm64 libraries and their .pc files live in /usr/lib/aarch64-linux-gnu (multiarch), the
# headers in /usr/include and /usr/include/aarch64-linux-gnu, where Debian's aarch64-linux-gnu-gcc
# looks: no sysroot. pkg-config reads only the arm64 .pc files. ctest runs every test program
# under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR) with `-L /`: the dynamic loader and every
# library then come from the multiarch packages (libc6:arm64 and the -dev packages' libraries in
# /lib/aarch64-linux-gnu). Not `-L /usr/aarch64-linux-gnu`: that loader is libc6-arm64-cross's
# (2.36-8cross1) while it finds libc.so.6 through /etc/ld.so.cache in the multiarch directory
# (libc6:arm64, 2.36-9+deb12uN); the two builds disagree on the loader's private data, and the
# first pthread_create loops forever walking its stack cache.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(GPUTRI_CROSS_TRIPLET aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${GPUTRI_CROSS_TRIPLET}-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE ${GPUTRI_CROSS_TRIPLET})

# pkg_check_modules: the target's .pc files only (never the host's x86_64 ones).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${GPUTRI_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# find_library / find_package(OpenSSL): the multiarch directory of the target first.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(OPENSSL_ROOT_DIR /usr)
set(OPENSSL_CRYPTO_LIBRARY /usr/lib/${GPUTRI_CROSS_TRIPLET}/libcrypto.so)
set(OPENSSL_SSL_LIBRARY /usr/lib/${GPUTRI_CROSS_TRIPLET}/libssl.so)
set(OPENSSL_INCLUDE_DIR /usr/include)

find_program(GPUTRI_QEMU_AARCH64 qemu-aarch64)
if(GPUTRI_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${GPUTRI_QEMU_AARCH64} -L /)
endif()
