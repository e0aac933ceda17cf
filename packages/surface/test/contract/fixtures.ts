import { CODE_TOOL, TOOLS, describeTools } from '@hands/contracts'
import { buildSurface, type Json, type Surface, type SurfaceTool } from '@hands/surface/contract'

/** The surface codegen writes today: the base every fixture pair starts from. */
export const base = (): Surface => buildSurface(TOOLS, CODE_TOOL, describeTools({ codeTool: null }))

/**
 * One pair of surfaces differing in one kind of change: `before` (optional) edits the base into
 * the old side, `after` edits a copy of that into the new side. `text` lines must appear in the
 * terminal output (trimmed), `md` snippets in the Markdown.
 */
export interface FixturePair {
  kind: string
  before?: (s: Surface) => void
  after: (s: Surface) => void
  text: Array<string | RegExp>
  md: string[]
}

export function tool(s: Surface, name: string): SurfaceTool {
  const t = s.tools.find((x) => x.name === name)
  if (t === undefined) throw new Error(`no tool ${name}`)
  return t
}

const props = (schema: Json) => schema['properties'] as Record<string, Json>
const input = (s: Surface, name: string, property: string) => props(tool(s, name).input_schema)[property] as Json
const result = (s: Surface, name: string, property: string) => props(tool(s, name).result_schema)[property] as Json
const items = (schema: Json) => schema['items'] as Json

export const FIXTURE_PAIRS: FixturePair[] = [
  {
    kind: 'tool name',
    after: (s) => void (tool(s, 'shell_logs').name = 'shell_tail'),
    text: [/^\+ tool shell_tail · tokens \d+$/, /^- tool shell_logs · tokens \d+$/],
    md: ['#### `shell_tail` added', '#### `shell_logs` removed', '| `shell_tail` | added |'],
  },
  {
    kind: 'title',
    after: (s) => void (tool(s, 'copy').title = 'Copy a file or tree'),
    text: ['~ title: Copy a [-path-]{+file or tree+}'],
    md: ['- `title` changed:', '  - Copy a path', '  + Copy a file or tree'],
  },
  {
    kind: 'description',
    after: (s) => void (tool(s, 'shell_stop').description = tool(s, 'shell_stop').description.replace('whole', 'entire')),
    text: [/^~ description: .*\[-whole-\]\{\+entire\+\}/],
    md: ['- `description` changed:', '````diff'],
  },
  {
    kind: 'input type',
    after: (s) => void (input(s, 'shell_logs', 'n')['type'] = 'number'),
    text: ['~ input n.type: "integer" → "number"'],
    md: ['- `input n.type` changed: `"integer"` → `"number"`'],
  },
  {
    kind: 'required',
    after: (s) => void (tool(s, 'shell_run').input_schema['required'] = ['commands', 'cwd']),
    text: ['~ input required: ["commands"] → ["commands","cwd"]'],
    md: ['- `input required` changed: `["commands"]` → `["commands","cwd"]`'],
  },
  {
    kind: 'enum',
    after: (s) => void (result(s, 'shell_stop', 'status')['enum'] = ['running', 'exited', 'stopped', 'killed']),
    text: ['~ result status.enum: ["running","exited","stopped"] → ["running","exited","stopped","killed"]'],
    md: ['- `result status.enum` changed:'],
  },
  {
    kind: 'minimum / maximum',
    after: (s) => {
      input(s, 'shell_logs', 'n')['maximum'] = 5000
      input(s, 'shell_logs', 'n')['minimum'] = 0
    },
    text: ['~ input n.minimum: 1 → 0', '~ input n.maximum: 2000 → 5000'],
    md: ['- `input n.maximum` changed: `2000` → `5000`'],
  },
  {
    kind: 'minLength',
    after: (s) => void (input(s, 'shell_type', 'id')['minLength'] = 2),
    text: ['~ input id.minLength: 1 → 2'],
    md: ['- `input id.minLength` changed: `1` → `2`'],
  },
  {
    kind: 'maxLength added',
    after: (s) => void (input(s, 'shell_type', 'text')['maxLength'] = 4096),
    text: ['+ input text.maxLength: 4096'],
    md: ['- `input text.maxLength` added: `4096`'],
  },
  {
    kind: 'maxItems 100 → 200',
    before: (s) => void (input(s, 'delete', 'paths')['maxItems'] = 100),
    after: (s) => void (input(s, 'delete', 'paths')['maxItems'] = 200),
    text: ['~ input paths.maxItems: 100 → 200'],
    md: ['- `input paths.maxItems` changed: `100` → `200`'],
  },
  {
    kind: 'pattern',
    after: (s) => void (input(s, 'shell_background', 'id')['pattern'] = '^[a-z][a-z0-9-]*$'),
    text: ['+ input id.pattern: "^[a-z][a-z0-9-]*$"'],
    md: ['- `input id.pattern` added: `"^[a-z][a-z0-9-]*$"`'],
  },
  {
    kind: 'default',
    after: (s) => void (input(s, 'shell_type', 'is_enter')['default'] = false),
    text: ['~ input is_enter.default: true → false'],
    md: ['- `input is_enter.default` changed: `true` → `false`'],
  },
  {
    kind: 'additionalProperties',
    after: (s) => void (tool(s, 'copy').input_schema['additionalProperties'] = true),
    text: ['~ input additionalProperties: false → true'],
    md: ['- `input additionalProperties` changed: `false` → `true`'],
  },
  {
    kind: 'nested items (input)',
    after: (s) => void (items(input(s, 'shell_run', 'commands'))['minLength'] = 0),
    text: ['~ input commands[].minLength: 1 → 0'],
    md: ['- `input commands[].minLength` changed: `1` → `0`'],
  },
  {
    kind: 'nested items (result)',
    after: (s) => void (props(items(result(s, 'delete', 'paths')))['is_deleted']!['type'] = 'string'),
    text: ['~ result paths[].is_deleted.type: "boolean" → "string"'],
    md: ['- `result paths[].is_deleted.type` changed: `"boolean"` → `"string"`'],
  },
  {
    kind: 'property added and removed',
    after: (s) => {
      const p = props(tool(s, 'shell_run').input_schema)
      delete p['cwd']
      p['timeout'] = { type: 'integer' }
    },
    text: [/^- input cwd: \{"type":"string"/, '+ input timeout: {"type":"integer"}'],
    md: ['- `input cwd` removed:', '- `input timeout` added: `{"type":"integer"}`'],
  },
  {
    kind: 'property order',
    after: (s) => {
      const t = tool(s, 'copy')
      const { src, dest, ...rest } = props(t.input_schema)
      t.input_schema['properties'] = { dest, src, ...rest }
    },
    text: ['~ input properties order: ["src","dest","is_overwrite"] → ["dest","src","is_overwrite"]'],
    md: ['- `input properties order` changed:'],
  },
  {
    kind: 'property description',
    after: (s) => void (input(s, 'shell_run', 'cwd')['description'] = 'Where the commands run.'),
    text: [/^~ input cwd\.description: \[-.*-\]\{\+Where the commands run\.\+\}$|^~ input cwd\.description: .*\{\+.*\+\}/],
    md: ['- `input cwd.description` changed:', '  + Where the commands run.'],
  },
  {
    kind: 'annotations',
    after: (s) => void (tool(s, 'create_directory').annotations['destructiveHint'] = true),
    text: ['~ annotations.destructiveHint: false → true'],
    md: ['- `annotations.destructiveHint` changed: `false` → `true`'],
  },
  {
    kind: 'effect',
    after: (s) => void (tool(s, 'copy').effect = 'destroy'),
    text: ['~ effect: "mutate" → "destroy"'],
    md: ['- `effect` changed: `"mutate"` → `"destroy"`'],
  },
  {
    kind: 'toggle',
    after: (s) => void (tool(s, 'shell_run').toggle = null),
    text: ['~ toggle: "shell" → null'],
    md: ['- `toggle` changed: `"shell"` → `null`'],
  },
  {
    kind: 'call order',
    after: (s) => void (tool(s, 'move').call = ['dest', 'src']),
    text: ['~ call: ["src","dest"] → ["dest","src"]'],
    md: ['- `call` changed: `["src","dest"]` → `["dest","src"]`'],
  },
  {
    kind: 'tool order',
    after: (s) => {
      const i = s.tools.findIndex((t) => t.name === 'copy')
      const [copy, move] = s.tools.splice(i, 2)
      s.tools.splice(i, 0, move!, copy!)
    },
    text: [/^~ tool order: .*copy, move.* → .*move, copy/],
    md: ['#### Tool order'],
  },
  {
    kind: 'tool added and removed',
    after: (s) => {
      s.tools = s.tools.filter((t) => t.name !== 'file_exists')
      s.tools.push({ ...structuredClone(tool(s, 'delete')), name: 'grep', title: 'Search files', description: 'Search `paths` for a pattern.' })
    },
    text: [/^\+ tool grep · tokens \d+$/, '+ title: Search files', '+ description: Search `paths` for a pattern.', /^- tool file_exists · tokens \d+$/],
    md: ['#### `grep` added', '#### `file_exists` removed', '- `input` added:', '<details><summary>JSON</summary>'],
  },
  {
    kind: 'error code added and removed',
    after: (s) => {
      s.errors.codes = s.errors.codes.filter((c) => c.code !== 'not_running')
      s.errors.codes.push({ code: 'too_large', summary: 'The output exceeds the host limit.', is_retryable: false, is_always_preflight: true })
    },
    text: [
      '~ errors',
      '+ too_large: {"summary":"The output exceeds the host limit.","is_retryable":false,"is_always_preflight":true}',
      /^- not_running: \{"summary":/,
    ],
    md: ['#### Errors', '- `too_large` added:'],
  },
  {
    kind: 'error hint (summary) and flags',
    after: (s) => {
      const c = s.errors.codes.find((x) => x.code === 'io_error')!
      c.summary = 'The filesystem failed part way; check what was done before retrying.'
      c.is_retryable = false
      c.is_always_preflight = true
    },
    text: [
      /^~ io_error\.summary: The filesystem failed part way; .*\{\+.*\+\}/,
      '~ io_error.is_retryable: true → false',
      '~ io_error.is_always_preflight: false → true',
    ],
    md: ['- `io_error.summary` changed:', '- `io_error.is_retryable` changed: `true` → `false`'],
  },
  {
    kind: 'error envelope',
    after: (s) => void (props(s.errors.envelope)['hint']!['description'] = 'What to try instead.'),
    text: [/^~ envelope hint\.description: /],
    md: ['- `envelope hint.description` changed:'],
  },
  {
    kind: 'prompt line changed',
    after: (s) => void (s.prompt!.shell_on.batchLine = s.prompt!.shell_on.batchLine!.replace('never one call per file', 'not one call per file')),
    text: ['~ prompt prose', /^~ shell on: batchLine: .*\[-never-\]\{\+not\+\} one call per file\.$/],
    md: ['#### Prompt prose', '- `shell on: batchLine` changed:'],
  },
  {
    kind: 'prompt line added and removed',
    after: (s) => {
      s.prompt!.shell_off.executionLine = '- Long-running work is not available here.'
      s.prompt!.shell_on.codeToolParagraph = null
    },
    text: ['+ shell off: executionLine: - Long-running work is not available here.', /^- shell on: codeToolParagraph: Waiting is control flow/],
    md: ['- `shell off: executionLine` added:', '- `shell on: codeToolParagraph` removed:'],
  },
  {
    kind: 'description without a code tool',
    after: (s) => void (s.no_code_tool!.descriptions['shell_run'] = s.no_code_tool!.descriptions['shell_run']!.replace('Batch related', 'Group related')),
    text: [
      /^~ tool shell_run · tokens \d+ \(±0\), without a code tool \d+ \(±0\)$/,
      /^~ description \(no code tool\): .*\[-Batch-\]\{\+Group\+\} related lines/,
    ],
    md: ['- `description (no code tool)` changed:', '  + Run `commands`'],
  },
  {
    kind: 'a sentence both descriptions share',
    after: (s) => {
      const t = tool(s, 'shell_background')
      t.description = t.description.replace('in a terminal', 'under a terminal')
      s.no_code_tool!.descriptions['shell_background'] = s.no_code_tool!.descriptions['shell_background']!.replace('in a terminal', 'under a terminal')
    },
    text: [
      /^~ description: .*\[-in-\]\{\+under\+\} a terminal.*in python_execution\.$/,
      /^~ description \(no code tool\): .*\[-in-\]\{\+under\+\} a terminal.*for its output\.$/,
    ],
    md: ['- `description` changed:', '- `description (no code tool)` changed:'],
  },
  {
    kind: 'a description that starts to name the code tool',
    after: (s) => {
      const t = tool(s, 'shell_logs')
      t.description = `${t.description} Poll it from python_execution.`
      s.no_code_tool!.descriptions['shell_logs'] = t.description.replace(' Poll it from python_execution.', ' Poll it.')
    },
    text: [/^~ description: .*\{\+ ?Poll it from python_execution\.\+\}$/, /^~ description \(no code tool\): .*\{\+ ?Poll it\.\+\}$/],
    md: ['- `description (no code tool)` changed:'],
  },
  {
    kind: 'rendered line',
    after: (s) => {
      const e = s.rendering!['shell_run']!.find((x) => x.example === 'output without a final newline, in the workspace root')!
      e.lines = e.lines.map((l) => (l === '[no newline at end]' ? '[no final newline]' : l))
    },
    text: [
      '~ rendering',
      '~ shell_run · output without a final newline, in the workspace root',
      'exit 0 · 4 ms · cwd .',
      '- [no newline at end]',
      '+ [no final newline]',
      /rendered example\(s\) changed$/,
    ],
    md: [
      '#### Rendering',
      '- `shell_run · output without a final newline, in the workspace root` changed:',
      '  ````diff',
      '  - [no newline at end]',
      '  + [no final newline]',
    ],
  },
  {
    kind: 'rendered example added and removed',
    after: (s) => {
      const logs = s.rendering!['shell_logs']!
      logs.splice(0, 1)
      logs.push({ example: 'a prompt waiting for input', lines: ['py · running · 1 line · waiting for input', '  >>> '] })
    },
    text: [
      '+ shell_logs · a prompt waiting for input',
      '+ py · running · 1 line · waiting for input',
      '- shell_logs · a running server, lines scrolled away unseen',
      '- npm · running · 3 lines · 3 dropped unseen · silent 1.2 s · cpu 340 ms · 2 processes',
    ],
    md: ['- `shell_logs · a prompt waiting for input` added:', '- `shell_logs · a running server, lines scrolled away unseen` removed:'],
  },
  {
    kind: 'prompt line without a code tool',
    after: (s) =>
      void (s.no_code_tool!.prompt.shell_on.executionLine = s.no_code_tool!.prompt.shell_on.executionLine!.replace('no tool waits', 'nothing waits')),
    text: ['~ prompt prose', /^~ no code tool, shell on: executionLine: .*\[-no tool-\]\{\+nothing\+\} waits for you\.$/],
    md: ['#### Prompt prose', '- `no code tool, shell on: executionLine` changed:'],
  },
]
