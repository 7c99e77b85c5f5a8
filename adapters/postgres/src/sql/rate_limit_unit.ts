/**
 * `md_rate_consume`: spends one rate unit of a scope when its rolling window has room, under the scope's row lock.
 * It mirrors the core's money rule `admitsUnit` (core/src/Money.ts), the memory twin's `MemoryRateCounter`.
 *
 * The definition the database runs today, byte for byte as migration `2026-11-22T0001_accounts` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_RATE_CONSUME = `create function md_rate_consume(p_scope text, p_limit integer, p_now bigint, p_bucket bigint, p_since bigint)
    returns table (allowed boolean, used bigint, oldest bigint)
    language plpgsql as $$
    declare
      v_used bigint;
      v_oldest bigint;
    begin
      perform 1 from rate_limit_scopes where scope = p_scope for update;
      if not found then
        insert into rate_limit_scopes (scope) values (p_scope) on conflict do nothing;
        perform 1 from rate_limit_scopes where scope = p_scope for update;
      end if;
      select coalesce(sum(count), 0), min(start_ms) into v_used, v_oldest
        from rate_limit_buckets where scope = p_scope and start_ms > p_since and count > 0;
      if v_used >= p_limit then
        return query select false, v_used, v_oldest;
        return;
      end if;
      insert into rate_limit_buckets (scope, start_ms, count) values (p_scope, p_bucket, 1)
        on conflict (scope, start_ms) do update set count = rate_limit_buckets.count + 1;
      return query select true, v_used + 1, coalesce(v_oldest, p_bucket);
    end $$`
