import type { Readable } from 'node:stream'
import { endingOf, signalName, type Ending } from './signals.ts'

/** The job's end as the relay reports it on its status pipe (`exit N` / `signal N`); null when the pipe ends without one. */
export function readStatus(stream: Readable): Promise<Ending | null> {
  return new Promise((resolve) => {
    let text = ''
    stream.setEncoding('latin1')
    stream.on('data', (chunk: string) => {
      text += chunk
      const m = /^(exit|signal) (\d+)\n/.exec(text)
      if (m !== null) resolve(m[1] === 'exit' ? endingOf(Number(m[2]), null) : endingOf(null, signalName(Number(m[2]))))
    })
    onceClosed(stream, () => resolve(null))
  })
}

/**
 * Call `done` once `stream` has closed or failed, at once if it already has. A socket the spawner
 * handed over starts reading as it arrives: one its writer closed without writing (an empty
 * stderr) may have closed before anyone listened (a stream holding data never ends unread).
 */
export function onceClosed(stream: Readable, done: () => void): void {
  if (stream.closed || stream.destroyed) {
    done()
    return
  }
  stream.once('close', done)
  stream.once('error', done)
}
