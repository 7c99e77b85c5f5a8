/**
 * `md_admit`: admits a paid request in one statement: its rate unit (through `md_rate_consume`), the key's
 * revocation, the Idempotency-Key's begin, and the credit hold.
 * It mirrors the core's money rule `decideAdmit` (core/src/Money.ts) branch for branch, in its order (unit,
 * revoked, begin, hold), as the memory twin's `MemoryMoneyStore.admit` calls it; the begin is `decideBegin`, the
 * hold `holdCovered`. A refused hold leaves the Idempotency-Key untouched (free for a retry after a top-up).
 *
 * Locks, in order: the rate scope row, the account row, then (taking the key) the idempotency record row; no
 * function takes them the other way round (`md_finish`: account, hold, record).
 *
 * The definition the database runs today, byte for byte as migration `2026-11-26T0400_money_port` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_ADMIT = `create function md_admit(
    p_key text, p_now bigint, p_scope text, p_limit integer, p_bucket bigint, p_since bigint,
    p_hold bigint, p_hold_id text, p_hold_until bigint,
    p_idem_key text, p_fingerprint text, p_token text, p_lease_until bigint
  ) returns table (
    outcome text, used bigint, oldest bigint, available bigint,
    answer_status integer, answer_headers jsonb, answer_body text
  )
  language plpgsql as $$
  declare
    v_rate record;
    v_record idempotency_records%rowtype;
    v_token text;
    v_booked bigint;
    v_held bigint;
  begin
    -- The rate unit (admitsUnit): a refused request spends nothing.
    select r.allowed, r.used, r.oldest into v_rate
      from md_rate_consume(p_scope, p_limit, p_now, p_bucket, p_since) r;
    if not v_rate.allowed then
      return query select 'rate_limited'::text, v_rate.used, v_rate.oldest, null::bigint,
        null::integer, null::jsonb, null::text;
      return;
    end if;
    -- The key's revocation.
    perform 1 from api_keys where id = p_key and revoked_at_ms is not null;
    if found then
      return query select 'key_revoked'::text, v_rate.used, v_rate.oldest, null::bigint,
        null::integer, null::jsonb, null::text;
      return;
    end if;
    -- The Idempotency-Key (decideBegin): a live record answers as it stands, read without a lock or a write.
    if p_idem_key is not null then
      select * into v_record from idempotency_records ir where ir.key_id = p_key and ir.idem_key = p_idem_key;
      if found and v_record.expires_at_ms > p_now then
        if v_record.fingerprint <> p_fingerprint then
          return query select 'conflict'::text, v_rate.used, v_rate.oldest, null::bigint,
            null::integer, null::jsonb, null::text;
        elsif v_record.state = 'in_flight' then
          return query select 'in_progress'::text, v_rate.used, v_rate.oldest, null::bigint,
            null::integer, null::jsonb, null::text;
        else
          return query select 'replay'::text, v_rate.used, v_rate.oldest, null::bigint,
            v_record.status, v_record.headers, v_record.body;
        end if;
        return;
      end if;
    end if;
    -- The hold (holdCovered), under the account's row lock; a fresh snapshot after it counts every live hold.
    select booked into v_booked from ledger_accounts where key_id = p_key for update;
    if not found then
      v_booked := 0;
    end if;
    select coalesce(sum(amount), 0) into v_held from ledger_holds
      where key_id = p_key and state = 'active' and expires_at_ms > p_now;
    if v_booked - v_held < p_hold then
      return query select 'insufficient'::text, v_rate.used, v_rate.oldest, v_booked - v_held,
        null::integer, null::jsonb, null::text;
      return;
    end if;
    -- Take the key (free, or its record expired); another request may have taken it since the read above.
    if p_idem_key is not null then
      insert into idempotency_records as ir (key_id, idem_key, fingerprint, state, token, expires_at_ms)
        values (p_key, p_idem_key, p_fingerprint, 'in_flight', p_token, p_lease_until)
        on conflict (key_id, idem_key) do update
          set fingerprint = excluded.fingerprint, state = 'in_flight', token = excluded.token,
              expires_at_ms = excluded.expires_at_ms, status = null, headers = null, body = null
          where ir.expires_at_ms <= p_now
        returning ir.token into v_token;
      if v_token is distinct from p_token then
        -- The insert locked the other request's live record: answer as decideBegin does on it.
        select * into v_record from idempotency_records ir where ir.key_id = p_key and ir.idem_key = p_idem_key;
        if found and v_record.fingerprint <> p_fingerprint then
          return query select 'conflict'::text, v_rate.used, v_rate.oldest, null::bigint,
            null::integer, null::jsonb, null::text;
        elsif found and v_record.state = 'stored' then
          return query select 'replay'::text, v_rate.used, v_rate.oldest, null::bigint,
            v_record.status, v_record.headers, v_record.body;
        else
          return query select 'in_progress'::text, v_rate.used, v_rate.oldest, null::bigint,
            null::integer, null::jsonb, null::text;
        end if;
        return;
      end if;
    end if;
    if p_hold > 0 then
      insert into ledger_holds (id, key_id, amount, expires_at_ms) values (p_hold_id, p_key, p_hold, p_hold_until);
    end if;
    return query select 'admitted'::text, v_rate.used, v_rate.oldest, v_booked - v_held - p_hold,
      null::integer, null::jsonb, null::text;
  end $$`
