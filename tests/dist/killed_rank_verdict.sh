# Sourced by the killed-rank tests: killed_rank_verdict CODE ELAPSED_S LIMIT_S LOG prints why a
# job that lost rank 2 failed the test (exit 0, a hang, too slow, no message naming rank 2) and
# returns non-zero then; "PASS" and 0 otherwise.
killed_rank_verdict() {
  local code=$1 elapsed=$2 limit=$3 log=$4 fail=0
  if [ "$code" -eq 0 ]; then echo "FAIL: the job exited 0 although rank 2 was killed"; fail=1; fi
  if [ "$code" -eq 124 ] || [ "$elapsed" -ge 90 ]; then echo "FAIL: the job hung (ended by the hard timeout)"; fail=1; fi
  if [ "$elapsed" -gt "$limit" ]; then echo "FAIL: the job took ${elapsed} s (limit ${limit} s)"; fail=1; fi
  if ! grep -Eq "process rank 2 |lost rank\(s\) 2" "$log"; then
    echo "FAIL: no message names the lost rank 2"; fail=1
  fi
  [ "$fail" -eq 0 ] && echo "PASS"
  return "$fail"
}
