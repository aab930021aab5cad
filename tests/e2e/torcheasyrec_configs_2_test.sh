#!/usr/bin/env bash
# TorchEasyRec's published configs named mu* [n-z]* (tests/e2e/lib/torcheasyrec_configs.sh; the other
# half: torcheasyrec_configs_1_test.sh).
set -euo pipefail
TZREC=$1
ROOT=$2
CONFIG_GLOBS='mu* [n-z]*'
source "$ROOT/tests/e2e/lib/torcheasyrec_configs.sh"
