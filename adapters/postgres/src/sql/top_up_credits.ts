/**
 * `md_top_up`: tops a key's available balance up to `p_target` in one transaction and returns what it granted
 * (0 when the balance already reaches the target). The account row is created if missing and locked
 * (`for update`) before the balance is read, so two callers topping up the same key at once (say two instances
 * starting with one bootstrap key) serialize: the second reads the first one's grant and grants only what is
 * still missing. Read then grant without that lock could grant twice.
 *
 * Locks: only the account row (as `md_grant`); `md_hold`, `md_settle` and `md_meter_charge` take it first too,
 * so no lock cycle exists.
 *
 * The definition the database runs today, byte for byte as migration `2026-11-25T2300_top_up` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_TOP_UP = `create function md_top_up(p_key text, p_target bigint, p_reason text, p_now bigint) returns bigint
    language plpgsql as $$
    declare
      v_short bigint;
    begin
      insert into ledger_accounts (key_id, booked) values (p_key, 0) on conflict (key_id) do nothing;
      perform 1 from ledger_accounts where key_id = p_key for update;
      v_short := p_target - md_available(p_key, p_now);
      if v_short <= 0 then
        return 0;
      end if;
      update ledger_accounts set booked = booked + v_short where key_id = p_key;
      insert into ledger_entries (key_id, kind, amount, reason, at_ms) values (p_key, 'grant', v_short, p_reason, p_now);
      return v_short;
    end $$`
