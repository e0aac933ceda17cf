import { createRequire } from 'node:module'
import type { IBuffer, IModes, Terminal } from '@xterm/headless'

const require = createRequire(import.meta.url)

type XtermModule = typeof import('@xterm/headless')
interface SerializeAddon {
  activate(terminal: Terminal): void
  dispose(): void
  serialize(options?: { scrollback?: number; excludeModes?: boolean; excludeAltBuffer?: boolean }): string
}

let xterm: XtermModule | null = null
let serializeAddon: (new () => SerializeAddon) | null = null

/** The emulator module, loaded on first use (it costs start-up time nobody without a terminal should pay). */
function xtermModule(): XtermModule {
  xterm ??= require('@xterm/headless') as XtermModule
  return xterm
}

/**
 * The parts of @xterm/headless 6.0.0 (pinned) this module reaches into: synchronous writes, the
 * parser's state, the normal buffer's line list (whose `onTrim` reports rows leaving the top of
 * the scrollback) and the scroll region. `checkInternals` fails loudly when an upgrade moves them.
 */
interface CoreInternals {
  writeSync(data: Uint8Array | string): void
  _inputHandler: { _parser: { currentState: number } }
  _bufferService: {
    buffers: {
      normal: { lines: LineList; scrollTop: number; scrollBottom: number }
      active: { scrollTop: number; scrollBottom: number }
      onBufferActivate(fn: () => void): { dispose(): void }
    }
  }
}
export interface LineList {
  readonly length: number
  /** The row at `index` (0: the oldest retained); `isWrapped`: it continues the row before it. */
  get(index: number): { readonly isWrapped: boolean; translateToString(trimRight: boolean): string } | undefined
  onTrim(fn: (amount: number) => void): { dispose(): void }
}

/** A headless terminal emulator of the xterm.js family, fed synchronously. */
export class Emulator {
  readonly terminal: Terminal
  readonly #core: CoreInternals
  #serializer: SerializeAddon | null = null

  constructor(cols: number, rows: number, scrollback: number) {
    const { Terminal } = xtermModule()
    this.terminal = new Terminal({ cols, rows, scrollback, allowProposedApi: true, logLevel: 'off' })
    this.#core = (this.terminal as unknown as { _core: CoreInternals })._core
    checkInternals(this.#core)
  }

  /** Parse `data` now: when this returns, the screen shows it. */
  write(data: Uint8Array | string): void {
    this.#core.writeSync(data)
  }

  get cols(): number {
    return this.terminal.cols
  }

  get rows(): number {
    return this.terminal.rows
  }

  get normal(): IBuffer {
    return this.terminal.buffer.normal
  }

  get active(): IBuffer {
    return this.terminal.buffer.active
  }

  get isAlternate(): boolean {
    return this.terminal.buffer.active.type === 'alternate'
  }

  get modes(): IModes {
    return this.terminal.modes
  }

  /** True when the parser is between sequences (not inside an escape, CSI, OSC or DCS), so the next byte starts fresh. */
  get isGround(): boolean {
    return this.#core._inputHandler._parser.currentState === 0
  }

  /** True when the active buffer scrolls as a whole (no DECSTBM region), so every line feed at the bottom moves a row into the scrollback. */
  get isFullScrollRegion(): boolean {
    const active = this.#core._bufferService.buffers.active
    return active.scrollTop === 0 && active.scrollBottom === this.terminal.rows - 1
  }

  /** The normal buffer's line list; replaced when the terminal is reset (RIS). */
  normalLines(): LineList {
    return this.#core._bufferService.buffers.normal.lines
  }

  /** Call `fn` whenever the active buffer changes or the buffers are replaced by a reset. */
  onBufferChange(fn: () => void): void {
    this.#core._bufferService.buffers.onBufferActivate(fn)
  }

  /**
   * Call `fn` when the program asks to clear the scrollback (`CSI 3 J`, `CSI ? 3 J`), before it is
   * cleared: the rows are still there to be looked at.
   */
  onClearScrollback(fn: () => void): void {
    const before = (params: (number | number[])[]) => {
      if (params[0] === 3) fn()
      return false // the terminal's own handler clears it
    }
    this.terminal.parser.registerCsiHandler({ final: 'J' }, before)
    this.terminal.parser.registerCsiHandler({ prefix: '?', final: 'J' }, before)
  }

  /** The screen (and its modes) as escape sequences that redraw it on a terminal of the same size. */
  serialize(): string {
    if (this.#serializer === null) {
      serializeAddon ??= (require('@xterm/addon-serialize') as { SerializeAddon: new () => SerializeAddon }).SerializeAddon
      this.#serializer = new serializeAddon()
      this.terminal.loadAddon(this.#serializer)
    }
    return this.#serializer.serialize({ scrollback: 0 })
  }

  dispose(): void {
    this.terminal.dispose()
  }
}

function checkInternals(core: CoreInternals): void {
  const buffers = core?._bufferService?.buffers
  if (
    typeof core?.writeSync !== 'function' ||
    typeof core._inputHandler?._parser?.currentState !== 'number' ||
    typeof buffers?.normal?.lines?.onTrim !== 'function' ||
    typeof buffers.normal.lines.get !== 'function' ||
    typeof buffers.onBufferActivate !== 'function'
  ) {
    throw new Error('@xterm/headless internals moved: hands needs the pinned @xterm/headless 6.0.0')
  }
}
