/**
 * @since 0.1.0
 */
export * as Claiming from "./Claiming.js"
export * as HandleRecord from "./HandleRecord.js"
export * as HandleStore from "./HandleStore.js"
export * as HandleStoreDriver from "./HandleStoreDriver.js"
export * as HttpWire from "./HttpWire.js"
export * as Json from "./Json.js"
export * as Outcome from "./Outcome.js"
export * as Polling from "./Polling.js"
export { openTaskClient } from "./PromiseClient.js"
export * as Redaction from "./Redaction.js"
export * as ServerIdentity from "./ServerIdentity.js"
export * as SqlStore from "./SqlStore.js"
export * as TaskClient from "./TaskClient.js"
export * as Transition from "./Transition.js"
export * as TransportWire from "./TransportWire.js"
export * as Wire from "./Wire.js"
