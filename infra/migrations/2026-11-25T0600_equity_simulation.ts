/**
 * Which simulation of the equity plane the database holds (`infra/src/Planes.ts`, `loadSimulatedEquityOnDatabase`):
 * one row (`id = 1`) naming it by generator version, seed, last day and number of generated companies, written in
 * the transaction that writes the simulated companies. A start that finds its own simulation named here (and its
 * companies present) writes nothing and generates nothing; any other replaces the simulated companies whole.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 */
import { type Kysely, sql } from "kysely"

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table equity_simulation (
      id smallint primary key check (id = 1),
      simulation text not null,
      companies integer not null,
      loaded_at_ms bigint not null
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists equity_simulation`.execute(db)
}
