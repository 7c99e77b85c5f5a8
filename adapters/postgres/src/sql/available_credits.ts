/**
 * `md_available`: the available balance of a key at a time: booked credits minus its live holds (expired holds count as released).
 *
 * The definition the database runs today, byte for byte as migration `2026-11-22T0001_accounts` created it;
 * that migration imports this text. Never edit it: a change is a new migration whose text goes here, while the
 * migration that imported the old text gets a frozen copy of it (see docs/storage.md).
 */
export const MD_AVAILABLE = `create function md_available(p_key text, p_now bigint) returns bigint language sql stable as $$
      select coalesce((select booked from ledger_accounts where key_id = p_key), 0)
           - coalesce((select sum(amount) from ledger_holds
                        where key_id = p_key and state = 'active' and expires_at_ms > p_now), 0)
    $$`
