/**
 * The core is pure: it imports `effect` (its pure modules) and `decimal.js` only, nothing that does I/O,
 * and loading it pulls in none of Node's I/O modules.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const SRC = join(import.meta.dirname, "..", "src")
const ALLOWED = new Set(["effect", "effect/crypto/Digest", "effect/crypto/SecureRandom", "decimal.js"])

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

const specifiers = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const out: Array<string> = []
  for (const m of text.matchAll(
    /(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g
  )) {
    out.push((m[1] ?? m[2]) as string)
  }
  return out
}

describe("core purity", () => {
  it("imports only effect, decimal.js and its own files", () => {
    const offenders: Array<string> = []
    for (const file of sources(SRC)) {
      for (const spec of specifiers(file)) {
        if (!spec.startsWith("./") && !spec.startsWith("../") && !ALLOWED.has(spec)) offenders.push(`${file}: ${spec}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it("declares only effect and decimal.js as dependencies", () => {
    const pkg = JSON.parse(readFileSync(join(SRC, "..", "package.json"), "utf8"))
    expect(Object.keys(pkg.dependencies ?? {}).sort()).toEqual(["decimal.js", "effect"])
  })

  it("reads no wall clock directly", () => {
    const offenders = sources(SRC).filter((f) =>
      /Date\.now\(\)|new Date\(\)|performance\.now\(\)/.test(readFileSync(f, "utf8"))
    )
    expect(offenders).toEqual([])
  })

  it("loads without pulling in Node's network, file or process modules", () => {
    const script = `
      const before = new Set(process.moduleLoadList)
      await import(${JSON.stringify(join(SRC, "index.ts"))})
      const added = process.moduleLoadList.filter((m) => !before.has(m))
      console.log(JSON.stringify(added))
    `
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
    const added: Array<string> = JSON.parse(out.trim().split("\n").pop() as string)
    const io = added.filter((m) =>
      /\b(http|https|http2|net|tls|dgram|dns|fs|child_process|worker_threads|cluster)\b/.test(m)
    )
    expect(io).toEqual([])
  })
})
