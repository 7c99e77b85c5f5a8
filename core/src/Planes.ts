/**
 * How the data planes plug into the operations. A plane (crypto, equity) supplies what it does for one asset
 * of its own (`perAsset`, for `read` and the domain operations), what it does for one call (`calls`: `series`,
 * `financials`, `events`, `holders` on an `id` of its plane, and plane-wide `rank`), and the directory of the
 * assets it knows. `planeHandlers` turns that into the operations' handlers, deciding refusals in one place:
 *
 * - an ID no plane knows: `unknown_asset`;
 * - an operation that does not serve the ID's plane: `plane_mismatch`;
 * - an asset whose coverage tier does not serve the operation (`TierOperations`): `not_covered`; also an asset
 *   for which the plane has nothing to serve with these parameters (it fails `not_covered`: the answer would be
 *   empty, every figure `not_covered`), refused uncharged the same way;
 * - a plane that has not implemented the operation yet: `501 not_implemented` (temporary; see the changelog).
 */
import { Effect } from "effect"
import { type Plane, planeOf } from "./AssetId.ts"
import { type ApiError, apiError } from "./Errors.ts"
import { type AssetOutcome, makeDerived, perAssetHandler, type RefusalReason } from "./PerAsset.ts"
import type { Handler, HandlerInput, HandlerOutput } from "./Pipeline.ts"
import { type OperationSpec, Operations } from "./Registry.ts"

/** Coverage tiers, as the contract names them. */
export const Tiers = [
  "core",
  "listed_token",
  "contract_token",
  "equity",
  "full",
  "prices_only",
  "discovery_only"
] as const
export type Tier = (typeof Tiers)[number]

/** The plane each tier belongs to. */
export const TierPlane: { readonly [T in Tier]: Plane } = {
  core: "crypto",
  listed_token: "crypto",
  contract_token: "crypto",
  prices_only: "crypto",
  discovery_only: "crypto",
  equity: "equity",
  full: "equity"
}

/**
 * The data operations each tier serves (DECISIONS, Envelope and shapes). `resolve` and `coverage` serve every
 * tier. An operation missing here for an asset's tier is refused `not_covered`.
 */
export const TierOperations: { readonly [T in Tier]: ReadonlyArray<string> } = {
  core: [
    "read",
    "price",
    "funding",
    "open_interest",
    "orderflow",
    "liquidations",
    "liquidity",
    "technicals",
    "structure",
    "series",
    "rank"
  ],
  // `read` on these tiers is a partial read: what their tier does not serve (funding, open interest, flow,
  // liquidations; for on-chain tokens also structure) is null and listed under `unavailable` as `not_covered`.
  listed_token: ["read", "price", "technicals", "structure", "liquidity", "series"],
  contract_token: ["read", "price", "series"],
  prices_only: ["price", "series"],
  discovery_only: [],
  // Filings only, no price feed: what needs a price (price, technicals, series, valuation) is not served.
  // `holders` needs no price: it is served from whatever 13F reports list the issuer (DECISIONS).
  equity: ["read", "profile", "growth", "fundamentals", "financials", "events", "holders"],
  full: [
    "read",
    "price",
    "technicals",
    "profile",
    "valuation",
    "growth",
    "fundamentals",
    "series",
    "financials",
    "events",
    "holders"
  ]
}

/** Whether `tier` serves `operation` (discovery operations serve every tier). */
export const tierServes = (tier: Tier, operation: string): boolean =>
  operation === "resolve" || operation === "coverage" || TierOperations[tier].includes(operation)

/** One asset as the directory knows it: what `resolve` searches and `coverage` lists. */
export interface DirectoryEntry {
  readonly asset_id: string
  readonly plane: Plane
  readonly symbol: string
  readonly name: string
  readonly tier: Tier
  /** Networks a crypto asset lives on (e.g. `ethereum`, `solana`); empty for equities. */
  readonly networks: ReadonlyArray<string>
  /** Other names `resolve` matches (former names, alternative tickers); may be empty. */
  readonly aliases: ReadonlyArray<string>
  /** Whether the asset has live (fresh) data now. */
  readonly alive: boolean
  /**
   * The venues feeding a crypto asset, where the plane's universe is not the hand-written registry (live mode's
   * asset directory): `coverage` reports their source statuses. Not part of any answer.
   */
  readonly venues?: ReadonlyArray<string>
}

/** What one plane supplies. */
export interface PlaneOperations {
  readonly plane: Plane
  /** Per-asset operations (`read` and the domain operations) for assets of this plane. */
  readonly perAsset: ReadonlyMap<string, PlaneForAsset>
  /** Call operations: `series`, `financials`, `events`, `holders` on an `id` of this plane; `rank`. */
  readonly calls: ReadonlyMap<string, Handler>
  /** Every asset of the plane, with `alive` as of now. */
  readonly directory: Effect.Effect<ReadonlyArray<DirectoryEntry>>
  /** One asset of the plane, or undefined when the plane does not know it. */
  readonly lookup: (assetId: string) => Effect.Effect<DirectoryEntry | undefined>
  /** The source feeding the plane (`simulated`, `live`), reported as `X-Data-Source` on its answers. */
  readonly source?: string
  /**
   * The source of one asset's data where the plane mixes sources (e.g. `sec` for a company ingested from SEC
   * files beside the simulated ones); undefined defers to `source`.
   */
  readonly sourceOf?: (assetId: string) => string | undefined
  /**
   * A number that changes whenever stored data one asset's per-asset answers are built from changes (its series,
   * its streamed state, the sources' statuses, the universe). Apart from the clock, which each answer's
   * `next_update_at` accounts for, an answer can differ only after this moved. Optional: where absent (or
   * undefined for an asset), a reader that wants to see changes has to read the answer again.
   */
  readonly revisionOf?: (assetId: string) => number | undefined
  /** How many assets the plane serves now, read without building the directory; where absent, `directory` counts. */
  readonly universeSize?: () => number
}

/**
 * What a plane does for one known asset whose tier serves the operation. Refusals are decided before it is
 * called; it answers the per-asset result (with `asset_id`, `as_of`, `status`, `next_update_at`, and
 * `unavailable` when a component is missing). `timeframe`/`interval` may be absent from `params` in a batch
 * that mixes planes: the plane applies its own default then.
 */
export type PlaneForAsset = (
  entry: DirectoryEntry,
  params: HandlerInput["params"],
  input: HandlerInput
) => Effect.Effect<{ readonly next_update_at?: string } & object, ApiError>

const refused = (reason: RefusalReason, message: string): AssetOutcome => ({ _tag: "Refused", reason, message })

const notImplemented = (op: OperationSpec, plane: Plane): ApiError =>
  apiError("not_implemented", `\`${op.name}\` on the ${plane} plane has not landed yet; see docs section changelog`)

/**
 * Why `op` cannot serve `assetId` (a refusal), or the plane's entry for it. Shared by the per-asset and the
 * call operations so both refuse alike.
 */
export const admit = (
  planes: ReadonlyMap<Plane, PlaneOperations>,
  op: OperationSpec,
  assetId: string
): Effect.Effect<
  | { readonly _tag: "Refused"; readonly reason: RefusalReason; readonly message: string }
  | { readonly _tag: "Admitted"; readonly entry: DirectoryEntry; readonly plane: PlaneOperations }
> => {
  // Plain combinators rather than a generator: this runs for every asset of every data request.
  const plane = planeOf(assetId)
  const impl = plane === undefined ? undefined : planes.get(plane)
  // Built only when refused (its message is text made for the asset).
  const unknown = () => ({
    _tag: "Refused" as const,
    reason: "unknown_asset" as const,
    message: `no asset ${assetId}; find canonical IDs with \`resolve\``
  })
  if (plane === undefined || impl === undefined) return Effect.succeed(unknown())
  return Effect.map(impl.lookup(assetId), (entry) => {
    if (entry === undefined) return unknown()
    if (!op.planes.includes(plane)) {
      return {
        _tag: "Refused" as const,
        reason: "plane_mismatch" as const,
        message: `\`${op.name}\` serves the ${op.planes.join(" and ")} plane; ${assetId} is ${plane}`
      }
    }
    if (!tierServes(entry.tier, op.name)) {
      return {
        _tag: "Refused" as const,
        reason: "not_covered" as const,
        message: `${assetId} is covered at tier \`${entry.tier}\`, which does not serve \`${op.name}\` (see docs section refusals)`
      }
    }
    return { _tag: "Admitted" as const, entry, plane: impl }
  })
}

/**
 * The handlers of every data operation some plane implements. Operations no plane implements are left out
 * (they answer `not_implemented` through the pipeline).
 */
export const planeHandlers = (planes: ReadonlyArray<PlaneOperations>): ReadonlyMap<string, Handler> => {
  const byPlane = new Map<Plane, PlaneOperations>(planes.map((p) => [p.plane, p]))
  const joined = (sources: ReadonlyArray<string>) =>
    sources.length === 0 ? undefined : [...new Set(sources)].sort().join(",")
  const dataSource = joined(planes.flatMap((p) => (p.source === undefined ? [] : [p.source])))
  const mixed = planes.some((p) => p.sourceOf !== undefined)
  /** The sources of the assets a request names (`id`/`ids`); with none, every plane's. */
  const sourceOfId = (id: string): string | undefined => {
    const plane = planeOf(id)
    const impl = plane === undefined ? undefined : byPlane.get(plane)
    return impl === undefined ? undefined : (impl.sourceOf?.(id) ?? impl.source)
  }
  const sourceOfRequest = (params: HandlerInput["params"]): string | undefined => {
    // One asset (most requests): its source as it is, nothing to collect or join.
    if (typeof params.id === "string") return sourceOfId(params.id) ?? dataSource
    const ids = Array.isArray(params.ids) ? params.ids : []
    const sources = ids.flatMap((id) => {
      const source = sourceOfId(id)
      return source === undefined ? [] : [source]
    })
    return joined(sources) ?? dataSource
  }
  const out = new Map<string, Handler>()
  const set = (name: string, handler: Handler) => {
    if (dataSource === undefined && !mixed) {
      out.set(name, handler)
      return
    }
    // A handler hands back the same output while its data is unchanged (`perAssetHandler`): the output with its
    // source is built once per output and source, not at every request (kept on the output: `makeDerived`).
    const sourcedOf = makeDerived<{ source?: string; output?: HandlerOutput }>(`sourced ${name}`, () => ({}))
    out.set(name, (input) =>
      Effect.map(handler(input), (o) => {
        if (o._tag !== "Json") return o
        const source = mixed ? sourceOfRequest(input.params) : dataSource
        if (source === undefined) return o
        const known = sourcedOf(o)
        if (known.output !== undefined && known.source === source) return known.output
        const output = { ...o, dataSource: source }
        known.source = source
        known.output = output
        return output
      })
    )
  }
  for (const op of Operations) {
    if (op.group === "discovery") continue
    if (!planes.some((p) => p.perAsset.has(op.name) || p.calls.has(op.name))) continue
    if (op.batch) {
      set(
        op.name,
        perAssetHandler((id, params, input) =>
          Effect.flatMap(admit(byPlane, op, id), (a): Effect.Effect<AssetOutcome, ApiError> => {
            if (a._tag === "Refused") return Effect.succeed(refused(a.reason, a.message))
            const forAsset = a.plane.perAsset.get(op.name)
            if (forAsset === undefined) return Effect.fail(notImplemented(op, a.plane.plane))
            return forAsset(a.entry, params, input).pipe(
              Effect.map((result): AssetOutcome => ({ _tag: "Delivered", result })),
              // A plane that has nothing of the operation to serve for these parameters (every figure would be
              // \`not_covered\`, e.g. equity technicals on an intraday timeframe) refuses the asset: uncharged.
              Effect.catch((e: ApiError) =>
                e.code === "not_covered"
                  ? Effect.succeed<AssetOutcome>({
                      _tag: "Refused",
                      reason: "not_covered",
                      message: e.message,
                      ...(e.param === undefined ? {} : { param: e.param })
                    })
                  : Effect.fail(e)
              )
            )
          })
        )
      )
      continue
    }
    set(op.name, (input) =>
      Effect.gen(function* () {
        const id = input.params.id
        if (typeof id !== "string") {
          // Plane-wide call (`rank`): the operation's only plane.
          const plane = op.planes.length === 1 ? byPlane.get(op.planes[0] as Plane) : undefined
          const handler = plane?.calls.get(op.name)
          if (plane === undefined || handler === undefined) {
            return yield* Effect.fail(notImplemented(op, op.planes[0] ?? "crypto"))
          }
          return yield* handler(input)
        }
        const a = yield* admit(byPlane, op, id)
        if (a._tag === "Refused") return yield* Effect.fail(apiError(a.reason, a.message, { param: "id" }))
        const handler = a.plane.calls.get(op.name)
        if (handler === undefined) return yield* Effect.fail(notImplemented(op, a.plane.plane))
        return yield* handler(input)
      })
    )
  }
  return out
}
