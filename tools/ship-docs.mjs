#!/usr/bin/env node
// Run by each published package's build, in the package directory: copy into the package the
// pages its README.md links to (`docs/*.md`, from the repo's docs/), then the pages those link to,
// and so on (`../generated/*.md` from a page becomes the package's generated/), so every link in
// the packed README and in each page it ships resolves inside the package. A link that would
// leave docs/ and generated/, or names a page the repo does not have, fails the build.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, normalize, relative, resolve, sep } from 'node:path'

const REPO = resolve(import.meta.dirname, '..')
/** The folders a package may ship pages from, mirrored from the repo root. */
const SHIPPED = ['docs', 'generated']

/** Relative link targets of a Markdown text, without their `#fragment`; web and mail links are left out. */
export function relativeLinks(markdown) {
  const prose = markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '')
  const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1])
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#')).map((t) => decodeURI(t.replace(/#.*$/, '')))
}

/** Copy the closure of `packageDir`'s README links into it; returns the package-relative paths copied. */
export function shipDocs(packageDir) {
  for (const dir of SHIPPED) rmSync(join(packageDir, dir), { recursive: true, force: true })
  const copied = []
  const queue = [{ from: 'README.md', links: relativeLinks(readFileSync(join(packageDir, 'README.md'), 'utf8')) }]
  while (queue.length > 0) {
    const { from, links } = queue.shift()
    for (const link of links) {
      const path = normalize(join(dirname(from), link))
      const top = path.split(sep)[0]
      if (path.startsWith('..') || !SHIPPED.includes(top) || !path.endsWith('.md')) {
        throw new Error(
          `${from} links to ${link}: a published page may link only to Markdown pages under ${SHIPPED.join('/ or ')}/ (those ship with the package)`,
        )
      }
      if (copied.includes(path)) continue
      const source = join(REPO, path)
      if (!existsSync(source)) throw new Error(`${from} links to ${link}, but the repo has no ${relative(REPO, source)}`)
      mkdirSync(dirname(join(packageDir, path)), { recursive: true })
      copyFileSync(source, join(packageDir, path))
      copied.push(path)
      queue.push({ from: path, links: relativeLinks(readFileSync(source, 'utf8')) })
    }
  }
  return copied
}

if (process.argv[1] === import.meta.filename) {
  const copied = shipDocs(process.cwd())
  process.stdout.write(`ship-docs: ${copied.length === 0 ? 'no pages' : copied.join(', ')}\n`)
}
