import type { IncomingMessage } from 'node:http'

/** A body over the limit: nothing past the limit was kept. */
export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge'
  readonly limit: number

  constructor(limit: number) {
    super(`the request body is over ${limit} bytes`)
    this.limit = limit
  }
}

/**
 * Read a request body of at most `limit` bytes. A declared Content-Length over the limit is
 * refused before a byte is read; otherwise reading stops keeping bytes as soon as more than the
 * limit arrived. Either way the rest of the body is read and dropped (so the client can read
 * the answer before the connection closes) and the promise rejects with BodyTooLarge.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    if (Number.isFinite(declared) && declared > limit) {
      req.resume()
      reject(new BodyTooLarge(limit))
      return
    }
    let chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      chunks = []
      req.off('data', onData)
      req.off('end', onEnd)
      req.resume()
      reject(new BodyTooLarge(limit))
    }
    const onEnd = () => resolve(Buffer.concat(chunks))
    req.on('data', onData)
    req.once('end', onEnd)
    req.once('error', reject)
  })
}
