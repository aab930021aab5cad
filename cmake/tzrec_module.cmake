# tzrec_module(<name> [TORCH] DEPS ...)
#   Library tzrec_<name> from src/<name>/*.cc (excluding *_test.cc and main.cc);
#   test binary tzrec_<name>_test from src/<name>/*_test.cc, registered with CTest.
#   TORCH targets reuse the precompiled torch header.
function(tzrec_module name)
  cmake_parse_arguments(M "TORCH" "" "DEPS" ${ARGN})
  set(dir ${CMAKE_SOURCE_DIR}/src/${name})
  file(GLOB all_srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  file(GLOB test_srcs CONFIGURE_DEPENDS ${dir}/*_test.cc)
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
  if(M_TORCH)
    target_link_libraries(tzrec_${name} PUBLIC ${TORCH_LIBRARIES})
    target_precompile_headers(tzrec_${name} REUSE_FROM tzrec_pch)
  endif()
  if(TZREC_BUILD_TESTS AND test_srcs)
    add_executable(tzrec_${name}_test ${test_srcs})
    target_link_libraries(tzrec_${name}_test PRIVATE tzrec_${name} GTest::gtest GTest::gtest_main)
    target_compile_definitions(tzrec_${name}_test PRIVATE
        TZREC_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TZREC_BINARY_DIR="${CMAKE_BINARY_DIR}")
    if(M_TORCH)
      target_precompile_headers(tzrec_${name}_test REUSE_FROM tzrec_pch)
    endif()
    # Prefix "<module>." so that `ctest -R <module>` selects a module's tests.
    gtest_discover_tests(tzrec_${name}_test WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                         TEST_PREFIX "${name}."
                         DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
