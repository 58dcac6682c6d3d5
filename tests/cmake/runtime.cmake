# Tests of runtime: the masked Transformer, initialisations, training, resume; `maskc train`.
maskprior_test(runtime_test SOURCES runtime_test.cpp
  LIBS maskprior_train maskprior_compiler maskprior_io fmt::fmt)

# `maskc train` end to end: exit codes 0 / 1 (input error) / 2 (usage error) and the run folder.
set(_train_small "--n 6 --dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16 --epochs 2 \
--batch-size 16 --threads 1 --device cpu -q")
set(_parity2 ${PROJECT_SOURCE_DIR}/specs/gotu/parity2.mask)
add_test(NAME train_cli_unknown_init_is_usage_error COMMAND sh -c
  "$<TARGET_FILE:maskc> train --task parity2 --init maskk; test $? -eq 2")
add_test(NAME train_cli_bad_preset_is_usage_error COMMAND sh -c
  "$<TARGET_FILE:maskc> train --task parity2 --preset fast; test $? -eq 2")
add_test(NAME train_cli_unknown_task_is_input_error COMMAND sh -c
  "$<TARGET_FILE:maskc> train --task parity9 -q; test $? -eq 1")
add_test(NAME train_cli_mask_needs_spec COMMAND sh -c
  "$<TARGET_FILE:maskc> train --task parity2 --init mask -q 2>&1 | grep -q 'needs a spec'")
add_test(NAME train_cli_layout_mismatch COMMAND sh -c
  "$<TARGET_FILE:maskc> train --task parity2 --spec ${_parity2} -D n=7 --init mask ${_train_small} 2>&1 | grep -q 'expects `cls, x\\[6\\]`'")
add_test(NAME train_cli_run_folder COMMAND sh -c
  "d=$(mktemp -d) && $<TARGET_FILE:maskc> train --task parity2 --spec ${_parity2} --init mask ${_train_small} --out $d/run && test -f $d/run/summary.json && test -f $d/run/mask.safetensors && rm -rf $d")
add_test(NAME train_cli_stop_and_resume COMMAND sh -c
  "d=$(mktemp -d) && { $<TARGET_FILE:maskc> train --task parity2 --spec ${_parity2} --init mask ${_train_small} --stop-after 3 --out $d/run; test $? -eq 130; } && test ! -f $d/run/summary.json && $<TARGET_FILE:maskc> train --resume $d/run -q && test -f $d/run/summary.json && rm -rf $d")
