# tzrec_module(<name> [TORCH] [SHARDS n] DEPS ...)
#   Library tzrec_<name> from src/<name>/*.cc (excluding *_test.cc and main.cc);
#   test binary tzrec_<name>_test from src/<name>/*_test.cc, registered with CTest as <n> shards
#   (one process each, GoogleTest's own sharding) named <name>.shard<i>of<n> — not one process per
#   test, which paid libtorch's start-up for every test. Per-test results are printed by each shard
#   and written as JUnit XML to <build>/test-results/<name>.shard<i>.xml.
#   TORCH targets reuse the precompiled torch header and are compiled with OpenMP (without it
#   at::parallel_for runs serially); TZREC_UNITY_BUILD compiles each target's sources in batches
#   of TZREC_UNITY_BATCH files (the torch headers' inline code is then compiled once per batch
#   instead of once per file).
function(tzrec_module name)
  cmake_parse_arguments(M "TORCH" "SHARDS" "DEPS" ${ARGN})
  set(dir ${CMAKE_SOURCE_DIR}/src/${name})
  file(GLOB_RECURSE all_srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  file(GLOB_RECURSE test_srcs CONFIGURE_DEPENDS ${dir}/*_test.cc)
  set(lib_srcs ${all_srcs})
  if(test_srcs)
    list(REMOVE_ITEM lib_srcs ${test_srcs})
  endif()
  list(REMOVE_ITEM lib_srcs ${dir}/main.cc)
  if(NOT lib_srcs)
    set(lib_srcs ${CMAKE_SOURCE_DIR}/cmake/pch_dummy.cc)
  endif()
  add_library(tzrec_${name} STATIC ${lib_srcs})
  target_include_directories(tzrec_${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(tzrec_${name} PUBLIC ${M_DEPS})
  target_compile_options(tzrec_${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  tzrec_unity(tzrec_${name})
  if(M_TORCH)
    target_link_libraries(tzrec_${name} PUBLIC ${TORCH_LIBRARIES} OpenMP::OpenMP_CXX)
    target_precompile_headers(tzrec_${name} REUSE_FROM tzrec_pch)
    target_link_libraries(tzrec_${name} PUBLIC tzrec_blas)  # libtorch's fp32 GEMMs (src/blas)
  endif()
  if(TZREC_BUILD_TESTS AND test_srcs)
    add_executable(tzrec_${name}_test ${test_srcs})
    target_link_libraries(tzrec_${name}_test PRIVATE tzrec_${name} GTest::gtest GTest::gtest_main)
    target_compile_definitions(tzrec_${name}_test PRIVATE
        TZREC_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TZREC_BINARY_DIR="${CMAKE_BINARY_DIR}")
    tzrec_unity(tzrec_${name}_test)
    if(M_TORCH)
      target_precompile_headers(tzrec_${name}_test REUSE_FROM tzrec_pch)
    endif()
    if(NOT M_SHARDS)
      set(M_SHARDS 1)
    endif()
    math(EXPR last "${M_SHARDS} - 1")
    foreach(i RANGE ${last})
      # Named "<module>.…" so that `ctest -R <module>` selects a module's tests.
      set(test_name ${name}.shard${i}of${M_SHARDS})
      add_test(NAME ${test_name}
               COMMAND tzrec_${name}_test --gtest_output=xml:${CMAKE_BINARY_DIR}/test-results/${name}.shard${i}.xml
               WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
      set_tests_properties(${test_name} PROPERTIES
          ENVIRONMENT "GTEST_TOTAL_SHARDS=${M_SHARDS};GTEST_SHARD_INDEX=${i}"
          LABELS unit TIMEOUT 1200)
    endforeach()
  endif()
endfunction()

# Unity (jumbo) compilation of one target, when TZREC_UNITY_BUILD is on.
function(tzrec_unity target)
  if(TZREC_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${TZREC_UNITY_BATCH})
  endif()
endfunction()
