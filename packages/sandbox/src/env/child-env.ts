/** Settings that make a foreground command fail fast instead of waiting for a person. */
export const NON_INTERACTIVE: Readonly<Record<string, string>> = {
  TERM: 'dumb',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  NO_COLOR: '1',
}

/** Settings for a background shell's terminal: a real terminal type, and no pager to stall on. */
export const TERMINAL: Readonly<Record<string, string>> = {
  TERM: 'xterm-256color',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
}

/** The environment of one command: the allowed login environment, then the mode's settings, then the job's own. */
export function childEnv(
  base: Readonly<Record<string, string>>,
  mode: Readonly<Record<string, string>>,
  job: Readonly<Record<string, string>>,
): Record<string, string> {
  return { ...base, ...mode, ...job }
}
