#!/usr/bin/env bash
# Official MCP conformance check of the fake server (@mcp-handles/fake-server).
#
# Builds the package, starts `fake-mcp-server --profile conformance` on a free loopback port, runs
# every server scenario of @modelcontextprotocol/conformance that applies to a 2026-07-28
# tools-only Tasks server (all of them except those conformance-baseline.json lists under
# notApplicable, each with its reason; dated scenarios at --spec-version 2026-07-28, extension
# ones as they are), and compares the failed checks with the baseline's expectedFailures. Exits
# non-zero on any unexpected failure, a stale baseline entry, or a suite scenario the baseline
# neither runs nor excludes. The suite needs Node >= 22; on older Node it is run through
# `npx -p node@22`. About a minute and a half on two cores.
#
# Environment: CONFORMANCE_VERSION (default 0.2.0-alpha.12), CONFORMANCE_CONCURRENCY (default 4),
# CONFORMANCE_KEEP_RESULTS=1 keeps the per-scenario results directory.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc -b packages/fake-server/tsconfig.src.json
exec node scripts/conformance-check.mjs "$@"
