/**
 * The price CSV grammar of `ingest prices` (`parsePriceCsv`, RFC 4180 by csv-parse): quoted cells may span lines,
 * a file the grammar refuses fails whole, naming the fault and its line, and every row is
 * named by the line it starts on (blank lines, a byte-order mark and CRLF line ends counted as the file has them).
 */
import { describe, expect, it } from "vitest"
import { parsePriceCsv } from "../src/Ingest.ts"

const parsed = (text: string) => {
  const p = parsePriceCsv(text)
  if ("error" in p) throw new Error(p.error)
  return p
}

describe("parsePriceCsv", () => {
  it("reads a quoted cell that spans lines as one cell, and names later rows by the line they start on", () => {
    const p = parsed(
      [
        "date,open,high,low,close,volume,note",
        '2024-01-02,10,11,9,10.5,100,"split-adjusted,',
        'by the source"',
        "2024-01-03,10,11,9,10.5,100,",
        "2024-01-06,10,11,9,10.5,100,weekend"
      ].join("\n")
    )
    expect(p.rows.map((r) => [r.line, new Date(r.bar.tMs).toISOString()])).toEqual([
      [2, "2024-01-02T14:30:00.000Z"],
      [4, "2024-01-03T14:30:00.000Z"]
    ])
    expect(p.refusals).toEqual([
      { line: 5, reason: "weekend", detail: "2024-01-06 is a Saturday: US markets do not trade at weekends" }
    ])
  })

  it("refuses a CSV the grammar refuses as a file, naming the fault and its line, and loads none of it", () => {
    const unclosed = parsePriceCsv(
      ["date,open,high,low,close,volume", "2024-01-02,10,11,9,10.5,100", '2024-01-03,"10,11,9,10.5,100'].join("\n")
    )
    expect(unclosed).toEqual({
      error: expect.stringMatching(/^not a well-formed CSV \(RFC 4180\), nothing loaded: .*quote.*line 3/i)
    })
    const trailing = parsePriceCsv(
      ["date,open,high,low,close,volume", '2024-01-02,"10"x,11,9,10.5,100', "2024-01-03,10,11,9,10.5,100"].join("\n")
    )
    expect(trailing).toEqual({
      error: expect.stringMatching(/^not a well-formed CSV \(RFC 4180\), nothing loaded: .*line 2/)
    })
  })

  it("keeps the line numbers of a file with a byte-order mark, CRLF ends, blank lines and quoted cells", () => {
    const p = parsed(
      [
        "\uFEFF",
        " Date , OPEN,High,low,close,volume,ticker",
        "",
        '2024-01-02,"10",11,9,10.5,"1000",AAPL',
        "   ",
        '2024-01-03,10,11,9,"10.5",1000,"AA""PL"',
        "2024-01-02,10,11,9,10.5,1000,aapl"
      ].join("\r\n")
    )
    expect(p.keyed).toBe(true)
    expect(p.rows.map((r) => [r.line, r.company, r.bar.c, r.bar.v])).toEqual([
      [4, "AAPL", 10.5, 1000],
      [6, 'AA"PL', 10.5, 1000]
    ])
    expect(p.bad).toEqual(["line 7: AAPL 2024-01-02 repeats line 4"])
  })

  it("names the header's line when it lacks a column", () => {
    expect(parsePriceCsv("\n\nwhen,open\n2024-01-02,1")).toEqual({
      error:
        "the header (line 3) lacks date, high, low, close, volume: a price CSV starts with a header naming date, open, high, low, close, volume"
    })
    expect(parsePriceCsv(" \n\n")).toEqual({ error: "the file is empty" })
  })
})
