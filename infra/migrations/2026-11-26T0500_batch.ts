/**
 * Group commit on PostgreSQL: `md_batch` runs many store calls of concurrent requests in one statement and one
 * transaction, ordered by lock key and lock class (`md_batch_rank`) so that batches cannot deadlock on each
 * other; `md_batch_call` runs one member. All members run in one block first; when one fails, that block is
 * rolled back and they run again each in its own sub-block (a failing member is rolled back and answered alone).
 * It calls the money functions as they are and changes no table.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The texts of
 * `md_batch` and `md_batch_rank` are their module's (`@market-data/postgres`, `src/sql/group_commit_batch.ts`),
 * exactly what this migration ran; `md_batch_call`, redefined since (`2026-12-06T0100_named_batch_arguments`),
 * keeps its frozen copy here.
 */
import { MD_BATCH, MD_BATCH_RANK } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"

/** `md_batch_call` as this migration created it (arguments by position): frozen. */
export const MD_BATCH_CALL = `create function md_batch_call(p_f text, p_a jsonb) returns jsonb
  language plpgsql as $$
  declare
    v_r jsonb;
  begin
    if p_f = 'key_by_hash' then
      select to_jsonb(k) into v_r from api_keys k where k.hash = p_a->>0;
    elsif p_f = 'available' then
      v_r := to_jsonb(md_available(p_a->>0, (p_a->>1)::bigint));
    elsif p_f = 'rate_consume' then
      select to_jsonb(r) into v_r
        from md_rate_consume(p_a->>0, (p_a->>1)::integer, (p_a->>2)::bigint, (p_a->>3)::bigint,
          (p_a->>4)::bigint) r;
    elsif p_f = 'admit' then
      select to_jsonb(r) into v_r
        from md_admit(p_a->>0, (p_a->>1)::bigint, p_a->>2, (p_a->>3)::integer, (p_a->>4)::bigint,
          (p_a->>5)::bigint, (p_a->>6)::bigint, p_a->>7, (p_a->>8)::bigint, p_a->>9, p_a->>10, p_a->>11,
          (p_a->>12)::bigint) r;
    elsif p_f = 'finish' then
      select to_jsonb(r) into v_r
        from md_finish(p_a->>0, p_a->>1, p_a->>2, (p_a->>3)::bigint, (p_a->>4)::bigint, p_a->>5,
          (p_a->>6)::bigint, p_a->>7, p_a->>8, (p_a->>9)::integer, nullif(p_a->10, 'null'::jsonb), p_a->>11,
          (p_a->>12)::bigint) r;
    elsif p_f = 'charge' then
      select to_jsonb(r) into v_r
        from md_charge(p_a->>0, (p_a->>1)::bigint, (p_a->>2)::bigint, p_a->>3, (p_a->>4)::bigint,
          p_a->>5, (p_a->>6)::integer, (p_a->>7)::bigint, (p_a->>8)::bigint) r;
    else
      raise exception 'md_batch: no call named %', p_f using errcode = '22023';
    end if;
    return v_r;
  end $$`

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(MD_BATCH_RANK).execute(db)
  await sql.raw(MD_BATCH_CALL).execute(db)
  await sql.raw(MD_BATCH).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("drop function if exists md_batch(jsonb)").execute(db)
  await sql.raw("drop function if exists md_batch_call(text, jsonb)").execute(db)
  await sql.raw("drop function if exists md_batch_rank(text)").execute(db)
}
