/**
 * The files an ingest reads: named files as they are, directories walked recursively (`expandPaths`); the
 * accession number and filing date a document's path carries (`accessionFromPath`); reading one file, a failure
 * named with its reason (`FileProblem`).
 */
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { Effect } from "effect"

const isDirectoryPath = (path: string): boolean => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** The files to read: named files as they are, directories walked recursively (`.json` and `.xml`, by name). */
export const expandPaths = (
  paths: ReadonlyArray<string>,
  accept: RegExp = /\.(json|xml)$/i
): { readonly files: ReadonlyArray<string>; readonly missing: ReadonlyArray<string>; readonly ignored: number } => {
  const files: Array<string> = []
  const missing: Array<string> = []
  let ignored = 0
  const visited = new Set<string>()
  const walk = (dir: string) => {
    // A symbolic link back up the tree must not loop.
    const real = realpathSync(dir)
    if (visited.has(real)) return
    visited.add(real)
    const entries: Array<Dirent> = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    )
    for (const entry of entries) {
      const path = join(dir, entry.name)
      const isDirectory = entry.isDirectory() || (entry.isSymbolicLink() && isDirectoryPath(path))
      if (isDirectory) walk(path)
      else if (entry.isFile() || entry.isSymbolicLink()) {
        if (accept.test(entry.name)) files.push(path)
        else ignored++
      }
    }
  }
  for (const path of paths) {
    let stat: ReturnType<typeof statSync>
    try {
      stat = statSync(path)
    } catch {
      missing.push(path)
      continue
    }
    if (stat.isDirectory()) walk(path)
    else files.push(path)
  }
  return { files: [...new Set(files)], missing, ignored }
}

const ACCESSION_DASHED = /(?<!\d)(\d{10})-(\d{2})-(\d{6})(?!\d)/
const ACCESSION_FOLDER = /(?<!\d)(\d{10})(\d{2})(\d{6})(?!\d)/
const DATE = /(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)/

/**
 * The accession number a document's path carries (its file name first, then its folders, nearest first), and
 * the filing date written in the same name, if any.
 */
export const accessionFromPath = (
  path: string
): { readonly accession: string; readonly filedAt: string | null; readonly from: string } | undefined => {
  let current = resolve(path)
  for (;;) {
    const name = basename(current)
    const m = ACCESSION_DASHED.exec(name) ?? ACCESSION_FOLDER.exec(name)
    if (m !== null) {
      const date = DATE.exec(name.replace(m[0], ""))
      return { accession: `${m[1]}-${m[2]}-${m[3]}`, filedAt: date?.[1] ?? null, from: name }
    }
    const parent = dirname(current)
    if (parent === current) return undefined
    current = parent
  }
}

/** A failure of one file, with the reason to print. */
export class FileProblem {
  readonly _tag = "FileProblem"
  readonly reason: string
  readonly cik: string | null
  constructor(reason: string, cik: string | null = null) {
    this.reason = reason
    this.cik = cik
  }
}

export const readText = (path: string): Effect.Effect<string, FileProblem> =>
  Effect.try({
    try: () => readFileSync(path, "utf8"),
    catch: (e) => new FileProblem(`cannot read it: ${e instanceof Error ? e.message : String(e)}`)
  })
