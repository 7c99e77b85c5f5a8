/**
 * Fake venue and EDGAR servers for a live-feed service process, on 127.0.0.1 (nothing leaves the machine):
 * each answers from a recorded-format route of the live connector tests (`adapters/sources/test/live/fixtures`),
 * and can be made to hang (accept the request, never answer) or to answer only after a delay. Requests are
 * counted, and those still unanswered are visible, so a test can prove the fault was exercised.
 */
import { listenFake, type Route, sendReply } from "../../adapters/sources/test/live/FakeServer.ts"

export type Behaviour =
  | { readonly _tag: "Answer"; readonly route: Route }
  /** Accept and never answer (the connector's timeout is the only way out). */
  | { readonly _tag: "Hang" }
  /** Answer from `route`, but only after `delayMs`. */
  | { readonly _tag: "Slow"; readonly route: Route; readonly delayMs: number }

export interface FakeSource {
  readonly url: string
  /** Requests received so far. */
  readonly received: () => number
  /** Requests received and not answered yet. */
  readonly pending: () => number
  readonly close: () => Promise<void>
}

export const startFakeSource = async (behaviour: Behaviour): Promise<FakeSource> => {
  let received = 0
  let pending = 0
  const timers = new Set<NodeJS.Timeout>()
  const listening = await listenFake((request, res) => {
    received += 1
    if (behaviour._tag === "Hang") {
      pending += 1
      res.on("close", () => {
        pending -= 1
      })
      return
    }
    if (behaviour._tag === "Answer") return sendReply(res, behaviour.route(request))
    pending += 1
    const timer = setTimeout(() => {
      timers.delete(timer)
      pending -= 1
      if (!res.destroyed) sendReply(res, behaviour.route(request))
    }, behaviour.delayMs)
    timers.add(timer)
  })
  return {
    url: listening.url,
    received: () => received,
    pending: () => pending,
    close: () => {
      for (const t of timers) clearTimeout(t)
      return listening.close()
    }
  }
}
