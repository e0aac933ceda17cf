#!/usr/bin/env node
// An MCP client (the SDK's, as an agent's host uses it) against a containerized hands, for check.sh:
//
//   node tools/container/mcp-client.mjs stdio PROGRAM [ARGS...]   e.g. stdio podman run -i --rm IMAGE
//   node tools/container/mcp-client.mjs http URL [LINGER_MS]      e.g. http http://127.0.0.1:8765/mcp 2000
//
// Initializes, lists the tools, and calls shell_run with a line that tries to write outside the root
// and the session's TMPDIR (/tmp). Over HTTP it also leaves orphans, as a model's commands do (a
// shell_run that starts `setsid` and `nohup` children and returns at once, a background shell
// stopped with shell_stop), keeps the session LINGER_MS longer (default 0), as a client between
// calls does, then ends it (DELETE). Prints one JSON line: the server's name and
// version, the tool count, and the command's cwd, stdout, stderr and note, or the error's code and
// message when hands refused the call (sandbox_unavailable under a profile that refuses Landlock).
// Exits 0 when the call returned a result, 1 otherwise.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const LINE = 'id -un; touch /tmp/outside-the-root && echo wrote-outside'

const [kind, ...rest] = process.argv.slice(2)
let transport
let lingerMs = 0
if (kind === 'stdio' && rest.length > 0) {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit', env: { PATH: process.env.PATH ?? '' } })
} else if (kind === 'http' && (rest.length === 1 || rest.length === 2)) {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]))
  lingerMs = Number(rest[1] ?? 0)
} else {
  process.stderr.write('usage: mcp-client.mjs stdio PROGRAM [ARGS...] | http URL [LINGER_MS]\n')
  process.exit(2)
}

const client = new Client({ name: 'hands-container-check', version: '0.0.0' })
const started = performance.now()
try {
  await client.connect(transport)
  const server = client.getServerVersion()
  const { tools } = await client.listTools()
  const result = await client.callTool({ name: 'shell_run', arguments: { commands: [LINE] } })
  const run = result.structuredContent
  const command = run?.commands?.[0]
  const error = result._meta?.['hands/error']
  const report = {
    server: `${server?.name} ${server?.version}`,
    tools: tools.length,
    cwd: run?.cwd,
    stdout: command?.stdout,
    stderr: command?.stderr,
    note: command?.note ?? null,
    is_error: result.isError === true,
    ...(error === undefined ? {} : { error: error.code, message: error.message }),
    ms: Math.round(performance.now() - started),
  }
  if (transport instanceof StreamableHTTPClientTransport) {
    // Children that outlive the line that started them, and a background shell's tree stopped whole.
    const orphans = await client.callTool({
      name: 'shell_run',
      arguments: { commands: ['setsid sleep 1 & nohup sleep 1 >/dev/null 2>&1 & echo started'] },
    })
    const background = await client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 30 & sleep 30'] } })
    const id = background.structuredContent?.id
    const stopped = id === undefined ? null : await client.callTool({ name: 'shell_stop', arguments: { id } })
    report.orphans = {
      run: orphans.structuredContent?.commands?.[0]?.stdout ?? orphans.content?.[0]?.text,
      background: id ?? background.content?.[0]?.text,
      stopped: stopped === null ? null : stopped.isError !== true,
    }
  }
  process.stdout.write(`${JSON.stringify(report)}\n`)
  process.exitCode = command === undefined ? 1 : 0
  if (lingerMs > 0) await new Promise((resolve) => setTimeout(resolve, lingerMs))
} catch (err) {
  process.stderr.write(`mcp-client: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
} finally {
  // Over HTTP the session ends now (a DELETE), not at the server's idle expiry.
  if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {})
  await client.close()
}
