/**
 * `md_batch`, `md_batch_call` and `md_batch_rank`: group commit. Runs many store calls (`GroupCommit.ts` collects them from concurrent requests) in one
 * statement, so one round trip and one transaction (one commit, one WAL flush) serve them all. All members run in
 * one block first (`md_batch_call` runs one); when one fails, that block is rolled back whole and the members run
 * again, each in its own `begin ... exception` block: a member whose SQL fails is rolled back alone and answered
 * its error (`{"error", "code"}`); the others go on. (The careful pass costs a sub-transaction per member, about a
 * third more database time per batch than one block, so it runs only when needed.) Members run ordered by their lock key (the key ID, or the rate scope),
 * then by the lock class they take first (`md_batch_rank`) (rate scope, then account, then hold, then idempotency record), the order
 * every `md_*` function takes its locks in: two batches, or a batch and a lone call, take the rows they share in
 * the same order and cannot deadlock on them. Answers come back as one array in the order the members were sent.
 *
 * The calls are the money functions as they are (`md_rate_consume`, `md_rate_begin`, `md_meter_charge`,
 * `md_hold`, `md_settle`, `md_available`) plus the statements the stores send themselves (key lookup by hash,
 * hold release, idempotency complete and abandon), each with exactly the stores' SQL. Adding a function is one
 * branch in `md_batch_call` and one lock class in `md_batch_rank`.
 *
 * The definition the database runs today, byte for byte as migration `2026-11-26T0100_batch` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_BATCH_RANK = `create function md_batch_rank(p_f text) returns integer
  language sql immutable as $$
    select case p_f
      when 'rate_consume' then 0 when 'rate_begin' then 0 when 'meter_charge' then 0
      when 'hold' then 1 when 'settle' then 1
      when 'release' then 2
      when 'complete' then 3 when 'abandon' then 3
      else 4
    end
  $$`

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
    elsif p_f = 'rate_begin' then
      select to_jsonb(r) into v_r
        from md_rate_begin(p_a->>0, (p_a->>1)::integer, (p_a->>2)::bigint, (p_a->>3)::bigint,
          (p_a->>4)::bigint, p_a->>5, p_a->>6, p_a->>7, p_a->>8, (p_a->>9)::bigint) r;
    elsif p_f = 'meter_charge' then
      select to_jsonb(r) into v_r
        from md_meter_charge(p_a->>0, (p_a->>1)::bigint, (p_a->>2)::bigint, p_a->>3, (p_a->>4)::bigint,
          p_a->>5, (p_a->>6)::integer, (p_a->>7)::bigint, (p_a->>8)::bigint) r;
    elsif p_f = 'hold' then
      v_r := to_jsonb(md_hold(p_a->>0, p_a->>1, (p_a->>2)::bigint, (p_a->>3)::bigint, (p_a->>4)::bigint));
    elsif p_f = 'settle' then
      v_r := to_jsonb(md_settle(p_a->>0, (p_a->>1)::bigint, p_a->>2, (p_a->>3)::bigint,
        p_a->>4, p_a->>5, p_a->>6, (p_a->>7)::integer, nullif(p_a->8, 'null'::jsonb), p_a->>9, (p_a->>10)::bigint));
    elsif p_f = 'release' then
      update ledger_holds set state = 'released' where id = p_a->>0 and state = 'active';
      v_r := null;
    elsif p_f = 'complete' then
      update idempotency_records
        set state = 'stored', status = (p_a->>3)::integer, headers = p_a->4, body = p_a->>5,
            expires_at_ms = (p_a->>6)::bigint
        where key_id = p_a->>0 and idem_key = p_a->>1 and token = p_a->>2 and state = 'in_flight';
      v_r := null;
    elsif p_f = 'abandon' then
      delete from idempotency_records
        where key_id = p_a->>0 and idem_key = p_a->>1 and token = p_a->>2 and state = 'in_flight';
      v_r := null;
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
