/**
 * The metered charge: one round trip for a paid request whose result is already in hand. It spends the
 * request's rate unit and charges the delivered amount when the available balance covers the request's hold
 * amount, in one transaction: rate scope row lock first, then the account row lock. No other function takes
 * these two locks, and each takes at most one of them or the account before a hold, so no lock cycle exists.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The function's
 * text, frozen here, is exactly what this migration ran (`2026-11-26T0400_money_port` dropped the function, and
 * its `down` creates it again from this export).
 */
import { type Kysely, sql } from "kysely"

export const MD_METER_CHARGE = `create function md_meter_charge(
    p_key text, p_required bigint, p_charge bigint, p_reason text, p_now bigint,
    p_scope text, p_limit integer, p_bucket bigint, p_since bigint
  ) returns table (outcome text, used bigint, oldest bigint, available bigint)
  language plpgsql as $$
  declare
    v_used bigint;
    v_oldest bigint;
    v_booked bigint;
    v_held bigint;
  begin
    if p_charge < 0 or p_charge > p_required then
      raise exception 'charge % must be from 0 to the required %', p_charge, p_required;
    end if;
    perform 1 from rate_limit_scopes where scope = p_scope for update;
    if not found then
      insert into rate_limit_scopes (scope) values (p_scope) on conflict do nothing;
      perform 1 from rate_limit_scopes where scope = p_scope for update;
    end if;
    select coalesce(sum(count), 0), min(start_ms) into v_used, v_oldest
      from rate_limit_buckets where scope = p_scope and start_ms > p_since and count > 0;
    if v_used >= p_limit then
      return query select 'rate_limited'::text, v_used, v_oldest, null::bigint;
      return;
    end if;
    insert into rate_limit_buckets (scope, start_ms, count) values (p_scope, p_bucket, 1)
      on conflict (scope, start_ms) do update set count = rate_limit_buckets.count + 1;
    v_used := v_used + 1;
    v_oldest := coalesce(v_oldest, p_bucket);
    select booked into v_booked from ledger_accounts where key_id = p_key for update;
    if not found then
      v_booked := 0;
    end if;
    -- A fresh snapshot after the lock: every hold and charge committed before it is counted.
    select coalesce(sum(amount), 0) into v_held from ledger_holds
      where key_id = p_key and state = 'active' and expires_at_ms > p_now;
    if v_booked - v_held < p_required then
      return query select 'insufficient'::text, v_used, v_oldest, v_booked - v_held;
      return;
    end if;
    if p_charge > 0 then
      update ledger_accounts set booked = booked - p_charge where key_id = p_key;
      insert into ledger_entries (key_id, kind, amount, reason, at_ms)
        values (p_key, 'charge', p_charge, p_reason, p_now);
    end if;
    return query select 'charged'::text, v_used, v_oldest, v_booked - v_held - p_charge;
  end $$`

const UP = MD_METER_CHARGE

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(UP).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw("drop function if exists md_meter_charge(text, bigint, bigint, text, bigint, text, integer, bigint, bigint)")
    .execute(db)
}
