/**
 * Migration history is frozen: every migration that has shipped runs exactly the SQL it first ran, `up` and
 * `down`, whether its text is written in the migration or imported from a function module
 * (`adapters/postgres/src/sql/`). The statements are captured without a database (kysely's dummy driver) and
 * compared, by SHA-256, with what each migration ran when it shipped. Editing a function module whose text a
 * migration imports fails here: a changed function is a new migration (see docs/storage.md).
 */
import { createHash } from "node:crypto"
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely"
import { describe, expect, it } from "vitest"
import { migrations } from "../src/Migrate.ts"

/**
 * SHA-256 of `JSON.stringify({up, down})`, the statements each shipped migration runs. A new migration adds its
 * line once it ships; a line never changes.
 */
const SHIPPED: Record<string, string> = {
  "2026-11-22T0001_accounts": "eaac4a3e8eb92fc8e780d2835e42b4f9812fee35d31ca048db7eedf2b6f2125a",
  "2026-11-23T0001_metered_charge": "8345e8de8318fcd56ece563d4ce1e6228a375514b1ed1dbad88211bfa9a86a7c",
  "2026-11-23T0002_settle_owner": "20cfceb47026cd2ac692a4465ba386a98837580ae2e821b95fdf7cce66a17b19",
  "2026-11-23T0100_market": "2451e05fcc8d1053b3dfe4af7329b851e6ab98169119640c0c9f2e3b9dc40f77",
  "2026-11-23T0200_equity": "2cc93ea8535299a03ead47fab0257fb0c647cc652f9279cc53246885109a2d72",
  "2026-11-23T0300_source_errors": "54c927af38b627e280b983bce386b34718cb05e1197f2b7bbb6fc2bf26d0516a",
  "2026-11-23T0400_rate_begin": "42ba0274e782dfb997c7de6ab34eeca99e714557566a4c9272c7931ee372502f",
  "2026-11-25T0100_asset_directory": "eccba609a0dad221455787e9d605ac0cfd6fedc091b022852ab949d8daa8f43f",
  "2026-11-25T0300_bulk_entries": "b48e9cbd7972f42a31a3fbb61c3003e12cbaeeaec6a2063450dde3e2e0492088",
  "2026-11-25T0500_directory_spot": "0b1821e5476a8d08802e5cdca7636943f41ff721b521ddc2a7d78189262b83db",
  "2026-11-25T0600_equity_simulation": "e43b889a7b50dac2ac1c0957ca14db563dc98c339003ea6a92979ed00c706761",
  "2026-11-25T2300_top_up": "3ad8ee42209237b80c130826224056e7a4150002cb6843bcefd568be6b6d8708",
  "2026-11-26T0300_bars_ticker": "47aa254eb25a4b78d67b2b598da83d995567d27d04657dac6a99d0d1060945d5",
  "2026-11-26T0400_money_port": "d298ce1c987dd5637db6527f060492a80bf89a24b138cd1b633b376b29b606ef",
  "2026-11-26T0500_batch": "8002e97573fbe26b305bb9445476aab2ee5052ae0f25219c0283dac8486bb0ee",
  "2026-12-06T0100_named_batch_arguments": "73c93a1aa9c679ae5aec4331852d2d8ef73f155ff31d73ed7cc86396a5b99ec3"
}

/** The statements a migration step sends, captured without a database. */
const capture = async (step: (db: Kysely<any>) => Promise<void>): Promise<Array<string>> => {
  const statements: Array<string> = []
  const db = new Kysely<any>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (d) => new PostgresIntrospector(d),
      createQueryCompiler: () => new PostgresQueryCompiler()
    },
    log: (event) => {
      if (event.level === "query") statements.push(event.query.sql)
    }
  })
  await step(db)
  await db.destroy()
  return statements
}

describe("migration history", () => {
  it("every shipped migration runs exactly the SQL it shipped with, up and down", async () => {
    const all: Record<string, { up: (db: Kysely<any>) => Promise<void>; down?: (db: Kysely<any>) => Promise<void> }> =
      migrations
    for (const [name, hash] of Object.entries(SHIPPED)) {
      const migration = all[name]
      expect(migration, `${name} is still a migration`).toBeDefined()
      if (migration === undefined) continue
      const up = await capture(migration.up)
      const down = await capture(async (db) => migration.down?.(db))
      expect(up.length, name).toBeGreaterThan(0)
      expect(createHash("sha256").update(JSON.stringify({ up, down })).digest("hex"), name).toBe(hash)
    }
  })
})
