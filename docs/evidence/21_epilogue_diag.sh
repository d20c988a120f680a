#!/usr/bin/env bash
# Evidence for docs/21_hopper_gemm.md (issue 49): how much of step 8's remaining gap to the
# library at 8192^3 is its epilogue? Runs a build of branch `diag-epilogue` (not on main:
# step 8 `tma-store` with its epilogue as STEPWISE_DIAG_EPILOGUE says, read once by its
# launcher: 0 as on main, 1 no C written at all (the mainloop alone), 2 the boxes filled in
# shared memory but no store issued; the checks of modes 1 and 2 FAIL by design). Each mode in
# its own process beside cuBLASLt, ROUNDS rounds, at 8448 x 8192 x 8192 (whole waves) and
# 8192^3. Row: round, mode, then the program's row (tma-store's and cublaslt's).
# By hand: it runs a build of branch diag-epilogue (not for .ci/gpu-run evidence).
# usage: git checkout diag-epilogue && meson setup build-diag -Dgpu_arch=90 && ninja -C build-diag
#        bash docs/evidence/21_epilogue_diag.sh build-diag [ROUNDS]   (about 45 s a round on an H200)
set -uo pipefail
exe=${1:?usage: 21_epilogue_diag.sh <build_dir of branch diag-epilogue> [ROUNDS]}/chapters/21_hopper_gemm
for r in $(seq 1 "${2:-2}"); do
  for shape in "8448 8192 8192" "8192 8192 8192"; do
    set -- $shape
    for mode in 0 1 2; do
      STEPWISE_DIAG_EPILOGUE=$mode timeout 60 "$exe" --m "$1" --n "$2" --k "$3" --variant tma-store |
        grep -E "^(cublaslt|tma-store) " | sed "s/^/$r mode$mode /"
    done
  done
done
