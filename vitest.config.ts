import { defineConfig } from "vitest/config"

// Workspace packages resolve to their TypeScript sources in tests (the `@mcp-handles/source`
// export condition), so a test never runs against a stale `dist`.
export default defineConfig({
  resolve: { conditions: ["@mcp-handles/source", "module", "node", "import", "default"] },
  ssr: { resolve: { conditions: ["@mcp-handles/source", "node", "default"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Kills the process groups a test spawned when it ends (scripts/testing/process-groups.mjs).
    setupFiles: ["scripts/testing/vitest.setup.mjs"],
    // CI asks for a machine-readable summary too, without changing the README's test command.
    ...(process.env.VITEST_JSON_REPORT
      ? { reporters: ["default", "json"], outputFile: { json: process.env.VITEST_JSON_REPORT } }
      : {}),
  },
})
