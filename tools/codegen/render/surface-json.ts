import type { Surface } from '../surface.ts'
import { finish } from './header.ts'

/** `generated/surface.json` and `@hands/contracts/surface.json`: the manifest other tooling and the contract diff read. */
export function renderSurfaceJson(surface: Surface): string {
  return finish(JSON.stringify(surface, null, 2))
}
