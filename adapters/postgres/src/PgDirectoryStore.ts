/**
 * The asset directory store on PostgreSQL (server or PGlite), tables of
 * `infra/migrations/2026-11-25T0100_asset_directory.ts`. Every write runs in one transaction that first locks the
 * single meta row (`for update`), so saves and merges from several instances run one after the other and each
 * reads what the one before wrote. Rows are upserted, never deleted; the listings' primary key `(venue, market,
 * symbol)` (migration `2026-11-25T0500_directory_spot`) holds each venue symbol of a market to one asset in the
 * database itself, beside the port's `directoryConflicts` check.
 */
import {
  type AssetDirectory,
  AssetDirectoryStore,
  type CoinList,
  type DirectoryAsset,
  type DirectoryListing,
  directoryConflicts,
  mergeDirectory,
  type SlugSource,
  seedDirectory
} from "@market-data/core"
import { Effect, Layer } from "effect"
import type { Kysely, Transaction } from "kysely"
import { type Database, num } from "./Database.ts"
import { query } from "./Errors.ts"

/** Every table of the directory store, for tests. */
export const DirectoryTables: ReadonlyArray<string> = [
  "crypto_directory_listings",
  "crypto_directory_assets",
  "crypto_coin_list"
]

type Db = Kysely<any>
type Row = Record<string, any>

const CHUNK = 1_000

const inChunks = async <A>(rows: ReadonlyArray<A>, size: number, write: (chunk: Array<A>) => Promise<unknown>) => {
  for (let i = 0; i < rows.length; i += size) await write(rows.slice(i, i + size))
}

const listingOf = (r: Row): DirectoryListing => ({
  venue: r.venue,
  market: r.market,
  symbol: r.symbol,
  base: r.base,
  quote: r.quote,
  multiplier: Number(r.multiplier),
  ...(r.contract_size === null ? {} : { contractSize: String(r.contract_size) }),
  status: r.status,
  firstSeenMs: num(r.first_seen_ms),
  lastTradingMs: num(r.last_trading_ms)
})

const aliasesOf = (v: unknown): ReadonlyArray<string> =>
  (typeof v === "string" ? JSON.parse(v) : v) as ReadonlyArray<string>

/** The stored directory over the seed's. */
const read = async (db: Db | Transaction<any>): Promise<AssetDirectory> => {
  const meta = await db.selectFrom("crypto_directory_meta").select("updated_ms").where("id", "=", 1).executeTakeFirst()
  const assets = await db.selectFrom("crypto_directory_assets").selectAll().orderBy("asset_id").execute()
  const listings = await db
    .selectFrom("crypto_directory_listings")
    .selectAll()
    .orderBy("asset_id")
    .orderBy("venue")
    .orderBy("symbol")
    .orderBy("market")
    .execute()
  const byAsset = new Map<string, Array<DirectoryListing>>()
  for (const r of listings) {
    const list = byAsset.get(r.asset_id) ?? []
    list.push(listingOf(r))
    byAsset.set(r.asset_id, list)
  }
  const all = new Map(seedDirectory().assets.map((a) => [a.id, a]))
  for (const r of assets) {
    const a: DirectoryAsset = {
      id: r.asset_id,
      symbol: r.symbol,
      name: r.name,
      aliases: aliasesOf(r.aliases),
      ...(r.coingecko_id === null ? {} : { coingeckoId: r.coingecko_id }),
      slugSource: r.slug_source as SlugSource,
      listings: byAsset.get(r.asset_id) ?? [],
      alive: r.alive,
      firstSeenMs: num(r.first_seen_ms)
    }
    all.set(a.id, a)
  }
  return {
    assets: [...all.values()].sort((x, y) => (x.id < y.id ? -1 : 1)),
    updatedMs: meta === undefined ? 0 : num(meta.updated_ms)
  }
}

const write = async (trx: Transaction<any>, directory: AssetDirectory) => {
  await inChunks(directory.assets, CHUNK, (chunk) =>
    trx
      .insertInto("crypto_directory_assets")
      .values(
        chunk.map((a) => ({
          asset_id: a.id,
          symbol: a.symbol,
          name: a.name,
          aliases: JSON.stringify(a.aliases),
          coingecko_id: a.coingeckoId ?? null,
          slug_source: a.slugSource,
          alive: a.alive,
          first_seen_ms: a.firstSeenMs
        }))
      )
      .onConflict((oc) =>
        oc.column("asset_id").doUpdateSet((eb) => ({
          symbol: eb.ref("excluded.symbol"),
          name: eb.ref("excluded.name"),
          aliases: eb.ref("excluded.aliases"),
          coingecko_id: eb.ref("excluded.coingecko_id"),
          slug_source: eb.ref("excluded.slug_source"),
          alive: eb.ref("excluded.alive"),
          first_seen_ms: eb.ref("excluded.first_seen_ms")
        }))
      )
      .execute()
  )
  const listings = directory.assets.flatMap((a) =>
    a.listings.map((l) => ({
      venue: l.venue,
      symbol: l.symbol,
      asset_id: a.id,
      market: l.market,
      base: l.base,
      quote: l.quote,
      multiplier: String(l.multiplier),
      contract_size: l.contractSize ?? null,
      status: l.status,
      first_seen_ms: l.firstSeenMs,
      last_trading_ms: l.lastTradingMs
    }))
  )
  await inChunks(listings, CHUNK, (chunk) =>
    trx
      .insertInto("crypto_directory_listings")
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(["venue", "market", "symbol"]).doUpdateSet((eb) => ({
          base: eb.ref("excluded.base"),
          quote: eb.ref("excluded.quote"),
          multiplier: eb.ref("excluded.multiplier"),
          contract_size: eb.ref("excluded.contract_size"),
          status: eb.ref("excluded.status"),
          first_seen_ms: eb.ref("excluded.first_seen_ms"),
          last_trading_ms: eb.ref("excluded.last_trading_ms")
        }))
      )
      .execute()
  )
  await trx
    .updateTable("crypto_directory_meta")
    .set((eb) => ({ updated_ms: eb.fn("greatest", [eb.ref("updated_ms"), eb.val(directory.updatedMs)]) }))
    .where("id", "=", 1)
    .execute()
}

/**
 * Runs `step` on the directory as stored, under the meta row's lock, and writes what it answers unless that would
 * give a venue symbol to another asset (then nothing is written and the conflict is the defect).
 */
const update = <A>(
  db: Db,
  what: string,
  step: (current: AssetDirectory) => { readonly next: AssetDirectory; readonly answer: A }
): Effect.Effect<A> =>
  Effect.flatMap(
    query(what, () =>
      db.transaction().execute(async (trx) => {
        await trx.selectFrom("crypto_directory_meta").select("id").where("id", "=", 1).forUpdate().execute()
        const current = await read(trx)
        const { next, answer } = step(current)
        const conflict = directoryConflicts(current, next)[0]
        if (conflict !== undefined) return { conflict } as const
        await write(trx, next)
        return { answer } as const
      })
    ),
    (r) => ("conflict" in r ? Effect.die(r.conflict) : Effect.succeed(r.answer))
  )

export const makePgDirectoryStore = (database: Database): AssetDirectoryStore["Service"] => {
  const db = database.db as unknown as Db
  return {
    load: query("directory.load", () => read(db)),
    save: (directory) => update(db, "directory.save", () => ({ next: directory, answer: undefined })),
    merge: (snapshots, context) =>
      update(db, "directory.merge", (current) => {
        const result = mergeDirectory(current, snapshots, context)
        return { next: result.directory, answer: result }
      }),
    coinList: query("directory.coinList", async (): Promise<CoinList | undefined> => {
      const meta = await db
        .selectFrom("crypto_directory_meta")
        .select("coins_fetched_ms")
        .where("id", "=", 1)
        .executeTakeFirst()
      if (meta === undefined || meta.coins_fetched_ms === null) return undefined
      const rows = await db
        .selectFrom("crypto_coin_list")
        .select(["coin_id", "symbol", "name"])
        .orderBy("ord")
        .execute()
      return {
        coins: rows.map((r) => ({ id: r.coin_id, symbol: r.symbol, name: r.name })),
        fetchedMs: num(meta.coins_fetched_ms)
      }
    }),
    saveCoinList: (list) =>
      query("directory.saveCoinList", () =>
        db.transaction().execute(async (trx) => {
          await trx.selectFrom("crypto_directory_meta").select("id").where("id", "=", 1).forUpdate().execute()
          await trx.deleteFrom("crypto_coin_list").execute()
          const rows = list.coins.map((c, ord) => ({ ord, coin_id: c.id, symbol: c.symbol, name: c.name }))
          await inChunks(rows, 5_000, (chunk) => trx.insertInto("crypto_coin_list").values(chunk).execute())
          await trx
            .updateTable("crypto_directory_meta")
            .set({ coins_fetched_ms: list.fetchedMs })
            .where("id", "=", 1)
            .execute()
        })
      )
  }
}

export const layerPgDirectoryStore = (database: Database): Layer.Layer<AssetDirectoryStore> =>
  Layer.sync(AssetDirectoryStore)(() => makePgDirectoryStore(database))
