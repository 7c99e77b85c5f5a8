/**
 * `md_finish`: ends an admitted request in one statement: settles (charges within the hold, or without a hold
 * only when the balance covers the required amount, and stores the answer), keeps a failure's answer, or
 * releases (the hold, and the Idempotency-Key the ticket owns).
 * It mirrors the core's money rule `decideFinish` (core/src/Money.ts) branch for branch, in its order, as the
 * memory twin's `MemoryMoneyStore.finish` calls it (with a hold it is `decideSettle`: resolved, expired, owner).
 * The charge and the stored answer commit together, and only for the attempt that owns the in-flight record.
 *
 * Locks, in order: the account row, the hold row, the idempotency record row (as `md_admit`).
 *
 * The definition the database runs today, byte for byte as migration `2026-11-26T0400_money_port` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_FINISH = `create function md_finish(
    p_key text, p_hold_id text, p_end text, p_charge bigint, p_required bigint, p_reason text, p_now bigint,
    p_idem_key text, p_token text, p_status integer, p_headers jsonb, p_body text, p_replay_until bigint
  ) returns table (outcome text, available bigint)
  language plpgsql as $$
  declare
    v_booked bigint;
    v_held bigint;
    v_hold ledger_holds%rowtype;
    v_hold_state text;
    v_owned boolean := false;
    v_decision text;
  begin
    if p_charge < 0 or p_charge > p_required then
      raise exception 'charge % must be from 0 to the required %', p_charge, p_required;
    end if;
    select booked into v_booked from ledger_accounts where key_id = p_key for update;
    if not found then
      v_booked := 0;
    end if;
    -- The ticket's hold: none, live, expired (past its lease, unresolved) or resolved (a swept one was resolved).
    if p_hold_id is null then
      v_hold_state := 'none';
    else
      select * into v_hold from ledger_holds where id = p_hold_id for update;
      if not found or v_hold.state <> 'active' then
        v_hold_state := 'resolved';
      elsif v_hold.expires_at_ms > p_now then
        v_hold_state := 'live';
      else
        v_hold_state := 'expired';
      end if;
      if found and p_charge > v_hold.amount then
        raise exception 'charge % exceeds hold %', p_charge, v_hold.amount;
      end if;
    end if;
    -- Credits available without the ticket's own hold.
    select coalesce(sum(amount), 0) into v_held from ledger_holds
      where key_id = p_key and state = 'active' and expires_at_ms > p_now and id is distinct from p_hold_id;
    -- Whether the ticket still owns its in-flight record (ownsRecord).
    if p_token is not null then
      perform 1 from idempotency_records
        where key_id = p_key and idem_key = p_idem_key and token = p_token and state = 'in_flight' for update;
      v_owned := found;
    end if;
    -- decideFinish.
    if p_end <> 'settle' then
      v_decision := p_end;
    elsif v_hold_state = 'none' then
      if p_token is not null and not v_owned then
        v_decision := 'superseded';
      elsif v_booked - v_held < p_required then
        v_decision := 'insufficient';
      else
        v_decision := 'settle';
      end if;
    elsif v_hold_state = 'resolved' then
      v_decision := 'already';
    elsif v_hold_state = 'expired' and p_charge > 0 and v_booked - v_held < p_charge then
      v_decision := 'expired';
    elsif p_token is not null and not v_owned then
      v_decision := 'superseded';
    else
      v_decision := 'settle';
    end if;
    -- What each decision does.
    if v_decision = 'settle' then
      update ledger_holds set state = 'settled' where id = p_hold_id and state = 'active';
    elsif v_decision in ('keep', 'release', 'expired', 'superseded') then
      update ledger_holds set state = 'released' where id = p_hold_id and state = 'active';
    end if;
    if v_owned and v_decision in ('settle', 'keep') then
      update idempotency_records
        set state = 'stored', status = p_status, headers = p_headers, body = p_body, expires_at_ms = p_replay_until
        where key_id = p_key and idem_key = p_idem_key and token = p_token and state = 'in_flight';
    elsif v_owned and v_decision in ('release', 'expired', 'insufficient', 'already') then
      delete from idempotency_records
        where key_id = p_key and idem_key = p_idem_key and token = p_token and state = 'in_flight';
    end if;
    if v_decision = 'settle' and p_charge > 0 then
      update ledger_accounts set booked = booked - p_charge where key_id = p_key;
      insert into ledger_entries (key_id, kind, amount, reason, hold_id, at_ms)
        values (p_key, 'charge', p_charge, p_reason, p_hold_id, p_now);
    end if;
    return query select v_decision, v_booked - v_held;
  end $$`
