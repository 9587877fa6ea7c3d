# Every dependency comes from a Debian package, found here once; nothing is
# downloaded. Targets defined: xxhash::xxhash, lmdb::lmdb, CLI11::CLI11, GTest, benchmark.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

if(NOT LEXPACK_LEXER_ONLY)
  pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
  pkg_check_modules(LMDB REQUIRED IMPORTED_TARGET lmdb)
  # The launcher starts once per compile; linked without shared libraries it
  # skips the dynamic loader altogether (cli/CMakeLists.txt). Use the static
  # archives where the packages ship them; nothing here is a shared library.
  set(_lexpack_static_deps OFF)
  if(LEXPACK_STATIC_DEPS AND NOT CMAKE_CROSSCOMPILING)
    find_library(LEXPACK_XXHASH_ARCHIVE NAMES libxxhash.a HINTS ${XXHASH_LIBRARY_DIRS})
    find_library(LEXPACK_LMDB_ARCHIVE NAMES liblmdb.a HINTS ${LMDB_LIBRARY_DIRS})
    if(LEXPACK_XXHASH_ARCHIVE AND LEXPACK_LMDB_ARCHIVE)
      set(_lexpack_static_deps ON)
    endif()
  endif()
  if(_lexpack_static_deps)
    add_library(xxhash::xxhash STATIC IMPORTED)
    set_target_properties(xxhash::xxhash PROPERTIES IMPORTED_LOCATION ${LEXPACK_XXHASH_ARCHIVE}
      INTERFACE_INCLUDE_DIRECTORIES "${XXHASH_INCLUDE_DIRS}")
    add_library(lmdb::lmdb STATIC IMPORTED)
    set_target_properties(lmdb::lmdb PROPERTIES IMPORTED_LOCATION ${LEXPACK_LMDB_ARCHIVE}
      INTERFACE_INCLUDE_DIRECTORIES "${LMDB_INCLUDE_DIRS}"
      INTERFACE_LINK_LIBRARIES Threads::Threads)
  else()
    add_library(xxhash::xxhash ALIAS PkgConfig::XXHASH)
    add_library(lmdb::lmdb ALIAS PkgConfig::LMDB)
  endif()
  set(LEXPACK_HAVE_STATIC_DEPS ${_lexpack_static_deps})
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
