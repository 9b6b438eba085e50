#!/usr/bin/env bash
# The long model-based fault run: many generated schedules on one local pipeline, about 15-20 s each
# (200 runs take about an hour on 2 cores). A fresh seed by default, so each soak explores new
# schedules; the seed is printed, and a failure prints the seed and path that replay it:
#   HOOKLEDGER_FAULT_SEED=<seed> HOOKLEDGER_FAULT_PATH=<path> npx vitest run test/reliability/fault-schedules.test.ts
# Usage: scripts/fault-soak.sh [runs (default 200)] [seed (default: now)]
set -euo pipefail
cd "$(dirname "$0")/.."
export HOOKLEDGER_FAULT_RUNS="${1:-200}"
export HOOKLEDGER_FAULT_SEED="${2:-${HOOKLEDGER_FAULT_SEED:-$(date +%s)}}"
echo "fault soak: HOOKLEDGER_FAULT_RUNS=${HOOKLEDGER_FAULT_RUNS} HOOKLEDGER_FAULT_SEED=${HOOKLEDGER_FAULT_SEED}"
exec npx vitest run test/reliability/fault-schedules.test.ts
