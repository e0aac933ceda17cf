import { describe, expect, inject, it } from 'vitest'

/** 7 when vitest.sdk7.config.ts points `openai` and `ai` at their 7.x packages, else the workspace's 6. */
const MAJOR = inject('sdkAliases') === undefined ? '6' : '7'

describe('the SDKs the adapter tests run against', () => {
  it(`are openai ${MAJOR} and ai ${MAJOR}, as the run says`, async () => {
    const { VERSION } = await import('openai/version')
    const ai = (await import('ai/package.json', { with: { type: 'json' } })) as { default: { version: string } }
    expect([VERSION.split('.')[0], ai.default.version.split('.')[0]]).toEqual([MAJOR, MAJOR])
  })
})
