export {
  API_FORMATS,
  inputSchemaOf,
  toApiTools,
  toChatCompletionsTools,
  toMcpTools,
  toMessagesTools,
  toResponsesTools,
  type ApiFormat,
  type ChatCompletionsTool,
  type McpTool,
  type MessagesTool,
  type ObjectSchema,
  type ResponsesTool,
} from './api-tools.ts'
export { TOKEN_ENCODING, modelView, textCost, toolCost } from './token-cost.ts'
