// biome-ignore-all format: a table, one case per line
/**
 * The containment table: paths that must stay inside the allowed roots or be refused, as data.
 *
 * Sources (read and rewritten in our own form, not copied):
 * - Go's `os.Root` table (golang/go src/os/root_test.go, `rootTestCases`): symlinks in the middle
 *   and at the end, `..` after a symlink, absolute links, dangling links, symlink chains, links
 *   to the root's parent.
 * - The MCP filesystem server's path-validation tests (modelcontextprotocol/servers
 *   src/filesystem/__tests__/path-validation.test.ts): prefix siblings, traversal, NUL bytes,
 *   `%2e%2e` kept literal, long paths, symlink chains, parent-directory symlinks.
 * - hands' own: the `allowed/link -> outside` create_directory case (a proposed MCP fix followed
 *   it and created outside), dangling links out, double slashes.
 *
 * Where hands differs from Go: Go refuses any path whose resolution passes outside the root,
 * even when it comes back (`../ROOT/target`, an absolute link to inside the root). hands judges
 * where a path lands, after the kernel's own resolution, so those are inside.
 *
 * The world (see world.ts): `$BASE/ROOT` is the workspace root, `$BASE/ROOT2` a second root,
 * `$BASE/outside` the sentinel tree (`secret`, `dir/inner`, `dir/sub/deep`, `target/`),
 * `$BASE/ROOT-old/secret` and `$BASE/ROOTx/secret` prefix siblings.
 */

/** What every tool must do with the path. */
export type Expect =
  /** Following every symlink, the path lands inside the roots: tools act (per `roles`). */
  | 'inside'
  /** The final component is a symlink inside the roots leading out: tools that name the link act on it; tools that follow it refuse. */
  | 'link-out'
  /** The path leads outside the roots: every tool refuses with outside_roots. */
  | 'outside'
  /** The path is not a path (empty, NUL byte): every tool refuses with invalid_input. */
  | 'invalid'

/** A role's expected outcome: an effect, or the error code it refuses with. */
export type Outcome =
  | 'exists'
  | 'absent'
  | 'created'
  | 'already'
  | 'target-gone'
  | 'link-gone'
  | 'none'
  | 'content'
  | 'link'
  | 'dir'
  | 'outside_roots'
  | 'invalid_input'
  | 'not_found'
  | 'not_a_directory'
  | 'destination_exists'

/** The seven ways the five tools take a path. */
export type Role = 'file_exists' | 'create_directory' | 'delete' | 'copy_from' | 'copy_to' | 'move_from' | 'move_to'
export const ROLES: readonly Role[] = ['file_exists', 'create_directory', 'delete', 'copy_from', 'copy_to', 'move_from', 'move_to']

export interface ContainmentCase {
  name: string
  from: 'go os.Root' | 'mcp filesystem' | 'hands'
  /** Layout under ROOT (`d/`, `f`, `a => b`); `$ROOT`, `$OUT`, `$BASE` are substituted. */
  fs?: readonly string[]
  /** Layout under $BASE, outside the roots (links of a chain that passes outside). */
  outsideFs?: readonly string[]
  /** The path handed to the tool; `$ROOT`, `$OUT`, `$BASE` are substituted. */
  open: string
  expect: Expect
  /** Where the path lands following every symlink, relative to ROOT (`inside` only). */
  target?: string
  /** The final symlink the path names, relative to ROOT. */
  ltarget?: string
  /** False when no file is laid at `target` before the reading roles (Go's cases with no target). */
  prepare?: boolean
  /** Outcomes that differ from the defaults of `expect`. */
  roles?: Partial<Record<Role, Outcome>>
}

/** The two cases of a very long path: `levels` directories deep, inside and escaping by as many `..`. */
function deepCases(levels: number): ContainmentCase[] {
  const deep = 'a/'.repeat(levels)
  return [
    { from: 'mcp filesystem', name: `very long path inside (${levels} levels)`, open: `${deep}file`, expect: 'inside', target: `${deep}file` },
    { from: 'mcp filesystem', name: `very long path that escapes (${levels} levels)`, open: `${deep}${'../'.repeat(levels + 1)}outside/secret`, expect: 'outside' },
  ]
}

/**
 * Every case, the very long paths `deepLevels` directories deep. The table runs them 1,000 deep
 * (`CASES`). The fallback without /proc re-verifies the real path of every directory it passes at
 * each step, so a path of n levels costs it about n³/6 lookups of one component (1,000 levels took
 * 20 s a tool there): its table runs them shallower.
 */
export function casesAt(deepLevels: number): readonly ContainmentCase[] {
  return [
    // --- Go os.Root -----------------------------------------------------------------------------
    { from: 'go os.Root', name: 'plain path', open: 'target', expect: 'inside', target: 'target' },
    { from: 'go os.Root', name: 'path in directory', fs: ['a/b/c/'], open: 'a/b/c/target', expect: 'inside', target: 'a/b/c/target' },
    {
      from: 'go os.Root',
      name: 'symlink at the end, target inside',
      fs: ['link => target'],
      open: 'link',
      expect: 'inside',
      target: 'target',
      ltarget: 'link',
      roles: { create_directory: 'not_a_directory' },
    },
    { from: 'go os.Root', name: 'symlink to ../ (the root parent)', fs: ['link => ../'], open: 'link', expect: 'link-out', ltarget: 'link' },
    { from: 'go os.Root', name: 'symlink ending in slash, in the middle', fs: ['dir/', 'link => dir/'], open: 'link/target', expect: 'inside', target: 'dir/target' },
    {
      from: 'go os.Root',
      name: 'slash after a symlink to a file',
      fs: ['link => ../ROOT/target'],
      open: 'link/',
      expect: 'inside',
      target: 'target',
      roles: {
        file_exists: 'absent',
        create_directory: 'created',
        delete: 'invalid_input',
        copy_from: 'not_a_directory',
        copy_to: 'not_a_directory',
        move_from: 'invalid_input',
        move_to: 'not_a_directory',
      },
    },
    {
      from: 'go os.Root',
      name: 'slash after a symlink to a directory',
      fs: ['link => ../ROOT/target', 'target/'],
      open: 'link/',
      expect: 'inside',
      target: 'target',
      prepare: false,
      roles: {
        file_exists: 'exists',
        create_directory: 'already',
        delete: 'invalid_input',
        copy_from: 'dir',
        copy_to: 'destination_exists',
        move_from: 'invalid_input',
        move_to: 'destination_exists',
      },
    },
    { from: 'go os.Root', name: 'symlink to ../../ from a subdirectory', fs: ['dir/link => ../../'], open: 'dir/link', expect: 'link-out', ltarget: 'dir/link' },
    {
      from: 'go os.Root',
      name: 'symlink chain that stays inside',
      fs: ['link => a/b/c/target', 'a/b => e', 'a/e => ../f', 'f => g/h/i', 'g/h/i => ..', 'g/c/'],
      open: 'link',
      expect: 'inside',
      target: 'g/c/target',
      ltarget: 'link',
      roles: { create_directory: 'not_a_directory' },
    },
    { from: 'go os.Root', name: 'path with dot', fs: ['a/b/'], open: './a/./b/./target', expect: 'inside', target: 'a/b/target' },
    { from: 'go os.Root', name: 'path with dotdot', fs: ['a/b/'], open: 'a/../a/b/../../a/b/../b/target', expect: 'inside', target: 'a/b/target' },
    { from: 'go os.Root', name: 'path with dotdot slash', open: '../', expect: 'outside' },
    { from: 'go os.Root', name: 'path with dotdot dotdot slash', fs: ['a/'], open: 'a/../../', expect: 'outside' },
    { from: 'go os.Root', name: 'dotdot without a symlink', fs: ['a/'], open: 'a/../target', expect: 'inside', target: 'target' },
    { from: 'go os.Root', name: 'dotdot after a symlink goes up from the link target', fs: ['a => b/c', 'b/c/'], open: 'a/../target', expect: 'inside', target: 'b/target' },
    { from: 'go os.Root', name: 'dotdot before a symlink', fs: ['a => b/c', 'b/c/'], open: 'b/../a/target', expect: 'inside', target: 'b/c/target' },
    { from: 'go os.Root', name: 'symlink ending in dot', fs: ['a => b/.', 'b/'], open: 'a/target', expect: 'inside', target: 'b/target' },
    {
      from: 'go os.Root',
      name: 'directory does not exist (parents are made for writes)',
      open: 'a/file',
      expect: 'inside',
      target: 'a/file',
      prepare: false,
      roles: { file_exists: 'absent', delete: 'none', copy_from: 'not_found', move_from: 'not_found' },
    },
    { from: 'go os.Root', name: 'empty path', open: '', expect: 'invalid' },
    {
      from: 'go os.Root',
      name: 'symlink cycle',
      fs: ['a => a'],
      open: 'a',
      expect: 'inside',
      ltarget: 'a',
      roles: { file_exists: 'exists', create_directory: 'not_found', delete: 'link-gone', copy_from: 'not_found', copy_to: 'destination_exists', move_from: 'link', move_to: 'destination_exists' },
    },
    { from: 'go os.Root', name: 'path that leaves and re-enters the root (Go refuses; lands inside)', open: '../ROOT/target', expect: 'inside', target: 'target' },
    { from: 'go os.Root', name: 'long path that leaves and re-enters (Go refuses; lands inside)', fs: ['a/'], open: 'a/../../ROOT/target', expect: 'inside', target: 'target' },
    { from: 'go os.Root', name: 'absolute symlink to inside the root', fs: ['link => $ROOT/target'], open: 'link', expect: 'inside', target: 'target', ltarget: 'link', roles: { create_directory: 'not_a_directory' } },
    { from: 'go os.Root', name: 'relative symlink through the root parent back in', fs: ['link => ../ROOT/target'], open: 'link', expect: 'inside', target: 'target', ltarget: 'link', roles: { create_directory: 'not_a_directory' } },
    {
      from: 'go os.Root',
      name: 'symlink chain through the root parent back in',
      fs: ['link => a/b/c/target', 'a/b => e', 'a/e => ../../ROOT', 'c/'],
      open: 'link',
      expect: 'inside',
      target: 'c/target',
      ltarget: 'link',
      roles: { create_directory: 'not_a_directory' },
    },
    // Go's categories again, with links that really land outside.
    { from: 'go os.Root', name: 'symlink in the middle to outside, existing target', fs: ['link => $OUT'], open: 'link/secret', expect: 'outside' },
    { from: 'go os.Root', name: 'symlink in the middle to outside, missing target', fs: ['link => $OUT'], open: 'link/new/deeper', expect: 'outside' },
    { from: 'go os.Root', name: 'absolute symlink at the end to an outside file', fs: ['link => $OUT/secret'], open: 'link', expect: 'link-out', ltarget: 'link' },
    { from: 'go os.Root', name: 'dangling symlink at the end to outside', fs: ['link => $OUT/missing'], open: 'link', expect: 'link-out', ltarget: 'link' },
    { from: 'go os.Root', name: 'dangling symlink in the middle to outside', fs: ['link => $OUT/missing'], open: 'link/x', expect: 'outside' },
    { from: 'go os.Root', name: 'dotdot after a symlink climbs out', fs: ['a => b', 'b/'], open: 'a/../../outside/secret', expect: 'outside' },
    { from: 'go os.Root', name: 'dotdot after a symlink to the root itself', fs: ['a => .'], open: 'a/../outside/secret', expect: 'outside' },
    { from: 'go os.Root', name: 'symlink to the root parent, then down into outside', fs: ['up => ..'], open: 'up/outside/secret', expect: 'outside' },
    { from: 'go os.Root', name: 'symlink to the root parent, then back into the root', fs: ['up => ..'], open: 'up/ROOT/target', expect: 'inside', target: 'target' },
    { from: 'go os.Root', name: 'relative symlink chain to outside', fs: ['l1 => l2', 'l2 => ../outside'], open: 'l1/secret', expect: 'outside' },
    { from: 'go os.Root', name: 'symlink to the root parent itself', fs: ['up => $BASE'], open: 'up', expect: 'link-out', ltarget: 'up' },

    // --- MCP filesystem server path validation ----------------------------------------------
    { from: 'mcp filesystem', name: 'prefix sibling ROOT-old, absolute', open: '$BASE/ROOT-old/secret', expect: 'outside' },
    { from: 'mcp filesystem', name: 'prefix sibling ROOTx, relative', open: '../ROOTx/secret', expect: 'outside' },
    { from: 'mcp filesystem', name: 'prefix sibling with a trailing slash', open: '$BASE/ROOTx/', expect: 'outside' },
    { from: 'mcp filesystem', name: 'second root whose name extends the first (allowed)', open: '$BASE/ROOT2/target', expect: 'inside', target: '../ROOT2/target' },
    { from: 'mcp filesystem', name: 'traversal to /etc/passwd', open: '$ROOT/../../../../../../../../etc/passwd', expect: 'outside' },
    { from: 'mcp filesystem', name: 'traversal through valid segments', fs: ['src/'], open: 'src/../../outside/secret', expect: 'outside' },
    { from: 'mcp filesystem', name: 'traversal with a dot segment', open: './../outside', expect: 'outside' },
    { from: 'mcp filesystem', name: 'the root parent by absolute path', open: '$ROOT/..', expect: 'outside' },
    { from: 'mcp filesystem', name: 'traversal to a sibling of the same prefix', open: '$ROOT/../ROOT-old', expect: 'outside' },
    { from: 'mcp filesystem', name: 'NUL byte in the middle', open: 'a\0/../../outside', expect: 'invalid' },
    { from: 'mcp filesystem', name: 'NUL byte before an extension', open: 'test\0.txt', expect: 'invalid' },
    { from: 'mcp filesystem', name: 'NUL byte alone', open: '\0', expect: 'invalid' },
    { from: 'mcp filesystem', name: 'NUL byte after the root', open: '$ROOT\0/../outside', expect: 'invalid' },
    { from: 'mcp filesystem', name: '%2e%2e kept as a literal name', open: '%2e%2e', expect: 'inside', target: '%2e%2e' },
    { from: 'mcp filesystem', name: '%2e%2e/%2e%2e kept literal', open: '%2e%2e/%2e%2e/outside', expect: 'inside', target: '%2e%2e/%2e%2e/outside' },
    { from: 'mcp filesystem', name: 'three dots is a name', open: '...', expect: 'inside', target: '...' },
    { from: 'mcp filesystem', name: 'dots inside a name', open: '..test', expect: 'inside', target: '..test' },
    { from: 'mcp filesystem', name: 'percent and spaces in names', open: 'report 50%.pdf', expect: 'inside', target: 'report 50%.pdf' },
    { from: 'mcp filesystem', name: 'unicode name', open: 'café/x', expect: 'inside', target: 'café/x' },
    { from: 'mcp filesystem', name: 'multiple slashes inside', fs: ['d/'], open: '$ROOT//d///target', expect: 'inside', target: 'd/target' },
    { from: 'mcp filesystem', name: 'multiple slashes toward a prefix sibling', open: '$BASE//ROOTx//secret', expect: 'outside' },
    ...deepCases(deepLevels),
    {
      from: 'mcp filesystem',
      name: 'symlink chain through two outside links to an outside file',
      outsideFs: ['chain1 => outside/secret', 'chain2 => chain1'],
      fs: ['seemingly-safe => ../chain2'],
      open: 'seemingly-safe',
      expect: 'link-out',
      ltarget: 'seemingly-safe',
    },
    { from: 'mcp filesystem', name: 'parent directory symlink to outside, new file below', fs: ['sub1 => $OUT'], open: 'sub1/sub2/file.txt', expect: 'outside' },
    { from: 'mcp filesystem', name: 'symlink to the root via another path (allowed)', outsideFs: ['alias => ROOT'], open: '$BASE/alias/target', expect: 'inside', target: 'target' },

    // --- hands ------------------------------------------------------------------------------
    { from: 'hands', name: 'allowed/link -> outside, create_directory below it', fs: ['link => $OUT'], open: 'link/a', expect: 'outside' },
    { from: 'hands', name: 'allowed/link -> outside, deeper', fs: ['link => $OUT/dir'], open: 'link/sub/new', expect: 'outside' },
    { from: 'hands', name: 'symlink to the second root (allowed)', fs: ['r2 => $BASE/ROOT2'], open: 'r2/target', expect: 'inside', target: '../ROOT2/target' },
    { from: 'hands', name: 'missing component then dotdot out', open: 'missing/../../outside/secret', expect: 'outside' },
    { from: 'hands', name: 'missing component then dotdot back in', open: 'missing/../target', expect: 'inside', target: 'target' },
    { from: 'hands', name: 'dangling symlink inside pointing inside, in the middle', fs: ['link => later'], open: 'link/target', expect: 'inside', target: 'later/target' },
  ]
}

export const CASES = casesAt(1000)
