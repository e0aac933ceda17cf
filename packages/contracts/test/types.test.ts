import { describe, expect, expectTypeOf, it } from 'vitest'
import { contractOf, type ToolInput, type ToolResult } from '@hands/contracts'

describe('static types', () => {
  it('gives each tool its own input and result type by name', () => {
    expectTypeOf<ToolResult<'shell_run'>['commands'][number]['stdout']>().toEqualTypeOf<string>()
    expectTypeOf<ToolResult<'shell_logs'>['exit']>().toEqualTypeOf<number | null>()
    expectTypeOf<ToolInput<'copy'>>().toHaveProperty('src')
    expectTypeOf<ToolResult<'file_exists'>['paths'][number]['is_exists']>().toEqualTypeOf<boolean>()
    expect(contractOf('copy').name).toBe('copy')
  })
})
