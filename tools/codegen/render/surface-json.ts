import type { Surface } from '../surface.ts'
import { finish } from './header.ts'

/** `generated/surface.json`: the manifest other tooling reads. */
export function renderSurfaceJson(surface: Surface): string {
  return finish(JSON.stringify(surface, null, 2))
}
