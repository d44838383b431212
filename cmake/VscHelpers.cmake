# vsc_add_library(NAME name SOURCES ... DEPS ...): one static library per src/ directory.
function(vsc_add_library)
  cmake_parse_arguments(A "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_library(${A_NAME} STATIC ${A_SOURCES})
  target_include_directories(${A_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${A_NAME} PUBLIC ${A_DEPS})
endfunction()

# vsc_add_test(NAME name SOURCES ... DEPS ... [LABELS ...] [TIMEOUT s] [BUILD_ONLY]): a GoogleTest
# binary registered with ctest (one ctest entry per binary; gtest prints the cases); BUILD_ONLY
# builds it without registering it (a benchmark on a test fixture).
function(vsc_add_test)
  cmake_parse_arguments(A "BUILD_ONLY" "NAME;TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  # A test's own sources need no -O2 (the libraries it tests keep it): -O1 compiles them faster.
  target_compile_options(${A_NAME} PRIVATE $<$<CONFIG:RelWithDebInfo>:-O1>)
  if(A_BUILD_ONLY)  # a gtest-based benchmark: built with the tests so it cannot rot, never run by ctest
    return()
  endif()
  add_test(NAME ${A_NAME} COMMAND ${A_NAME})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  set_tests_properties(${A_NAME} PROPERTIES TIMEOUT ${A_TIMEOUT})
  if(NOT A_LABELS)
    set(A_LABELS ${VSC_TEST_LABEL})
  endif()
  if(A_LABELS)
    set_tests_properties(${A_NAME} PROPERTIES LABELS "${A_LABELS}")
  endif()
endfunction()

# vsc_add_fuzzer(NAME name SOURCES ... DEPS ...): a libFuzzer target (clang, -fsanitize=fuzzer).
function(vsc_add_fuzzer)
  cmake_parse_arguments(A "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS})
  target_link_options(${A_NAME} PRIVATE -fsanitize=fuzzer,address,undefined)
endfunction()
