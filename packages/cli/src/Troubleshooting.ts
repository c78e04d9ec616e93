/**
 * The sections of docs/troubleshooting.md that the CLI's messages point to, one per dead end.
 * Each is written out whole: the docs' link check finds them in the sources and fails on an
 * anchor that no heading of the page has.
 *
 * @since 0.2.0
 */

/**
 * A call that may or may not have launched, and how to decide it.
 *
 * @since 0.2.0
 * @category constants
 */
export const inDoubt = "docs/troubleshooting.md#a-call-is-in-doubt"

/**
 * A `--server` name the store does not know.
 *
 * @since 0.2.0
 * @category constants
 */
export const unknownServer = "docs/troubleshooting.md#an-unknown-server-name"

/**
 * A tool the server does not have (-32602).
 *
 * @since 0.2.0
 * @category constants
 */
export const unknownTool = "docs/troubleshooting.md#a-call-fails-with--32602"
