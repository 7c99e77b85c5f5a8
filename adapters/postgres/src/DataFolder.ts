/**
 * The embedded store's data folder is private to the user that runs the service: the folder and every folder in
 * it `0700`, every file `0600`. It holds the key hashes, the ledger and the billing functions (`pg_proc`), the
 * WAL and `postgresql.conf`: no other local user may read or rewrite any of it.
 *
 * PGlite's `initdb` writes the initial cluster's files as `0666` (less the umask) and its folder as `0755`, so a
 * new cluster is tightened before it is opened. Most files PostgreSQL creates afterwards (relations, WAL
 * segments) it creates `0600` itself; a few PGlite writes `0644` whatever the umask (the relation cache's
 * `pg_internal.init` at each open), so `openPglite` tightens the folder again once open and at close. A file
 * PGlite writes that way while it runs is inside the `0700` folder, out of other users' reach all the same. A
 * folder found looser at start (an earlier version created it) is tightened the same way, and the caller says so
 * in a log line.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs"
import { join } from "node:path"

/** Mode of the data folder and of every folder in it. */
export const DATA_FOLDER_MODE = 0o700
/** Mode of every file in the data folder. */
export const DATA_FILE_MODE = 0o600

/** Creates the data folder (and missing parents) owner-only; an existing one is left to `restrictDataFolder`. */
export const makeDataFolder = (dir: string): void => {
  mkdirSync(dir, { recursive: true, mode: DATA_FOLDER_MODE })
}

/**
 * Sets `dir` and every folder in it to `DATA_FOLDER_MODE` and every other entry (files, the admin socket) to
 * `DATA_FILE_MODE`; symbolic links are left alone (their target is not the folder's). Returns how many entries
 * were looser than that (0 when the folder was already private).
 */
export const restrictDataFolder = (dir: string): number => {
  let loosened = 0
  const visit = (path: string) => {
    const st = lstatSync(path, { throwIfNoEntry: false })
    // Gone meanwhile (a temporary file renamed by a writer at work in the folder): nothing to tighten.
    if (st === undefined || st.isSymbolicLink()) return
    const wanted = st.isDirectory() ? DATA_FOLDER_MODE : DATA_FILE_MODE
    try {
      if ((st.mode & 0o777) !== wanted) {
        chmodSync(path, wanted)
        // Only bits beyond the owner's count as loose; an owner-only mode is set exactly all the same.
        if ((st.mode & 0o077) !== 0) loosened++
      }
      if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e
    }
  }
  visit(dir)
  return loosened
}
