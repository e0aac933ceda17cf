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
