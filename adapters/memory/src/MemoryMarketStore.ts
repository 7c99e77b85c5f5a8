/**
 * In-memory twin of the market store, and the hot store behind the simulated feed: columnar typed arrays per
 * (kind, asset, venue), so a year of 15-minute data for the whole universe is a few hundred bytes per row-time
 * and a range read is two binary searches and a copy. Appends in time order (the common case: backfill, then
 * ticks) are O(rows); a write that overlaps stored times merges in O(n).
 *
 * Layout, for memory (issue 16 point 6): times are `Float64Array` (epoch milliseconds need it); a value column
 * is a `Float32Array` while every value written to it is exactly a float32 (checked value by value, so nothing
 * is ever rounded: a live venue's prices are not, and stay `Float64Array`; the simulated feed emits
 * float32-exact values on purpose and takes half the memory), widened to `Float64Array` by the first write that
 * is not. A series whose rows step by exactly 15 minutes (bars and the other per-bar series) keeps no time
 * column, only its first time, until a write leaves the grid. Reads answer `Float64Array`s either way. The first write into an empty series allocates exactly what
 * it holds (a backfill leaves no unused headroom); appends then grow by about a day of 15-minute rows (96) or
 * 1/256 of the series, whichever is more, so a year-long series copies itself about once a day of ticks. Bars
 * whose every open is the previous bar's close (the simulated feed's, a year of them for each asset: a fifth of
 * the bars' bytes) keep no open column, only the first bar's open, until a write breaks the chain.
 */
import {
  type AnySeriesInput,
  BAR_MS,
  type BookSnapshot,
  type FundingState,
  lowerBound,
  MarketStore,
  type RangeQuery,
  type Series,
  SeriesColumns,
  type SeriesExtent,
  type SeriesKind,
  SeriesKinds,
  type SourceStatus
} from "@market-data/core"
import { Effect, Layer } from "effect"

/** A value column: float32 while every value in it is exactly a float32, else float64. */
type Column = Float32Array | Float64Array

/** One venue's stored series: `length` used rows of capacity `cols[j].length`. */
interface Columns {
  /** The times, while the series is not on the grid (else empty). */
  t: Float64Array
  /**
   * While every row is on the 15-minute grid from this time (`t[i] = grid + i * BAR_MS`, as bars and the other
   * per-bar series are): no time column is kept.
   */
  grid: number | undefined
  cols: Array<Column>
  length: number
  /** Whether the series is bars, whose open may be implied by the closes. */
  readonly bars: boolean
  /**
   * Bars only: while every row's open is the row before's close (the first row's is this), no open column is
   * kept (`cols[OPEN]` is empty); undefined while the opens are kept.
   */
  firstOpen: number | undefined
}

const NO_TIMES = new Float64Array(0)
const NO_VALUES = new Float32Array(0)

/** The bars' `open` and `close` columns (`SeriesColumns.bars`). */
const OPEN = SeriesColumns.bars.indexOf("open")
const CLOSE = SeriesColumns.bars.indexOf("close")

/** Whether column `j` is not kept (bars' open, implied by the closes). */
const implied = (c: Columns, j: number): boolean => j === OPEN && c.firstOpen !== undefined

/** Rows the series can hold without growing (every kind's last value column is always kept). */
const capacityOf = (c: Columns): number => (c.cols[c.cols.length - 1] as Column).length

/**
 * Whether `n` input rows' opens continue their closes: each row's open is the row before's close, and the first
 * one's is `before` unless that is undefined. `Object.is`: the same number, -0 and NaN told apart as stored.
 */
const opensChain = (
  open: ArrayLike<number>,
  close: ArrayLike<number>,
  n: number,
  before: number | undefined
): boolean => {
  if (before !== undefined && !Object.is(open[0], before)) return false
  for (let i = 1; i < n; i++) if (!Object.is(open[i], close[i - 1])) return false
  return true
}

/** Keeps the bars' open column again (a write that breaks the chain), float32 while the closes and first open are. */
const materializeOpen = (c: Columns) => {
  const first = c.firstOpen
  if (first === undefined) return
  const close = c.cols[CLOSE] as Column
  const narrow = close instanceof Float32Array && (Math.fround(first) === first || Number.isNaN(first))
  const open = newColumn(narrow, capacityOf(c))
  if (c.length > 0) {
    open[0] = first
    open.set(close.subarray(0, c.length - 1), 1)
  }
  c.cols[OPEN] = open
  c.firstOpen = undefined
}

const timeAt = (c: Columns, i: number): number => (c.grid === undefined ? (c.t[i] as number) : c.grid + i * BAR_MS)

/** The first row in `[lo, hi)` at or after `ms`, else `hi` (`lowerBound` on the times, kept or implied). */
const boundOf = (c: Columns, ms: number, lo: number, hi: number): number => {
  if (c.grid === undefined) return lowerBound(c.t, ms, lo, hi)
  const i = Math.ceil((ms - c.grid) / BAR_MS)
  // As lowerBound answers for a NaN bound (no time is below it).
  return Number.isNaN(i) ? lo : Math.min(hi, Math.max(lo, i))
}

/** Rows `from..to` of the times, as a new array. */
const timesOf = (c: Columns, from: number, to: number): Float64Array => {
  if (c.grid === undefined) return c.t.slice(from, to)
  const out = new Float64Array(to - from)
  for (let i = 0; i < out.length; i++) out[i] = c.grid + (from + i) * BAR_MS
  return out
}

/** Whether `n` input times step by exactly 15 minutes. */
const onGrid = (t: ArrayLike<number>, n: number): boolean => {
  const first = t[0] as number
  for (let i = 1; i < n; i++) if (t[i] !== first + i * BAR_MS) return false
  return n > 0
}

/** Keeps the times in a column again (a write that leaves the grid). */
const materialize = (c: Columns) => {
  if (c.grid === undefined) return
  const t = new Float64Array(capacityOf(c))
  for (let i = 0; i < c.length; i++) t[i] = c.grid + i * BAR_MS
  c.t = t
  c.grid = undefined
}

/** Whether every value of `values` is exactly a float32 (NaN included). */
const float32Exact = (values: ArrayLike<number>): boolean => {
  if (values instanceof Float32Array) return true
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number
    if (Math.fround(v) !== v && !Number.isNaN(v)) return false
  }
  return true
}

/** An empty column of `capacity` rows, of the narrower type when `narrow`. */
const newColumn = (narrow: boolean, capacity: number): Column =>
  narrow ? new Float32Array(capacity) : new Float64Array(capacity)

/** `col` resized to `capacity` rows (its first `length` kept), as float64 when `widen`. */
const resized = (col: Column, capacity: number, length: number, widen = false): Column => {
  const next = widen || col instanceof Float64Array ? new Float64Array(capacity) : new Float32Array(capacity)
  next.set(col.subarray(0, length))
  return next
}

const grow = (c: Columns, needed: number) => {
  if (needed <= capacityOf(c)) return
  // An empty series takes exactly what its first write holds (a backfill's year leaves no headroom); a series
  // that grows by appends gets about a day of 15-minute rows, or 1/256 of itself, of headroom.
  const capacity = c.length === 0 ? needed : needed + Math.max(96, needed >>> 8)
  if (c.grid === undefined) {
    const t = new Float64Array(capacity)
    t.set(c.t.subarray(0, c.length))
    c.t = t
  }
  c.cols = c.cols.map((col, j) => (implied(c, j) ? col : resized(col, capacity, c.length)))
}

/** The input as strictly increasing times, the last of equal times winning. */
const normalize = (t: ArrayLike<number>, cols: ReadonlyArray<ArrayLike<number>>) => {
  const n = t.length
  let ordered = true
  for (let i = 1; i < n; i++) {
    if ((t[i] as number) <= (t[i - 1] as number)) {
      ordered = false
      break
    }
  }
  if (ordered) return { t, cols, n }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (t[a] as number) - (t[b] as number) || a - b)
  const keep: Array<number> = []
  for (const i of order) {
    if (keep.length > 0 && t[keep[keep.length - 1] as number] === t[i]) keep[keep.length - 1] = i
    else keep.push(i)
  }
  return {
    t: Float64Array.from(keep, (i) => t[i] as number),
    cols: cols.map((c) => Float64Array.from(keep, (i) => c[i] as number)),
    n: keep.length
  }
}

/**
 * Writes `input` into `c`. `reserve`: the rows the whole batch brings an empty series (several appends of it in
 * one batch, such as a kept history and the steps generated after it), allocated at once by the first.
 */
const writeInto = (
  c: Columns,
  input: { t: ArrayLike<number>; cols: ReadonlyArray<ArrayLike<number>>; n: number },
  reserve = 0
) => {
  const { t, cols, n } = input
  if (n === 0) return
  const append = c.length === 0 || (t[0] as number) > timeAt(c, c.length - 1)
  // A write starting at the stored last row (the forming bar rewritten, maybe with bars after it): that row is
  // replaced in place and the rest appended. The general merge below copies the whole series (a year of rows per
  // column) for it, which at the forming-bar job's pace (every perpetual each minute) held the event loop for
  // hundreds of milliseconds a minute and fed the collector large buffers.
  const replacesLast = !append && (t[0] as number) === timeAt(c, c.length - 1)
  if (c.bars) {
    const open = cols[OPEN] as ArrayLike<number>
    const close = cols[CLOSE] as ArrayLike<number>
    const storedClose = c.cols[CLOSE] as Column
    if (c.length === 0) {
      // An empty series (a first write, or all trimmed away) implies its opens if this write's chain.
      if (opensChain(open, close, n, undefined)) {
        c.firstOpen = open[0] as number
        c.cols[OPEN] = NO_VALUES
      } else materializeOpen(c)
    } else if (replacesLast) {
      // Opens implied by the closes: the replaced row's is the first open (a one-row series) or the row before's
      // close; a write that breaks that keeps the open column again.
      if (c.length === 1 && c.firstOpen !== undefined) {
        if (opensChain(open, close, n, undefined)) c.firstOpen = open[0] as number
        else materializeOpen(c)
      } else if (c.firstOpen !== undefined && !opensChain(open, close, n, storedClose[c.length - 2] as number)) {
        materializeOpen(c)
      }
    } else if (!append || !opensChain(open, close, n, storedClose[c.length - 1] as number)) {
      materializeOpen(c)
    }
  }
  // A float32 column that is written a value float32 cannot hold exactly becomes float64 first.
  cols.forEach((col, j) => {
    const stored = c.cols[j] as Column
    if (stored instanceof Float32Array && !implied(c, j) && !float32Exact(col)) {
      c.cols[j] = resized(stored, capacityOf(c), c.length, true)
    }
  })
  if (replacesLast) {
    const last = c.length - 1
    cols.forEach((col, j) => {
      if (!implied(c, j)) (c.cols[j] as Column)[last] = col[0] as number
    })
    if (n > 1) {
      const rest = (a: ArrayLike<number>) => Float64Array.from({ length: n - 1 }, (_, i) => a[i + 1] as number)
      writeInto(c, { t: rest(t), cols: cols.map(rest), n: n - 1 })
    }
    return
  }
  if (append) {
    // An append: the series stays on (or starts) the grid when the input continues it, else keeps its times.
    const continues = onGrid(t, n) && (c.length === 0 || (c.grid !== undefined && t[0] === c.grid + c.length * BAR_MS))
    if (continues && c.length === 0) {
      c.grid = t[0] as number
      c.t = NO_TIMES
    } else if (!continues) materialize(c)
    grow(c, c.length === 0 ? Math.max(n, reserve) : c.length + n)
    if (c.grid === undefined) c.t.set(t, c.length)
    cols.forEach((col, j) => {
      if (!implied(c, j)) (c.cols[j] as Column).set(col, c.length)
    })
    c.length += n
    return
  }
  // Merge: stored rows and input rows in time order, the input replacing stored rows at equal times.
  materialize(c)
  const merged: Columns = {
    t: new Float64Array(c.length + n),
    grid: undefined,
    cols: c.cols.map((col) => newColumn(col instanceof Float32Array, c.length + n)),
    length: 0,
    bars: c.bars,
    firstOpen: undefined
  }
  let i = 0
  let k = 0
  let m = 0
  while (i < c.length || k < n) {
    const ts = i < c.length ? (c.t[i] as number) : Number.POSITIVE_INFINITY
    const ti = k < n ? (t[k] as number) : Number.POSITIVE_INFINITY
    if (ti <= ts) {
      merged.t[m] = ti
      for (let j = 0; j < cols.length; j++) (merged.cols[j] as Column)[m] = (cols[j] as ArrayLike<number>)[k] as number
      k++
      if (ti === ts) i++
    } else {
      merged.t[m] = ts
      for (let j = 0; j < c.cols.length; j++) (merged.cols[j] as Column)[m] = (c.cols[j] as Column)[i] as number
      i++
    }
    m++
  }
  c.t = merged.t
  c.cols = merged.cols
  c.length = m
  if (onGrid(c.t, m)) {
    c.grid = c.t[0] as number
    c.t = NO_TIMES
  }
}

const toSeries = <K extends SeriesKind>(
  kind: K,
  assetId: string,
  venue: string,
  c: Columns,
  from: number,
  to: number
): Series<K> => {
  const out: Record<string, unknown> = { kind, assetId, venue, t: timesOf(c, from, to) }
  SeriesColumns[kind].forEach((name, j) => {
    const col = c.cols[j] as Column
    if (implied(c, j)) {
      // Each open is the close before it.
      const close = c.cols[CLOSE] as Column
      const open = new Float64Array(to - from)
      open[0] = from === 0 ? (c.firstOpen as number) : (close[from - 1] as number)
      open.set(close.subarray(from, to - 1), 1)
      out[name] = open
    } else out[name] = col instanceof Float64Array ? col.slice(from, to) : new Float64Array(col.subarray(from, to))
  })
  return out as Series<K>
}

/**
 * Drops one stored series' rows before `cutoffMs` and shrinks its arrays to what remains (with a day of
 * headroom), so the memory is given back, unlike `prune`, which keeps the capacity for the ticks to come.
 */
const trimColumns = (c: Columns, cutoffMs: number): number => {
  const k = boundOf(c, cutoffMs, 0, c.length)
  if (k === 0) return 0
  const rest = c.length - k
  // A day of 15-minute rows of headroom (growing later copies as usual): a trimmed series is short, and the
  // usual 1,024 rows would nearly double it.
  const capacity = rest === 0 ? 0 : rest + Math.max(96, rest >>> 4)
  const shrink = <C extends Column>(col: C): C => {
    const next = (col instanceof Float32Array ? new Float32Array(capacity) : new Float64Array(capacity)) as C
    next.set(col.subarray(k, c.length))
    return next
  }
  if (c.grid === undefined) c.t = shrink(c.t)
  else c.grid += k * BAR_MS
  if (c.firstOpen !== undefined) c.firstOpen = (c.cols[CLOSE] as Column)[k - 1] as number
  c.cols = c.cols.map((col, j) => (implied(c, j) ? col : shrink(col)))
  c.length = rest
  return k
}

/** The in-memory market store, with what only an in-memory store can do besides the port. */
export type MemoryMarketStore = MarketStore["Service"] & {
  /**
   * Drops the rows of `kind` for `assetId` older than `cutoffMs` (on `venues` only, when given) and gives their
   * memory back; answers the number of rows dropped. For a feed that keeps a long history only where it is
   * read (see the simulated feed in `infra/src/Planes.ts`).
   */
  readonly trim: (kind: SeriesKind, assetId: string, cutoffMs: number, venues?: ReadonlyArray<string>) => number
  /** Bytes the stored series' arrays take (capacity, not only the rows used): for measurements and tests. */
  readonly bytes: () => number
}

/** A fresh, empty in-memory market store. */
export const makeMemoryMarketStore = (): MemoryMarketStore => {
  /** kind -> asset -> venue -> columns. */
  const data = new Map<SeriesKind, Map<string, Map<string, Columns>>>(SeriesKinds.map((k) => [k, new Map()]))
  const books = new Map<string, Map<string, BookSnapshot>>()
  const funding = new Map<string, Map<string, FundingState>>()
  const statuses = new Map<string, SourceStatus>()
  /** `status`'s answer, sorted once per change rather than on every read. */
  let sortedStatuses: ReadonlyArray<SourceStatus> | undefined
  /** Bumped by every change (the port's `revision`). */
  let revision = 0
  /**
   * The port's `seriesRevision`: a stamp taken from `seriesStamp` at each change of an asset's series, and the
   * stamp of the last pruning (which may change every asset's).
   */
  let seriesStamp = 0
  let prunedStamp = 0
  const seriesStamps = new Map<string, number>()

  const venuesOf = (kind: SeriesKind, assetId: string, venue: string | undefined): Array<[string, Columns]> => {
    const byVenue = data.get(kind)?.get(assetId)
    if (byVenue === undefined) return []
    if (venue !== undefined) {
      const c = byVenue.get(venue)
      return c === undefined ? [] : [[venue, c]]
    }
    return [...byVenue.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  }

  const putLatest = <A extends { readonly assetId: string; readonly venue: string; readonly t: number }>(
    into: Map<string, Map<string, A>>,
    rows: ReadonlyArray<A>
  ) => {
    for (const r of rows) {
      const byVenue = into.get(r.assetId) ?? new Map<string, A>()
      into.set(r.assetId, byVenue)
      const old = byVenue.get(r.venue)
      if (old === undefined || old.t <= r.t) byVenue.set(r.venue, r)
    }
  }

  const latestOf = <A>(from: Map<string, Map<string, A>>, assetId: string, venue: string | undefined) => {
    const byVenue = from.get(assetId)
    if (byVenue === undefined) return []
    return [...byVenue.entries()]
      .filter(([v]) => venue === undefined || v === venue)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, s]) => s)
  }

  return {
    bytes: () => {
      let n = 0
      for (const byAsset of data.values()) {
        for (const byVenue of byAsset.values()) {
          for (const c of byVenue.values()) n += c.t.byteLength + c.cols.reduce((m, col) => m + col.byteLength, 0)
        }
      }
      return n
    },
    trim: (kind, assetId, cutoffMs, venues) => {
      revision++
      seriesStamps.set(assetId, ++seriesStamp)
      let dropped = 0
      for (const [venue, c] of venuesOf(kind, assetId, undefined)) {
        if (venues === undefined || venues.includes(venue)) dropped += trimColumns(c, cutoffMs)
      }
      return dropped
    },
    read: <K extends SeriesKind>(kind: K, q: RangeQuery) =>
      Effect.sync(() => {
        const out: Array<Series<K>> = []
        for (const [venue, c] of venuesOf(kind, q.assetId, q.venue)) {
          const from = boundOf(c, q.fromMs, 0, c.length)
          const to = boundOf(c, q.toMs, from, c.length)
          if (to > from) out.push(toSeries(kind, q.assetId, venue, c, from, to))
        }
        return out
      }),
    latest: <K extends SeriesKind>(
      kind: K,
      q: { readonly assetId: string; readonly venue?: string; readonly n: number; readonly atMs?: number }
    ) =>
      Effect.sync(() => {
        const out: Array<Series<K>> = []
        for (const [venue, c] of venuesOf(kind, q.assetId, q.venue)) {
          const to = q.atMs === undefined ? c.length : boundOf(c, q.atMs + 1, 0, c.length)
          const from = Math.max(0, to - Math.max(0, Math.floor(q.n)))
          if (to > from) out.push(toSeries(kind, q.assetId, venue, c, from, to))
        }
        return out
      }),
    extent: (kind, assetId) =>
      Effect.sync(() =>
        venuesOf(kind, assetId, undefined)
          .filter(([, c]) => c.length > 0)
          .map(
            ([venue, c]): SeriesExtent => ({
              venue,
              firstMs: timeAt(c, 0),
              lastMs: timeAt(c, c.length - 1),
              count: c.length
            })
          )
      ),
    revision: () => revision,
    seriesRevision: (assetId) => Math.max(seriesStamps.get(assetId) ?? 0, prunedStamp),
    write: (batch: ReadonlyArray<AnySeriesInput>) =>
      Effect.sync(() => {
        revision++
        const stamp = ++seriesStamp
        for (const s of batch) seriesStamps.set(s.assetId, stamp)
        // Rows per series over the batch, where a series comes more than once: an empty one is allocated once.
        const key = (s: AnySeriesInput) => `${s.kind}\u0000${s.assetId}\u0000${s.venue}`
        const rowsOf = new Map<string, number>()
        if (batch.length > 1) for (const s of batch) rowsOf.set(key(s), (rowsOf.get(key(s)) ?? 0) + s.t.length)
        for (const s of batch) {
          const names = SeriesColumns[s.kind] as ReadonlyArray<string>
          const input = s as unknown as Record<string, ArrayLike<number>>
          const cols = names.map((name) => input[name] as ArrayLike<number>)
          if (cols.some((col) => col.length !== s.t.length)) {
            return Effect.die(new Error(`MarketStore.write: ${s.kind} columns of unequal length`))
          }
          const byAsset = data.get(s.kind) as Map<string, Map<string, Columns>>
          const byVenue = byAsset.get(s.assetId) ?? new Map<string, Columns>()
          byAsset.set(s.assetId, byVenue)
          let c = byVenue.get(s.venue)
          if (c === undefined) {
            c = {
              t: NO_TIMES,
              grid: undefined,
              cols: cols.map((col) => newColumn(float32Exact(col), 0)),
              length: 0,
              bars: s.kind === "bars",
              firstOpen: undefined
            }
            byVenue.set(s.venue, c)
          }
          const rows = normalize(s.t, cols)
          writeInto(c, rows, c.length === 0 && rows.n === s.t.length ? (rowsOf.get(key(s)) ?? 0) : 0)
        }
        return Effect.void
      }).pipe(Effect.flatten),
    putBooks: (rows) =>
      Effect.sync(() => {
        revision++
        putLatest(books, rows)
      }),
    books: (assetId, venue) => Effect.sync(() => latestOf(books, assetId, venue)),
    putFundingStates: (rows) =>
      Effect.sync(() => {
        revision++
        putLatest(funding, rows)
      }),
    fundingStates: (assetId, venue) => Effect.sync(() => latestOf(funding, assetId, venue)),
    putStatus: (rows) =>
      Effect.sync(() => {
        revision++
        sortedStatuses = undefined
        for (const r of rows) statuses.set(`${r.venue}\u0000${r.component}`, r)
      }),
    status: Effect.sync(() => {
      sortedStatuses ??= [...statuses.values()].sort((a, b) =>
        a.venue === b.venue ? (a.component < b.component ? -1 : 1) : a.venue < b.venue ? -1 : 1
      )
      return sortedStatuses
    }),
    prune: (cutoffMs) =>
      Effect.sync(() => {
        revision++
        prunedStamp = ++seriesStamp
        let deleted = 0
        for (const byAsset of data.values()) {
          for (const byVenue of byAsset.values()) {
            for (const c of byVenue.values()) {
              const k = boundOf(c, cutoffMs, 0, c.length)
              if (k === 0) continue
              if (c.grid === undefined) c.t.copyWithin(0, k, c.length)
              else c.grid += k * BAR_MS
              if (c.firstOpen !== undefined) c.firstOpen = (c.cols[CLOSE] as Column)[k - 1] as number
              for (const col of c.cols) col.copyWithin(0, k, c.length)
              c.length -= k
              deleted += k
            }
          }
        }
        return deleted
      })
  }
}

/** A layer with a fresh in-memory market store per build. */
export const layerMemoryMarketStore: Layer.Layer<MarketStore> = Layer.sync(MarketStore)(makeMemoryMarketStore)

/**
 * An in-memory hot store in front of a persistent one (for live feeds on PostgreSQL): every read is answered
 * from memory; writes go to the persistent store first, then to memory, so what is served has been persisted.
 * Fill the hot store from the persistent one at start with `warmMarketStore`.
 */
export const makeWriteThroughMarketStore = (
  hot: MarketStore["Service"],
  persistent: MarketStore["Service"]
): MarketStore["Service"] => ({
  read: hot.read,
  latest: hot.latest,
  extent: hot.extent,
  write: (batch) => Effect.andThen(persistent.write(batch), hot.write(batch)),
  putBooks: (books) => Effect.andThen(persistent.putBooks(books), hot.putBooks(books)),
  books: hot.books,
  putFundingStates: (states) => Effect.andThen(persistent.putFundingStates(states), hot.putFundingStates(states)),
  fundingStates: hot.fundingStates,
  putStatus: (status) => Effect.andThen(persistent.putStatus(status), hot.putStatus(status)),
  status: hot.status,
  prune: (cutoffMs) => Effect.andThen(persistent.prune(cutoffMs), hot.prune(cutoffMs)),
  // Reads are the hot store's, and every write reaches it: its revision is this store's.
  ...(hot.revision === undefined ? {} : { revision: hot.revision }),
  ...(hot.seriesRevision === undefined ? {} : { seriesRevision: hot.seriesRevision })
})

/**
 * Copies `[fromMs, toMs)` of every series kind, the latest books and funding states of `assetIds`, and every
 * source status, from `persistent` into `hot`. Returns the number of series rows copied.
 */
export const warmMarketStore = (
  hot: MarketStore["Service"],
  persistent: MarketStore["Service"],
  assetIds: ReadonlyArray<string>,
  fromMs: number,
  toMs: number
): Effect.Effect<number> =>
  Effect.gen(function* () {
    let rows = 0
    for (const assetId of assetIds) {
      for (const kind of SeriesKinds) {
        const series = yield* persistent.read(kind, { assetId, fromMs, toMs })
        for (const s of series) rows += s.t.length
        yield* hot.write(series as ReadonlyArray<AnySeriesInput>)
      }
      yield* hot.putBooks(yield* persistent.books(assetId))
      yield* hot.putFundingStates(yield* persistent.fundingStates(assetId))
    }
    yield* hot.putStatus(yield* persistent.status)
    return rows
  })
