#!/usr/bin/env bash
# All GPU checks and benches of the CUDA backend in one device call (see docs/cuda.md).
# Expects stripped binaries in devbin/: pathtrack and cuda_backend (the test binary).
# Usage on the device machine, from the repository root:
#   bash scripts/device_check.sh [quick|full|goal]
# `goal`: only issue #4's step goals (cyclic-14, 100 Euler–Newton steps, p = 1000 ≤ 10 ms and
# p = 10⁶ ≥ 60 M path-steps/s), three rounds, about a minute: what an H100 run needs.
set -u
MODE=${1:-full}
OUTD=${OUT:-/tmp/out}; mkdir -p "$OUTD"
B=./devbin/pathtrack
echo "== device"; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader; date -u
if [ "$MODE" = goal ]; then
  for r in 1 2 3; do
    timeout 120 $B bench step --system cyclic14 --p 1000,1000000 --eval generated 2>&1 | grep -E "^cyclic14 |^# |rror"
  done
  exit 0
fi
echo "== tests"
timeout 300 ./devbin/cuda_backend --nocapture --test-threads=1 2>&1 | tee "$OUTD/tests.log" | grep -E "^test |CUDA device|largest|katsura|cyclic|noon|eco|chandra|panicked|skipped|result" 
echo "== cli"
$B solve systems/katsura8.yaml --backend cuda --json -q; echo "rc=$?"
$B solve systems/katsura8.yaml --backend cuda --device 7 --json -q; echo "rc(--device 7)=$?"
echo "== bench step"
if [ "$MODE" = quick ]; then P=10,1000,100000; else P=10,50,250,500,1000,10000,100000,1000000; fi
EVAL=${EVAL:-generated,cublas,fused}
timeout 400 $B bench step --system cyclic14,chandra24 --p $P --eval $EVAL 2>&1 | tee "$OUTD/bench_step.txt"
if [ "$MODE" = full ]; then
  echo "== full solves (gpu vs cpu, 16 cores)"
  for s in katsura10 katsura12 chandra12 katsura14; do
    for be in cuda cpu; do
      timeout 100 $B solve systems/$s.yaml --backend $be --json -q | tee -a "$OUTD/solves.jsonl"
    done
  done
fi
echo "== summary"; cat "$OUTD/bench_step.txt"
