#!/usr/bin/env bash
# TorchEasyRec's benchmark configs (tzrec/benchmark/configs/<dataset>/<name>.config upstream, copied
# unchanged as tests/configs/torcheasyrec/benchmark/benchmark_<dataset>_<name>.config), run as the
# other published configs are (tests/e2e/lib/torcheasyrec_configs.sh).
set -euo pipefail
TZREC=$1
ROOT=$2
CONFIG_GLOBS='benchmark/*'
source "$ROOT/tests/e2e/lib/torcheasyrec_configs.sh"
