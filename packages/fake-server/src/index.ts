export { type Clock, type ManualClock, manualClock, systemClock } from "./clock.js"
export type {
  DurationConfig,
  ExpiryConfig,
  FakeServerConfig,
  Fault,
  FaultMatch,
  FaultPhase,
  FaultRule,
  InputRequest,
  InputRequests,
  InputStep,
  Outcome,
  OutcomeConfig,
  PollIntervalChange,
  PollIntervalConfig,
  RateLimitConfig,
  ResultShape,
  ToolAnnotations,
  ToolBehaviour,
  ToolConfig,
  WeightedOutcome,
  WrongShape,
} from "./config.js"
export type { Json, JsonObject } from "./json.js"
export { jsonFilePersistence } from "./json-file-persistence.js"
export {
  type LaunchEntry,
  Ledger,
  type LedgerSnapshot,
  type RequestEntry,
  type RestartEntry,
  type TaskEntry,
  type TaskUpdateEntry,
} from "./ledger.js"
export { memoryPersistence, type TaskPersistence, type TaskPlan, type TaskRecord } from "./persistence.js"
export { conformanceProfile } from "./profiles/conformance.js"
export {
  ConnectionDropped,
  type FakeServer,
  type FakeServerOptions,
  makeFakeServer,
  type ServeResult,
} from "./server.js"
