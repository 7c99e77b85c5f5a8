#!/usr/bin/env node
// The `market-data` command, in plain JavaScript so that any Node can start it.
//
// The service needs Node >= 22.19 (Effect 4, kysely, vitest; Node strips the TypeScript types itself). On an
// older Node this launcher re-runs the command with the Node 24 that `npm ci` installs (the `node` package in
// node_modules), passing signals on and exiting as it exits; without one it says, in one sentence, which Node is
// needed. In the workspace it runs the TypeScript sources; in the packed package (no `src/`), the built `dist/`.
//
// `ingest` runs in a child process with V8's baseline WebAssembly compiler only (`--liftoff-only`, as `npm start`
// runs the server): an ingest into the embedded store (PGlite, WebAssembly) peaked at 860 to 950 MB with V8's
// optimizing compiler working through PGlite, 400 MB without it, for about a quarter of PGlite's speed. Nothing
// else is WebAssembly, so an ingest into PostgreSQL is unchanged.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import * as nodeModule from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const MIN_MAJOR = 22
const MIN_MINOR = 19
const REEXEC_MARK = "MARKET_DATA_LAUNCHED_BY"

const here = dirname(fileURLToPath(import.meta.url))
const [major, minor] = process.versions.node.split(".").map(Number)
const supported = major > MIN_MAJOR || (major === MIN_MAJOR && minor >= MIN_MINOR)
const BASELINE_WASM = "--liftoff-only"
const wantsBaseline =
  process.argv[2] === "ingest" && process.env[REEXEC_MARK] === undefined && !process.execArgv.includes(BASELINE_WASM)

const pinnedNode = () => {
  try {
    const bin = join(dirname(nodeModule.createRequire(import.meta.url).resolve("node/package.json")), "bin", "node")
    return existsSync(bin) ? bin : undefined
  } catch {
    return undefined
  }
}

if (supported && !wantsBaseline) {
  // Node's compile cache (the type-stripped sources and V8's code for them, in os.tmpdir()/node-compile-cache, or
  // NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a start after the first skips most of the
  // work of loading the service's thousands of modules. Set in the environment too, so child processes (the
  // PGlite cluster's creation, an ingest) use it. A cache that cannot be written only costs that saving.
  // (A namespace import: a named import of it would not even load on the old Nodes this launcher must serve.)
  const cache = nodeModule.enableCompileCache?.()
  if (cache?.directory !== undefined && process.env.NODE_COMPILE_CACHE === undefined)
    process.env.NODE_COMPILE_CACHE = cache.directory
  // Loading the service's modules takes a second or two, half a minute on a saturated machine, before the server
  // can say anything itself: a start says it is under way at once and every 5 s until `src/bin.ts` has its
  // modules (it calls the function left here); the server's own progress lines follow (StartProgress.ts).
  if (process.argv[2] === "serve") {
    const started = Date.now()
    const say = (more) => process.stdout.write(`market-data starting: loading the service's modules${more}\n`)
    say("")
    const timer = setInterval(() => say(` (${Math.round((Date.now() - started) / 1000)} s so far)`), 5000)
    // Never what keeps the process alive (a start that fails while loading exits as it would without it).
    timer.unref()
    globalThis[Symbol.for("market-data/modules-loaded")] = () => clearInterval(timer)
  }
  const source = join(here, "..", "src", "bin.ts")
  const entry = existsSync(source) ? source : join(here, "..", "dist", "src", "bin.js")
  await import(pathToFileURL(entry).href)
} else {
  const pinned = supported ? process.execPath : process.env[REEXEC_MARK] === undefined ? pinnedNode() : undefined
  if (pinned === undefined) {
    process.stderr.write(
      `market-data needs Node >= ${MIN_MAJOR}.${MIN_MINOR} (Node 24 recommended) and this is Node ${process.versions.node}: install Node 24, or run it through npm (npm start, npx market-data) after npm ci, which installs Node 24 into node_modules.\n`
    )
    process.exit(2)
  }
  const flags = wantsBaseline ? [...process.execArgv, BASELINE_WASM] : process.execArgv
  const child = spawn(pinned, [...flags, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, [REEXEC_MARK]: process.versions.node }
  })
  // The child does the work (and the clean shutdown): signals go on to it and this process waits for its exit.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    })
  }
  child.on("error", (e) => {
    process.stderr.write(`market-data: cannot run ${pinned}: ${e.message}\n`)
    process.exit(2)
  })
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    } else process.exit(code ?? 1)
  })
}
