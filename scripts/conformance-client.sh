#!/usr/bin/env bash
# Official MCP conformance check of the client (@mcp-handles/core), the other half of
# scripts/conformance.sh.
#
# Builds core and the memory store, then runs the suite's client scenarios tools_call,
# request-metadata, http-standard-headers, http-custom-headers, http-invalid-tool-headers,
# sep-2322-client-request-state and json-schema-* at --spec-version 2026-07-28 against
# scripts/conformance-client/client.mjs (a client on the public API only), and compares the
# failed checks with conformance-client-baseline.json. Exits non-zero on any unexpected failure
# (or a stale baseline entry). The suite needs Node >= 22; on older Node it is run through
# `npx -p node@22`.
#
# Environment: CONFORMANCE_VERSION (default 0.2.0-alpha.12), CONFORMANCE_CONCURRENCY (default 4),
# CONFORMANCE_KEEP_RESULTS=1 keeps the per-scenario results directory.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc -b packages/store-memory/tsconfig.src.json
exec node scripts/conformance-client/check.mjs "$@"
