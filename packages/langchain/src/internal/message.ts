/** The ToolMessage a durable tool or a companion returns. */
import { ToolMessage } from "@langchain/core/messages"
import * as ToolOutput from "../ToolOutput.js"

/** What the model reads of `output` (`toContent`), with the `ToolOutput` as its artifact. */
export const messageOf = (output: ToolOutput.ToolOutput, name: string, toolCallId: string): ToolMessage => {
  const { content, isError } = ToolOutput.toContent(output)
  return new ToolMessage({
    content: typeof content === "string" ? content : [...content],
    status: isError ? "error" : "success",
    tool_call_id: toolCallId,
    name,
    artifact: output,
  })
}
