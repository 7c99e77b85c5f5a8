/**
 * Where the parser tests find their documents: the real recorded SEC files in `../shared/data/sec` (read-only,
 * read in place, never copied) and the project's own hand-made fixtures.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Result } from "effect"

const sharedSecDir = fileURLToPath(new URL("../../../../../shared/data/sec/", import.meta.url))
const fixturesDir = fileURLToPath(new URL("../fixtures/", import.meta.url))

/** True when the shared recorded data is present (CI always has it). */
export const sharedSecPresent = existsSync(sharedSecDir)

if (!sharedSecPresent) {
  console.warn(`SKIPPED: the real SEC file tests need ${sharedSecDir}, which is absent; only the fixture tests run.`)
}

/** Label for suites on the real files, so a skip says why. */
export const sharedSuite = (name: string): string =>
  sharedSecPresent ? name : `${name} (SKIPPED: ../shared/data/sec is absent)`

/** A real SEC file's text, exactly as recorded. */
export const sharedSecText = (relative: string): string => readFileSync(sharedSecDir + relative, "utf8")

/** A fixture's text. */
export const fixtureText = (name: string): string => readFileSync(fixturesDir + name, "utf8")

/** The success of a parser result; fails the test with the parser's message otherwise. */
export const parsed = <A, E extends { readonly message: string }>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) throw new Error(`expected the document to parse, got: ${result.failure.message}`)
  return result.success
}

/** The failure of a parser result; fails the test when it parsed. */
export const refused = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) throw new Error("expected the document to be refused, but it parsed")
  return result.failure
}
