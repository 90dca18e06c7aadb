#!/usr/bin/env bash
# The TypeScript client's checks, run by scripts/test: build, the example under strict, and the
# node tests against real daemons. Installs the dev dependencies (npm ci) only when they are
# missing or the lock file changed. Without Node 20+ (or npm) it says so and skips.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

skip() { echo "== typescript client: skipped: $1" >&2; exit 0; }
command -v node >/dev/null 2>&1 || skip "node not found (install Node 20 or newer to run these tests)"
command -v npm >/dev/null 2>&1 || skip "npm not found (it comes with Node; needed for the dev dependencies)"
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 20 ] || skip "node $(node --version) is too old (the client needs Node 20 or newer)"

cd "$HERE"
echo "== typescript client: tsc" >&2
bash scripts/build.sh
node_modules/.bin/tsc -p examples/tsconfig.json
echo "== typescript client: node --test" >&2
export WORKBENCH_PYTHON="${WORKBENCH_PYTHON:-$ROOT/.venv/bin/python}"
exec node --test --test-reporter=spec --test-timeout=90000 test/*.test.mjs
