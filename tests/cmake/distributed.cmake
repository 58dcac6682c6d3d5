# Data-parallel training and split suites (train/distributed.h, `maskc launch`): CPU, loopback,
# tiny models, one thread per process. See docs/distributed.md.
maskprior_test(distributed_test SOURCES distributed_test.cpp LIBS maskprior_train)

set(_dp_maskc $<TARGET_FILE:maskc>)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_dp_py ${Python3_EXECUTABLE})
set(_dp_spec ${PROJECT_SOURCE_DIR}/specs/gotu/parity2.mask)
set(_dp_compare ${PROJECT_SOURCE_DIR}/tests/scripts/compare_runs.py)
# batch 15: uneven shards (8 + 7 rows) and an uneven last batch of every epoch.
set(_dp_small "--task parity2 --spec ${_dp_spec} --init mask --n 6 --dim 16 --depth 1 --heads 1 \
--head-dim 8 --mlp 16 --epochs 3 --batch-size 15 --threads 1 --device cpu -q")
set(_dp_long "--task parity2 --spec ${_dp_spec} --init mask --n 6 --dim 16 --depth 1 --heads 1 \
--head-dim 8 --mlp 16 --epochs 100000 --batch-size 16 --threads 1 --device cpu -q")
# A free port on loopback for the tests that start ranks by hand.
set(_dp_port "$(${_dp_py} -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])')")
# Waits (at most 60 s) for the file $1.
set(_dp_wait "w() { i=0; while [ ! -f $1 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; }")

# 2 processes x global batch 15 end where 1 process with batch 15 ends (weights, loss, accuracy),
# and rank 1 writes no files.
add_test(NAME dp_two_ranks_match_one_process COMMAND sh -c
  "d=$(mktemp -d) && cd $d && ${_dp_maskc} train ${_dp_small} --out $d/one && ${_dp_maskc} launch --nproc 2 -- train ${_dp_small} --out $d/two && test $(ls $d | wc -l) -eq 2 && ${_dp_py} ${_dp_compare} $d/one $d/two --rtol 1e-5 && rm -rf $d")
# Stopped (--stop-after) and resumed with 2 ranks: exactly the metrics of an uninterrupted 2-rank
# run; SIGTERM to the launcher reaches every rank (exit 143, a checkpoint); SIGINT to launch's
# whole process group (Ctrl-C at a terminal) stops the run with a checkpoint (exit 130), not twice.
add_test(NAME dp_stop_resume_and_sigterm COMMAND sh -c
  "${_dp_wait}; d=$(mktemp -d) && { ${_dp_maskc} launch --nproc 2 -- train ${_dp_small} --stop-after 4 --out $d/run; test $? -eq 130; } && test ! -f $d/run/summary.json && ${_dp_maskc} launch --nproc 2 -- train --resume $d/run -q && ${_dp_maskc} launch --nproc 2 -- train ${_dp_small} --out $d/whole && cmp $d/run/metrics.jsonl $d/whole/metrics.jsonl && { ${_dp_maskc} launch --nproc 2 -- train ${_dp_long} --out $d/long & pid=$!; w $d/long/init.json; sleep 0.5; kill -TERM $pid; wait $pid; test $? -eq 143; } && test -f $d/long/checkpoint.pt && { setsid ${_dp_maskc} launch --nproc 2 -- train ${_dp_long} --out $d/int & pid=$!; w $d/int/init.json; sleep 0.5; kill -INT -$pid; wait $pid; test $? -eq 130; } && test -f $d/int/checkpoint.pt && rm -rf $d")
# A rank killed with SIGKILL: the other fails at once with a clear message (well within the
# timeout); a rank that hangs (SIGSTOP): the other fails after --dist-timeout. Rank 1 writes no
# files (its --out is never created).
add_test(NAME dp_dead_or_hung_rank_fails_the_others COMMAND sh -c
  "${_dp_wait}; d=$(mktemp -d) && export WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 && for how in KILL STOP; do export MASTER_PORT=${_dp_port}; RANK=0 ${_dp_maskc} train ${_dp_long} --dist-timeout 4 --out $d/$how 2>$d/err0 & p0=$!; RANK=1 ${_dp_maskc} train ${_dp_long} --dist-timeout 4 --out $d/rank1 & p1=$!; w $d/$how/init.json; sleep 0.5; kill -$how $p1; t0=$(date +%s); wait $p0; rc=$?; t1=$(date +%s); kill -KILL $p1; wait $p1; echo \"$how: rank 0 exit $rc after $((t1-t0)) s\"; cat $d/err0; test $rc -eq 1 && test $((t1-t0)) -le 20 && { test $how = KILL || test $((t1-t0)) -ge 3; } && grep -q 'another rank stopped or died' $d/err0 && test ! -e $d/rank1 || exit 1; done; rm -rf $d")
set_tests_properties(dp_dead_or_hung_rank_fails_the_others PROPERTIES TIMEOUT 90)
# launch passes the ranks' exit status on: input error 1, usage error 2, stopped 130; it runs
# only train and reproduce.
add_test(NAME dp_launch_forwards_exit_codes COMMAND sh -c
  "{ ${_dp_maskc} launch --nproc 2 -- train --task parity9 -q; test $? -eq 1; } && { ${_dp_maskc} launch --nproc 2 -- train --task parity2 --init maskk; test $? -eq 2; } && { ${_dp_maskc} launch --nproc 2 -- compile x.mask; test $? -eq 2; } && { ${_dp_maskc} launch --nproc 2 -- train ${_dp_small} --stop-after 1; test $? -eq 130; }")
# reproduce split over 2 ranks writes the tables of 1 process (which trains its runs in 2 forked
# children: each run is the same single-process run either way, and the test stays short).
add_test(NAME dp_reproduce_split_matches COMMAND sh -c
  "d=$(mktemp -d) && cd $d && ${_dp_maskc} reproduce demo --only parity2 --epochs 1 --jobs 2 --threads 1 --out $d/one > $d/log && ${_dp_maskc} launch --nproc 2 -- reproduce demo --only parity2 --epochs 1 --jobs 1 --threads 1 --out $d/two && cmp $d/one/results.md $d/two/results.md && rm -rf $d")
set_tests_properties(dp_two_ranks_match_one_process dp_stop_resume_and_sigterm
  dp_launch_forwards_exit_codes dp_reproduce_split_matches PROPERTIES TIMEOUT 120)
