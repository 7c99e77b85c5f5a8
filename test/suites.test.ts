/**
 * The three test scripts split the suites without losing one: every test file of the repository runs in exactly
 * one of `npm test` (vitest.config.ts, in exactly one of its two projects), `npm run test:e2e` (vitest.e2e.config.ts)
 * and `npm run test:faults` (vitest.faults.config.ts).
 */
import { readdirSync } from "node:fs"
import { join, matchesGlob, relative } from "node:path"
import { describe, expect, it } from "vitest"
import unit, { isolatedFiles } from "../vitest.config.ts"
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

interface Config {
  test?: Selection & {
    maxWorkers?: number | string
    projects?: ReadonlyArray<{ extends?: boolean; test?: Selection & { name?: string; maxWorkers?: number | string } }>
  }
}

const selectedBy = (test: Selection | undefined, file: string): boolean =>
  (test?.include ?? []).some((g) => matchesGlob(file, g)) && !(test?.exclude ?? []).some((g) => matchesGlob(file, g))

/** How many times a config runs `file`: once per project that selects it, or once if the config selects it. */
const runsOf = (config: Config, file: string): number =>
  config.test?.projects === undefined
    ? selectedBy(config.test, file)
      ? 1
      : 0
    : config.test.projects.filter((p) => selectedBy(p.test, file)).length

describe("the test scripts", () => {
  const files = ["core", "adapters", "infra", "embedded", "test", "examples"].flatMap((d) => testFiles(join(ROOT, d)))

  it("run every test file exactly once between them", () => {
    expect(files.length).toBeGreaterThan(90)
    const runs = files.map((file) => ({
      file,
      scripts: [
        ...Array.from({ length: runsOf(unit as Config, file) }, () => "test"),
        ...Array.from({ length: runsOf(e2e as Config, file) }, () => "test:e2e"),
        ...Array.from({ length: runsOf(faults as Config, file) }, () => "test:faults")
      ]
    }))
    expect(runs.filter((r) => r.scripts.length !== 1)).toEqual([])
  })

  it("name only existing files as end-to-end suites", () => {
    for (const file of e2eFiles) expect(files, file).toContain(file)
  })

  it("run npm test's projects on both cores", () => {
    // A project with `extends: false` does not inherit the root's `maxWorkers`: without its own, vitest gives it
    // one worker fewer than the cores, and on 2 cores the `unit` project ran every file in a single worker.
    const config = unit as Config
    expect(config.test?.maxWorkers).toBe(2)
    const projects = config.test?.projects ?? []
    expect(projects.map((p) => p.test?.name)).toEqual(["unit", "isolated"])
    for (const p of projects)
      expect({ name: p.test?.name, maxWorkers: p.test?.maxWorkers }).toEqual({ name: p.test?.name, maxWorkers: 2 })
  })

  it("name only existing files as the suites that need a fresh worker", () => {
    for (const file of isolatedFiles) expect(files, file).toContain(file)
  })
})
