#!/usr/bin/env bash
# Evidence for docs/21_hopper_gemm.md (issue 49): a branch's tma-store in the modes an
# environment variable selects, each mode in its own process beside cuBLASLt, ROUNDS rounds.
# Row: round, LABEL and the mode, then the program's row (tma-store's and cublaslt's).
#   branch diag-epilogue (the defaults): STEPWISE_DIAG_EPILOGUE 0 as on main, 1 no C written
#     at all (the mainloop alone), 2 the boxes filled in shared memory but no store issued
#     (the checks of 1 and 2 FAIL by design), at 8448 x 8192 x 8192 (whole waves) and 8192^3;
#   branch consumer-stagger: VAR=STEPWISE_STAGGER VALUES="0 1 2 3" LABEL=stagger: consumer 1
#     starts its first unit once consumer 0 has issued that many k-tiles of it (0 as on main).
# SHAPES: "M N K,M N K,..." (default "8448 8192 8192,8192 8192 8192").
# By hand: it runs a build of a branch (not for .ci/gpu-run evidence).
# usage: git checkout <branch> && meson setup build-b -Dgpu_arch=90 && ninja -C build-b
#        [VAR=... VALUES=... LABEL=... SHAPES=...] bash docs/evidence/21_branch_modes.sh build-b [ROUNDS]
set -uo pipefail
exe=${1:?usage: 21_branch_modes.sh <build_dir of the branch> [ROUNDS]}/chapters/21_hopper_gemm
var=${VAR:-STEPWISE_DIAG_EPILOGUE}
IFS=, read -ra shapes <<< "${SHAPES:-8448 8192 8192,8192 8192 8192}"
for r in $(seq 1 "${2:-2}"); do
  for shape in "${shapes[@]}"; do
    set -- $shape
    for mode in ${VALUES:-0 1 2}; do
      env "$var=$mode" timeout 60 "$exe" --m "$1" --n "$2" --k "$3" --variant tma-store |
        grep -E "^(cublaslt|tma-store) " | sed "s/^/$r ${LABEL:-mode}$mode /"
    done
  done
done
