import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { PassThrough } from "node:stream"
import { MoneyStore } from "@market-data/core"
import { memoryStores } from "@market-data/memory"
import { openPglite, openPostgres } from "@market-data/postgres"
import { ConfigProvider, Effect } from "effect"
import { sql } from "kysely"
import { describe, expect, it } from "vitest"
import { barProgress, type Io, lineProgress, parseArgs, runCli } from "../src/Cli.ts"
import { migrations, pendingMigrations } from "../src/Migrate.ts"

const MIGRATIONS = Object.keys(migrations)

const capture = (progress?: Io["progress"]) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = {
    out: (l: string) => out.push(l),
    err: (l: string) => err.push(l),
    ...(progress === undefined ? {} : { progress })
  }
  return { io, out, err }
}

const withEnv = (env: Record<string, string>) =>
  ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", ...env }))

describe("market-data CLI", () => {
  it("parses flags in both forms and refuses repeats", () => {
    const p = parseArgs(["keys", "create", "--credits", "5", "--label=ops", "--json"])
    expect("positional" in p && p.positional).toEqual(["keys", "create"])
    expect("flags" in p && Object.fromEntries(p.flags)).toEqual({ credits: "5", label: "ops", json: true })
    expect("message" in parseArgs(["--credits", "1", "--credits", "2"])).toBe(true)
    expect("message" in parseArgs(["--credits"])).toBe(true)
  })

  it("parses with node:util: `--` ends the options, and each misuse is one line and exit 2", async () => {
    const p = parseArgs(["ingest", "sec", "--json", "--", "--odd.json", "-x.json"])
    expect("positional" in p && p.positional).toEqual(["ingest", "sec", "--odd.json", "-x.json"])
    expect("flags" in p && Object.fromEntries(p.flags)).toEqual({ json: true })
    const c = capture()
    const stores = memoryStores()
    const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io, stores))
    const firstErrorLine = () => (c.err.pop() ?? "").split("\n")[0]
    expect(await cli("keys", "create", "--credits", "5", "--json")).toBe(0)
    const { id } = JSON.parse(c.out.pop() as string)
    // After `--` a number with a minus sign is a positional word, refused by the command for what it is.
    expect(await cli("credits", "grant", id, "--", "-3")).toBe(2)
    expect(firstErrorLine()).toBe('market-data: the number of credits must be a whole number 1 or more, got "-3"')
    const refusals: Array<[Array<string>, string]> = [
      [["keys", "list", "-x"], "market-data: unknown option -x: options are spelled --name"],
      [["keys", "list", "--json=yes"], "market-data: --json takes no value"],
      [["keys", "create", "--credits", "--json"], "market-data: --credits needs a value"],
      [["keys", "create", "--credits=2", "--credits", "3"], "market-data: --credits given twice"],
      [["keys", "list", "--frobnicate"], "market-data: unknown option --frobnicate"],
      [["keys", "list", "--reason", "r"], "market-data: unknown option --reason"]
    ]
    for (const [argv, line] of refusals) {
      expect(await cli(...argv), argv.join(" ")).toBe(2)
      expect(firstErrorLine(), argv.join(" ")).toContain(line)
    }
    // The key list is untouched by the refused lines.
    expect(await cli("keys", "list", "--json")).toBe(0)
    expect(JSON.parse(c.out.pop() as string)).toHaveLength(1)
  })

  it("creates, lists and revokes keys against one store", async () => {
    const c = capture()
    const stores = memoryStores()
    const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io, stores))
    expect(await cli("keys", "create", "--credits", "25", "--label", "ops", "--json")).toBe(0)
    const created = JSON.parse(c.out.pop() as string)
    expect(created.key).toMatch(/^mdk_[0-9A-Za-z]{32}$/)
    expect(created.credits).toBe(25)
    expect(await cli("keys", "list", "--json")).toBe(0)
    const listed = JSON.parse(c.out.pop() as string)
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ id: created.id, label: "ops", credits: 25, revoked_at: null })
    expect(JSON.stringify(listed)).not.toContain(created.key)
    expect(await cli("keys", "revoke", created.id)).toBe(0)
    expect(await cli("keys", "revoke", created.id)).toBe(1)
    expect(c.err.pop()).toContain("already revoked")
    expect(await cli("keys", "create")).toBe(2)
    expect(c.err.pop()).toContain("--credits is required")
    expect(await cli("keys", "create", "--credits", "-3")).toBe(2)
    expect(await cli("keys", "create", "--credits", "3", "--bogus", "x")).toBe(2)
  })

  it("refuses key commands on a store the server cannot share, saying what to do", async () => {
    const c = capture()
    const memory = ConfigProvider.layer(
      ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", DATABASE_URL: "memory" })
    )
    expect(await Effect.runPromise(runCli(["keys", "list"], c.io).pipe(Effect.provide(memory)))).toBe(2)
    expect(c.err.join("\n")).toContain("MARKET_DATA_BOOTSTRAP_KEY")
  })

  it("manages keys in the embedded store, migrates it, and refuses while another process holds it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "md-cli-"))
    try {
      const embedded = ConfigProvider.layer(
        ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", MARKET_DATA_DIR: dir })
      )
      const c = capture()
      const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io).pipe(Effect.provide(embedded)))
      expect(await cli("migrate", "--json")).toBe(0)
      expect(JSON.parse(c.out.pop() as string).pending).toEqual([])
      expect(await cli("keys", "create", "--credits", "7", "--json")).toBe(0)
      const created = JSON.parse(c.out.pop() as string)
      expect(await cli("keys", "list", "--json")).toBe(0)
      expect(JSON.parse(c.out.pop() as string)).toMatchObject([{ id: created.id, credits: 7 }])
      // A live process holding the lock file keeps others out with a clear message.
      writeFileSync(join(dir, "market-data.lock"), String(process.ppid))
      expect(await cli("keys", "list")).toBe(2)
      expect(c.err.pop()).toContain(`in use by process ${process.ppid}`)
      // A stale lock (dead process) is taken over.
      writeFileSync(join(dir, "market-data.lock"), "999999999")
      expect(await cli("keys", "list", "--json")).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("market-data credits grant", () => {
  it("adds credits to a key with a reason, in text and JSON, and refuses bad input with exit 2", async () => {
    const c = capture()
    const stores = memoryStores()
    const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io, stores))
    expect(await cli("keys", "create", "--credits", "25", "--json")).toBe(0)
    const { id } = JSON.parse(c.out.pop() as string)
    expect(await cli("credits", "grant", id, "15", "--reason", "pilot", "--json")).toBe(0)
    expect(JSON.parse(c.out.pop() as string)).toEqual({ id, granted: 15, reason: "pilot", credits: 40 })
    expect(await cli("credits", "grant", id, "5")).toBe(0)
    expect(c.out.pop()).toBe(`granted 5 credits to ${id} (operator grant); balance 45`)
    const entries = await Effect.runPromise(
      Effect.provide(
        Effect.gen(function* () {
          return yield* (yield* MoneyStore).entries(id)
        }),
        stores
      )
    )
    expect(entries.map((e) => [e.kind, e.amount, e.reason])).toEqual([
      ["grant", 25, "opening balance"],
      ["grant", 15, "pilot"],
      ["grant", 5, "operator grant"]
    ])
    for (const bad of [["0"], ["-3"], ["1.5"], ["ten"], ["1e3"], []]) {
      expect(await cli("credits", "grant", id, ...bad), JSON.stringify(bad)).toBe(2)
    }
    expect(c.err.pop()).toContain("takes a key ID and a number of credits")
    expect(await cli("credits", "grant", id, "5", "extra")).toBe(2)
    expect(await cli("credits", "grant", id, "5", "--reason")).toBe(2)
    expect(await cli("credits", "give", id, "5")).toBe(2)
    expect(await cli("credits")).toBe(2)
    expect(await cli("keys", "list", "--json")).toBe(0)
    expect(JSON.parse(c.out.pop() as string)[0].credits).toBe(45)
  })

  it("answers exit 1 with a clear message for an unknown or revoked key", async () => {
    const c = capture()
    const stores = memoryStores()
    const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io, stores))
    expect(await cli("credits", "grant", "key_nope", "5")).toBe(1)
    expect(c.err.pop()).toBe('market-data: no key with ID "key_nope"')
    expect(await cli("keys", "create", "--credits", "1", "--json")).toBe(0)
    const { id } = JSON.parse(c.out.pop() as string)
    expect(await cli("keys", "revoke", id)).toBe(0)
    expect(await cli("credits", "grant", id, "5")).toBe(1)
    expect(c.err.pop()).toContain("could never be spent")
  })

  it("refuses on a store the server cannot share", async () => {
    const c = capture()
    const code = await Effect.runPromise(
      runCli(["credits", "grant", "key_x", "5"], c.io).pipe(Effect.provide(withEnv({ DATABASE_URL: "memory" })))
    )
    expect(code).toBe(2)
    expect(c.err.join("\n")).toContain("`credits` commands need a store the server shares")
  })
})

describe("market-data migrate and doctor on the embedded store", () => {
  it("migrates a new store step by step with a progress bar, then reports nothing to do", async () => {
    const dir = mkdtempSync(join(tmpdir(), "md-migrate-"))
    try {
      const stream = new PassThrough()
      let drawn = ""
      stream.on("data", (d) => (drawn += d))
      const c = capture(barProgress(stream, { forceRedraw: true }))
      const cli = (...argv: Array<string>) =>
        Effect.runPromise(runCli(argv, c.io).pipe(Effect.provide(withEnv({ MARKET_DATA_DIR: dir }))))
      expect(await cli("migrate", "--json")).toBe(0)
      expect(JSON.parse(c.out.pop() as string)).toMatchObject({
        applied: MIGRATIONS,
        pending: [],
        migrations: MIGRATIONS
      })
      expect(drawn).toContain(`migrating [`)
      expect(drawn).toContain(`${MIGRATIONS.length}/${MIGRATIONS.length}`)
      expect(drawn).toContain(MIGRATIONS.at(-1))
      drawn = ""
      expect(await cli("migrate")).toBe(0)
      expect(c.out.pop()).toContain(
        `applied 0 migration(s); ${MIGRATIONS.length} of ${MIGRATIONS.length} applied, 0 pending`
      )
      expect(drawn).toBe("")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("reports progress as plain lines when the output is not a terminal", () => {
    const lines: Array<string> = []
    const progress = lineProgress((l) => lines.push(l))("migrating", 2)
    progress.stepDone("a", 12.4)
    progress.stepDone("b", 3)
    progress.stop()
    expect(lines).toEqual(["migrating 1/2: a (12 ms)", "migrating 2/2: b (3 ms)"])
  })

  it("is healthy on a store it has just created and on a current one; fails on pending, foreign or locked", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "md-doctor-")), "store")
    try {
      const c = capture(lineProgress(() => {}))
      const doctor = async (...flags: Array<string>) => {
        const code = await Effect.runPromise(
          runCli(["doctor", ...flags], c.io).pipe(Effect.provide(withEnv({ MARKET_DATA_DIR: dir })))
        )
        return { code, report: flags.includes("--json") ? JSON.parse(c.out.pop() as string) : c.out.splice(0) }
      }
      const status = (report: any) => Object.fromEntries(report.checks.map((k: any) => [k.name, k.status]))
      const detail = (report: any, name: string): string => report.checks.find((k: any) => k.name === name).detail

      // A directory that does not exist yet: created, migrated, healthy.
      const created = await doctor("--json")
      expect(created.code).toBe(0)
      expect(created.report.healthy).toBe(true)
      expect(status(created.report)).toEqual({
        store: "ok",
        "data dir": "ok",
        lock: "ok",
        database: "ok",
        migrations: "ok"
      })
      expect(detail(created.report, "data dir")).toContain("(created now)")
      expect(detail(created.report, "migrations")).toBe(`${MIGRATIONS.length} applied to the new store, 0 pending`)

      // Current: healthy, one line per check in text.
      const again = await doctor()
      expect(again.code).toBe(0)
      expect(again.report).toHaveLength(6)
      expect(again.report[4]).toMatch(/^ok +migrations +\d+ applied, 0 pending$/)
      expect(again.report[5]).toBe("healthy")

      // A stale lock (dead process) is taken over and said so.
      writeFileSync(join(dir, "market-data.lock"), "999999999")
      const stale = await doctor("--json")
      expect(stale.code).toBe(0)
      expect(detail(stale.report, "lock")).toContain("stale lock of process 999999999")

      // A live process holding the lock: not checked, exit 1, and the message says why and what to do.
      writeFileSync(join(dir, "market-data.lock"), String(process.ppid))
      const locked = await doctor("--json")
      expect(locked.code).toBe(1)
      expect(status(locked.report)).toMatchObject({ lock: "fail", database: "skipped", migrations: "skipped" })
      expect(detail(locked.report, "lock")).toContain(`held by running process ${process.ppid}`)
      rmSync(join(dir, "market-data.lock"))

      // A migration not applied (an older store): exit 1, naming it and the command that fixes it.
      const last = MIGRATIONS.at(-1) as string
      const db = await openPglite(dir)
      await sql`delete from md_migrations where name = ${last}`.execute(db.db)
      await db.close()
      const behind = await doctor()
      expect(behind.code).toBe(1)
      expect(behind.report.join("\n")).toContain(`fail    migrations  1 pending (${last}): run \`market-data migrate\``)
      expect(behind.report.at(-1)).toBe("NOT healthy: see the checks marked fail")

      // A migration this code does not know (a newer version migrated the store): exit 1.
      const db2 = await openPglite(dir)
      await sql`insert into md_migrations (name, timestamp) values (${last}, now()), ('2099-01-01T0001_future', now())`.execute(
        db2.db
      )
      await db2.close()
      const ahead = await doctor("--json")
      expect(ahead.code).toBe(1)
      expect(detail(ahead.report, "migrations")).toContain("2099-01-01T0001_future")
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true })
    }
  }, 120_000)

  it("is healthy on the memory store and fails on an unreachable database", async () => {
    const c = capture()
    const run = (env: Record<string, string>) =>
      Effect.runPromise(runCli(["doctor", "--json"], c.io).pipe(Effect.provide(withEnv(env))))
    expect(await run({ DATABASE_URL: "memory" })).toBe(0)
    expect(JSON.parse(c.out.pop() as string)).toMatchObject({
      healthy: true,
      checks: [{ name: "store", status: "ok" }]
    })
    expect(await run({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nothing" })).toBe(1)
    const report = JSON.parse(c.out.pop() as string)
    expect(report.healthy).toBe(false)
    expect(report.checks[1]).toMatchObject({ name: "database", status: "fail" })
    expect(report.checks[1].detail).toContain("ECONNREFUSED")
    expect(await run({ DATABASE_URL: "mysql://nope" })).toBe(2)
  })
})

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL
if (TEST_DATABASE_URL === undefined)
  console.warn("Cli.test: TEST_DATABASE_URL is unset; the PostgreSQL doctor test is skipped")

describe.skipIf(TEST_DATABASE_URL === undefined)("market-data migrate and doctor on PostgreSQL", () => {
  it("reports pending migrations, applies them one by one, then is healthy; the server's migrator agrees", async () => {
    const base = TEST_DATABASE_URL as string
    const schema = `md_cli_${randomUUID().replace(/-/g, "").slice(0, 16)}`
    const admin = openPostgres(base, { poolSize: 1 })
    await sql.raw(`create schema ${schema}`).execute(admin.db)
    try {
      const u = new URL(base)
      u.searchParams.set("options", `-c search_path=${schema}`)
      const env = withEnv({ DATABASE_URL: u.toString() })
      const lines: Array<string> = []
      const c = capture(lineProgress((l) => lines.push(l)))
      const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io).pipe(Effect.provide(env)))
      expect(await cli("doctor", "--json")).toBe(1)
      const before = JSON.parse(c.out.pop() as string)
      expect(before.checks.find((k: any) => k.name === "database").status).toBe("ok")
      expect(before.checks.find((k: any) => k.name === "migrations").detail).toContain(`${MIGRATIONS.length} pending`)
      expect(await cli("migrate", "--json")).toBe(0)
      expect(JSON.parse(c.out.pop() as string)).toMatchObject({ applied: MIGRATIONS, pending: [] })
      expect(lines.map((l) => l.replace(/ \(\d+ ms\)$/, ""))).toEqual(
        MIGRATIONS.map((m, i) => `migrating ${i + 1}/${MIGRATIONS.length}: ${m}`)
      )
      expect(await cli("doctor")).toBe(0)
      expect(c.out.pop()).toBe("healthy")
      const scoped = openPostgres(u.toString(), { poolSize: 1 })
      expect(await pendingMigrations(scoped.db)).toEqual([])
      await scoped.close()
    } finally {
      await sql.raw(`drop schema ${schema} cascade`).execute(admin.db)
      await admin.close()
    }
  }, 60_000)
})

describe("market-data serve", () => {
  it("starts, prints the startup line, answers, and exits 0 on SIGTERM", async () => {
    const bin = join(import.meta.dirname, "..", "src", "bin.ts")
    const child = spawn(process.execPath, [bin, "serve"], {
      env: { ...process.env, PORT: "0", DATABASE_URL: "memory", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)))
    try {
      // The startup line, or the server's exit before it (a hang is the test's own timeout).
      const url = await new Promise<string>((resolve, reject) => {
        child.once("exit", (code, signal) =>
          reject(new Error(`exited (${code ?? signal}) before its startup line; stderr: ${stderr}`))
        )
        child.stdout.on("data", (d) => {
          stdout += d
          const m = /listening on (http:\/\/\S+)/.exec(stdout)
          if (m) resolve(m[1] as string)
        })
      })
      expect(stdout).toContain("store: memory")
      expect(stdout).toContain("feed: simulated")
      const res = await fetch(url)
      expect(res.status).toBe(200)
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
    } finally {
      // A failed expectation (no startup line, a wrong answer) must not leave the server running.
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    }
  })

  it("refuses a bad configuration with a message naming the variable and exit 2", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ DATABASE_URL: "mysql://nope" }, "DATABASE_URL"],
      [{ PORT: "70000" }, "PORT"],
      [{ PORT: "eighty" }, "PORT"],
      [{ MARKET_DATA_FEED: "dreams" }, "MARKET_DATA_FEED"],
      [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
      [{ MARKET_DATA_RATE_LIMIT_PER_MINUTE: "0" }, "MARKET_DATA_RATE_LIMIT_PER_MINUTE"],
      [{ MARKET_DATA_BOOTSTRAP_KEY: "mdk_short", DATABASE_URL: "memory", PORT: "0" }, "MARKET_DATA_BOOTSTRAP_KEY"]
    ]
    for (const [env, name] of cases) {
      const c = capture()
      const code = await Effect.runPromise(
        runCli(["serve"], c.io).pipe(
          Effect.provide(
            ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", ...env }))
          )
        )
      )
      expect(code, JSON.stringify(env)).toBe(2)
      expect(c.err.join("\n"), JSON.stringify(env)).toContain(name)
    }
  })

  it("refuses a port it cannot listen on at once, before it creates anything in the data folder", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as { readonly port: number }).port
    const dir = join(mkdtempSync(join(tmpdir(), "md-port-taken-")), "data")
    try {
      const c = capture()
      const code = await Effect.runPromise(
        runCli(["serve"], c.io).pipe(
          Effect.provide(
            ConfigProvider.layer(
              ConfigProvider.fromEnvRecord({
                MARKET_DATA_DIR: dir,
                HOST: "127.0.0.1",
                PORT: String(port),
                MARKET_DATA_METRICS_PORT: "off",
                LOG_LEVEL: "warn"
              })
            )
          )
        )
      )
      expect(code).toBe(2)
      expect(c.err.join("\n")).toContain(`cannot listen on 127.0.0.1:${port}`)
      expect(c.err.join("\n")).toContain("EADDRINUSE")
      expect(existsSync(dir)).toBe(false)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
      rmSync(dirname(dir), { recursive: true, force: true })
    }
  })

  it("prints usage and exits 2 on an unknown command", async () => {
    const c = capture()
    expect(await Effect.runPromise(runCli(["frobnicate"], c.io))).toBe(2)
    expect(c.err.join("\n")).toContain("unknown command")
  })
})
