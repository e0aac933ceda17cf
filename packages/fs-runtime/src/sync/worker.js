// @ts-check
/**
 * A worker thread of the tree pool (tree/pool.ts): runs chunks of chunks.js work as the main thread
 * posts them and answers each with `{ id, done }` or `{ id, error }`. The abort word is shared
 * with the main thread, so a failure anywhere stops the other chunks at their next entry.
 */
import { parentPort } from 'node:worker_threads'
import { copyChunk, unlinkChunk } from './chunks.js'

const port = parentPort
if (port === null) throw new Error('worker.js runs as a worker thread of the fs-runtime pool')

port.on(
  'message',
  /** @param {{ id: number, op: 'copy' | 'unlink', chunk: any, abort: SharedArrayBuffer }} task */
  (task) => {
    const abort = new Int32Array(task.abort)
    try {
      const done = task.op === 'copy' ? copyChunk(task.chunk, abort) : unlinkChunk(task.chunk, abort)
      port.postMessage({ id: task.id, done })
    } catch (cause) {
      const e = /** @type {NodeJS.ErrnoException} */ (cause)
      port.postMessage({ id: task.id, error: { message: e.message, code: e.code, syscall: e.syscall, path: e.path } })
    }
  },
)
