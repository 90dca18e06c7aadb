#!/usr/bin/env bash
# Build the TypeScript client into dist/, installing its dev dependencies (npm ci) first when
# they are missing or the lock file changed. Needs Node 20+ and npm.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stamp="node_modules/.workbench-lock"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "== typescript client: installing dev dependencies (npm ci)" >&2
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    echo "$want" > "$stamp"
fi
rm -rf dist
node_modules/.bin/tsc -p tsconfig.json
