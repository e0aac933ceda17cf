import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { typecheck } from '../helpers/typecheck.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The SDK majors this run checks against, as package name → the name it is installed under (vitest.sdk7.config.ts); none for the default majors. */
    sdkAliases?: Record<string, string>
  }
}

const DOCS = join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'adapters.md')

/** The ```ts blocks of docs/adapters.md, in order. */
function docBlocks(): string[] {
  return [...readFileSync(DOCS, 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '')
}

// Assignments the SDK types must refuse, so a passing compile above means something.
const COUNTER_EXAMPLES = `import type { ChatCompletionTool } from 'openai/resources/chat/completions'
import type { FunctionTool } from 'openai/resources/responses/responses'
import type { Tool } from '@anthropic-ai/sdk/resources/messages'
import { generateText, type LanguageModel } from 'ai'

declare const records: Array<Record<string, unknown>>
export const chat: ChatCompletionTool[] = records
export const responses: FunctionTool[] = [{ type: 'function', name: 'x', description: 'd', parameters: { type: 'object' } }]
export const anthropic: Tool[] = [{ name: 'x', input_schema: { type: 'string' as string } }]
declare const model: LanguageModel
export const ai = generateText({ model, prompt: 'p', tools: [{ description: 'd' }] })
`

/** The major of `openai` and `ai` this run checks against: 7 when vitest.sdk7.config.ts aliases them, else the workspace's 6. */
const MAJOR = inject('sdkAliases') === undefined ? 6 : 7

// The program compiles against that major: this assignment fails to compile against another.
const MAJOR_CHECK = `import { VERSION } from 'openai/version'
export const openai: \`${MAJOR}.\${number}.\${number}\` = VERSION
`

// One program for everything (compiling the SDK types is the slow part).
let errors: string[] = []
const blocks = docBlocks()
beforeAll(() => {
  const virtual: Record<string, string> = { 'test/adapters/counter-examples.ts': COUNTER_EXAMPLES, 'test/adapters/major-check.ts': MAJOR_CHECK }
  blocks.forEach((text, i) => {
    virtual[`test/adapters/docs-adapters-${i + 1}.ts`] = text
  })
  errors = typecheck(['test/adapters/sdk-types.ts'], virtual, inject('sdkAliases') ?? {})
}, 360_000)

const errorsIn = (file: string) => errors.filter((e) => e.startsWith(`surface/test/adapters/${file}:`))

describe(`adapter types against the real SDK types (openai ${MAJOR}, ai ${MAJOR})`, () => {
  it(`compile against openai ${MAJOR}`, () => {
    expect(errors.filter((e) => e.startsWith('surface/test/adapters/major-check.ts:'))).toEqual([])
  })

  it('compile: every definition and handler assigns to and from the SDK types without a cast', () => {
    expect(errorsIn('sdk-types.ts')).toEqual([])
  })

  it('reject what the SDKs reject: plain records, a Responses tool without strict, a wrong schema type, an array as a ToolSet', () => {
    const found = errorsIn('counter-examples.ts')
    expect(found.map((e) => e.replace(/: .*/s, ''))).toEqual([7, 8, 9, 11].map((l) => `surface/test/adapters/counter-examples.ts:${l}`))
    expect(found[1]).toContain("Property 'strict' is missing")
  })
})

describe('docs/adapters.md', () => {
  it('has one loop per API, each at most 30 lines', () => {
    expect(blocks).toHaveLength(4)
    for (const [i, b] of ['@hands/surface/openai', '@hands/surface/openai-responses', '@hands/surface/anthropic', '@hands/surface/ai-sdk'].entries()) {
      expect(blocks[i]).toContain(`from '${b}'`)
      expect(blocks[i]!.trimEnd().split('\n').length, b).toBeLessThanOrEqual(30)
    }
  })

  it('type-checks every code block as written, with the workspace resolution', () => {
    expect(errors.filter((e) => e.includes('docs-adapters-'))).toEqual([])
  })

  it('nothing else in the program fails', () => {
    expect(errors.filter((e) => !e.includes('counter-examples.ts'))).toEqual([])
  })
})
