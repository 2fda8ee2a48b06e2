# Helpers shared by every layer: the floating-point flags, one way to add a library, a test, a fuzzer.

# Flags every target that computes values must carry (SEMANTICS §13.2): no contraction of a*b+c into an
# FMA, no fast-math, SSE2 arithmetic in the element type, gradual underflow (no FTZ/DAZ is the default
# without -ffast-math).
set(EINFUZZ_FP_FLAGS -ffp-contract=off -fno-fast-math -fno-unsafe-math-optimizations)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|i.86")
  list(APPEND EINFUZZ_FP_FLAGS -msse2 -mfpmath=sse)
endif()
set(EINFUZZ_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports false -Wrestrict positives inside std::string concatenation.
  list(APPEND EINFUZZ_WARNINGS -Wno-restrict)
endif()

# einfuzz_library(NAME <name> LAYER <n> SOURCES ... DEPS ... PRIVATE_DEPS ...): one layer = one
# target + an einfuzz:: alias, with its own include root (<dir>/include), so a target sees only the
# headers of what it links. Arrows point down: core is layer 0, reference / fused / backends 1, the
# harness sub-targets 2 and up; a DEPS or PRIVATE_DEPS entry that is an einfuzz library of an equal
# or higher layer (or one not defined yet, which cannot be lower) stops the configuration.
function(einfuzz_library)
  cmake_parse_arguments(ARG "" "NAME;LAYER" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT ARG_LAYER MATCHES "^[0-9]+$")
    message(FATAL_ERROR "einfuzz_library(${ARG_NAME}): LAYER <n> is required (core 0; reference, fused, backends 1; harness 2..)")
  endif()
  foreach(dep IN LISTS ARG_DEPS ARG_PRIVATE_DEPS)
    if(dep MATCHES "^einfuzz(::|_)(.+)$")
      set(dep_name "${CMAKE_MATCH_2}")
      get_property(dep_layer GLOBAL PROPERTY EINFUZZ_LAYER_${dep_name})
      if(dep_layer STREQUAL "")
        message(FATAL_ERROR "einfuzz_library: einfuzz::${ARG_NAME} (layer ${ARG_LAYER}) depends on einfuzz::${dep_name}, "
                            "which is not an einfuzz_library defined before it; arrows point down only")
      elseif(NOT dep_layer LESS ARG_LAYER)
        message(FATAL_ERROR "einfuzz_library: upward arrow: einfuzz::${ARG_NAME} (layer ${ARG_LAYER}) depends on "
                            "einfuzz::${dep_name} (layer ${dep_layer}); a target may link only lower layers")
      endif()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY EINFUZZ_LAYER_${ARG_NAME} ${ARG_LAYER})
  add_library(einfuzz_${ARG_NAME} ${ARG_SOURCES})
  add_library(einfuzz::${ARG_NAME} ALIAS einfuzz_${ARG_NAME})
  target_include_directories(einfuzz_${ARG_NAME} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_compile_options(einfuzz_${ARG_NAME} PRIVATE ${EINFUZZ_FP_FLAGS} ${EINFUZZ_WARNINGS})
  target_link_libraries(einfuzz_${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# einfuzz_test(NAME <name> SOURCES ... DEPS ... [ENV k=v ...]): a GoogleTest/RapidCheck executable
# registered with CTest test by test.
# RapidCheck case counts in ENV ("max_success=N") are scaled by EINFUZZ_RC_SCALE percent, so the
# sanitizer build can run the same properties with fewer cases (the release run keeps full counts).
set(EINFUZZ_RC_SCALE "100" CACHE STRING "Percentage applied to RapidCheck max_success counts")
# A test executable compiles its sources in unity batches: GoogleTest's, RapidCheck's and the project's
# headers are parsed, and the templates the sources share are instantiated and emitted, once per
# batch instead of once per file (the test sources are about a third of a build's compile time). The
# default batch is the whole executable: the release tree's 42 test objects of batches of 4 took
# 363 CPU-s, its 30 of whole executables 271 (g++ 12, ninja -j2, one after the other). A test
# source therefore keeps its helpers' names distinct from its executable's other sources'.
option(EINFUZZ_UNITY_TESTS "Compile each test executable's sources in unity batches" ON)
set(EINFUZZ_UNITY_TEST_BATCH "0" CACHE STRING "Test sources per unity batch (0: a test target's sources in one)")
# The CLI and the libraries that act on a judged case (campaign, shrink, repro) are compiled the same
# way (einfuzz_unity_cli): CLI11's, nlohmann-json's and fmt's templates are most of each of their
# files' compile time. The libraries that generate, check, evaluate and judge a case (core,
# reference, fused, backends, generate, run) keep a translation unit a file.
option(EINFUZZ_UNITY_CLI "Compile the CLI and the campaign, shrink and repro libraries in unity batches" ON)
set(EINFUZZ_UNITY_CLI_BATCH "4" CACHE STRING "CLI and campaign, shrink, repro sources per unity batch")
function(einfuzz_unity_cli target)
  if(EINFUZZ_UNITY_CLI)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${EINFUZZ_UNITY_CLI_BATCH})
  endif()
endfunction()
# EINFUZZ_TEST_SHARDS: each test executable is N CTest tests, <executable>/shard-<i>-of-<N>, each
# running one GoogleTest shard (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX); a failing shard's output names
# its failing tests, and `<executable> --gtest_filter=…` reruns one. 0 registers every GoogleTest test
# as a CTest test of its own (gtest_discover_tests). A process a test cost the release suite 0.02 s
# and a second for each test that loads libtorch; under ASan + UBSan about 0.15 s (the start-up's
# relocations and the leak scan at exit), 1500 times over.
set(EINFUZZ_TEST_SHARDS "4" CACHE STRING "N: N GoogleTest shards per test executable; 0: one CTest test per GoogleTest test")
# Test code's own optimisation (EINFUZZ_TEST_FLAGS, set at the top level once the sanitizer flags are
# known): the libraries it tests keep the build's flags.
function(einfuzz_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;ENV" ${ARGN})
  if(ARG_ENV MATCHES "max_success=([0-9]+)")
    math(EXPR scaled "${CMAKE_MATCH_1} * ${EINFUZZ_RC_SCALE} / 100")
    if(scaled LESS 1)
      set(scaled 1)
    endif()
    string(REGEX REPLACE "max_success=[0-9]+" "max_success=${scaled}" ARG_ENV "${ARG_ENV}")
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_compile_options(${ARG_NAME} PRIVATE ${EINFUZZ_FP_FLAGS} ${EINFUZZ_WARNINGS} ${EINFUZZ_TEST_FLAGS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} einfuzz_test_support GTest::gtest_main)
  if(EINFUZZ_UNITY_TESTS)
    set_target_properties(${ARG_NAME} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${EINFUZZ_UNITY_TEST_BATCH})
  endif()
  if(EINFUZZ_TEST_SHARDS GREATER 0)
    foreach(shard RANGE 1 ${EINFUZZ_TEST_SHARDS})
      math(EXPR index "${shard} - 1")
      set(test ${ARG_NAME}/shard-${shard}-of-${EINFUZZ_TEST_SHARDS})
      add_test(NAME ${test} COMMAND ${ARG_NAME})
      # A shard that skips some tests still passes or fails on the others: no SKIP_REGULAR_EXPRESSION.
      set(env ${ARG_ENV} GTEST_TOTAL_SHARDS=${EINFUZZ_TEST_SHARDS} GTEST_SHARD_INDEX=${index})
      set_tests_properties(${test} PROPERTIES TIMEOUT 1500 ENVIRONMENT "${env}")
    endforeach()
  else()
    gtest_discover_tests(${ARG_NAME} PROPERTIES ENVIRONMENT "${ARG_ENV}" DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
