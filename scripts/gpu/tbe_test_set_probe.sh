#!/usr/bin/env bash
# run_all.sh's handle on the held-out TBE test set (pieces named *_probe run only when named):
#   scripts/gpu/run_all.sh --only tbe_test_set_probe   (or call scripts/gpu/tbe_test_set.sh directly)
exec bash "$(dirname "$0")/tbe_test_set.sh" "$@"
