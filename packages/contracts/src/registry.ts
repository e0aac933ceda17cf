import type { Static } from 'typebox'
import { copy } from './copy.ts'
import { createDirectory } from './create-directory.ts'
import { deleteTool } from './delete.ts'
import { DEFAULT_PROSE, describeTool, type ProseContext, type ToolContract, type ToolDescriptor } from './descriptor.ts'
import { fileExists } from './file-exists.ts'
import { move } from './move.ts'
import type { ToolName } from './names.ts'
import { shellBackground } from './shell-background.ts'
import { shellLogs } from './shell-logs.ts'
import { shellRun } from './shell-run.ts'
import { shellStop } from './shell-stop.ts'
import { shellType } from './shell-type.ts'

/** The five process tools, gated together by the `shell` toggle. */
export const SHELL_CONTRACTS = [shellRun, shellBackground, shellLogs, shellType, shellStop] as const

/** The five filesystem tools. */
export const FS_CONTRACTS = [copy, move, deleteTool, createDirectory, fileExists] as const

/** All ten contracts in SPEC §2 order. */
export const CONTRACTS = [...SHELL_CONTRACTS, ...FS_CONTRACTS] as const

type Contracts = (typeof CONTRACTS)[number]
type ContractOf<N extends ToolName> = Extract<Contracts, { name: N }>

/** Input and result types of each tool, by name. */
export type ToolInput<N extends ToolName> = Static<ContractOf<N>['input']>
export type ToolResult<N extends ToolName> = Static<ContractOf<N>['result']>

/** The contract of one tool. */
export function contractOf<N extends ToolName>(name: N): ContractOf<N> {
  const found = CONTRACTS.find((c) => c.name === name)
  if (found === undefined) throw new Error(`no contract named ${name}`)
  return found as ContractOf<N>
}

/** The ten descriptors with prose rendered for `prose` (the default code tool unless given). */
export function describeTools(prose: ProseContext = DEFAULT_PROSE): ToolDescriptor[] {
  return CONTRACTS.map((c) => describeTool(c as ToolContract, prose))
}

/** The ten descriptors with the default prose. */
export const TOOLS: readonly ToolDescriptor[] = describeTools()
