/**
 * `md_batch`, `md_batch_call` and `md_batch_rank`: group commit. `md_batch` runs many store calls of concurrent
 * requests (`GroupCommit.ts` collects them) in one statement, so one round trip and one transaction (one commit,
 * one WAL flush) serve them all; `md_batch_call` runs one of them.
 *
 * All members run in one block first; when one fails, that block is rolled back whole and the members run again,
 * each in its own `begin ... exception` block: a member whose SQL fails is rolled back alone and answered its
 * error (`{"error", "code"}`), the others go on. (A sub-transaction per member costs about a third more database
 * time per batch than one block, so the careful pass runs only when needed.)
 *
 * Members run ordered by their lock key (the key ID, or the rate scope), then by the lock class they take first
 * (`md_batch_rank`: rate scope, then account), the order every money function takes its locks in (`md_admit`:
 * scope, account, record; `md_charge`: scope, account; `md_finish`: account, hold, record): two batches, or a
 * batch and a lone call, take the rows they share in the same order and do not deadlock on them. Answers come
 * back as one array in the order the members were sent.
 *
 * The calls are the money port's functions as they are (`md_admit`, `md_finish`, `md_charge`), the rate
 * limiter's `md_rate_consume` (keyless callers), `md_available` and the key lookup by hash. Each member's
 * arguments are a JSON record whose fields are the function's parameter names without `p_` (`{"key": ...,
 * "now": ...}`), passed on in named notation (`p_key => p_a->>'key'`), so no argument depends on its position;
 * `PgMoneyStore.ts` builds the same record for a lone call. Arguments that are not a JSON object (a process
 * older than this definition, sending them by position) are refused with an error, never read as nulls. Adding a
 * function is one branch in `md_batch_call` and its lock class in `md_batch_rank`.
 *
 * The definitions the database runs today, byte for byte as the migrations that created them ran them:
 * `md_batch` and `md_batch_rank` by `2026-11-26T0500_batch`, `md_batch_call` by
 * `2026-12-06T0100_named_batch_arguments`; those migrations import these texts. Never edit them: a change is a
 * new migration whose text goes here, while the migration that imported the old text gets a frozen copy of it
 * (see docs/storage.md).
 */
export const MD_BATCH_RANK = `create function md_batch_rank(p_f text) returns integer
  language sql immutable as $$
    select case p_f
      when 'rate_consume' then 0 when 'admit' then 0 when 'charge' then 0
      when 'finish' then 1
      else 2
    end
  $$`

export const MD_BATCH_CALL = `create or replace function md_batch_call(p_f text, p_a jsonb) returns jsonb
  language plpgsql as $$
  declare
    v_r jsonb;
  begin
    -- Arguments come by name; a caller still sending them by position (a process older than this definition)
    -- is refused rather than read as all nulls.
    if jsonb_typeof(p_a) <> 'object' then
      raise exception 'md_batch: % takes its arguments by name (a JSON object), got a JSON %', p_f, jsonb_typeof(p_a)
        using errcode = '22023';
    end if;
    if p_f = 'key_by_hash' then
      select to_jsonb(k) into v_r from api_keys k where k.hash = p_a->>'hash';
    elsif p_f = 'available' then
      v_r := to_jsonb(md_available(p_key => p_a->>'key', p_now => (p_a->>'now')::bigint));
    elsif p_f = 'rate_consume' then
      select to_jsonb(r) into v_r
        from md_rate_consume(
          p_scope => p_a->>'scope', p_limit => (p_a->>'limit')::integer, p_now => (p_a->>'now')::bigint,
          p_bucket => (p_a->>'bucket')::bigint, p_since => (p_a->>'since')::bigint
        ) r;
    elsif p_f = 'admit' then
      select to_jsonb(r) into v_r
        from md_admit(
          p_key => p_a->>'key', p_now => (p_a->>'now')::bigint,
          p_scope => p_a->>'scope', p_limit => (p_a->>'limit')::integer,
          p_bucket => (p_a->>'bucket')::bigint, p_since => (p_a->>'since')::bigint,
          p_hold => (p_a->>'hold')::bigint, p_hold_id => p_a->>'hold_id',
          p_hold_until => (p_a->>'hold_until')::bigint,
          p_idem_key => p_a->>'idem_key', p_fingerprint => p_a->>'fingerprint', p_token => p_a->>'token',
          p_lease_until => (p_a->>'lease_until')::bigint
        ) r;
    elsif p_f = 'finish' then
      select to_jsonb(r) into v_r
        from md_finish(
          p_key => p_a->>'key', p_hold_id => p_a->>'hold_id', p_end => p_a->>'end',
          p_charge => (p_a->>'charge')::bigint, p_required => (p_a->>'required')::bigint,
          p_reason => p_a->>'reason', p_now => (p_a->>'now')::bigint,
          p_idem_key => p_a->>'idem_key', p_token => p_a->>'token',
          p_status => (p_a->>'status')::integer, p_headers => nullif(p_a->'headers', 'null'::jsonb),
          p_body => p_a->>'body', p_replay_until => (p_a->>'replay_until')::bigint
        ) r;
    elsif p_f = 'charge' then
      select to_jsonb(r) into v_r
        from md_charge(
          p_key => p_a->>'key', p_required => (p_a->>'required')::bigint, p_charge => (p_a->>'charge')::bigint,
          p_reason => p_a->>'reason', p_now => (p_a->>'now')::bigint,
          p_scope => p_a->>'scope', p_limit => (p_a->>'limit')::integer,
          p_bucket => (p_a->>'bucket')::bigint, p_since => (p_a->>'since')::bigint
        ) r;
    else
      raise exception 'md_batch: no call named %', p_f using errcode = '22023';
    end if;
    return v_r;
  end $$`

export const MD_BATCH = `create function md_batch(p_calls jsonb) returns jsonb
  language plpgsql as $$
  declare
    v_out jsonb[];
    v_call record;
  begin
    v_out := array_fill(null::jsonb, array[jsonb_array_length(p_calls)]);
    -- The fast pass: every member in one block. When one fails, the block is rolled back whole (the others'
    -- writes and locks with it) and the careful pass below runs them again, each in its own block.
    begin
      for v_call in
        select e.ord::integer as i, e.c->>'f' as f, e.c->'a' as a
          from jsonb_array_elements(p_calls) with ordinality as e(c, ord)
          order by e.c->>'k' collate "C", md_batch_rank(e.c->>'f'), e.ord
      loop
        v_out[v_call.i] := jsonb_build_object('ok', md_batch_call(v_call.f, v_call.a));
      end loop;
      return to_jsonb(v_out);
    exception when others then
      null;
    end;
    for v_call in
      select e.ord::integer as i, e.c->>'f' as f, e.c->'a' as a
        from jsonb_array_elements(p_calls) with ordinality as e(c, ord)
        order by e.c->>'k' collate "C", md_batch_rank(e.c->>'f'), e.ord
    loop
      begin
        v_out[v_call.i] := jsonb_build_object('ok', md_batch_call(v_call.f, v_call.a));
      exception when others then
        v_out[v_call.i] := jsonb_build_object('error', sqlerrm, 'code', sqlstate);
      end;
    end loop;
    return to_jsonb(v_out);
  end $$`
