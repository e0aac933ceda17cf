/** Words that run another program: the id names the program they run. */
const WRAPPERS = new Set(['env', 'exec', 'nohup', 'sudo', 'time', 'command', 'nice', 'stdbuf', 'setsid'])
/** Separators between commands on one line. */
const SEPARATORS = new Set(['&&', '||', ';', '|', '&'])

/** Split a bash line into rough words and separators (quotes kept together, good enough to find a program name). */
function words(line: string): string[] {
  const out: string[] = []
  const re = /\s*(&&|\|\||[;|&]|"(?:[^"\\]|\\.)*"|'[^']*'|(?:[^\s;|&"']|"(?:[^"\\]|\\.)*"|'[^']*')+)/gy
  let m: RegExpExecArray | null
  while ((m = re.exec(line)) !== null) out.push(m[1] as string)
  return out
}

function unquote(word: string): string {
  return word.replace(/^(['"])(.*)\1$/, '$2')
}

/**
 * The program name a shell id is derived from: the first program the line runs, past variable
 * assignments, wrappers such as `env` or `nohup`, and a leading `cd dir &&` (`npm run dev` →
 * `npm`, `FOO=1 ./node_modules/.bin/vite` → `vite`); `shell` when nothing usable is found.
 */
export function programName(line: string): string {
  const ws = words(line)
  let i = 0
  while (i < ws.length) {
    const w = ws[i] as string
    if (SEPARATORS.has(w) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || WRAPPERS.has(w) || (w.startsWith('-') && i > 0 && WRAPPERS.has(ws[i - 1] as string))) {
      i++
      continue
    }
    if (w === 'cd' || w === 'pushd' || w === 'source' || w === '.' || w === 'export') {
      // Skip the builtin and its arguments up to the next separator.
      while (i < ws.length && !SEPARATORS.has(ws[i] as string)) i++
      continue
    }
    const base = unquote(w).split('/').filter(Boolean).pop() ?? ''
    const clean = base.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '')
    if (clean !== '') return clean
    i++
  }
  return 'shell'
}

/** The first of `name`, `name-2`, `name-3`, … that `isTaken` rejects. */
export function freeId(name: string, isTaken: (id: string) => boolean): string {
  if (!isTaken(name)) return name
  for (let k = 2; ; k++) {
    const id = `${name}-${k}`
    if (!isTaken(id)) return id
  }
}
