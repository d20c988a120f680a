# Sourced by the lab evidence scripts (docs/evidence/labs_*_costs.sh): one checked run across
# the grader's boundary, timed. The submission's side is the program with --dump-outputs DIR,
# the judge's the program with --check-outputs DIR (here the same program twice). Each line:
# label, side, wall user sys seconds (bash's time, TIMEFORMAT="%R %U %S"), the check records
# that passed, and the bytes a dump wrote.
ok() { grep -c '"ok":true' "$1"; }
one() {  # label dump|check dir program args...: one run, timed
  local label=$1 side=$2 dir=$3 tt bytes=0
  shift 3
  [ "$side" = dump ] && rm -rf "$dir" && mkdir -p "$dir"
  tt=$({ time timeout 200 "$@" "--$side-outputs" "$dir" > /tmp/evidence-run.out 2>&1; } 2>&1)
  [ "$side" = dump ] && bytes=$(du -sb "$dir" | cut -f1)
  echo "$label $side  $tt  $(ok /tmp/evidence-run.out)  $bytes"
  [ "$side" = check ] && rm -rf "$dir"
}
both() {  # label program args...: the dump, then its check
  local label=$1
  shift
  one "$label" dump "$D/a" "$@"
  one "$label" check "$D/a" "$@"
}
