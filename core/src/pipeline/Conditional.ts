/**
 * The conditional step: what a handler's JSON output becomes once it has run (its body, its ETag, the time it is
 * settled at, its `max-age`), and whether `If-None-Match` matches it. A conditional request compares before any
 * hold or charge, so an unchanged answer is a free `304` whatever the key's balance (`comparesBeforeHold`).
 */
import { type Clock, Effect } from "effect"
import * as Digest from "effect/crypto/Digest"
import type { BoundedCache } from "../BoundedCache.ts"
import { comparesBeforeHold } from "../Money.ts"
import type { OperationSpec } from "../Registry.ts"
import { sourceOf } from "./Answers.ts"
import type { HandlerOutput, Outcome } from "./Types.ts"

/** Strong ETag of a body: SHA-256 of its bytes, from the content alone (never the clock). */
export const etagOf = (body: string): Effect.Effect<string, never, Digest.Digest> =>
  Effect.flatMap(Digest.Digest, (d) => d.digestHex(Digest.sha256, new TextEncoder().encode(body))).pipe(
    Effect.map((hex) => `"${hex.slice(0, 40)}"`)
  )

/** The ETag of a text that repeats (a handler's reused body, a keyless document): hashed once while `memo` holds it. */
export const rememberedEtag = (
  memo: BoundedCache<string, string> | undefined,
  text: string
): Effect.Effect<string, never, Digest.Digest> => {
  const known = memo?.get(text)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.map(etagOf(text), (etag) => {
    memo?.set(text, etag)
    return etag
  })
}

/** Whether an `If-None-Match` value (one tag, a list, or `*`) matches `etag`. Weak tags compare weakly. */
export const ifNoneMatchMatches = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false
  const value = header.trim()
  if (value === "*") return true
  return value.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)
}

/** Whether a paid request compares its ETag before it holds or charges anything (`comparesBeforeHold`). */
export const comparesFirst = (op: OperationSpec, ifNoneMatch: string | undefined): boolean =>
  comparesBeforeHold(op.conditional, ifNoneMatch)

/** A handler's JSON output, ready to answer. */
export interface Prepared {
  readonly settledAt: number
  /** The `304` when `If-None-Match` matches the ETag. */
  readonly notModified: Outcome | undefined
  /** The answer charging `charge`. */
  readonly json: (charge: number) => Outcome & { readonly _tag: "Json" }
}

/** Prepares a handler's JSON output: its body, its ETag (conditional operations), `max-age`, the `304`. */
export const prepare = (
  clock: Clock.Clock,
  memo: BoundedCache<string, string> | undefined,
  op: OperationSpec,
  out: Extract<HandlerOutput, { readonly _tag: "Json" }>,
  ifNoneMatch: string | undefined
): Effect.Effect<Prepared, never, Digest.Digest> => {
  const body = out.text ?? JSON.stringify(out.body)
  const known = op.conditional && memo !== undefined ? memo.get(body) : undefined
  // A body hashed before (the common case) is prepared at once: the value, not an effect to run.
  if (!op.conditional || known !== undefined) {
    return Effect.succeed(prepared(out, body, known, ifNoneMatch, clock.currentTimeMillisUnsafe()))
  }
  return Effect.map(etagOf(body), (etag) => {
    if (out.text !== undefined) memo?.set(body, etag)
    return prepared(out, body, etag, ifNoneMatch, clock.currentTimeMillisUnsafe())
  })
}

const prepared = (
  out: Extract<HandlerOutput, { readonly _tag: "Json" }>,
  body: string,
  etag: string | undefined,
  ifNoneMatch: string | undefined,
  settledAt: number
): Prepared => {
  const maxAgeSeconds =
    out.nextUpdateAtMs === undefined ? undefined : Math.max(0, Math.ceil((out.nextUpdateAtMs - settledAt) / 1000))
  const cache = maxAgeSeconds === undefined ? {} : { maxAgeSeconds }
  const notModified: Outcome | undefined =
    etag !== undefined && ifNoneMatchMatches(ifNoneMatch, etag) ? { _tag: "NotModified", etag, ...cache } : undefined
  const json = (charge: number): Outcome & { readonly _tag: "Json" } => ({
    _tag: "Json",
    body,
    creditsCharged: charge,
    ...(etag === undefined ? {} : { etag }),
    ...cache,
    ...sourceOf(out)
  })
  return { settledAt, notModified, json }
}
