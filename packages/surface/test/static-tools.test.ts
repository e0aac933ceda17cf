import { describe, expect, it } from 'vitest'
import { toApiTools } from '../src/adapters/api-tools.ts'
import { staticMcpTools } from '../src/mcp/static-tools.ts'
import { enabledTools } from '../src/session.ts'

describe('the tools/list answered before the tools load', () => {
  it('is exactly the list the loaded contracts make, with the shell tools and without', () => {
    for (const options of [
      {},
      { toggles: { shell: true } },
      { toggles: { shell: false } },
      { codeTool: null },
      { codeTool: null, toggles: { shell: false } },
    ]) {
      const made = toApiTools('mcp', enabledTools(options))
      expect(staticMcpTools(options)).toEqual(made)
      // Byte for byte, as the client receives it.
      expect(JSON.stringify(staticMcpTools(options))).toBe(JSON.stringify(made))
    }
  })

  it('is not used when --code-tool names another code tool', () => {
    expect(staticMcpTools({ codeTool: 'run_python' })).toBeNull()
  })
})
