#!/usr/bin/env bash
# Official MCP conformance check of the fake server (@mcp-handles/fake-server).
#
# Builds the package, starts `fake-mcp-server --profile conformance` on a free loopback port, runs
# every `tasks-*` server scenario of @modelcontextprotocol/conformance plus server-stateless,
# tools-list, tools-call-simple-text and http-header-validation, and compares the failed checks
# with conformance-baseline.json. Exits non-zero on any unexpected failure (or a stale baseline
# entry). The suite needs Node >= 22; on older Node it is run through `npx -p node@22`.
#
# Environment: CONFORMANCE_VERSION (default 0.2.0-alpha.12), CONFORMANCE_CONCURRENCY (default 4),
# CONFORMANCE_KEEP_RESULTS=1 keeps the per-scenario results directory.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc -b packages/fake-server/tsconfig.src.json
exec node scripts/conformance-check.mjs "$@"
