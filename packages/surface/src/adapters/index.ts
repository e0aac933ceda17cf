export { API_FORMATS, toApiTools, type ApiFormat } from './api-tools.ts'
export { TOKEN_ENCODING, modelView, textCost, toolCost } from './token-cost.ts'
