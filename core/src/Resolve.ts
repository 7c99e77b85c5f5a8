/**
 * `resolve`: a human query (symbol, name, former name, or a canonical ID) to ranked canonical IDs over the
 * directories of the planes. Key required, zero credits.
 *
 * Matching is case-insensitive and width-insensitive (Unicode NFKC, lower case, runs of whitespace as one
 * space, ends trimmed). Each asset scores by the best way it matches (`ResolveScores`, highest first):
 * exact canonical ID or symbol, exact name, symbol prefix, name prefix, symbol substring, name substring,
 * exact alias, alias prefix, alias substring. Substring matches need a query of at least
 * `SUBSTRING_MIN_CHARACTERS` characters. Ties in score rank alive assets first, then the richer tier, then
 * crypto before equity, the shorter symbol, and the asset ID: a total order, so answers are stable.
 *
 * A query is contested when more than one asset shares the top score: `best` is then `null` and each
 * contested match carries warnings instead of a silent pick (`symbol_collision`, `name_collision`, one per
 * other asset; `ambiguous_query` for tied partial matches). `network` keeps only crypto matches on that
 * network (and so can settle a contest); `limit` caps the matches listed per plane, while `coverage` counts
 * every match on each plane.
 *
 * When nothing matches, `suggestions` lists the nearest assets by edit distance to their symbol, name (or a
 * word of it) or an alias, within `maxSuggestionDistance`, nearest first (additive; absent when something
 * matches).
 */
import { Effect } from "effect"
import type { Plane } from "./AssetId.ts"
import type { Handler } from "./Pipeline.ts"
import type { DirectoryEntry, PlaneOperations, Tier } from "./Planes.ts"

/** How well an asset matches, by the best rule it meets. Higher is better. */
export const ResolveScores = {
  /** The query is the asset's canonical ID or its symbol. */
  exact_symbol: 100,
  exact_name: 90,
  symbol_prefix: 70,
  name_prefix: 60,
  symbol_substring: 50,
  name_substring: 40,
  /** Aliases (former names, alternative tickers) rank below every direct match. */
  exact_alias: 30,
  alias_prefix: 20,
  alias_substring: 10
} as const
export type MatchRule = keyof typeof ResolveScores

/** Shortest query for which substring matches count (a one-letter query would match nearly everything). */
export const SUBSTRING_MIN_CHARACTERS = 2

/** Warning codes a match can carry. */
export type ResolveWarningCode = "symbol_collision" | "name_collision" | "ambiguous_query"

/** At most this many collision warnings per match (one per other asset). */
export const MAX_COLLISION_WARNINGS = 10

/** Tie-break within a score: richer coverage first. */
const TIER_RANK: { readonly [T in Tier]: number } = {
  core: 0,
  full: 0,
  listed_token: 1,
  equity: 1,
  contract_token: 2,
  prices_only: 3,
  discovery_only: 4
}
const PLANE_RANK: { readonly [P in Plane]: number } = { crypto: 0, equity: 1 }

export interface ResolveWarning {
  readonly code: ResolveWarningCode
  readonly message: string
  readonly asset_id?: string
}

export interface ResolveMatch {
  readonly asset_id: string
  readonly plane: Plane
  readonly symbol: string
  readonly name: string
  readonly tier: Tier
  readonly network?: string
  readonly score: number
  readonly warnings: ReadonlyArray<ResolveWarning>
}

/** A near miss offered when nothing matches: how many single-character edits separate it from the query. */
export interface ResolveSuggestion {
  readonly asset_id: string
  readonly plane: Plane
  readonly symbol: string
  readonly name: string
  readonly tier: Tier
  /** Which text of the asset came nearest: its symbol, its name (or one word of it), or an alias. */
  readonly matched: "symbol" | "name" | "alias"
  /** Edit distance (insertions, deletions, substitutions, adjacent transpositions) to the query. */
  readonly distance: number
}

export interface ResolveAnswer {
  readonly query: string
  readonly best: ResolveMatch | null
  readonly matches: ReadonlyArray<ResolveMatch>
  readonly coverage: { readonly [P in Plane]: { readonly matches: number } }
  /** Only when nothing matches: the nearest symbols and names (up to `MAX_SUGGESTIONS`), nearest first. */
  readonly suggestions?: ReadonlyArray<ResolveSuggestion>
}

/** At most this many suggestions when nothing matches. */
export const MAX_SUGGESTIONS = 5

/**
 * Farthest a suggestion may be from the query: one edit for queries of up to 5 characters, then one more per
 * further 3 characters (a 9-character query allows 3), at most 4.
 */
export const maxSuggestionDistance = (queryLength: number): number =>
  Math.min(4, Math.max(1, Math.floor(queryLength / 3)))

/**
 * Optimal string alignment distance (Levenshtein with adjacent transpositions) between `a` and `b`, counted in
 * code points, or `max + 1` as soon as it is known to exceed `max`.
 */
export const editDistance = (a: string, b: string, max: number): number => {
  const x = [...a]
  const y = [...b]
  if (Math.abs(x.length - y.length) > max) return max + 1
  let prev2: Array<number> = []
  let prev: Array<number> = Array.from({ length: y.length + 1 }, (_, j) => j)
  for (let i = 1; i <= x.length; i++) {
    const row: Array<number> = [i]
    let rowMin = i
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost)
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        d = Math.min(d, (prev2[j - 2] as number) + 1)
      }
      row.push(d)
      if (d < rowMin) rowMin = d
    }
    if (rowMin > max) return max + 1
    prev2 = prev
    prev = row
  }
  return Math.min(prev[y.length] as number, max + 1)
}

/** The nearest texts of an entry to `q`: symbol, name and its words, aliases. */
const nearestOf = (
  entry: DirectoryEntry,
  q: string,
  max: number,
  memo: ResolveMemo | undefined
): { readonly matched: ResolveSuggestion["matched"]; readonly distance: number } | undefined => {
  const { symbol, name, aliases } = normalized(entry, memo)
  let best: { matched: ResolveSuggestion["matched"]; distance: number } | undefined
  const consider = (matched: ResolveSuggestion["matched"], text: string) => {
    const limit = best === undefined ? max : best.distance - 1
    if (limit < 0) return
    const d = editDistance(q, text, limit)
    if (d <= limit) best = { matched, distance: d }
  }
  consider("symbol", symbol)
  consider("name", name)
  // A one-word query near one word of a longer name ("etherum" for "Ethereum Classic").
  if (!q.includes(" ") && name.includes(" ")) for (const w of name.split(" ")) consider("name", w)
  for (const a of aliases) consider("alias", a)
  return best
}

/** The form queries and directory text are compared in. */
export const normalizeQuery = (s: string): string =>
  // The common case (directories are mostly plain ASCII) needs lower case only: NFKC leaves printable ASCII
  // as it is, and there is no run of spaces to fold.
  PLAIN.test(s) ? s.toLowerCase() : s.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim()
/** Printable ASCII words separated by single spaces. */
const PLAIN = /^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/

/** An entry's text in normalized form, computed once per entry object. */
interface Normalized {
  readonly id: string
  readonly symbol: string
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  /** An equity's SEC CIK without leading zeros (`eq:<cik>:<ticker>`), or undefined. */
  readonly cik: string | undefined
}

/** The CIK a normalized query names (`320193`, `0000320193`, `cik0000320193`), without leading zeros. */
const cikOfQuery = (q: string): string | undefined => /^(?:cik ?)?0*([1-9][0-9]{0,9})$/.exec(q)?.[1]

/**
 * What resolving remembers between queries, one per owner (the `resolve` handler of a service instance; a test
 * makes its own): each directory entry's normalized text, and each directory array's index (`candidatesOf`).
 * Both are keyed by the objects they describe (directories are never changed once listed), so they go with them.
 */
export interface ResolveMemo {
  readonly normalized: WeakMap<DirectoryEntry, Normalized>
  /** Per directory array: how often it was queried, and its index once it was queried twice. */
  readonly indexes: WeakMap<ReadonlyArray<DirectoryEntry>, { queries: number; index: DirectoryIndex | undefined }>
}

/** An empty memory for `resolveQuery`. */
export const makeResolveMemo = (): ResolveMemo => ({ normalized: new WeakMap(), indexes: new WeakMap() })

const normalizeEntry = (e: DirectoryEntry): Normalized => ({
  id: e.asset_id.toLowerCase(),
  symbol: normalizeQuery(e.symbol),
  name: normalizeQuery(e.name),
  aliases: e.aliases.map(normalizeQuery),
  cik: /^eq:([0-9]+):/.exec(e.asset_id)?.[1]
})

/** An entry's normalized text: computed once per entry object in `memo`, each time without one. */
const normalized = (e: DirectoryEntry, memo: ResolveMemo | undefined): Normalized => {
  if (memo === undefined) return normalizeEntry(e)
  let n = memo.normalized.get(e)
  if (n === undefined) {
    n = normalizeEntry(e)
    memo.normalized.set(e, n)
  }
  return n
}

/** The best rule `entry` meets for the normalized query `q`, or undefined when it does not match. */
export const matchRule = (entry: DirectoryEntry, q: string): MatchRule | undefined =>
  q.length === 0 ? undefined : ruleOf(entry, q, [...q].length >= SUBSTRING_MIN_CHARACTERS, undefined)

const ruleOf = (
  entry: DirectoryEntry,
  q: string,
  substrings: boolean,
  memo: ResolveMemo | undefined
): MatchRule | undefined => {
  const { id, symbol, name, aliases, cik } = normalized(entry, memo)
  if (symbol === q || id === q) return "exact_symbol"
  // A company's CIK identifies it as exactly as its canonical ID does.
  if (cik !== undefined && cik === cikOfQuery(q)) return "exact_symbol"
  if (name === q) return "exact_name"
  if (symbol.startsWith(q)) return "symbol_prefix"
  if (name.startsWith(q)) return "name_prefix"
  if (substrings && symbol.includes(q)) return "symbol_substring"
  if (substrings && name.includes(q)) return "name_substring"
  if (aliases.includes(q)) return "exact_alias"
  if (aliases.some((a) => a.startsWith(q))) return "alias_prefix"
  if (substrings && aliases.some((a) => a.includes(q))) return "alias_substring"
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// Index

/**
 * A directory's index, so a query reads a few posting lists instead of every entry. Every rule but the CIK one
 * means the query is a substring of the entry's ID, symbol, name or an alias (equal to, a prefix of, or inside
 * it), so an entry that matches holds every pair of adjacent characters of the query in one of those texts:
 * the candidates are the entries of the query's rarest character pair (`pairs`), plus those whose CIK the
 * query names (`ciks`). A one-character query can only be equal to or a prefix of a text: the entries of that
 * first character (`firsts`). Candidates then go through the same rules as a scan, in directory order, so the
 * answers are exactly the scan's (a test compares both on random queries).
 */
interface DirectoryIndex {
  readonly pairs: ReadonlyMap<string, ReadonlyArray<number>>
  readonly firsts: ReadonlyMap<string, ReadonlyArray<number>>
  readonly ciks: ReadonlyMap<string, ReadonlyArray<number>>
}

const EMPTY: ReadonlyArray<number> = []

const buildIndex = (directory: ReadonlyArray<DirectoryEntry>, memo: ResolveMemo): DirectoryIndex => {
  const pairs = new Map<string, Array<number>>()
  const firsts = new Map<string, Array<number>>()
  const ciks = new Map<string, Array<number>>()
  // Entries are added in order, so a posting list stays sorted and holds an entry once (the last-added check).
  const post = (map: Map<string, Array<number>>, key: string, i: number) => {
    const list = map.get(key)
    if (list === undefined) map.set(key, [i])
    else if (list[list.length - 1] !== i) list.push(i)
  }
  directory.forEach((entry, i) => {
    const n = normalized(entry, memo)
    if (n.cik !== undefined) post(ciks, n.cik, i)
    for (const text of [n.id, n.symbol, n.name, ...n.aliases]) {
      const cps = [...text]
      if (cps.length === 0) continue
      post(firsts, cps[0] as string, i)
      for (let k = 1; k < cps.length; k++) post(pairs, (cps[k - 1] as string) + (cps[k] as string), i)
    }
  })
  return { pairs, firsts, ciks }
}

/** The common elements of two ascending lists. */
const intersect = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): ReadonlyArray<number> => {
  const out: Array<number> = []
  let j = 0
  for (const x of a) {
    while (j < b.length && (b[j] as number) < x) j++
    if (j < b.length && b[j] === x) out.push(x)
  }
  return out
}

/**
 * The indices (ascending) of the entries of `directory` that can match the normalized query `q`, or undefined
 * to scan them all: a directory seen for the first time is scanned (a list built for one query would cost more
 * to index than to scan); from its second query on it is indexed once (in `memo`) and read through the index.
 */
const candidatesOf = (
  directory: ReadonlyArray<DirectoryEntry>,
  q: string,
  memo: ResolveMemo
): ReadonlyArray<number> | undefined => {
  let slot = memo.indexes.get(directory)
  if (slot === undefined) {
    slot = { queries: 0, index: undefined }
    memo.indexes.set(directory, slot)
  }
  slot.queries++
  if (slot.index === undefined) {
    if (slot.queries < 2) return undefined
    slot.index = buildIndex(directory, memo)
  }
  const { pairs, firsts, ciks } = slot.index
  const cps = [...q]
  let best: ReadonlyArray<number>
  if (cps.length === 1) best = firsts.get(q) ?? EMPTY
  else {
    // Every pair's list, rarest first, intersected until few candidates are left.
    const lists: Array<ReadonlyArray<number>> = []
    for (let k = 1; k < cps.length; k++) lists.push(pairs.get((cps[k - 1] as string) + (cps[k] as string)) ?? EMPTY)
    lists.sort((a, b) => a.length - b.length)
    best = lists[0] as ReadonlyArray<number>
    for (let k = 1; k < lists.length && best.length > 8; k++) best = intersect(best, lists[k] as ReadonlyArray<number>)
  }
  const cik = cikOfQuery(q)
  const byCik = cik === undefined ? EMPTY : (ciks.get(cik) ?? EMPTY)
  if (byCik.length === 0) return best
  return [...new Set([...best, ...byCik])].sort((a, b) => a - b)
}

interface Scored {
  readonly entry: DirectoryEntry
  readonly rule: MatchRule
  readonly score: number
}

const compare = (a: Scored, b: Scored): number =>
  b.score - a.score ||
  Number(b.entry.alive) - Number(a.entry.alive) ||
  TIER_RANK[a.entry.tier] - TIER_RANK[b.entry.tier] ||
  PLANE_RANK[a.entry.plane] - PLANE_RANK[b.entry.plane] ||
  a.entry.symbol.length - b.entry.symbol.length ||
  (a.entry.asset_id < b.entry.asset_id ? -1 : a.entry.asset_id > b.entry.asset_id ? 1 : 0)

const describeAsset = (e: DirectoryEntry): string => `${e.asset_id} (${e.name}, ${e.plane}, tier ${e.tier})`

/** Warnings of one contested match against the other contenders. */
const warningsOf = (self: Scored, contenders: ReadonlyArray<Scored>, query: string): Array<ResolveWarning> => {
  const others = contenders.filter((c) => c.entry.asset_id !== self.entry.asset_id)
  if (others.length === 0) return []
  if (self.rule === "exact_symbol" || self.rule === "exact_name") {
    const code: ResolveWarningCode = self.rule === "exact_symbol" ? "symbol_collision" : "name_collision"
    const what = self.rule === "exact_symbol" ? "symbol" : "name"
    return others.slice(0, MAX_COLLISION_WARNINGS).map((o) => ({
      code,
      message: `${what} ${JSON.stringify(query)} also names ${describeAsset(o.entry)}; pick by asset_id`,
      asset_id: o.entry.asset_id
    }))
  }
  return [
    {
      code: "ambiguous_query",
      message: `${others.length + 1} assets match ${JSON.stringify(query)} equally well (${self.rule.replace("_", " ")}); pick by asset_id or refine the query`
    }
  ]
}

/**
 * Resolves `query` against the directories of the given planes. Pure: the directories are passed in, so the
 * ranking can be tested without a plane. `memo` is what the caller keeps between queries (its normalized
 * entries and directory indexes); without one every entry is normalized and scanned.
 */
export const resolveQuery = (
  directories: ReadonlyArray<ReadonlyArray<DirectoryEntry>>,
  query: string,
  options: {
    readonly limit: number
    readonly network?: string | undefined
    /** Test hook: scan every entry instead of the directory's index (the answers are the same). */
    readonly scan?: boolean
    readonly memo?: ResolveMemo
  }
): ResolveAnswer => {
  const q = normalizeQuery(query)
  const memo = options.memo
  const substrings = [...q].length >= SUBSTRING_MIN_CHARACTERS
  const network = options.network === undefined ? undefined : normalizeQuery(options.network)
  const scored: Array<Scored> = []
  const consider = (entry: DirectoryEntry) => {
    if (
      network !== undefined &&
      (entry.plane !== "crypto" || !entry.networks.some((n) => normalizeQuery(n) === network))
    )
      return
    const rule = ruleOf(entry, q, substrings, memo)
    if (rule !== undefined) scored.push({ entry, rule, score: ResolveScores[rule] })
  }
  if (q.length > 0) {
    for (const directory of directories) {
      const candidates = options.scan === true || memo === undefined ? undefined : candidatesOf(directory, q, memo)
      if (candidates === undefined) for (const entry of directory) consider(entry)
      else for (const i of candidates) consider(directory[i] as DirectoryEntry)
    }
  }
  scored.sort(compare)
  const top = scored[0]
  const contenders = top === undefined ? [] : scored.filter((s) => s.score === top.score)
  const contested = contenders.length > 1
  const toMatch = (s: Scored): ResolveMatch => {
    const e = s.entry
    const onNetwork =
      network !== undefined
        ? e.networks.find((n) => normalizeQuery(n) === network)
        : e.networks.length === 1
          ? e.networks[0]
          : undefined
    return {
      asset_id: e.asset_id,
      plane: e.plane,
      symbol: e.symbol,
      name: e.name,
      tier: e.tier,
      ...(onNetwork === undefined ? {} : { network: onNetwork }),
      score: s.score,
      warnings: contested && s.score === top?.score ? warningsOf(s, contenders, query.trim()) : []
    }
  }
  const perPlane = new Map<Plane, number>()
  const listed: Array<ResolveMatch> = []
  for (const s of scored) {
    const n = perPlane.get(s.entry.plane) ?? 0
    perPlane.set(s.entry.plane, n + 1)
    if (n < options.limit) listed.push(toMatch(s))
  }
  const answer: ResolveAnswer = {
    query,
    best: top === undefined || contested ? null : (listed[0] as ResolveMatch),
    matches: listed,
    coverage: { crypto: { matches: perPlane.get("crypto") ?? 0 }, equity: { matches: perPlane.get("equity") ?? 0 } }
  }
  if (listed.length > 0 || q.length === 0) return answer
  // Nothing matches: the nearest symbols and names, so a typo is one step from its asset.
  const max = maxSuggestionDistance([...q].length)
  const near: Array<Scored & { readonly suggestion: ResolveSuggestion }> = []
  for (const directory of directories) {
    for (const entry of directory) {
      if (
        network !== undefined &&
        (entry.plane !== "crypto" || !entry.networks.some((n) => normalizeQuery(n) === network))
      )
        continue
      const n = nearestOf(entry, q, max, memo)
      if (n === undefined) continue
      const suggestion: ResolveSuggestion = {
        asset_id: entry.asset_id,
        plane: entry.plane,
        symbol: entry.symbol,
        name: entry.name,
        tier: entry.tier,
        matched: n.matched,
        distance: n.distance
      }
      // Nearest first; then the order matches use (alive, richer tier, crypto, shorter symbol, asset ID).
      near.push({ entry, rule: "exact_symbol", score: -n.distance, suggestion })
    }
  }
  near.sort(compare)
  return { ...answer, suggestions: near.slice(0, MAX_SUGGESTIONS).map((s) => s.suggestion) }
}

/** The `resolve` handler over the planes' directories, with a memory of its own (`ResolveMemo`). */
export const resolveHandler = (planes: ReadonlyArray<PlaneOperations>): Handler => {
  const memo = makeResolveMemo()
  return ({ params }) =>
    Effect.gen(function* () {
      const directories = yield* Effect.forEach(planes, (p) => p.directory)
      const data = resolveQuery(directories, String(params.q), {
        limit: typeof params.limit === "number" ? params.limit : 10,
        network: typeof params.network === "string" ? params.network : undefined,
        memo
      })
      return { _tag: "Json" as const, body: { data }, creditsCharged: 0 }
    })
}
