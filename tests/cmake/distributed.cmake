# Data-parallel training and split suites (train/distributed.h, `maskc launch`): CPU, loopback,
# tiny models, one thread per process. See docs/distributed.md.
maskprior_test(distributed_test SOURCES distributed_test.cpp LIBS maskprior_train)

find_package(Python3 REQUIRED COMPONENTS Interpreter)
# Each case is a function of tests/cli/distributed_cli.sh; CMake only registers them.
foreach(_case two_ranks_match_one_process stop_resume_and_sigterm
    dead_or_hung_rank_fails_the_others launch_forwards_exit_codes reproduce_split_matches
    reproduce_distill_split_by_seed
    rendezvous_is_private rank_zero_alone_and_bad_worlds)
  add_test(NAME dp_${_case}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/distributed_cli.sh $<TARGET_FILE:maskc>
      ${PROJECT_SOURCE_DIR} ${Python3_EXECUTABLE} ${_case})
  set_tests_properties(dp_${_case} PROPERTIES TIMEOUT 120)
endforeach()
set_tests_properties(dp_dead_or_hung_rank_fails_the_others PROPERTIES TIMEOUT 90)
