/**
 * `md_rate_begin`: one round trip for a paid request carrying an Idempotency-Key. It spends the request's rate
 * unit through `md_rate_consume` itself (the same function the rate limiter calls, so the two paths can never
 * count differently) and, only when the unit was admitted, begins under the idempotency key exactly as the
 * store's `begin` does: a live record answers as it stands (in flight, a different request, or the stored answer
 * to replay, read without a lock or a write), and otherwise the key is taken with the same conditional upsert
 * as `begin` (free, or its record expired).
 *
 * Locks, in order: the rate scope row (`md_rate_consume`), then, only when taking the key, the idempotency record
 * row (the conflicting insert locks it even when its condition leaves it unchanged, so the read after it sees that
 * very record). No function takes them the other way round (`md_settle` locks the account, the hold, then the
 * record), so no lock cycle exists.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The function's
 * text, frozen here, is exactly what this migration ran (`2026-11-26T0400_money_port` dropped the function, and
 * its `down` creates it again from this export).
 */
import { type Kysely, sql } from "kysely"

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

const UP = MD_RATE_BEGIN

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(UP).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw("drop function if exists md_rate_begin(text, integer, bigint, bigint, bigint, text, text, text, text, bigint)")
    .execute(db)
}
