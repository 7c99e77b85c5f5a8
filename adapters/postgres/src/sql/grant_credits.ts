/**
 * `md_grant`: adds credits to a key (creating its account) and records the grant; returns the available balance.
 *
 * The definition the database runs today, byte for byte as migration `2026-11-22T0001_accounts` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_GRANT = `create function md_grant(p_key text, p_amount bigint, p_reason text, p_now bigint) returns bigint
    language plpgsql as $$
    begin
      insert into ledger_accounts (key_id, booked) values (p_key, p_amount)
        on conflict (key_id) do update set booked = ledger_accounts.booked + excluded.booked;
      insert into ledger_entries (key_id, kind, amount, reason, at_ms) values (p_key, 'grant', p_amount, p_reason, p_now);
      return md_available(p_key, p_now);
    end $$`
