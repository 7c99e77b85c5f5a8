/**
 * Calls one operation of a set of planes at their seam (`planeHandlers`), as the pipeline would after
 * authentication: an anonymous test principal with a 60-per-minute window, the parameters decoded as the
 * transports decode them. Invalid parameters or an unknown operation are test failures, not answers.
 */
import { Effect } from "effect"
import { assert } from "vitest"
import type { ApiError } from "../../src/Errors.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import type { Handler, HandlerInput, HandlerOutput } from "../../src/Pipeline.ts"
import { type PlaneOperations, planeHandlers } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"

export const callPlanes = (
  planes: ReadonlyArray<PlaneOperations>,
  name: string,
  params: ReadonlyArray<readonly [string, string]>,
  nowMs: number
): Effect.Effect<HandlerOutput, ApiError> =>
  Effect.suspend(() => {
    const op = operation(name)
    if (op === undefined) return assert.fail(`no operation ${name}`)
    const decoded = decodeParams(op, params)
    if (isApiError(decoded)) return assert.fail(decoded.message)
    const handler = planeHandlers(planes).get(name) as Handler | undefined
    if (handler === undefined) return assert.fail(`no plane serves ${name}`)
    const input: HandlerInput = {
      op,
      params: decoded,
      principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
      rate: { limit: 60, remaining: 59, resetAtMs: nowMs, allowed: true },
      nowMs
    }
    return handler(input)
  })

/** The `data` of a JSON answer. */
export const dataOf = <A = unknown>(out: HandlerOutput): A => {
  assert.strictEqual(out._tag, "Json")
  return (out as { readonly body: { readonly data: A } }).body.data
}
