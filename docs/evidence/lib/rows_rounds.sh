# Sourced by the same-process A/B scripts (16_scan_order.sh, 21_whole_waves.sh).
# rows_setup USAGE DEFAULT_ROUNDS "$@": build, out (made) and rounds from the script's
#   arguments <build_dir> <out_dir> [ROUNDS].
# rows_run NAME LABEL PATTERN PROGRAM ARGS...: one run of the program (60 s at most) into
#   $out/run-$r-NAME.txt, its rows that start with PATTERN (an extended regex) appended to
#   $out/rows.txt, each after "$r LABEL " (after "$r " where LABEL is empty); r: the round.
rows_setup() {
  local usage=$1 default=$2
  shift 2
  build=${1:?usage: $usage}
  out=${2:?usage: $usage}
  rounds=${3:-$default}
  mkdir -p "$out"
}
rows_run() {
  local name=$1 label=$2 pattern=$3
  shift 3
  timeout 60 "$@" > "$out/run-$r-$name.txt" 2>&1
  grep -hE "^($pattern) " "$out/run-$r-$name.txt" | sed "s/^/$r ${label:+$label }/" >> "$out/rows.txt"
}
