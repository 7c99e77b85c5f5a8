/**
 * Bulk archive marks: one row per archive entry a bulk ingest loaded (`companyfacts.zip`/`submissions.zip` and
 * the entry name), with the entry's CRC-32 and uncompressed size from the zip's central directory. Written in the
 * entry's own transaction, so a restarted ingest skips exactly the entries already loaded unchanged.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 */
import { type Kysely, sql } from "kysely"

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table if not exists equity_bulk_entries (
      archive text not null,
      entry text not null,
      crc32 bigint not null,
      size bigint not null,
      cik text not null,
      loaded_at timestamptz not null default now(),
      primary key (archive, entry)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists equity_bulk_entries`.execute(db)
}
