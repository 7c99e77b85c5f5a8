/**
 * `md_rate_begin`: a paid request with an Idempotency-Key: its rate unit (through `md_rate_consume`) and the idempotency begin in one
 * statement (started, in progress, conflict, or the stored answer to replay).
 * It mirrors the core's money rules `admitsUnit` and `decideBegin` (core/src/Money.ts), as the memory twin's
 * `MemoryIdempotencyStore` calls them.
 *
 * No longer run: migration `2026-11-26T0400_money_port` dropped it (the money port's `md_admit`, `md_finish` and
 * `md_charge` took its place). The text stays, frozen, byte for byte as the migration that created it ran it;
 * that migration imports it. Never edit it.
 */
export const MD_RATE_BEGIN = `create function md_rate_begin(
    p_scope text, p_limit integer, p_now bigint, p_bucket bigint, p_since bigint,
    p_key_id text, p_idem_key text, p_fingerprint text, p_token text, p_lease_until bigint
  ) returns table (
    allowed boolean, used bigint, oldest bigint,
    outcome text, answer_status integer, answer_headers jsonb, answer_body text
  )
  language plpgsql as $$
  declare
    v_rate record;
    v_token text;
    v_record idempotency_records%rowtype;
    v_outcome text;
  begin
    select r.allowed, r.used, r.oldest into v_rate
      from md_rate_consume(p_scope, p_limit, p_now, p_bucket, p_since) r;
    if not v_rate.allowed then
      return query select false, v_rate.used, v_rate.oldest, 'rate_limited'::text,
        null::integer, null::jsonb, null::text;
      return;
    end if;
    -- A live record answers as it is, without being locked or written: a stored answer never changes before it
    -- expires, and an in-flight one is in progress at this instant. So a replay writes only its rate unit.
    select * into v_record from idempotency_records ir where ir.key_id = p_key_id and ir.idem_key = p_idem_key;
    if not found or v_record.expires_at_ms <= p_now then
      insert into idempotency_records as ir (key_id, idem_key, fingerprint, state, token, expires_at_ms)
        values (p_key_id, p_idem_key, p_fingerprint, 'in_flight', p_token, p_lease_until)
        on conflict (key_id, idem_key) do update
          set fingerprint = excluded.fingerprint, state = 'in_flight', token = excluded.token,
              expires_at_ms = excluded.expires_at_ms, status = null, headers = null, body = null
          where ir.expires_at_ms <= p_now
        returning ir.token into v_token;
      if v_token is not distinct from p_token then
        return query select true, v_rate.used, v_rate.oldest, 'started'::text, null::integer, null::jsonb, null::text;
        return;
      end if;
      -- Another request took the key meanwhile: the insert locked its live record, read it.
      select * into v_record from idempotency_records ir where ir.key_id = p_key_id and ir.idem_key = p_idem_key;
    end if;
    if not found or v_record.expires_at_ms <= p_now then
      -- Cannot happen (the insert locked a live record), answered as the store's begin would after retrying.
      v_outcome := 'in_progress';
    elsif v_record.fingerprint <> p_fingerprint then
      v_outcome := 'conflict';
    elsif v_record.state = 'in_flight' then
      v_outcome := 'in_progress';
    else
      return query select true, v_rate.used, v_rate.oldest, 'replay'::text,
        v_record.status, v_record.headers, v_record.body;
      return;
    end if;
    return query select true, v_rate.used, v_rate.oldest, v_outcome, null::integer, null::jsonb, null::text;
  end $$`
