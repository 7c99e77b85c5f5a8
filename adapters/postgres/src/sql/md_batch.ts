/**
 * `md_batch`: group commit. Runs many store calls (`GroupCommit.ts` collects them from concurrent requests) in one
 * statement, so one round trip and one transaction (one commit, one WAL flush) serve them all. Each member runs
 * in its own `begin ... exception` block: a member whose SQL fails is rolled back alone and answered its error
 * (`{"error", "code"}`); the others go on. Members run ordered by their lock key (the key ID, or the rate scope),
 * then by the lock class they take first (rate scope, then account, then hold, then idempotency record), the order
 * every `md_*` function takes its locks in: two batches, or a batch and a lone call, take the rows they share in
 * the same order and cannot deadlock on them. Answers come back as one array in the order the members were sent.
 *
 * The calls are the money functions as they are (`md_rate_consume`, `md_rate_begin`, `md_meter_charge`,
 * `md_hold`, `md_settle`, `md_available`) plus the statements the stores send themselves (key lookup by hash,
 * hold release, idempotency complete and abandon), each with exactly the stores' SQL. Adding a function is one
 * branch here and one lock class in the order.
 *
 * The definition the database runs today, byte for byte as migration `2026-11-26T0100_batch` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_BATCH = `create function md_batch(p_calls jsonb) returns jsonb
  language plpgsql as $$
  declare
    v_out jsonb[];
    v_call record;
    v_a jsonb;
    v_r jsonb;
  begin
    v_out := array_fill(null::jsonb, array[jsonb_array_length(p_calls)]);
    for v_call in
      select e.ord::integer as i, e.c->>'f' as f, e.c->'a' as a
        from jsonb_array_elements(p_calls) with ordinality as e(c, ord)
        order by e.c->>'k' collate "C",
          case e.c->>'f'
            when 'rate_consume' then 0 when 'rate_begin' then 0 when 'meter_charge' then 0
            when 'hold' then 1 when 'settle' then 1
            when 'release' then 2
            when 'complete' then 3 when 'abandon' then 3
            else 4
          end,
          e.ord
    loop
      v_a := v_call.a;
      begin
        if v_call.f = 'key_by_hash' then
          select to_jsonb(k) into v_r from api_keys k where k.hash = v_a->>0;
        elsif v_call.f = 'available' then
          v_r := to_jsonb(md_available(v_a->>0, (v_a->>1)::bigint));
        elsif v_call.f = 'rate_consume' then
          select to_jsonb(r) into v_r
            from md_rate_consume(v_a->>0, (v_a->>1)::integer, (v_a->>2)::bigint, (v_a->>3)::bigint,
              (v_a->>4)::bigint) r;
        elsif v_call.f = 'rate_begin' then
          select to_jsonb(r) into v_r
            from md_rate_begin(v_a->>0, (v_a->>1)::integer, (v_a->>2)::bigint, (v_a->>3)::bigint,
              (v_a->>4)::bigint, v_a->>5, v_a->>6, v_a->>7, v_a->>8, (v_a->>9)::bigint) r;
        elsif v_call.f = 'meter_charge' then
          select to_jsonb(r) into v_r
            from md_meter_charge(v_a->>0, (v_a->>1)::bigint, (v_a->>2)::bigint, v_a->>3, (v_a->>4)::bigint,
              v_a->>5, (v_a->>6)::integer, (v_a->>7)::bigint, (v_a->>8)::bigint) r;
        elsif v_call.f = 'hold' then
          v_r := to_jsonb(md_hold(v_a->>0, v_a->>1, (v_a->>2)::bigint, (v_a->>3)::bigint, (v_a->>4)::bigint));
        elsif v_call.f = 'settle' then
          v_r := to_jsonb(md_settle(v_a->>0, (v_a->>1)::bigint, v_a->>2, (v_a->>3)::bigint,
            v_a->>4, v_a->>5, v_a->>6, (v_a->>7)::integer, nullif(v_a->8, 'null'::jsonb), v_a->>9, (v_a->>10)::bigint));
        elsif v_call.f = 'release' then
          update ledger_holds set state = 'released' where id = v_a->>0 and state = 'active';
          v_r := null;
        elsif v_call.f = 'complete' then
          update idempotency_records
            set state = 'stored', status = (v_a->>3)::integer, headers = v_a->4, body = v_a->>5,
                expires_at_ms = (v_a->>6)::bigint
            where key_id = v_a->>0 and idem_key = v_a->>1 and token = v_a->>2 and state = 'in_flight';
          v_r := null;
        elsif v_call.f = 'abandon' then
          delete from idempotency_records
            where key_id = v_a->>0 and idem_key = v_a->>1 and token = v_a->>2 and state = 'in_flight';
          v_r := null;
        else
          raise exception 'md_batch: no call named %', v_call.f using errcode = '22023';
        end if;
        v_out[v_call.i] := jsonb_build_object('ok', v_r);
      exception when others then
        v_out[v_call.i] := jsonb_build_object('error', sqlerrm, 'code', sqlstate);
      end;
    end loop;
    return to_jsonb(v_out);
  end $$`
