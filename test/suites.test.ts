/**
 * The three test scripts split the suites without losing one: every test file of the repository runs in exactly
 * one of `npm test` (vitest.config.ts), `npm run test:e2e` (vitest.e2e.config.ts) and `npm run test:faults`
 * (vitest.faults.config.ts).
 */
import { readdirSync } from "node:fs"
import { join, matchesGlob, relative } from "node:path"
import { describe, expect, it } from "vitest"
import unit from "../vitest.config.ts"
import e2e, { e2eFiles } from "../vitest.e2e.config.ts"
import faults from "../vitest.faults.config.ts"

const ROOT = join(import.meta.dirname, "..")

const testFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === "node_modules" || e.name.startsWith(".")
      ? []
      : e.isDirectory()
        ? testFiles(join(dir, e.name))
        : e.name.endsWith(".test.ts")
          ? [relative(ROOT, join(dir, e.name)).split("\\").join("/")]
          : []
  )

interface Selection {
  readonly include?: ReadonlyArray<string>
  readonly exclude?: ReadonlyArray<string>
}

const selects = (config: { test?: Selection }, file: string): boolean =>
  (config.test?.include ?? []).some((g) => matchesGlob(file, g)) &&
  !(config.test?.exclude ?? []).some((g) => matchesGlob(file, g))

describe("the test scripts", () => {
  const files = ["core", "adapters", "infra", "embedded", "test", "examples"].flatMap((d) => testFiles(join(ROOT, d)))

  it("run every test file exactly once between them", () => {
    expect(files.length).toBeGreaterThan(90)
    const runs = files.map((file) => ({
      file,
      scripts: [
        selects(unit as { test?: Selection }, file) ? "test" : "",
        selects(e2e as { test?: Selection }, file) ? "test:e2e" : "",
        selects(faults as { test?: Selection }, file) ? "test:faults" : ""
      ].filter((s) => s !== "")
    }))
    expect(runs.filter((r) => r.scripts.length !== 1)).toEqual([])
  })

  it("name only existing files as end-to-end suites", () => {
    for (const file of e2eFiles) expect(files, file).toContain(file)
  })
})
