/**
 * `md_hold`: holds credits for a request when the available balance covers them, under the account's row lock; false otherwise.
 * It mirrors the core's money rule `holdCovered` (core/src/Money.ts), the memory twin's `MemoryLedger.hold`.
 *
 * No longer run: migration `2026-11-26T0400_money_port` dropped it (the money port's `md_admit`, `md_finish` and
 * `md_charge` took its place). The text stays, frozen, byte for byte as the migration that created it ran it;
 * that migration imports it. Never edit it.
 */
export const MD_HOLD = `create function md_hold(p_id text, p_key text, p_amount bigint, p_now bigint, p_expires bigint) returns boolean
    language plpgsql as $$
    declare
      v_booked bigint;
      v_held bigint;
    begin
      select booked into v_booked from ledger_accounts where key_id = p_key for update;
      if not found then
        v_booked := 0;
      end if;
      -- A fresh snapshot after the lock: every hold committed before it is counted.
      select coalesce(sum(amount), 0) into v_held from ledger_holds
        where key_id = p_key and state = 'active' and expires_at_ms > p_now;
      if v_booked - v_held < p_amount then
        return false;
      end if;
      insert into ledger_holds (id, key_id, amount, expires_at_ms) values (p_id, p_key, p_amount, p_expires);
      return true;
    end $$`
