/** An elicitation a fake-server task sends when it needs a yes or no: `{ confirm: boolean }`. */
export const confirmForm = {
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Delete 3 files?",
    requestedSchema: {
      type: "object",
      properties: { confirm: { type: "boolean", title: "Confirm" } },
      required: ["confirm"],
    },
  },
}
