#!/usr/bin/env bash
# TorchEasyRec's published configs named [a-l]* m[a-t]* (tests/e2e/lib/torcheasyrec_configs.sh; the other
# half: torcheasyrec_configs_2_test.sh).
set -euo pipefail
TZREC=$1
ROOT=$2
CONFIG_GLOBS='[a-l]* m[a-t]*'
source "$ROOT/tests/e2e/lib/torcheasyrec_configs.sh"
