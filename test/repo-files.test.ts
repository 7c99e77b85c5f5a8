/**
 * The repository's own files that no other suite runs: the README and the docs (every link stays inside the
 * repository and resolves), the container files (Docker cannot run on this machine, so their key properties are
 * checked here, as Docker would read them), and `.env.example` (every variable, each at its default).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { CORE_MIN_PERP_VENUES } from "@market-data/core"
import { loadConfig } from "@market-data/infra"
import { loadLiveConfig } from "@market-data/sources"
import { ConfigProvider, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { MinBaselineN } from "../core/src/Percentile.ts"

const ROOT = resolve(import.meta.dirname, "..")
const read = (path: string) => readFileSync(join(ROOT, path), "utf8")

// ---------------------------------------------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------------------------------------------

const markdownFiles = (): Array<string> => [
  "README.md",
  "examples/README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`)
]

/** The text outside fenced code blocks and inline code spans (where a URL is shown, not linked). */
const prose = (markdown: string): string =>
  markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
    .replace(/(`+)[\s\S]*?\1/g, "")
    // HTML comments link nothing.
    .replace(/<!--[\s\S]*?-->/g, "")

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, ... */
const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
  for (const m of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (m[1] as string).replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

const insideRepository = (path: string) => path === ROOT || path.startsWith(ROOT + sep)

describe("README and docs", () => {
  const files = markdownFiles()

  it("lists the docs folder's files (the suite checks more than the README)", () => {
    expect(files).toEqual(expect.arrayContaining(["docs/performance.md", "docs/storage.md", "docs/testing.md"]))
  })

  it.each(files)("%s: every link is relative and resolves to a file or heading in the repository", (file) => {
    const text = read(file)
    const body = prose(text)
    const problems: Array<string> = []
    // Bare and angle-bracket URLs outside code become links on GitHub: none may leave the repository.
    for (const m of body.matchAll(/\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)[^\s)>\]]*/gi)) {
      problems.push(`a URL outside code: ${m[0]}`)
    }
    const targets = [
      ...[...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string),
      ...[...body.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1] as string)
    ]
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) {
        problems.push(`a link leaving the repository: ${target}`)
        continue
      }
      if (target.startsWith("/")) {
        problems.push(`a root-relative link (write it relative to ${file}): ${target}`)
        continue
      }
      const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined]
      const resolved = pathPart === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(pathPart))
      if (!insideRepository(resolved)) {
        problems.push(`a link outside the repository: ${target}`)
        continue
      }
      if (!existsSync(resolved)) {
        problems.push(`a link to a missing file: ${target}`)
        continue
      }
      if (anchor !== undefined && anchor !== "") {
        if (!statSync(resolved).isFile() || !resolved.endsWith(".md")) {
          problems.push(`an anchor into something that is not markdown: ${target}`)
        } else if (!anchorsOf(readFileSync(resolved, "utf8")).has(anchor)) {
          problems.push(`an anchor that names no heading of ${relative(ROOT, resolved)}: ${target}`)
        }
      }
    }
    // Paths written out, in code too, must not point above the repository (the complaint was a README naming
    // files beside the clone that a reader of the repository does not have).
    for (const m of text.matchAll(/(?<![\w./-])((?:\.\.\/)+[\w./-]*)/g)) {
      const resolved = resolve(dirname(join(ROOT, file)), m[1] as string)
      if (!insideRepository(resolved)) problems.push(`a path outside the repository: ${m[1]}`)
    }
    expect(problems).toEqual([])
  })

  it("the README's first 150 lines go from a clone to a paid curl and an MCP client configuration", () => {
    const lines = read("README.md").split("\n")
    const first = lines.slice(0, 150).join("\n")
    expect(first).toMatch(/^npm ci\b/m)
    expect(first).toMatch(/^MARKET_DATA_BOOTSTRAP_KEY=(mdk_[0-9A-Za-z]{32}) .*npm start$/m)
    const key = /^MARKET_DATA_BOOTSTRAP_KEY=(mdk_[0-9A-Za-z]{32})/m.exec(first)?.[1]
    // A paid operation (not one of the free discovery and account operations) with the bootstrap key.
    const paid = [...first.matchAll(/^curl .*\/api\/v1\/([a-z_]+)\?/gm)].map((m) => m[1])
    expect(paid.filter((op) => !["docs", "schema", "resolve", "coverage", "usage"].includes(op as string))).not.toEqual(
      []
    )
    expect(first).toContain(`Authorization: Bearer ${key}`)
    // An MCP client configuration: the endpoint and the key as a header.
    expect(first).toMatch(/"url":\s*"http:\/\/127\.0\.0\.1:8080\/api\/mcp"/)
    expect(first).toMatch(/"Authorization":\s*"Bearer mdk_/)
  })

  it("docs/operations.md documents the crypto asset directory: its store, symbols, slug rule, collisions and tier rule", () => {
    const doc = read("docs/operations.md")
    const section = doc.slice(doc.indexOf("## The crypto asset directory"))
    const text = section.slice(0, section.indexOf("\n## ", 1))
    expect(text.length).toBeGreaterThan(0)
    for (const words of [
      "kept in the store (PostgreSQL, PGlite or the memory twin)",
      "`1000PEPEUSDT`, `kPEPE`, `1000000MOGUSDT`",
      "`1000SATSUSDT`",
      "**Slugs**",
      "`best: null`",
      "`symbol_collision`",
      "`alive: false`",
      `at least ${["zero", "one", "two", "three", "four"][CORE_MIN_PERP_VENUES]} venues`,
      `${MinBaselineN} hourly samples`,
      "`insufficient_history`"
    ])
      expect(text, words).toContain(words)
  })

  it("the README names every configuration variable the service reads", () => {
    const readme = read("README.md")
    expect(configVariables().filter((v) => !readme.includes(`\`${v}\``))).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------------------------
// .env.example
// ---------------------------------------------------------------------------------------------------------------

/** Every variable the configuration code reads: `Config.*("NAME")`, the live feed's `read("NAME", ...)` and list. */
const configVariables = (): Array<string> => {
  const sources = ["infra/src/AppConfig.ts", "adapters/sources/src/live/LiveConfig.ts"].map(read).join("\n")
  const names = new Set<string>()
  for (const m of sources.matchAll(/(?:Config\.[A-Za-z]+|read)\(\s*"([A-Z][A-Z0-9_]+)"/g)) names.add(m[1] as string)
  for (const m of sources.matchAll(/\[\s*"(MARKET_DATA_[A-Z0-9_]+)",/g)) names.add(m[1] as string)
  // Variables read straight from the environment by the server's own code (not the clients in `bin/` folders).
  const serverCode = [
    "infra/src",
    ...workspaces()
      .filter((w) => w.startsWith("adapters/"))
      .map((w) => `${w}/src`)
  ]
  for (const file of serverCode.flatMap(walk).filter((f) => f.endsWith(".ts"))) {
    for (const m of read(file).matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1] as string)
  }
  return [...names].sort()
}

const dotEnvNames = (text: string): Array<string> =>
  [...text.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] as string)

describe(".env.example", () => {
  const text = read(".env.example")

  it("sets every configuration variable the service reads, once", () => {
    const names = dotEnvNames(text)
    expect(configVariables().length).toBeGreaterThan(20)
    expect(configVariables().filter((v) => !names.includes(v))).toEqual([])
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([])
  })

  it("holds the defaults: the service reads the same configuration from it as from an empty environment", async () => {
    const fromFile = ConfigProvider.layer(ConfigProvider.fromDotEnvContents(text))
    const empty = ConfigProvider.layer(ConfigProvider.fromEnvRecord({}))
    const app = (layer: typeof empty) => Effect.runPromise(loadConfig.pipe(Effect.provide(layer)))
    expect(await app(fromFile)).toEqual(await app(empty))
    // The live feed's defaults, with the one value it requires.
    const ua = "Example Corp ops@example.com"
    const live = (provider: ConfigProvider.ConfigProvider) =>
      Effect.runPromise(
        loadLiveConfig.pipe(
          Effect.map(({ instanceId: _, ...rest }) => rest),
          Effect.provide(
            ConfigProvider.layer(
              ConfigProvider.orElse(ConfigProvider.fromEnvRecord({ MARKET_DATA_SEC_USER_AGENT: ua }), provider)
            )
          )
        )
      )
    expect(await live(ConfigProvider.fromDotEnvContents(text))).toEqual(await live(ConfigProvider.fromEnvRecord({})))
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Dockerfile and .dockerignore
// ---------------------------------------------------------------------------------------------------------------

interface Instruction {
  readonly keyword: string
  readonly args: string
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
const instructions = (dockerfile: string): Array<Instruction> => {
  const out: Array<Instruction> = []
  let pending = ""
  for (const raw of dockerfile.split("\n")) {
    if (/^\s*#/.test(raw)) continue
    const line = pending === "" ? raw.trim() : `${pending} ${raw.trim()}`
    if (line.endsWith("\\")) {
      pending = line.slice(0, -1).trim()
      continue
    }
    pending = ""
    if (line === "") continue
    const m = /^(\S+)\s*(.*)$/.exec(line) as RegExpExecArray
    out.push({ keyword: (m[1] as string).toUpperCase(), args: m[2] as string })
  }
  return out
}

/** `.dockerignore` as Docker applies it: the last matching pattern decides; a pattern also covers what is under it. */
const dockerIgnore = (text: string): ((path: string) => boolean) => {
  const patterns = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const negated = l.startsWith("!")
      const body = (negated ? l.slice(1) : l).replace(/^\/+/, "").replace(/\/+$/, "")
      let source = ""
      for (let i = 0; i < body.length; i++) {
        const c = body[i] as string
        if (body.startsWith("**/", i)) {
          source += "(?:.*/)?"
          i += 2
        } else if (body.startsWith("**", i)) {
          source += ".*"
          i += 1
        } else if (c === "*") source += "[^/]*"
        else if (c === "?") source += "[^/]"
        else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
      }
      return { negated, regex: new RegExp(`^${source}$`) }
    })
  return (path: string) => {
    const parts = path.split("/")
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"))
    let excluded = false
    for (const p of patterns) {
      if (prefixes.some((prefix) => p.regex.test(prefix))) excluded = !p.negated
    }
    return excluded
  }
}

const walk = (dir: string): Array<string> =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.name === "node_modules" || e.name === "dist"
      ? []
      : e.isDirectory()
        ? walk(`${dir}/${e.name}`)
        : [`${dir}/${e.name}`]
  )

const workspaces = (): Array<string> => JSON.parse(read("package.json")).workspaces as Array<string>

describe("Dockerfile", () => {
  const steps = instructions(read("Dockerfile"))
  const ignored = dockerIgnore(read(".dockerignore"))
  const args = new Map(
    steps
      .filter((s) => s.keyword === "ARG")
      .map((s) => s.args.split("=", 2) as [string, string | undefined])
      .map(([k, v]) => [k, v ?? ""])
  )
  const stages = steps.flatMap((s, i) => (s.keyword === "FROM" ? [i] : []))
  const final = steps.slice(stages.at(-1))

  it("builds in several stages on the Node version the project pins", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    const pinned = JSON.parse(read("package.json")).devDependencies.node as string
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/)
    for (const i of stages) {
      const image = (steps[i] as Instruction).args.split(/\s+/)[0] as string
      const resolved = image.replace(/^\$\{?(\w+)\}?$/, (_, name: string) => args.get(name) ?? "")
      expect(resolved).toMatch(new RegExp(`^node:${pinned.replaceAll(".", "\\.")}-[a-z]+(-slim)?$`))
    }
  })

  it("runs as a user other than root, with a HEALTHCHECK on /healthz and the server as its command", () => {
    const user = final.filter((s) => s.keyword === "USER").at(-1)?.args
    expect(user).toBeDefined()
    expect(["root", "0", "0:0"]).not.toContain(user)
    const health = final.find((s) => s.keyword === "HEALTHCHECK")?.args ?? ""
    expect(health).toContain("/healthz")
    expect(health).toMatch(/\bCMD\b/)
    const entry = `${final.find((s) => s.keyword === "ENTRYPOINT")?.args ?? ""} ${final.find((s) => s.keyword === "CMD")?.args ?? ""}`
    expect(entry).toContain("infra/src/bin.ts")
    expect(entry).toContain('"serve"')
    expect(final.find((s) => s.keyword === "ENV")?.args).toMatch(/HOST=0\.0\.0\.0/)
  })

  it("copies only paths that exist and that .dockerignore lets through", () => {
    const copies = steps.filter((s) => (s.keyword === "COPY" || s.keyword === "ADD") && !s.args.includes("--from="))
    expect(copies.length).toBeGreaterThan(0)
    for (const copy of copies) {
      const parts = copy.args.split(/\s+/).filter((p) => !p.startsWith("--"))
      for (const source of parts.slice(0, -1)) {
        const path = source.replace(/\/+$/, "")
        expect(existsSync(join(ROOT, path)), source).toBe(true)
        expect(ignored(path), source).toBe(false)
      }
    }
  })

  it("sends the build everything the server runs and npm ci needs, and no local data, secrets or packages", () => {
    const needed = [
      "package.json",
      "package-lock.json",
      ...workspaces().map((w) => `${w}/package.json`),
      ...["core", "adapters/memory", "adapters/postgres", "adapters/sources", "adapters/mcp", "adapters/http"].flatMap(
        (p) => walk(`${p}/src`)
      ),
      ...walk("infra/src"),
      ...walk("infra/migrations")
    ].filter((p) => !p.startsWith("core/test"))
    expect(needed.filter(ignored)).toEqual([])
    for (const path of [
      "node_modules/effect/package.json",
      "core/node_modules/x",
      ".git/HEAD",
      ".env",
      ".market-data/market-data.lock",
      "infra/.env.local",
      "core/test/Registry.test.ts",
      "infra/test/Cli.test.ts",
      "adapters/postgres/test/contracts.test.ts",
      "test/http.test.ts",
      "bench/run.ts",
      "dist/x.js"
    ]) {
      expect(ignored(path), path).toBe(true)
    }
  })
})

// ---------------------------------------------------------------------------------------------------------------
// compose.yaml
// ---------------------------------------------------------------------------------------------------------------

describe("compose.yaml", () => {
  const compose = parseYaml(read("compose.yaml"), { merge: true }) as {
    services: Record<string, Record<string, unknown>>
  }
  const services = compose.services
  const instances = Object.entries(services).filter(([, s]) => s.build !== undefined)
  const env = (s: Record<string, unknown>) => s.environment as Record<string, string>

  it("runs two instances of the image built from the Dockerfile, on the compose PostgreSQL", () => {
    expect(instances.map(([name]) => name)).toEqual(["market-data-1", "market-data-2"])
    const postgres = services.postgres as Record<string, unknown>
    expect(postgres.image).toMatch(/^postgres:\d+\.\d+-/)
    expect(postgres.healthcheck).toBeDefined()
    for (const [, s] of instances) {
      expect(s.build).toBe(".")
      expect(s.init).toBe(true)
      expect(env(s).DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//)
      expect(env(s).HOST).toBe("0.0.0.0")
      expect(s.depends_on).toMatchObject({ postgres: { condition: "service_healthy" } })
    }
  })

  it("ensures the bootstrap key on one instance only (two topping it up together could both grant)", () => {
    const withKey = instances.filter(([, s]) => (env(s).MARKET_DATA_BOOTSTRAP_KEY ?? "") !== "")
    expect(withKey.map(([name]) => name)).toEqual(["market-data-1"])
  })

  it("puts one published port in front of both instances, through a proxy that checks /readyz", () => {
    const published = Object.entries(services).filter(([, s]) => s.ports !== undefined)
    expect(published.map(([name]) => name)).toEqual(["proxy"])
    const proxy = services.proxy as { image: string; ports: Array<string>; volumes: Array<string> }
    expect(proxy.ports).toHaveLength(1)
    expect(proxy.image).toMatch(/^caddy:\d+\.\d+\.\d+/)
    const mount = proxy.volumes.find((v) => v.includes("/etc/caddy/Caddyfile")) as string
    const caddyfile = read(mount.split(":")[0] as string)
    const upstreams = /reverse_proxy\s+([^{\n]+)\{/.exec(caddyfile)?.[1]?.trim().split(/\s+/)
    expect(upstreams).toEqual(instances.map(([name]) => `${name}:${env(services[name]!).PORT}`))
    expect(caddyfile).toMatch(/health_uri\s+\/readyz/)
    // Metrics stay inside the network: on a port of their own, and refused at the public one.
    for (const [name, s] of instances) expect(env(s).MARKET_DATA_METRICS_PORT, name).toMatch(/^\d+$/)
    expect(caddyfile).toMatch(/respond\s+\/metrics\s+404/)
  })

  it("pins every image and takes each variable it interpolates from .env.example", () => {
    for (const [name, s] of Object.entries(services)) {
      if (typeof s.image === "string" && s.build === undefined) {
        expect(s.image, name).toMatch(/:[^:]*\d+\.\d+/)
        expect(s.image, name).not.toMatch(/:latest$/)
      }
    }
    const names = dotEnvNames(read(".env.example"))
    const interpolated = [...read("compose.yaml").matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] as string)
    expect(interpolated.length).toBeGreaterThan(5)
    expect([...new Set(interpolated)].filter((v) => !names.includes(v))).toEqual([])
  })

  it("passes every .env.example variable on to the instances, or .env.example marks it [host only]", () => {
    // Each variable's comment: the comment lines right above it, or its group's (variables on adjacent lines).
    const commentOf = new Map<string, string>()
    let comment = ""
    let previous: "comment" | "variable" | "blank" = "blank"
    for (const line of read(".env.example").split("\n")) {
      const variable = /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1]
      if (line.startsWith("#")) {
        comment = previous === "comment" ? `${comment}\n${line}` : line
        previous = "comment"
      } else if (variable !== undefined) {
        commentOf.set(variable, previous === "blank" ? "" : comment)
        previous = "variable"
      } else {
        comment = ""
        previous = "blank"
      }
    }
    const text = read("compose.yaml")
    const interpolated = new Set([...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] as string))
    const hostOnly = [...commentOf].filter(([, c]) => c.includes("[host only")).map(([v]) => v)
    const lost = [...commentOf.keys()].filter((v) => !interpolated.has(v) && !hostOnly.includes(v))
    expect(lost).toEqual([])
    // What compose.yaml interpolates for the instances reaches them under the same name.
    for (const [name, s] of instances) {
      for (const v of interpolated) {
        if (v === "POSTGRES_PASSWORD" || v === "MARKET_DATA_PUBLISHED_PORT") continue
        expect(Object.keys(env(s)), `${name}: ${v}`).toContain(v)
      }
    }
    expect(hostOnly.sort()).toEqual(
      [
        "DATABASE_PGLITE_WORKER",
        "DATABASE_URL",
        "HOST",
        "MARKET_DATA_DIR",
        "MARKET_DATA_METRICS_HOST",
        "MARKET_DATA_METRICS_PORT",
        "PORT"
      ].sort()
    )
  })
})
