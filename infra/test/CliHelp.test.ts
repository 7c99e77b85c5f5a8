/**
 * Asking the CLI for help succeeds: `help`, `--help` and `<command> --help` print the usage on stdout and exit 0;
 * no command at all prints it on stderr and exits 2 (a usage error, as an unknown command is).
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { type Io, runCli } from "../src/Cli.ts"

const run = async (argv: ReadonlyArray<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }
  const code = await Effect.runPromise(runCli(argv, io))
  return { code, out: out.join(""), err: err.join("") }
}

describe("market-data help", () => {
  it.each([[["help"]], [["--help"]], [["keys", "--help"]], [["serve", "--help"]]])(
    "%j prints the usage and exits 0",
    async (argv) => {
      const r = await run(argv)
      expect(r.code).toBe(0)
      expect(r.out).toContain("market-data <command>")
      expect(r.err).toBe("")
    }
  )

  it("no command is a usage error: the usage on stderr, exit 2", async () => {
    const r = await run([])
    expect(r.code).toBe(2)
    expect(r.err).toContain("market-data <command>")
    expect(r.out).toBe("")
  })

  it("an unknown command is a usage error, exit 2", async () => {
    const r = await run(["frobnicate"])
    expect(r.code).toBe(2)
    expect(r.err).toContain('unknown command "frobnicate"')
  })
})
