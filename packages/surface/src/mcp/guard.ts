/** Host and Origin checks of the HTTP front door (DNS rebinding, cross-site requests from web pages). */

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])
const WILDCARD = new Set(['0.0.0.0', '::'])

/** True for a host name or address that only this machine can reach. */
export function isLoopback(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  return LOOPBACK.has(bare) || /^127\.\d+\.\d+\.\d+$/.test(bare)
}

/** `host:port` as a Host header spells it (IPv6 in brackets). */
export function hostHeader(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`
}

/** True for `name:port` and `[v6]:port`; false for a bare name or a bare IPv6 address. */
function hasPort(host: string): boolean {
  if (host.startsWith('[')) return /\]:\d+$/.test(host)
  return /^[^:]+:\d+$/.test(host)
}

/**
 * The Host header values accepted, or null when any is (a non-loopback bind without
 * `--allow-host`). A loopback bind accepts its own address and the loopback names, at its port;
 * `extra` adds names (`name` means `name:PORT`; `name:port` is taken as it is).
 */
export function allowedHosts(bindHost: string, port: number, extra: readonly string[]): string[] | null {
  const added = extra.map((h) => (hasPort(h) ? h : hostHeader(h, port)).toLowerCase())
  if (!isLoopback(bindHost) && added.length === 0) return null
  const own = WILDCARD.has(bindHost) ? [] : [hostHeader(bindHost, port).toLowerCase()]
  const loopback = isLoopback(bindHost) ? ['127.0.0.1', 'localhost', '::1'].map((h) => hostHeader(h, port)) : []
  return [...new Set([...own, ...loopback, ...added])]
}

/**
 * True for a request a browser page cannot have sent on a user's behalf to a foreign server: no
 * Origin (not a browser, or same-origin navigation), an Origin on a loopback host, or one whose
 * host is an accepted Host. `null` and any other Origin are foreign.
 */
export function isAllowedOrigin(origin: string | undefined, hosts: readonly string[] | null): boolean {
  if (origin === undefined) return true
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  if (isLoopback(url.hostname)) return true
  return hosts?.includes(url.host.toLowerCase()) === true
}
