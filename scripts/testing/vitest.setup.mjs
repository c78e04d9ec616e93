/**
 * Every test file: the child process groups a test started are killed when it ends, whether it
 * passed, failed or timed out (a timed-out test's body may still be awaiting its child).
 */
import { afterAll, afterEach, beforeEach } from "vitest"
import { killAll, testEnded, testStarted } from "./process-groups.mjs"

beforeEach(testStarted)
afterEach(testEnded)
afterAll(killAll)
