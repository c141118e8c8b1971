# Sourced by compare.sh and compare_mps.sh: checks that the reference, the benchmark binary and
# Purlin's library exist (exit 2 naming the one missing, as NAME), creates the output directory
# and makes all four paths absolute, so that LD_PRELOAD and the recorded commands do not depend
# on the directory they run from.
#
#   resolve_paths NAME     (uses and rewrites $out, $reference, $bench, $purlin_lib)
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

resolve_paths() {
  local f
  for f in "$reference" "$bench" "$purlin_lib"; do
    [ -f "$f" ] || { echo "$1: $f: no such file" >&2; exit 2; }
  done
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  bench=$(absolute "$bench")
  purlin_lib=$(absolute "$purlin_lib")
  reference=$(absolute "$reference")
}
