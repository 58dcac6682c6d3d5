# Tests of runtime: the masked Transformer, attention, autocast, initialisations, metrics.
maskprior_test(runtime_test SOURCES runtime_test.cpp LIBS maskprior_runtime maskprior_core fmt::fmt)
# The model at sequence lengths below its longest, priors per size, positions that extrapolate.
maskprior_test(model_sizes_test SOURCES model_sizes_test.cpp
  LIBS maskprior_runtime maskprior_core fmt::fmt)
# Tests of train: the config table, presets, training, resume, signals; `maskc train` (train_test
# runs the built maskc through MASKC_PATH).
maskprior_test(train_test SOURCES train_test.cpp
  LIBS maskprior_train maskprior_compiler maskprior_io maskprior_tasks fmt::fmt)
add_dependencies(train_test maskc)
# The loop's collaborators alone: batch order, session clock, evaluation history, checkpointer.
maskprior_test(run_parts_test SOURCES run_parts_test.cpp
  LIBS maskprior_train maskprior_io maskprior_core nlohmann_json::nlohmann_json)

# `maskc train` end to end: exit codes 0 / 1 (input error) / 2 (usage error) / 130 and 143
# (stopped by --stop-after or SIGINT, by SIGTERM) and the run folder. Each case is a function of
# tests/cli/train_cli.sh; CMake only registers them.
foreach(_case unknown_init_is_usage_error bad_preset_is_usage_error unknown_task_is_usage_error
    bad_range_is_usage_error unknown_flag_or_command_says_what_was_meant mask_needs_spec
    layout_mismatch run_folder run_folder_explains_itself progress_names_its_numbers
    stop_and_resume resume_continues_the_step_log sigterm_checkpoints non_finite_is_usage_error
    run_without_checkpoint_starts_again arithmetic_orders_and_loss_rows
    resumed_threads_are_capped cli_outputs_are_checked config_file_gives_the_settings)
  add_test(NAME train_cli_${_case}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/train_cli.sh $<TARGET_FILE:maskc>
      ${PROJECT_SOURCE_DIR} ${_case})
endforeach()

# `maskc diff` and `maskc distill` end to end (tests/cli/distill_cli.sh; one test per case).
foreach(_case diff_counts_cells distill_mask_gives_back_the_spec distill_attention_every_family
    distill_refuses_bad_runs distill_refuses_non_finite_runs reproduce_distill_suite
    distill_from_any_folder)
  add_test(NAME distill_cli_${_case}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/distill_cli.sh $<TARGET_FILE:maskc>
      ${PROJECT_SOURCE_DIR} ${_case} ${Python3_EXECUTABLE})
endforeach()
