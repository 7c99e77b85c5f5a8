/**
 * V8 settings of the `serve` command, set from inside the process (so that `npm start`, `npx market-data serve`
 * and the container's `node infra/src/bin.ts serve` all get them) before the service's modules load.
 *
 * `--no-allocation-site-pretenuring`: without it V8 allocates straight in the old generation the objects of any
 * site whose objects mostly survived young collections, and never takes that back while the old generation stays
 * full of live data, as a warm server's is. Requests answered during the start live across many collections
 * (the event loop is busy generating history), so V8 would pretenure the request path itself, and every later
 * request's short-lived objects would fill the old generation and cost full collections: about twice the CPU per
 * answer on the 428-asset market (measurements in docs/performance-log.md, "Pretenuring").
 */
import { setFlagsFromString } from "node:v8"

export const SERVE_V8_FLAGS: ReadonlyArray<string> = ["--no-allocation-site-pretenuring"]

/** Sets `SERVE_V8_FLAGS` in this process (V8 reads them at each collection from then on). */
export const applyServeV8Flags = (): void => {
  for (const flag of SERVE_V8_FLAGS) setFlagsFromString(flag)
}
