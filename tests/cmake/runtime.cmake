# Tests of runtime: the masked Transformer, initialisations, the config table, training, resume;
# `maskc train` (runtime_test runs the built maskc through MASKC_PATH).
maskprior_test(runtime_test SOURCES runtime_test.cpp
  LIBS maskprior_train maskprior_compiler maskprior_io maskprior_tasks fmt::fmt)
add_dependencies(runtime_test maskc)

# `maskc train` end to end: exit codes 0 / 1 (input error) / 2 (usage error) / 130 and 143
# (stopped by --stop-after or SIGINT, by SIGTERM) and the run folder.
set(_train_small "--n 6 --dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16 --epochs 2 \
--batch-size 16 --threads 1 --device cpu -q")
set(_train_long "--n 6 --dim 16 --depth 1 --heads 1 --head-dim 8 --mlp 16 --epochs 100000 \
--batch-size 16 --threads 1 --device cpu -q")
set(_parity2 ${PROJECT_SOURCE_DIR}/specs/gotu/parity2.mask)
set(_maskc $<TARGET_FILE:maskc>)
add_test(NAME train_cli_unknown_init_is_usage_error COMMAND sh -c
  "${_maskc} train --task parity2 --init maskk; test $? -eq 2")
add_test(NAME train_cli_bad_preset_is_usage_error COMMAND sh -c
  "${_maskc} train --task parity2 --preset fast; test $? -eq 2")
add_test(NAME train_cli_unknown_task_is_input_error COMMAND sh -c
  "${_maskc} train --task parity9 -q; test $? -eq 1")
add_test(NAME train_cli_bad_range_is_input_error COMMAND sh -c
  "${_maskc} train --task parity2 --batch-size 0 -q 2>&1 | grep -q 'batch_size must be positive'")
add_test(NAME train_cli_mask_needs_spec COMMAND sh -c
  "${_maskc} train --task parity2 --init mask -q 2>&1 | grep -q 'needs a spec'")
add_test(NAME train_cli_layout_mismatch COMMAND sh -c
  "${_maskc} train --task parity2 --spec ${_parity2} -D n=7 --init mask ${_train_small} 2>&1 | grep -q 'expects `cls, x\\[6\\]`'")
add_test(NAME train_cli_run_folder COMMAND sh -c
  "d=$(mktemp -d) && ${_maskc} train --task parity2 --spec ${_parity2} --init mask ${_train_small} --out $d/run && for f in config.json init.json metrics.jsonl checkpoint.pt summary.json weights.safetensors mask.safetensors; do test -s $d/run/$f || exit 1; done && test $(wc -l < $d/run/metrics.jsonl) -eq 3 && ${_maskc} train --task parity2 ${_train_small} --out $d/run 2>&1 | grep -q 'already holds a run' && rm -rf $d")
# Stopped and resumed, the run ends with exactly the metrics of an uninterrupted one.
add_test(NAME train_cli_stop_and_resume COMMAND sh -c
  "d=$(mktemp -d) && { ${_maskc} train --task parity2 --spec ${_parity2} --init mask ${_train_small} --stop-after 3 --out $d/run; test $? -eq 130; } && test ! -f $d/run/summary.json && ${_maskc} train --resume $d/run -q && test -f $d/run/summary.json && ${_maskc} train --task parity2 --spec ${_parity2} --init mask ${_train_small} --out $d/whole && cmp $d/run/metrics.jsonl $d/whole/metrics.jsonl && rm -rf $d")
# SIGTERM (as from a job scheduler) stops cleanly with a checkpoint: exit 143, resumable.
add_test(NAME train_cli_sigterm_checkpoints COMMAND sh -c
  "d=$(mktemp -d) && { ${_maskc} train --task parity2 --spec ${_parity2} --init mask ${_train_long} --out $d/run & pid=$!; i=0; while [ ! -f $d/run/init.json ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; kill -TERM $pid; wait $pid; test $? -eq 143; } && test -f $d/run/checkpoint.pt && test ! -f $d/run/summary.json && { ${_maskc} train --resume $d/run --stop-after 1 -q; test $? -eq 130; } && rm -rf $d")
# Every floating setting must be finite: `--lr nan` is a usage error and leaves no run folder.
add_test(NAME train_cli_non_finite_is_usage_error COMMAND sh -c
  "d=$(mktemp -d) && for v in nan inf; do ${_maskc} train --task parity2 --lr $v -q --out $d/run 2>$d/err; test $? -eq 2 && grep -q 'must be a finite number' $d/err && test ! -e $d/run || exit 1; done && ${_maskc} train --task parity2 --qk-contrast nan -q; test $? -eq 2 && rm -rf $d")
# A run killed before its first checkpoint (only config.json, init.json, metrics.jsonl): --resume
# says what to do, and a new run takes the folder over instead of refusing it.
add_test(NAME train_cli_run_without_checkpoint_starts_again COMMAND sh -c
  "d=$(mktemp -d) && ${_maskc} train --task parity2 ${_train_small} --out $d/run && rm $d/run/checkpoint.pt $d/run/summary.json $d/run/weights.safetensors && test $(ls $d/run | wc -l) -eq 3 && { ${_maskc} train --resume $d/run 2>$d/err; test $? -eq 1; } && grep -q 'never reached a checkpoint.*start it again' $d/err && ${_maskc} train --task parity2 ${_train_small} --out $d/run 2>$d/err && grep -q 'holds a run that never reached a checkpoint; starting it again' $d/err && test -s $d/run/summary.json && test $(wc -l < $d/run/metrics.jsonl) -eq 3 && rm -rf $d")
