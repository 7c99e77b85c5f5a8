/**
 * V8 settings of the `serve` command, set from inside the process (so that `npm start`, `npx market-data serve`
 * and the container's `node infra/src/bin.ts serve` all get them) before the service's modules load.
 *
 * `--no-allocation-site-pretenuring`: V8 watches which allocation sites' objects survive young-generation
 * collections and, past a survival rate of 85 % with the young generation at its largest, allocates that site's
 * objects straight in the old generation from then on. It never takes the decision back while the old generation
 * keeps most of what it holds, which a warm server's does (its baselines and caches are live). During a start the
 * event loop runs long slices of history generation and baseline sampling, so the requests that arrive meanwhile
 * (a load balancer's `/readyz`, an agent polling `read` until it answers) live across many collections, and V8
 * pretenured the request path itself: every later request's short-lived objects went to the old generation, which
 * then needed a full collection every second under load. Measured (docs/performance.md, "Pretenuring"): the
 * 428-asset server polled during its start served a paid `read` at 72 to 78 us of CPU an answer against 39 to 44
 * for the 35-asset server (0.67 to 0.74 of its throughput, the issue-16 target missed in six bench runs of seven);
 * with this flag 40 against 39 us, the start no slower and RSS 20 to 60 MB lower.
 */
import { setFlagsFromString } from "node:v8"

export const SERVE_V8_FLAGS: ReadonlyArray<string> = ["--no-allocation-site-pretenuring"]

/** Sets `SERVE_V8_FLAGS` in this process (V8 reads them at each collection from then on). */
export const applyServeV8Flags = (): void => {
  for (const flag of SERVE_V8_FLAGS) setFlagsFromString(flag)
}
