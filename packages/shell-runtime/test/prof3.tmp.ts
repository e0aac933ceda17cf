import { createRequire } from 'node:module'
import { createShellRuntime } from '../src/index.ts'
const require = createRequire(import.meta.url)
const pty = require('node-pty')
const P = `yes ${'x'.repeat(99)} | head -c ${128 * 1024 * 1024}`
const rt = createShellRuntime({ roots: ['/tmp'] })
for (let k = 0; k < 2; k++) {
  let t = performance.now()
  await new Promise((r) => { const p = pty.spawn('bash', ['-c', P], { cols: 200, rows: 50, encoding: null }); p.onData(() => {}); p.onExit(r) })
  const raw = performance.now() - t
  t = performance.now()
  const b = await rt.shell_background({ commands: [P], id: 'p' })
  while ((await rt.shell_logs({ id: 'p', n: 1 })).status === 'running') await new Promise((r) => setTimeout(r, 20))
  const ours = performance.now() - t
  console.log('raw', raw.toFixed(0), 'ours', ours.toFixed(0), 'ratio(thru)', (raw / ours).toFixed(2))
  await rt.shell_stop({ id: 'p' })
}
await rt.close()
