// Run by Node 22 (verdaccio 6 needs it): start Verdaccio from the config file named in argv[2]
// on 127.0.0.1 at a free port, and print `{"port": N}` on stdout once it listens.
import { runServer } from 'verdaccio'

const server = await runServer(process.argv[2])
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
