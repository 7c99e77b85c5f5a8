/**
 * `md_settle` charges only while the receipt's token still owns the in-flight idempotency record. Before, a
 * slow attempt whose lease ran out (so a retry took the record and was charged) still charged when it
 * finally settled: two charges for one request under one Idempotency-Key. Now that attempt's hold is
 * released, nothing is charged or stored, and it answers 'superseded'.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The new text,
 * frozen here, is exactly what this migration ran (`2026-11-26T0400_money_port` dropped the function, and its
 * `down` creates it again from this export).
 */
import { type Kysely, sql } from "kysely"

export const MD_SETTLE = `create or replace function md_settle(
    p_id text, p_charge bigint, p_reason text, p_now bigint,
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
    if p_token is not null then
      -- The stored answer and the charge commit together, and only for the attempt that owns the record.
      update idempotency_records
        set state = 'stored', status = p_status, headers = p_headers, body = p_body, expires_at_ms = p_replay_until
        where key_id = p_idem_key_id and idem_key = p_idem_key and token = p_token and state = 'in_flight';
      if not found then
        update ledger_holds set state = 'released' where id = p_id;
        return 'superseded';
      end if;
    end if;
    update ledger_holds set state = 'settled' where id = p_id;
    if p_charge > 0 then
      update ledger_accounts set booked = booked - p_charge where key_id = v_key;
      insert into ledger_entries (key_id, kind, amount, reason, hold_id, at_ms)
        values (v_key, 'charge', p_charge, p_reason, p_id, p_now);
    end if;
    return 'settled';
  end $$`

/** The definition this migration replaced (its `down` restores it): frozen, as the migration first ran it. */
const PREVIOUS = `create or replace function md_settle(
    p_id text, p_charge bigint, p_reason text, p_now bigint,
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
    if p_token is not null then
      -- The stored answer and the charge commit together, and only for the attempt that owns the record.
      update idempotency_records
        set state = 'stored', status = p_status, headers = p_headers, body = p_body, expires_at_ms = p_replay_until
        where key_id = p_idem_key_id and idem_key = p_idem_key and token = p_token and state = 'in_flight';
      
    end if;
    update ledger_holds set state = 'settled' where id = p_id;
    if p_charge > 0 then
      update ledger_accounts set booked = booked - p_charge where key_id = v_key;
      insert into ledger_entries (key_id, kind, amount, reason, hold_id, at_ms)
        values (v_key, 'charge', p_charge, p_reason, p_id, p_now);
    end if;
    return 'settled';
  end $$`

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(MD_SETTLE).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(PREVIOUS).execute(db)
}
