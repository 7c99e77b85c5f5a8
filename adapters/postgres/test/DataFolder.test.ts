/**
 * `restrictDataFolder`: the folder and every folder in it 0700, every other entry 0600, symbolic links left
 * alone; the count is of entries that were open to other users (an owner-only mode set exactly is not counted).
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { makeDataFolder, restrictDataFolder } from "../src/DataFolder.ts"

const roots: Array<string> = []
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true })
})

const modeOf = (path: string) => lstatSync(path).mode & 0o777

describe("restrictDataFolder", () => {
  it("tightens folders to 0700 and files to 0600, counting those open to others", () => {
    const root = mkdtempSync(join(tmpdir(), "data-folder-"))
    roots.push(root)
    const dir = join(root, "data")
    makeDataFolder(dir)
    expect(modeOf(dir)).toBe(0o700)
    mkdirSync(join(dir, "base", "5"), { recursive: true })
    writeFileSync(join(dir, "base", "5", "1259"), "x")
    writeFileSync(join(dir, "postgresql.conf"), "x")
    writeFileSync(join(dir, "owner-only"), "x")
    chmodSync(dir, 0o755)
    chmodSync(join(dir, "base"), 0o777)
    chmodSync(join(dir, "base", "5", "1259"), 0o666)
    chmodSync(join(dir, "postgresql.conf"), 0o644)
    chmodSync(join(dir, "owner-only"), 0o400)
    symlinkSync("/etc/hostname", join(dir, "link"))
    // The folder, base/, 1259 and postgresql.conf were open to others; base/5 (0755 under the umask) too.
    const before = modeOf(join(dir, "base", "5")) & 0o077 ? 5 : 4
    expect(restrictDataFolder(dir)).toBe(before)
    expect(modeOf(dir)).toBe(0o700)
    expect(modeOf(join(dir, "base"))).toBe(0o700)
    expect(modeOf(join(dir, "base", "5"))).toBe(0o700)
    expect(modeOf(join(dir, "base", "5", "1259"))).toBe(0o600)
    expect(modeOf(join(dir, "postgresql.conf"))).toBe(0o600)
    expect(modeOf(join(dir, "owner-only"))).toBe(0o600)
    expect(lstatSync(join(dir, "link")).isSymbolicLink()).toBe(true)
    // Already private: nothing to count.
    expect(restrictDataFolder(dir)).toBe(0)
  })
})
