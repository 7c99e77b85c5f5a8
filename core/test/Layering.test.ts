/**
 * The house's shape, checked on every import among the project's source files (core/src, adapters/*\/src,
 * infra/src; the examples and the tests are outside it):
 * - no import circle, between files or between packages;
 * - imports run downwards only: core <- adapters <- infra. The core imports none of ours, an adapter imports the
 *   core only (adapters are siblings, composed by infra), infra imports anything.
 * Known violations that open issues remove are listed below, each with the issue that removes it; anything else,
 * and any listed entry that no longer occurs, fails here (so the lists only shrink).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = resolve(import.meta.dirname, "..", "..")

/** Import edges between packages that break the layering today, and the issue that removes each. */
const ALLOWED_LAYER_EDGES: Record<string, string> = {}

/** Import circles that exist today (each as the sorted files of one circle), and the issue that removes each. */
const ALLOWED_CIRCLES: Record<string, string> = {}

/** A package of the house: its folder, layer and index. */
interface Pkg {
  readonly dir: string
  /** 0 core, 1 adapters, 2 infra. */
  readonly layer: number
}

const packageOf = (file: string): Pkg | undefined => {
  const rel = relative(ROOT, file).split("\\").join("/")
  if (rel.startsWith("core/src/")) return { dir: "core", layer: 0 }
  const adapter = /^adapters\/([^/]+)\/src\//.exec(rel)
  if (adapter) return { dir: `adapters/${adapter[1]}`, layer: 1 }
  if (rel.startsWith("infra/src/")) return { dir: "infra", layer: 2 }
  return undefined
}

const sourceDirs = (): Array<string> => [
  join(ROOT, "core", "src"),
  ...readdirSync(join(ROOT, "adapters"))
    .map((a) => join(ROOT, "adapters", a, "src"))
    .filter((d) => existsSync(d)),
  join(ROOT, "infra", "src")
]

const tsFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

/** Workspace package names (`@market-data/x`) to the index file they export. */
const workspaceIndex = (): Map<string, string> => {
  const out = new Map<string, string>()
  for (const dir of sourceDirs()) {
    const pkgDir = dirname(dir)
    const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as {
      name: string
      exports: Record<string, string>
    }
    for (const [sub, target] of Object.entries(pkg.exports))
      out.set(sub === "." ? pkg.name : `${pkg.name}/${sub.replace(/^\.\//, "")}`, resolve(pkgDir, target))
  }
  return out
}

/**
 * The module specifiers a file imports or re-exports, type-only ones included (a type import is a dependency
 * of the design even though it is erased at run time). Statements start a line, so doc comments (`*`-prefixed
 * lines) and line comments are not read as imports.
 */
const specifiersOf = (text: string): Array<string> => {
  const out: Array<string> = []
  const patterns = [
    /^[ \t]*import\s+(?:type\s+)?[\w*{][^;'"]*?\sfrom\s*["']([^"']+)["']/gm,
    /^[ \t]*export\s+(?:type\s+)?(?:\*|\{)[^;'"]*?\sfrom\s*["']([^"']+)["']/gm,
    /^[ \t]*import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const p of patterns) for (const m of text.matchAll(p)) out.push(m[1] as string)
  return out
}

type Graph = ReadonlyMap<string, ReadonlyArray<string>>

/** Every source file and the source files it imports (paths relative to the repository root). */
const houseGraph = (): Graph => {
  const index = workspaceIndex()
  const graph = new Map<string, Array<string>>()
  const unresolved: Array<string> = []
  const rel = (f: string) => relative(ROOT, f).split("\\").join("/")
  for (const file of sourceDirs().flatMap(tsFiles)) {
    const targets: Array<string> = []
    for (const spec of specifiersOf(readFileSync(file, "utf8"))) {
      let target: string | undefined
      if (spec.startsWith(".")) {
        const p = resolve(dirname(file), spec)
        target = existsSync(p) && statSync(p).isFile() ? p : existsSync(join(p, "index.ts")) ? join(p, "index.ts") : p
        if (!existsSync(target)) unresolved.push(`${rel(file)}: ${spec}`)
      } else if (spec.startsWith("@market-data/")) {
        target = index.get(spec)
        if (target === undefined) unresolved.push(`${rel(file)}: ${spec}`)
      }
      if (target !== undefined && packageOf(target) !== undefined) targets.push(rel(target))
    }
    graph.set(rel(file), [...new Set(targets)])
  }
  expect(unresolved, "imports of ours that resolve to no source file").toEqual([])
  return graph
}

/** The circles of a graph: its strongly connected components of more than one file, or a file importing itself. */
const circlesOf = (graph: Graph): Array<Array<string>> => {
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack.
  let next = 0
  const indexOf = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: Array<string> = []
  const out: Array<Array<string>> = []
  for (const start of graph.keys()) {
    if (indexOf.has(start)) continue
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }]
    indexOf.set(start, next)
    low.set(start, next++)
    stack.push(start)
    onStack.add(start)
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; i: number }
      const edges = graph.get(frame.node) ?? []
      if (frame.i < edges.length) {
        const to = edges[frame.i++] as string
        if (!indexOf.has(to)) {
          indexOf.set(to, next)
          low.set(to, next++)
          stack.push(to)
          onStack.add(to)
          work.push({ node: to, i: 0 })
        } else if (onStack.has(to))
          low.set(frame.node, Math.min(low.get(frame.node) as number, indexOf.get(to) as number))
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number))
      if (low.get(frame.node) === indexOf.get(frame.node)) {
        const component: Array<string> = []
        let member: string
        do {
          member = stack.pop() as string
          onStack.delete(member)
          component.push(member)
        } while (member !== frame.node)
        if (component.length > 1 || (graph.get(frame.node) ?? []).includes(frame.node)) out.push(component.sort())
      }
    }
  }
  return out
}

/** The imports that run from a lower layer to a higher one, or between two adapters, as `from -> to` packages. */
const layerBreaksOf = (graph: Graph): Map<string, Array<string>> => {
  const out = new Map<string, Array<string>>()
  for (const [file, targets] of graph) {
    const from = packageOf(join(ROOT, file)) as Pkg
    for (const target of targets) {
      const to = packageOf(join(ROOT, target)) as Pkg
      if (to.dir === from.dir) continue
      if (to.layer > from.layer || (to.layer === from.layer && from.layer === 1)) {
        const key = `${from.dir} -> ${to.dir}`
        out.set(key, [...(out.get(key) ?? []), `${file} imports ${target}`])
      }
    }
  }
  return out
}

/** The package-level graph: one node per package, an edge wherever one of its files imports another's. */
const packageGraph = (graph: Graph): Graph => {
  const out = new Map<string, Set<string>>()
  for (const [file, targets] of graph) {
    const from = (packageOf(join(ROOT, file)) as Pkg).dir
    const edges = out.get(from) ?? new Set<string>()
    for (const t of targets) {
      const to = (packageOf(join(ROOT, t)) as Pkg).dir
      if (to !== from) edges.add(to)
    }
    out.set(from, edges)
  }
  return new Map([...out].map(([k, v]) => [k, [...v]]))
}

const circleKey = (files: ReadonlyArray<string>) => files.join(" <-> ")

describe("the checker itself", () => {
  it("reads import and re-export statements, type-only and dynamic ones, and not comments", () => {
    const text = [
      'import { a } from "./a.ts"',
      'import type { B } from "./b.ts"',
      "import {",
      "  c,",
      "  type D",
      '} from "@market-data/core"',
      'export * from "./e.ts"',
      'export type { F } from "./f.ts"',
      'import "./g.ts"',
      'const h = await import("./h.ts")',
      ' * import { x } from "./in-a-doc-comment.ts"',
      '// import { y } from "./in-a-line-comment.ts"',
      'export const z = "not an import from"',
      'const w = "from \\"./in-a-string.ts\\""'
    ].join("\n")
    expect(specifiersOf(text).sort()).toEqual(
      ["./a.ts", "./b.ts", "@market-data/core", "./e.ts", "./f.ts", "./g.ts", "./h.ts"].sort()
    )
  })

  it("finds a circle of two, a longer one and a self-import, and not a diamond", () => {
    const graph: Graph = new Map([
      ["a", ["b"]],
      ["b", ["a", "c"]],
      ["c", ["d"]],
      ["d", ["e"]],
      ["e", ["c"]],
      ["f", ["f"]],
      ["g", ["h", "i"]],
      ["h", ["j"]],
      ["i", ["j"]],
      ["j", []]
    ])
    expect(circlesOf(graph).sort()).toEqual([["a", "b"], ["c", "d", "e"], ["f"]])
  })

  it("flags an import up a layer and between adapters, not down", () => {
    const graph: Graph = new Map([
      ["core/src/A.ts", ["adapters/http/src/B.ts"]],
      ["adapters/http/src/B.ts", ["core/src/A.ts", "adapters/mcp/src/C.ts", "infra/src/D.ts"]],
      ["adapters/mcp/src/C.ts", ["core/src/A.ts"]],
      ["infra/src/D.ts", ["core/src/A.ts", "adapters/http/src/B.ts"]]
    ])
    expect([...layerBreaksOf(graph).keys()].sort()).toEqual([
      "adapters/http -> adapters/mcp",
      "adapters/http -> infra",
      "core -> adapters/http"
    ])
  })
})

describe("the project's imports", () => {
  const graph = houseGraph()

  it("reads every source file of core, adapters and infra", () => {
    const packages = new Set([...graph.keys()].map((f) => (packageOf(join(ROOT, f)) as Pkg).dir))
    expect(packages).toContain("core")
    expect(packages).toContain("infra")
    expect([...packages].filter((p) => p.startsWith("adapters/")).length).toBeGreaterThanOrEqual(5)
    // The known imports are seen, so a checker that reads nothing cannot pass.
    expect(graph.get("infra/src/Cli.ts")).toContain("infra/src/Ingest.ts")
    expect(graph.get("adapters/http/src/HttpApp.ts")).toContain("adapters/http/src/DocsPage.ts")
  })

  it("has no import circle between files beyond the listed ones", () => {
    const found = circlesOf(graph).map(circleKey).sort()
    expect(found.filter((c) => ALLOWED_CIRCLES[c] === undefined)).toEqual([])
    expect(
      Object.keys(ALLOWED_CIRCLES).filter((c) => !found.includes(c)),
      "listed circles that are gone: remove them from ALLOWED_CIRCLES"
    ).toEqual([])
  })

  it("has no import circle between packages", () => {
    expect(circlesOf(packageGraph(graph))).toEqual([])
  })

  it("imports downwards only (core <- adapters <- infra) beyond the listed exceptions", () => {
    const breaks = layerBreaksOf(graph)
    const unlisted = [...breaks].filter(([key]) => ALLOWED_LAYER_EDGES[key] === undefined).flatMap(([, why]) => why)
    expect(unlisted).toEqual([])
    expect(
      Object.keys(ALLOWED_LAYER_EDGES).filter((k) => !breaks.has(k)),
      "listed exceptions that are gone: remove them from ALLOWED_LAYER_EDGES"
    ).toEqual([])
  })

  it("the circles broken in issue 19 stay broken", () => {
    const inACircle = new Set(circlesOf(graph).flat())
    for (const file of [
      "adapters/http/src/DocsPage.ts",
      "adapters/http/src/HttpApp.ts",
      "infra/src/Cli.ts",
      "infra/src/Ingest.ts"
    ])
      expect(inACircle.has(file), file).toBe(false)
  })
})
