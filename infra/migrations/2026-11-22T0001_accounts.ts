/**
 * Keys, the credit ledger, idempotency records and rate-limit buckets.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The functions
 * whose definition is still current are imported from their modules (`@market-data/postgres`, `src/sql/`), whose
 * text is exactly what this migration ran; `md_hold` and `md_settle`, dropped since, keep their frozen copies here
 * (`MD_HOLD` is exported for the migration that dropped it, whose `down` creates it again).
 *
 * Times are epoch milliseconds (`bigint`) so that the clock the service runs on (including the test clock)
 * is the only clock: the database never reads its own. The money operations are PL/pgSQL functions so each
 * is one round trip and one transaction, serialized per key by a row lock on `ledger_accounts`.
 */
import { MD_AVAILABLE, MD_GRANT, MD_RATE_CONSUME } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"

/** `md_hold` as this migration created it (dropped by `2026-11-26T0400_money_port`): frozen. */
export const MD_HOLD = `create function md_hold(p_id text, p_key text, p_amount bigint, p_now bigint, p_expires bigint) returns boolean
    language plpgsql as $$
    declare
      v_booked bigint;
      v_held bigint;
    begin
      select booked into v_booked from ledger_accounts where key_id = p_key for update;
      if not found then
        v_booked := 0;
      end if;
      -- A fresh snapshot after the lock: every hold committed before it is counted.
      select coalesce(sum(amount), 0) into v_held from ledger_holds
        where key_id = p_key and state = 'active' and expires_at_ms > p_now;
      if v_booked - v_held < p_amount then
        return false;
      end if;
      insert into ledger_holds (id, key_id, amount, expires_at_ms) values (p_id, p_key, p_amount, p_expires);
      return true;
    end $$`

const UP: ReadonlyArray<string> = [
  `create table api_keys (
      id text primary key,
      hash text not null unique,
      prefix text not null,
      label text,
      created_at_ms bigint not null,
      revoked_at_ms bigint,
      rate_limit_per_minute integer check (rate_limit_per_minute is null or rate_limit_per_minute > 0)
    )`,
  `create table ledger_accounts (
      key_id text primary key,
      -- grants minus charges (live holds are subtracted at read time)
      booked bigint not null default 0 check (booked >= 0)
    )`,
  `create table ledger_entries (
      id bigserial primary key,
      key_id text not null,
      kind text not null check (kind in ('grant', 'charge')),
      amount bigint not null check (amount > 0),
      reason text not null,
      hold_id text,
      at_ms bigint not null
    )`,
  `create index ledger_entries_key on ledger_entries (key_id, id)`,
  `create table ledger_holds (
      id text primary key,
      key_id text not null,
      amount bigint not null check (amount >= 0),
      expires_at_ms bigint not null,
      state text not null default 'active' check (state in ('active', 'settled', 'released'))
    )`,
  `create index ledger_holds_live on ledger_holds (key_id) where state = 'active'`,
  `create index ledger_holds_expiry on ledger_holds (expires_at_ms) where state = 'active'`,
  `create table idempotency_records (
      key_id text not null,
      idem_key text not null,
      fingerprint text not null,
      state text not null check (state in ('in_flight', 'stored')),
      token text not null,
      -- in flight: end of the lease, stored: end of the 24 h replay window
      expires_at_ms bigint not null,
      status integer,
      headers jsonb,
      body text,
      primary key (key_id, idem_key)
    )`,
  `create index idempotency_records_expiry on idempotency_records (expires_at_ms)`,
  `create table rate_limit_scopes (
      scope text primary key
    )`,
  `create table rate_limit_buckets (
      scope text not null,
      start_ms bigint not null,
      count integer not null,
      primary key (scope, start_ms)
    )`,
  MD_AVAILABLE,
  MD_GRANT,
  MD_HOLD,
  `create function md_settle(
      p_id text, p_charge bigint, p_reason text, p_now bigint,
      -- optional receipt: the idempotency record completed in the same transaction
      p_idem_key_id text, p_idem_key text, p_token text, p_status integer, p_headers jsonb, p_body text,
      p_replay_until bigint
    ) returns text
    language plpgsql as $$
    declare
      v_key text;
      v_hold ledger_holds%rowtype;
      v_booked bigint;
      v_held bigint;
    begin
      select key_id into v_key from ledger_holds where id = p_id;
      if not found then
        return 'already';
      end if;
      -- Lock order: account, then hold (as md_hold), so concurrent settles and holds cannot deadlock.
      perform 1 from ledger_accounts where key_id = v_key for update;
      select * into v_hold from ledger_holds where id = p_id for update;
      if v_hold.state <> 'active' then
        return 'already';
      end if;
      if p_charge > v_hold.amount then
        raise exception 'charge % exceeds hold %', p_charge, v_hold.amount;
      end if;
      if v_hold.expires_at_ms <= p_now and p_charge > 0 then
        -- The hold no longer reserves anything: charge only if the balance covers it now.
        select coalesce((select booked from ledger_accounts where key_id = v_key), 0) into v_booked;
        select coalesce(sum(amount), 0) into v_held from ledger_holds
          where key_id = v_key and state = 'active' and expires_at_ms > p_now and id <> p_id;
        if v_booked - v_held < p_charge then
          update ledger_holds set state = 'released' where id = p_id;
          return 'expired';
        end if;
      end if;
      update ledger_holds set state = 'settled' where id = p_id;
      if p_charge > 0 then
        update ledger_accounts set booked = booked - p_charge where key_id = v_key;
        insert into ledger_entries (key_id, kind, amount, reason, hold_id, at_ms)
          values (v_key, 'charge', p_charge, p_reason, p_id, p_now);
      end if;
      if p_token is not null then
        update idempotency_records
          set state = 'stored', status = p_status, headers = p_headers, body = p_body, expires_at_ms = p_replay_until
          where key_id = p_idem_key_id and idem_key = p_idem_key and token = p_token and state = 'in_flight';
      end if;
      return 'settled';
    end $$`,
  MD_RATE_CONSUME
]

const DOWN: ReadonlyArray<string> = [
  `drop function if exists md_rate_consume(text, integer, bigint, bigint, bigint)`,
  `drop function if exists md_settle(text, bigint, text, bigint, text, text, text, integer, jsonb, text, bigint)`,
  `drop function if exists md_hold(text, text, bigint, bigint, bigint)`,
  `drop function if exists md_grant(text, bigint, text, bigint)`,
  `drop function if exists md_available(text, bigint)`,
  `drop table if exists rate_limit_buckets`,
  `drop table if exists rate_limit_scopes`,
  `drop table if exists idempotency_records`,
  `drop table if exists ledger_holds`,
  `drop table if exists ledger_entries`,
  `drop table if exists ledger_accounts`,
  `drop table if exists api_keys`
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db)
}
