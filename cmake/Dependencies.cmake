# Every dependency comes from a Debian package, found here once; nothing is
# downloaded. Targets defined: xxhash::xxhash, lmdb::lmdb, CLI11::CLI11, GTest, benchmark.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

if(NOT LEXPACK_LEXER_ONLY)
  pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
  add_library(xxhash::xxhash ALIAS PkgConfig::XXHASH)
  pkg_check_modules(LMDB REQUIRED IMPORTED_TARGET lmdb)
  add_library(lmdb::lmdb ALIAS PkgConfig::LMDB)
  find_package(CLI11 CONFIG REQUIRED)
  if(LEXPACK_BUILD_BENCH)
    find_package(benchmark REQUIRED)
  endif()
endif()

if(LEXPACK_BUILD_TESTS)
  if(CMAKE_CROSSCOMPILING)
    # The Debian googletest package ships its sources; build them for the target.
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
    # googletest 1.11+ defines the GTest:: aliases itself; older sources do not.
    if(NOT TARGET GTest::gtest)
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
  else()
    find_package(GTest REQUIRED)
  endif()
  include(GoogleTest)
endif()
