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
 * limiter's `md_rate_consume` (keyless callers), `md_available` and the key lookup by hash. Adding a function is
 * one branch in `md_batch_call` and its lock class in `md_batch_rank`.
 *
 * The definitions the database runs today, byte for byte as migration `2026-11-26T0500_batch` created them;
 * that migration imports these texts. Never edit them: a change is a new migration whose text goes here, while
 * the migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_BATCH_RANK = `create function md_batch_rank(p_f text) returns integer
  language sql immutable as $$
    select case p_f
      when 'rate_consume' then 0 when 'admit' then 0 when 'charge' then 0
      when 'finish' then 1
      else 2
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
    elsif p_f = 'admit' then
      select to_jsonb(r) into v_r
        from md_admit(p_a->>0, (p_a->>1)::bigint, p_a->>2, (p_a->>3)::integer, (p_a->>4)::bigint,
          (p_a->>5)::bigint, (p_a->>6)::bigint, p_a->>7, (p_a->>8)::bigint, p_a->>9, p_a->>10, p_a->>11,
          (p_a->>12)::bigint) r;
    elsif p_f = 'finish' then
      select to_jsonb(r) into v_r
        from md_finish(p_a->>0, p_a->>1, p_a->>2, (p_a->>3)::bigint, (p_a->>4)::bigint, p_a->>5,
          (p_a->>6)::bigint, p_a->>7, p_a->>8, (p_a->>9)::integer, nullif(p_a->10, 'null'::jsonb), p_a->>11,
          (p_a->>12)::bigint) r;
    elsif p_f = 'charge' then
      select to_jsonb(r) into v_r
        from md_charge(p_a->>0, (p_a->>1)::bigint, (p_a->>2)::bigint, p_a->>3, (p_a->>4)::bigint,
          p_a->>5, (p_a->>6)::integer, (p_a->>7)::bigint, (p_a->>8)::bigint) r;
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
