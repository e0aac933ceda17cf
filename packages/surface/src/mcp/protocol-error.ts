/** JSON-RPC's Invalid Params. */
const INVALID_PARAMS = -32602

/** A JSON-RPC error a request handler throws: the SDK answers with its `code`, `message` and `data` as they are. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError'
  readonly code: number
  readonly data: unknown

  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.code = code
    this.data = data
  }
}

/** A JSON-RPC error with `code`, `message` and optional `data`, for a request handler to throw. */
export function protocolError(code: number, message: string, data?: unknown): ProtocolError {
  return new ProtocolError(code, message, data)
}

/** Why a message is not JSON-RPC 2.0, and what it takes. */
export const NOT_JSON_RPC =
  'is not a JSON-RPC 2.0 message: it takes "jsonrpc": "2.0" with a "method" (and an "id", a string or an integer, for a request), or an "id" with a "result" or an "error" (a response)'

/** Every list hands serves fits one page: a cursor (which only a next page would carry) is refused. Returns nothing to add to the answer. */
export function onePage(request: { method: string; params?: { cursor?: string | undefined } | undefined }): Record<string, never> {
  const cursor = request.params?.cursor
  if (cursor === undefined) return {}
  throw protocolError(
    INVALID_PARAMS,
    `Invalid params for ${request.method}: unknown cursor ${JSON.stringify(cursor)}; this server answers ${request.method} on one page, with no nextCursor, so call it without a cursor`,
    { cursor },
  )
}
