/**
 * Packs the workspace packages a library needs (default: `@market-data/embedded`) into npm tarballs that install
 * and import outside the workspace.
 *
 * In the workspace every package exports its TypeScript sources (`"exports": {".": "./src/index.ts"}`): Node
 * strips the types itself there, so tests and `npm start` need no build. Node refuses to strip types under
 * `node_modules`, so a packed package must carry JavaScript. For each package this script:
 *
 * 1. follows `@market-data/*` dependencies from the entry package (their `dependencies`, not dev ones);
 * 2. builds every `dist/` afresh with one `tsc -b` over their `tsconfig.build.json` (composite projects whose
 *    references must be exactly their workspace dependencies): JavaScript and declarations, `.ts` imports of
 *    the JavaScript rewritten to `.js` (the declarations keep `.ts`, which TypeScript resolves to the `.d.ts`);
 * 3. checks every package the built JavaScript imports or the declarations reference against `dependencies` (a
 *    missing one works in the workspace, hoisted, and breaks for a consumer), and that workspace dependencies
 *    name the exact version (or a consumer's npm would ask the registry for them);
 * 4. stages a copy (package.json + dist/) whose package.json takes its `publishConfig` fields (`exports`, `main`,
 *    `types`, `bin`: dist's files, as pnpm and yarn apply them; npm does not), drops scripts and dev
 *    dependencies, and gets the root's `engines`; a bin gets a shebang;
 * 5. runs `npm pack` on the staged copy into the output folder.
 *
 * Usage: node scripts/pack.ts [--out <dir>] [--json] [<package name>...]
 * The workspace's own `npm pack` is refused by each package's `prepack` script: it would pack the sources.
 */
import { execFileSync } from "node:child_process"
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const SCOPE = "@market-data/"

interface Manifest {
  readonly name: string
  readonly version: string
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly publishConfig?: Record<string, unknown>
  readonly engines?: Record<string, string>
  readonly [field: string]: unknown
}

export interface Workspace {
  readonly name: string
  /** Absolute folder. */
  readonly dir: string
  readonly manifest: Manifest
}

export interface Packed {
  readonly name: string
  readonly version: string
  /** Absolute path of the tarball. */
  readonly tarball: string
  readonly files: number
}

/** A problem that stops the packing, with what to fix. */
export class PackProblem extends Error {
  override readonly name = "PackProblem"
}

const readJson = <A>(path: string): A => JSON.parse(readFileSync(path, "utf8")) as A

/** The workspace packages by name, from the root package.json's `workspaces`. */
export const workspaces = (root: string = ROOT): Map<string, Workspace> => {
  const rootManifest = readJson<{ workspaces?: ReadonlyArray<string> }>(join(root, "package.json"))
  const byName = new Map<string, Workspace>()
  for (const folder of rootManifest.workspaces ?? []) {
    const dir = join(root, folder)
    if (!existsSync(join(dir, "package.json"))) continue
    const manifest = readJson<Manifest>(join(dir, "package.json"))
    byName.set(manifest.name, { name: manifest.name, dir, manifest })
  }
  return byName
}

/** The entry packages and every workspace package they depend on at run time, dependencies first. */
export const closure = (all: Map<string, Workspace>, entries: ReadonlyArray<string>): ReadonlyArray<Workspace> => {
  const ordered: Array<Workspace> = []
  const visiting = new Set<string>()
  const visit = (name: string, from: string | undefined): void => {
    if (ordered.some((w) => w.name === name)) return
    const ws = all.get(name)
    if (ws === undefined) {
      throw new PackProblem(
        from === undefined
          ? `${name} is not a workspace package`
          : `${from} depends on ${name}, which is not in the workspace`
      )
    }
    if (visiting.has(name)) throw new PackProblem(`dependency cycle through ${name}`)
    visiting.add(name)
    for (const dep of Object.keys(ws.manifest.dependencies ?? {})) if (dep.startsWith(SCOPE)) visit(dep, name)
    visiting.delete(name)
    ordered.push(ws)
  }
  for (const entry of entries) visit(entry, undefined)
  return ordered
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string): string => {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 << 20
    })
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string }
    throw new PackProblem(
      `${command} ${args.join(" ")} (in ${cwd}) failed: ${err.message}\n${err.stdout ?? ""}${err.stderr ?? ""}`.trim()
    )
  }
}

interface BuildConfig {
  readonly include: ReadonlyArray<string>
  readonly compilerOptions: { readonly outDir: string; readonly rootDir: string; readonly composite: boolean }
  readonly references?: ReadonlyArray<{ readonly path: string }>
}

/**
 * A package's `tsconfig.build.json`: a composite project emitting into `dist/`, whose references are exactly the
 * build configs of its workspace dependencies (so `tsc -b` builds them first and reads their declarations).
 */
const buildConfig = (ws: Workspace, all: Map<string, Workspace>): string => {
  const path = join(ws.dir, "tsconfig.build.json")
  if (!existsSync(path)) throw new PackProblem(`${ws.name} has no tsconfig.build.json`)
  const config = readJson<Partial<BuildConfig>>(path)
  const options = config.compilerOptions
  if (
    config.include === undefined ||
    options?.outDir !== "dist" ||
    options.rootDir !== "." ||
    options.composite !== true
  ) {
    throw new PackProblem(`${relative(ROOT, path)} must set include, composite, rootDir "." and outDir "dist"`)
  }
  const referenced = (config.references ?? []).map((r) => resolve(ws.dir, r.path)).sort()
  const expected = Object.keys(ws.manifest.dependencies ?? {})
    .flatMap((name) => {
      const dep = all.get(name)
      return dep === undefined ? [] : [join(dep.dir, "tsconfig.build.json")]
    })
    .sort()
  if (JSON.stringify(referenced) !== JSON.stringify(expected)) {
    throw new PackProblem(
      `${relative(ROOT, path)} must reference the build configs of its workspace dependencies: ${expected.map((e) => relative(ws.dir, e)).join(", ") || "none"}`
    )
  }
  return path
}

/** Builds `dist/` (JavaScript and declarations) afresh for every package, dependencies first, in one `tsc -b`. */
export const build = (packages: ReadonlyArray<Workspace>, all: Map<string, Workspace>): void => {
  const configs = packages.map((ws) => buildConfig(ws, all))
  for (const ws of packages) rmSync(join(ws.dir, "dist"), { recursive: true, force: true })
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc")
  run(process.execPath, [tsc, "-b", ...configs], ROOT)
}

const builtFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return builtFiles(path)
    return entry.isFile() && (entry.name.endsWith(".js") || entry.name.endsWith(".d.ts")) ? [path] : []
  })

/**
 * Module specifiers of the compiler's output: `import`/`export ... from "x";` statements (tsc prints them from the
 * start of a line), side-effect imports, and `import("x")` (dynamic imports; type references in declarations).
 */
const SPECIFIER = /^(?:import|export)\s[^;]*?\bfrom\s+"([^"]+)";|^import\s+"([^"]+)";|\bimport\("([^"]+)"\)/gm

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`), or undefined for relative and built-in ones. */
export const packageOf = (specifier: string): string | undefined => {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return undefined
  const parts = specifier.split("/")
  const name = specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? specifier)
  return builtinModules.includes(name) ? undefined : name
}

/**
 * Every package the built JavaScript imports (run time) or its declarations reference (types), with one file
 * doing so. Reads `dist/`, so type-only imports of the sources count only where the declarations keep them.
 */
export const importedPackages = (ws: Workspace): Map<string, string> => {
  const found = new Map<string, string>()
  const dist = join(ws.dir, "dist")
  if (!existsSync(dist)) throw new PackProblem(`${ws.name} is not built`)
  for (const file of builtFiles(dist)) {
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const name = packageOf(m[1] ?? m[2] ?? m[3] ?? "")
      if (name !== undefined && name !== ws.name && !found.has(name)) found.set(name, relative(ROOT, file))
    }
  }
  return found
}

/** Problems with a package's declared run-time dependencies, one line each (empty when none). */
export const dependencyProblems = (ws: Workspace, all: Map<string, Workspace>): ReadonlyArray<string> => {
  const declared = { ...ws.manifest.dependencies, ...ws.manifest.peerDependencies }
  const problems: Array<string> = []
  for (const [name, file] of importedPackages(ws)) {
    if (!(name in declared)) problems.push(`${ws.name} imports ${name} (${file}) but does not list it in dependencies`)
  }
  for (const [name, range] of Object.entries(ws.manifest.dependencies ?? {})) {
    const target = all.get(name)
    if (target !== undefined && range !== target.manifest.version) {
      problems.push(
        `${ws.name} depends on ${name}@${range}; it must name the workspace version ${target.manifest.version} exactly, or a consumer's npm would look it up in the registry`
      )
    }
  }
  return problems
}

/** Paths (`./dist/...`) a manifest's `main`, `types`, `exports` and `bin` point to. */
const targets = (value: unknown): ReadonlyArray<string> => {
  if (typeof value === "string") return [value]
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(targets)
  return []
}

/** The package.json of the packed package: `publishConfig` applied, scripts and dev dependencies dropped. */
export const packedManifest = (
  ws: Workspace,
  rootEngines: Record<string, string> | undefined
): Record<string, unknown> => {
  const { publishConfig, scripts: _scripts, devDependencies: _dev, ...rest } = ws.manifest
  if (publishConfig === undefined || publishConfig.exports === undefined) {
    throw new PackProblem(`${ws.name} has no publishConfig.exports naming its built files`)
  }
  const manifest: Record<string, unknown> = { ...rest, ...publishConfig }
  if (manifest.engines === undefined && rootEngines !== undefined) manifest.engines = rootEngines
  return manifest
}

const SHEBANG = "#!/usr/bin/env node\n"

/** Stages the built package and packs it into `out`. */
export const pack = (ws: Workspace, out: string, rootEngines: Record<string, string> | undefined): Packed => {
  const manifest = packedManifest(ws, rootEngines)
  const stage = mkdtempSync(join(tmpdir(), "md-pack-stage-"))
  try {
    writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
    cpSync(join(ws.dir, "dist"), join(stage, "dist"), {
      recursive: true,
      filter: (source) => !source.endsWith(".tsbuildinfo")
    })
    // A package's launcher (`bin/`, plain JavaScript: infra's checks the Node version, then runs dist/).
    if (existsSync(join(ws.dir, "bin"))) cpSync(join(ws.dir, "bin"), join(stage, "bin"), { recursive: true })
    for (const extra of ["README.md", "LICENSE"]) {
      if (existsSync(join(ws.dir, extra))) cpSync(join(ws.dir, extra), join(stage, extra))
    }
    for (const target of new Set([
      ...targets(manifest.main),
      ...targets(manifest.types),
      ...targets(manifest.exports)
    ])) {
      if (!existsSync(join(stage, target))) throw new PackProblem(`${ws.name}: ${target} was not built`)
    }
    // A bin must start with a shebang to run as a command; the sources (run by `node file.ts`) have none.
    for (const target of targets(manifest.bin)) {
      const path = join(stage, target)
      if (!existsSync(path)) throw new PackProblem(`${ws.name}: bin ${target} was not built`)
      const text = readFileSync(path, "utf8")
      if (!text.startsWith("#!")) writeFileSync(path, SHEBANG + text)
      chmodSync(path, 0o755)
    }
    const report = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], stage)) as ReadonlyArray<{
      filename: string
      entryCount: number
    }>
    const first = report[0]
    if (first === undefined) throw new PackProblem(`npm pack reported nothing for ${ws.name}`)
    return { name: ws.name, version: ws.manifest.version, tarball: join(out, first.filename), files: first.entryCount }
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

/** Checks, builds and packs `entries` and their workspace dependencies into `out`. */
export const packAll = (
  entries: ReadonlyArray<string>,
  out: string,
  log: (line: string) => void = () => {}
): ReadonlyArray<Packed> => {
  const all = workspaces()
  const packages = closure(all, entries)
  const started = Date.now()
  build(packages, all)
  log(`built ${packages.map((ws) => relative(ROOT, join(ws.dir, "dist"))).join(", ")} (${Date.now() - started} ms)`)
  const problems = packages.flatMap((ws) => dependencyProblems(ws, all))
  if (problems.length > 0) throw new PackProblem(`dependencies to fix first:\n  ${problems.join("\n  ")}`)
  const rootEngines = readJson<Manifest>(join(ROOT, "package.json")).engines
  mkdirSync(out, { recursive: true })
  return packages.map((ws) => {
    const packed = pack(ws, out, rootEngines)
    log(`packed ${ws.name}@${ws.manifest.version} -> ${packed.tarball} (${packed.files} files)`)
    return packed
  })
}

const main = (argv: ReadonlyArray<string>): number => {
  let out = join(ROOT, "packed")
  let json = false
  const entries: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === "--json") json = true
    else if (arg === "--out") {
      const value = argv[++i]
      if (value === undefined) {
        process.stderr.write("pack: --out needs a folder\n")
        return 2
      }
      out = resolve(value)
    } else if (arg === "--help" || arg === "-h") {
      process.stdout.write("usage: node scripts/pack.ts [--out <dir>] [--json] [<package name>...]\n")
      return 0
    } else if (arg.startsWith("-")) {
      process.stderr.write(`pack: unknown option ${arg}\n`)
      return 2
    } else entries.push(arg)
  }
  try {
    const packed = packAll(entries.length === 0 ? ["@market-data/embedded"] : entries, out, (line) =>
      process.stderr.write(`${line}\n`)
    )
    if (json) process.stdout.write(`${JSON.stringify({ out, packages: packed })}\n`)
    else process.stdout.write(`packed ${packed.length} packages into ${out}\n`)
    return 0
  } catch (e) {
    process.stderr.write(`pack: ${e instanceof Error ? e.message : String(e)}\n`)
    return 1
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2))
}
