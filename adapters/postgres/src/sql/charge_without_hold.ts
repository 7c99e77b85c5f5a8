/**
 * `md_charge`: the metered step of a paid request without an Idempotency-Key, executed first: its rate unit
 * (through `md_rate_consume`), the key's revocation and its charge in one statement, refused when the balance
 * does not cover the request's hold amount.
 * It mirrors the core's money rule `decideMetered` (core/src/Money.ts) branch for branch, as the memory twin's
 * `MemoryMoneyStore.charge` calls it.
 *
 * Locks, in order: the rate scope row, the account row (as `md_admit`).
 *
 * The definition the database runs today, byte for byte as migration `2026-11-26T0400_money_port` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_CHARGE = `create function md_charge(
    p_key text, p_required bigint, p_charge bigint, p_reason text, p_now bigint,
    p_scope text, p_limit integer, p_bucket bigint, p_since bigint
  ) returns table (outcome text, used bigint, oldest bigint, available bigint)
  language plpgsql as $$
  declare
    v_rate record;
    v_booked bigint;
    v_held bigint;
  begin
    if p_charge < 0 or p_charge > p_required then
      raise exception 'charge % must be from 0 to the required %', p_charge, p_required;
    end if;
    select r.allowed, r.used, r.oldest into v_rate
      from md_rate_consume(p_scope, p_limit, p_now, p_bucket, p_since) r;
    if not v_rate.allowed then
      return query select 'rate_limited'::text, v_rate.used, v_rate.oldest, null::bigint;
      return;
    end if;
    perform 1 from api_keys where id = p_key and revoked_at_ms is not null;
    if found then
      return query select 'key_revoked'::text, v_rate.used, v_rate.oldest, null::bigint;
      return;
    end if;
    select booked into v_booked from ledger_accounts where key_id = p_key for update;
    if not found then
      v_booked := 0;
    end if;
    -- A fresh snapshot after the lock: every hold and charge committed before it is counted.
    select coalesce(sum(amount), 0) into v_held from ledger_holds
      where key_id = p_key and state = 'active' and expires_at_ms > p_now;
    if v_booked - v_held < p_required then
      return query select 'insufficient'::text, v_rate.used, v_rate.oldest, v_booked - v_held;
      return;
    end if;
    if p_charge > 0 then
      update ledger_accounts set booked = booked - p_charge where key_id = p_key;
      insert into ledger_entries (key_id, kind, amount, reason, at_ms)
        values (p_key, 'charge', p_charge, p_reason, p_now);
    end if;
    return query select 'charged'::text, v_rate.used, v_rate.oldest, v_booked - v_held - p_charge;
  end $$`
