/**
 * The packed library: `scripts/pack.ts` builds and packs `@market-data/embedded` and every workspace package it
 * needs; a scratch project outside the workspace installs the tarballs from npm (their third-party dependencies
 * come from the registry, or npm's cache), runs an ESM program against the library, type-checks a TypeScript
 * consumer against the packed declarations, and runs the `market-data` command (`help`, a bulk ingest into a new
 * embedded store, then `serve` over HTTP).
 *
 * Slow by nature (npm installs some 300 packages): several minutes are allowed. It needs the npm registry, or a
 * cache that already holds the dependencies (`npm ci` of this repository fills it); it says so when it fails for
 * want of one.
 */
import { execFile, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Operations } from "@market-data/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  closure,
  dependencyProblems,
  importedPackages,
  PackProblem,
  packageOf,
  type Workspace,
  workspaces
} from "../scripts/pack.ts"
import { companyFactsText } from "./support/ingest-fixtures.ts"
import { writeZip } from "./support/zip-writer.ts"

const ROOT = resolve(import.meta.dirname, "..")
const NODE = process.execPath
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc")
const MINUTE = 60_000

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * The environment for child processes: without the `npm_*` variables of an enclosing `npm test` (they name this
 * repository as the project, which an `npm install` in the scratch project must never touch), with this Node first
 * on PATH (so `#!/usr/bin/env node` finds the Node the tests run on).
 */
const childEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_/i.test(k) && k !== "INIT_CWD") env[k] = v
  }
  env.PATH = [dirname(NODE), env.PATH ?? ""].join(delimiter)
  return env
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs: number): Promise<Ran> =>
  new Promise((done) => {
    execFile(
      command,
      args,
      { cwd, env: childEnv(), timeout: timeoutMs, maxBuffer: 64 << 20, encoding: "utf8" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        done({ code, stdout, stderr: error !== null && code === null ? `${stderr}\n${error.message}` : stderr })
      }
    )
  })

const explain = (what: string, r: Ran): string =>
  `${what} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`

const NETWORK_FAILURE =
  /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|fetch failed/i

interface PackReport {
  readonly out: string
  readonly packages: ReadonlyArray<{ name: string; version: string; tarball: string; files: number }>
}

/** What the ESM program prints: answers of the packed library, as JSON. */
interface ConsumerReport {
  readonly resolved: string
  readonly operations: ReadonlyArray<string>
  readonly methods: ReadonlyArray<string>
  readonly schema: { name: string; group: string; planes: ReadonlyArray<string> }
  readonly price: { asset_id: string; usd: number; status: string }
  readonly priceCall: { status: number; dataSource: string; creditsCharged: number }
  readonly docsIndex: string
  readonly error: { isMarketDataError: boolean; code: string; status: number; param: string }
  readonly afterClose: string
}

const CONSUMER_MJS = `
import { pathToFileURL } from "node:url"
import { Operations } from "@market-data/core"
import { createMarketData, MarketDataError } from "@market-data/embedded"

const md = await createMarketData({ store: "memory", feed: "simulated", seed: 42 })
const report = {}
try {
  report.resolved = import.meta.resolve("@market-data/embedded")
  report.operations = Operations.map((op) => op.name)
  report.methods = Operations.map((op) => op.name).filter((name) => typeof md[name] === "function")
  report.schema = (await md.schema({ resource: "price" })).data
  report.price = (await md.price({ id: "crypto:bitcoin" })).data
  const call = await md.call("price", { ids: ["crypto:bitcoin", "crypto:ethereum"] })
  report.priceCall = { status: call.status, dataSource: call.dataSource, creditsCharged: call.creditsCharged }
  report.docsIndex = await md.docs({ section: "index" })
  const e = await md.schema({ resource: "no_such_operation" }).then(() => undefined, (x) => x)
  report.error = { isMarketDataError: e instanceof MarketDataError, code: e?.code, status: e?.status, param: e?.param }
} finally {
  await md.close()
}
report.afterClose = await md.price({ id: "crypto:bitcoin" }).then(() => "answered", (e) => String(e.message))
process.stdout.write(JSON.stringify(report))
`

const CONSUMER_TS = `import {
  type CallResult,
  createMarketData,
  type MarketDataClient,
  MarketDataError,
  type MarketDataOptions
} from "@market-data/embedded"

const options: MarketDataOptions = { store: "memory", feed: "simulated", seed: 42 }
const md: MarketDataClient = await createMarketData(options)
const result: CallResult = await md.call("price", { ids: ["crypto:bitcoin"] }, { idempotencyKey: "k-1" })
const status: number = result.status
const etag: string | undefined = result.etag
const markdown: string = await md.docs({ section: "index" })
const envelope: { readonly data: unknown } = await md.price({ id: "crypto:bitcoin" })
const failure = await md.usage().catch((e: unknown) => (e instanceof MarketDataError ? e.code : undefined))
// @ts-expect-error: not an operation of the client
await md.quote({ id: "crypto:bitcoin" })
// @ts-expect-error: no such store
await createMarketData({ store: "redis" })
// @ts-expect-error: docs resolves to the markdown text
const wrong: number = await md.docs()
// @ts-expect-error: a parameter value is text, a number, a boolean or a list of text
await md.read({ id: { nested: true } })
console.log(status, etag, markdown.length, envelope, failure, wrong)
await md.close()
`

describe("the packed library, installed from its tarballs outside the workspace", () => {
  const work = mkdtempSync(join(tmpdir(), "md-pack-test-"))
  const out = join(work, "packed")
  const app = join(work, "app")
  let packed: PackReport

  beforeAll(async () => {
    expect(relative(ROOT, work).startsWith("..")).toBe(true)
    const pack = await run(NODE, [join(ROOT, "scripts", "pack.ts"), "--out", out, "--json"], ROOT, 5 * MINUTE)
    if (pack.code !== 0) throw new Error(explain("scripts/pack.ts", pack))
    packed = JSON.parse(pack.stdout) as PackReport

    // Every packed package is a direct dependency and an override, so npm takes each @market-data package from
    // its tarball and never asks the registry for one.
    const tarballs = Object.fromEntries(packed.packages.map((p) => [p.name, `file:${p.tarball}`]))
    const rootManifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>
    }
    mkdirSync(app)
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({
        name: "market-data-pack-consumer",
        version: "0.0.0",
        private: true,
        type: "module",
        dependencies: tarballs,
        overrides: tarballs,
        devDependencies: { "@types/node": rootManifest.devDependencies["@types/node"] }
      })
    )
    writeFileSync(join(app, "consumer.mjs"), CONSUMER_MJS)
    writeFileSync(join(app, "consumer.ts"), CONSUMER_TS)
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"]
        },
        files: ["consumer.ts"]
      })
    )

    const install = await run(
      "npm",
      ["install", "--prefix", app, "--prefer-offline", "--no-audit", "--no-fund"],
      app,
      8 * MINUTE
    )
    if (install.code !== 0) {
      const text = `${install.stdout}\n${install.stderr}`
      if (NETWORK_FAILURE.test(text)) {
        const registry = (await run("npm", ["config", "get", "registry"], app, MINUTE)).stdout.trim()
        throw new Error(
          `npm install in the scratch project could not reach the npm registry (${registry || "unknown"}): ` +
            "the tarballs' third-party dependencies (effect, kysely, pg, PGlite, Scalar, ...) come from it, or " +
            `from npm's cache when a previous npm ci filled it. Check the network or the registry setting.\n${explain("npm install", install)}`
        )
      }
      throw new Error(explain("npm install", install))
    }
  }, 15 * MINUTE)

  afterAll(() => {
    rmSync(work, { recursive: true, force: true })
    // The build output in the workspace: git-ignored, and rebuilt by every pack.
    for (const ws of closure(workspaces(), ["@market-data/embedded"])) {
      rmSync(join(ws.dir, "dist"), { recursive: true, force: true })
    }
  })

  it("packs @market-data/embedded and every workspace package it depends on", () => {
    expect(packed.packages.map((p) => p.name).sort()).toEqual([
      "@market-data/core",
      "@market-data/embedded",
      "@market-data/http",
      "@market-data/infra",
      "@market-data/mcp",
      "@market-data/memory",
      "@market-data/postgres",
      "@market-data/sources"
    ])
    for (const p of packed.packages) expect(existsSync(p.tarball)).toBe(true)
  })

  it("installs each package once, from its tarball, as JavaScript and declarations pointing at dist", () => {
    const lock = JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")) as {
      packages: Record<string, { resolved?: string; version?: string }>
    }
    const installed = Object.entries(lock.packages).filter(([path]) => /node_modules\/@market-data\//.test(path))
    expect(installed.map(([path]) => path).sort()).toEqual(packed.packages.map((p) => `node_modules/${p.name}`).sort())
    for (const p of packed.packages) {
      const dir = join(app, "node_modules", p.name)
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>
      const exports = manifest.exports as Record<string, { types: string; default: string }>
      expect(exports["."]).toEqual({ types: "./dist/src/index.d.ts", default: "./dist/src/index.js" })
      // Subpath exports (the bulk ingest's worker loads only what it needs) point at built files too.
      for (const [subpath, target] of Object.entries(exports)) {
        expect(target.default, `${p.name} ${subpath}`).toMatch(/^\.\/dist\/src\/.*\.js$/)
        expect(existsSync(join(dir, target.default)), `${p.name} ${subpath}`).toBe(true)
        expect(existsSync(join(dir, target.types)), `${p.name} ${subpath}`).toBe(true)
      }
      expect(manifest.scripts).toBeUndefined()
      expect(manifest.publishConfig).toBeUndefined()
      expect(manifest.engines).toEqual({ node: ">=22.19" })
      expect(existsSync(join(dir, "dist", "src", "index.js"))).toBe(true)
      expect(existsSync(join(dir, "dist", "src", "index.d.ts"))).toBe(true)
      // No TypeScript sources: Node would refuse to strip their types under node_modules.
      expect(existsSync(join(dir, "src"))).toBe(false)
      expect(tsSourcesUnder(dir)).toEqual([])
    }
  })

  it(
    "runs an ESM program that imports the library and gets real answers, then closes",
    async () => {
      const r = await run(NODE, [join(app, "consumer.mjs")], app, 3 * MINUTE)
      if (r.code !== 0) throw new Error(explain("consumer.mjs", r))
      const report = JSON.parse(r.stdout) as ConsumerReport
      expect(report.resolved).toBe(
        pathToFileURL(join(app, "node_modules", "@market-data", "embedded", "dist", "src", "index.js")).href
      )
      // The same registry as the workspace's, one method per operation.
      expect(report.operations).toEqual(Operations.map((op) => op.name))
      expect(report.methods).toEqual(report.operations)
      const price = Operations.find((op) => op.name === "price")
      expect(report.schema).toMatchObject({ name: "price", group: price?.group, planes: price?.planes })
      expect(report.price.asset_id).toBe("crypto:bitcoin")
      expect(Number.isFinite(report.price.usd) && report.price.usd > 0).toBe(true)
      expect(report.priceCall).toEqual({ status: 200, dataSource: "simulated", creditsCharged: 0 })
      expect(report.docsIndex).toMatch(/^# /)
      expect(report.error).toEqual({
        isMarketDataError: true,
        code: "invalid_parameter",
        status: 400,
        param: "resource"
      })
      expect(report.afterClose).toMatch(/closed/)
    },
    4 * MINUTE
  )

  it(
    "type-checks a TypeScript consumer against the packed declarations",
    async () => {
      // skipLibCheck is off, so the packed declarations are checked too; the @ts-expect-error lines fail the check
      // if the types were lost (any).
      const r = await run(NODE, [TSC, "-p", join(app, "tsconfig.json")], app, 3 * MINUTE)
      if (r.code !== 0) throw new Error(explain("tsc", r))
    },
    4 * MINUTE
  )

  it(
    "installs the market-data command, which runs on the built JavaScript",
    async () => {
      const r = await run(join(app, "node_modules", ".bin", "market-data"), ["help"], app, MINUTE)
      if (r.code !== 0) throw new Error(explain("market-data help", r))
      expect(r.stdout).toMatch(/^market-data <command>/)
      expect(r.stdout).toContain("serve")
    },
    2 * MINUTE
  )

  it(
    "ingests a bulk archive from the tarballs into a new embedded store: the parsing worker and the store's creating child process run from dist",
    async () => {
      const zip = join(app, "companyfacts.zip")
      writeZip(zip, [
        { name: "CIK0009990777.json", data: companyFactsText() },
        { name: "CIK0009990778.json", data: "{not json" }
      ])
      const store = join(app, "bulk-store")
      const r = await new Promise<Ran>((done) =>
        execFile(
          join(app, "node_modules", ".bin", "market-data"),
          ["ingest", "sec", zip, "--json"],
          {
            cwd: app,
            env: { ...childEnv(), MARKET_DATA_DIR: store, LOG_LEVEL: "warn" },
            timeout: 3 * MINUTE,
            encoding: "utf8"
          },
          (error, stdout, stderr) =>
            done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
        )
      )
      if (r.code !== 1) throw new Error(explain("market-data ingest sec companyfacts.zip", r))
      const report = JSON.parse(r.stdout) as { loaded: number; failed: number; written: { facts: number } }
      expect(report.loaded).toBe(1)
      expect(report.failed).toBe(1)
      expect(report.written.facts).toBe(7)
      expect(existsSync(join(store, "PG_VERSION"))).toBe(true)
    },
    4 * MINUTE
  )

  it(
    "serves HTTP from the tarballs: the API, and the docs page's Scalar bundle found in the installed package",
    async () => {
      const child = spawn(join(app, "node_modules", ".bin", "market-data"), ["serve"], {
        cwd: app,
        env: { ...childEnv(), HOST: "127.0.0.1", PORT: "0", DATABASE_URL: "memory", LOG_LEVEL: "none" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
      let output = ""
      try {
        const url = await new Promise<string>((found, failed) => {
          const timer = setTimeout(() => failed(new Error(`no startup line within 90 s:\n${output}`)), 90_000)
          const read = (chunk: Buffer) => {
            output += chunk.toString("utf8")
            const m = /market-data listening on (http:\/\/\S+)\/api\/v1/.exec(output)
            if (m?.[1] !== undefined) {
              clearTimeout(timer)
              found(m[1])
            }
          }
          child.stdout.on("data", read)
          child.stderr.on("data", read)
          void exited.then((code) => failed(new Error(`market-data serve exited ${code} before listening:\n${output}`)))
        })
        const docs = await fetch(`${url}/api/v1/docs?section=index`)
        expect(docs.status).toBe(200)
        expect(await docs.text()).toMatch(/^# /)
        const scalar = await fetch(`${url}/assets/scalar.js`)
        expect(scalar.status).toBe(200)
        expect((await scalar.text()).length).toBeGreaterThan(100_000)
      } finally {
        child.kill("SIGTERM")
      }
      expect(await exited).toBe(0)
    },
    3 * MINUTE
  )
})

describe("scripts/pack.ts checks", () => {
  const fake = (dir: string, manifest: Workspace["manifest"]): Workspace => ({ name: manifest.name, dir, manifest })

  it("names the package of a bare specifier, and none for relative, node: and built-in ones", () => {
    expect(packageOf("@effect/platform-node/NodeRuntime")).toBe("@effect/platform-node")
    expect(packageOf("kysely/migration")).toBe("kysely")
    expect(packageOf("effect")).toBe("effect")
    expect(packageOf("./Stores.js")).toBeUndefined()
    expect(packageOf("../migrations/x.js")).toBeUndefined()
    expect(packageOf("node:fs")).toBeUndefined()
    expect(packageOf("fs")).toBeUndefined()
  })

  it("finds imports missing from dependencies and workspace dependencies not naming the exact version", () => {
    const dir = mkdtempSync(join(tmpdir(), "md-pack-check-"))
    try {
      mkdirSync(join(dir, "dist", "src"), { recursive: true })
      writeFileSync(
        join(dir, "dist", "src", "index.js"),
        [
          'import { a } from "left-pad";',
          'import {\n  b,\n  c\n} from "effect";',
          'export * from "@market-data/core";',
          'import "side-effect-only";',
          'const later = () => import("lazy-one");',
          'const text = "words from \\"not-an-import\\";";',
          'import { own } from "./own.js";'
        ].join("\n")
      )
      writeFileSync(join(dir, "dist", "src", "index.d.ts"), 'export declare const t: import("typed-only/sub").T;\n')
      const core = fake(join(dir, "core"), { name: "@market-data/core", version: "1.0.0" })
      const ws = fake(dir, {
        name: "@market-data/fake",
        version: "1.0.0",
        dependencies: { "@market-data/core": "^1.0.0", effect: "4.1.0", "lazy-one": "1.0.0" }
      })
      const all = new Map([
        [core.name, core],
        [ws.name, ws]
      ])
      expect([...importedPackages(ws).keys()].sort()).toEqual([
        "@market-data/core",
        "effect",
        "lazy-one",
        "left-pad",
        "side-effect-only",
        "typed-only"
      ])
      const problems = dependencyProblems(ws, all)
      expect(problems).toHaveLength(4)
      for (const missing of ["left-pad", "side-effect-only", "typed-only"]) {
        expect(problems.some((p) => p.includes(`imports ${missing} `))).toBe(true)
      }
      expect(problems.some((p) => p.includes("@market-data/core@^1.0.0") && p.includes("1.0.0 exactly"))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("orders the workspace closure dependencies first and refuses unknown packages", () => {
    const all = workspaces()
    const names = closure(all, ["@market-data/embedded"]).map((w) => w.name)
    expect(names.at(-1)).toBe("@market-data/embedded")
    expect(names.indexOf("@market-data/core")).toBe(0)
    // The transports are siblings that infra composes: both come before it.
    expect(names.indexOf("@market-data/mcp")).toBeLessThan(names.indexOf("@market-data/infra"))
    expect(names.indexOf("@market-data/http")).toBeLessThan(names.indexOf("@market-data/infra"))
    expect(names.indexOf("@market-data/infra")).toBeLessThan(names.indexOf("@market-data/embedded"))
    expect(() => closure(all, ["@market-data/nope"])).toThrow(PackProblem)
  })

  it("every packed workspace package declares the dependencies its sources import", () => {
    // The same check the pack runs on dist/, here on the sources' import lines, so it fails fast without a build.
    const all = workspaces()
    const missing = closure(all, ["@market-data/embedded"]).flatMap((ws) => {
      const declared = { ...ws.manifest.dependencies, ...ws.manifest.peerDependencies }
      return tsSourcesUnder(join(ws.dir, "src")).flatMap((file) =>
        [...readFileSync(file, "utf8").matchAll(/^(?:import|export)\s(?!type\s)[^;"]*?\bfrom\s+"([^"]+)"/gm)]
          .map((m) => packageOf(m[1] ?? ""))
          .filter((name): name is string => name !== undefined && name !== ws.name && !(name in declared))
          .map((name) => `${ws.name}: ${name} (${relative(ROOT, file)})`)
      )
    })
    expect(missing).toEqual([])
  })
})

const tsSourcesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => join(e.parentPath, e.name))
