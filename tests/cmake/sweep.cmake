# Tests of `maskc sweep` (experiments/sweep.h) and the grouping `maskc report` and the sweep's
# tables share: the grid, its folder names, checks before any run (sweep_test, no training); end
# to end (tests/cli/sweep_cli.sh, one CTest test per case: tiny parity2 and --data runs).
maskprior_test(sweep_test SOURCES sweep_test.cpp
  LIBS maskprior_experiments maskprior_train maskprior_report fmt::fmt)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(_case rows_one_per_setting resume_reuses_finished_runs array_shards_cover_every_run
    data_file_sweep bad_grid_is_usage_error dry_run_writes_nothing reproduce_dry_run_writes_nothing
    launch_splits_the_runs killed_sweep_reruns_at_once stop_after_is_interrupted_with_jobs
    grid_checked_up_front config_file_is_the_base sub_grid_extends_the_tables
    point_list_is_not_a_grid kept_cell_grows_by_seeds status_lines_while_runs_train)
  add_test(NAME sweep_cli_${_case}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/sweep_cli.sh $<TARGET_FILE:maskc>
      ${PROJECT_SOURCE_DIR} ${_case} ${Python3_EXECUTABLE})
  set_tests_properties(sweep_cli_${_case} PROPERTIES TIMEOUT 120)
endforeach()
