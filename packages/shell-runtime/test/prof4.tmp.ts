import { createShellRuntime } from '../src/index.ts'
const P = `yes ${'x'.repeat(99)} | head -c ${128 * 1024 * 1024}`
const rt = createShellRuntime({ roots: ['/tmp'] })
const t = performance.now()
await rt.shell_background({ commands: [P], id: 'p' })
while ((await rt.shell_logs({ id: 'p', n: 1 })).status === 'running') await new Promise((r) => setTimeout(r, 20))
console.log('ours', performance.now() - t)
await rt.close()
