#!/usr/bin/env bash
# Round 69, call 4 (the final 0.1.51, the machine still warm from call 3): the whole test_gpu_gemm.
# The command as given to the device tool:
bash .bundle/run-on-device.sh true > /dev/null; export LD_LIBRARY_PATH=/usr/local/cuda/lib64; export ISAAC_CACHE_DIR=/tmp/c4; echo "=== test_gpu_gemm $(date -u +%T)"; timeout 420 /tmp/isaac/bin/test_gpu_gemm > $OUT/test_gpu_gemm.log 2>&1; echo "exit $? $SECONDS s"; tail -3 $OUT/test_gpu_gemm.log; grep -E "ERROR|FAILED" $OUT/test_gpu_gemm.log | head
