/**
 * The per-company preamble of every equity operation, written once: "now" from the `Clock`, the company of the
 * asset or call (`EquityStore.issuer`), refused `unknown_asset` when the store does not know it. `perAsset` wraps
 * a per-asset operation's body, `call` a call operation's; `answer` and `cursorPosition` frame a call's answer.
 */
import { Clock, Effect } from "effect"
import { chargeFor } from "../../Billing.ts"
import { decodeCursor } from "../../Cursor.ts"
import { type ApiError, apiError } from "../../Errors.ts"
import { isApiError } from "../../Params.ts"
import type { Handler, HandlerInput, HandlerOutput } from "../../Pipeline.ts"
import type { DirectoryEntry, PlaneForAsset } from "../../Planes.ts"
import type { CompanyCoverage } from "../EquityStore.ts"
import type { Company } from "../Model.ts"
import { type EquityState, idOf, parseEquityId, unknown } from "./State.ts"

/** The company a per-asset operation answers for, and the moment it answers at. */
export interface AssetTarget {
  readonly entry: DirectoryEntry
  readonly params: HandlerInput["params"]
  readonly cik: string
  /** The asset's ticker: its own price series. */
  readonly ticker: string
  readonly company: Company
  readonly coverage: CompanyCoverage
  readonly nowMs: number
}

/** The company an admitted call answers for, and the moment it answers at. */
export interface CallTarget {
  readonly input: HandlerInput
  readonly assetId: string
  readonly cik: string
  /** The asset's ticker: its own price series. */
  readonly ticker: string
  readonly company: Company
  readonly coverage: CompanyCoverage
  readonly nowMs: number
}

type PerAssetResult = ReturnType<PlaneForAsset>

const assetTarget = Effect.fnUntraced(function* (
  st: EquityState,
  entry: DirectoryEntry,
  params: HandlerInput["params"]
) {
  const nowMs = yield* Clock.currentTimeMillis
  const { cik, ticker } = idOf(entry)
  const loaded = yield* st.load(cik)
  if (loaded === undefined) return yield* Effect.fail(unknown(entry))
  const target: AssetTarget = { entry, params, cik, ticker, company: loaded.company, coverage: loaded.coverage, nowMs }
  return target
})

/** A per-asset operation: `body` runs on the entry's company (refused `unknown_asset` when there is none). */
export const perAsset =
  (st: EquityState, body: (st: EquityState, t: AssetTarget) => PerAssetResult): PlaneForAsset =>
  (entry, params) =>
    Effect.flatMap(assetTarget(st, entry, params), (t) => body(st, t))

/** The admitted call's company (the `Planes` seam has already refused unknown and uncovered IDs). */
const callTarget = Effect.fnUntraced(function* (st: EquityState, input: HandlerInput) {
  const nowMs = yield* Clock.currentTimeMillis
  const assetId = String(input.params.id)
  const id = parseEquityId(assetId)
  const loaded = id === undefined ? undefined : yield* st.load(id.cik)
  if (id === undefined || loaded === undefined) {
    return yield* Effect.fail(apiError("unknown_asset", `no asset ${assetId}; find canonical IDs with \`resolve\``))
  }
  const target: CallTarget = {
    input,
    assetId,
    cik: id.cik,
    ticker: id.ticker,
    company: loaded.company,
    coverage: loaded.coverage,
    nowMs
  }
  return target
})

/** A call operation on one company's `id`: `body` runs on its company. */
export const call =
  (st: EquityState, body: (st: EquityState, t: CallTarget) => Effect.Effect<HandlerOutput, ApiError>): Handler =>
  (input) =>
    Effect.flatMap(callTarget(st, input), (t) => body(st, t))

/** A call's JSON answer, charged per the operation, cacheable until its `next_update_at`. */
export const answer = <A extends { readonly next_update_at: string }>(input: HandlerInput, data: A): HandlerOutput => ({
  _tag: "Json",
  body: { data },
  creditsCharged: chargeFor(input.op, {}),
  nextUpdateAtMs: Date.parse(data.next_update_at)
})

/** The position a call's `cursor` carries, or undefined without one; refused `invalid_cursor` when not ours. */
export const cursorPosition = (input: HandlerInput): Effect.Effect<string | undefined, ApiError> => {
  const c = input.params.cursor
  if (typeof c !== "string") return Effect.succeed(undefined)
  const p = decodeCursor(input.op.name, input.params, c)
  return isApiError(p) ? Effect.fail(p) : Effect.succeed(p)
}
