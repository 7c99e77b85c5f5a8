/**
 * The US equity market calendar against known open and closed days across the decades (the NYSE's holiday
 * calendar and its historical record of closings), its early closes, and what it drives: `status`,
 * `next_update_at` and the expected last bar of price answers.
 */
import { describe, expect, it } from "vitest"
import { nextEdgarMomentMs, priceFreshness } from "../../src/equity/EquityPlane.ts"
import {
  closedReason,
  earlyCloseHour,
  isSessionOpen,
  isTradingDay,
  lastClosedSession,
  nextSessionOpenMs,
  sessionCloseMs,
  sessionOpenMs
} from "../../src/equity/MarketHours.ts"
import { dayOf } from "../../src/equity/Statements.ts"

const open = (date: string) => isTradingDay(dayOf(date))
const iso = (ms: number) => new Date(ms).toISOString()

describe("US market calendar: holidays from the year they applied", () => {
  it("Martin Luther King Jr. Day closes the market from 1998 only", () => {
    // The third Monday of January, 1985 to 1997: trading days.
    for (const date of [
      "1985-01-21",
      "1986-01-20",
      "1987-01-19",
      "1988-01-18",
      "1989-01-16",
      "1990-01-15",
      "1991-01-21",
      "1992-01-20",
      "1993-01-18",
      "1994-01-17",
      "1995-01-16",
      "1996-01-15",
      "1997-01-20"
    ]) {
      expect(open(date), date).toBe(true)
    }
    for (const date of ["1998-01-19", "2010-01-18", "2026-01-19"]) {
      expect(closedReason(dayOf(date)), date).toBe("Martin Luther King Jr. Day")
    }
  })

  it("Juneteenth from 2022; Washington's Birthday and Memorial Day on fixed dates until 1970", () => {
    expect(open("2021-06-18")).toBe(true)
    expect(closedReason(dayOf("2022-06-20"))).toBe("Juneteenth")
    expect(closedReason(dayOf("2023-06-19"))).toBe("Juneteenth")
    expect(closedReason(dayOf("2026-06-19"))).toBe("Juneteenth")
    // 1970: Washington's Birthday on Sunday 22 February, observed Monday 23; Memorial Day on Saturday 30 May,
    // observed Friday 29. From 1971, Mondays: 15 February and 31 May 1971.
    expect(open("1970-02-23")).toBe(false)
    expect(open("1970-05-29")).toBe(false)
    expect(open("1971-02-15")).toBe(false)
    expect(open("1971-02-22")).toBe(true)
    expect(open("1971-05-31")).toBe(false)
    // Election Day: presidential years through 1980, never since.
    expect(closedReason(dayOf("1972-11-07"))).toBe("Election Day")
    expect(closedReason(dayOf("1980-11-04"))).toBe("Election Day")
    expect(open("1974-11-05")).toBe(true)
    expect(open("1984-11-06")).toBe(true)
  })

  it("Good Friday, Saturday and Sunday holidays as observed, New Year's Day on a Saturday not observed", () => {
    for (const date of ["1987-04-17", "2001-04-13", "2026-04-03"])
      expect(closedReason(dayOf(date)), date).toBe("Good Friday")
    expect(open("2011-12-30")).toBe(true) // New Year's Day 2012 on a Sunday: closed Monday 2 January
    expect(open("2012-01-02")).toBe(false)
    expect(open("2021-12-31")).toBe(true) // New Year's Day 2022 on a Saturday: not observed
    expect(open("2021-12-24")).toBe(false) // Christmas 2021 on a Saturday: observed Friday
    expect(open("2022-12-26")).toBe(false) // Christmas 2022 on a Sunday: observed Monday
    expect(open("2026-07-03")).toBe(false) // Independence Day 2026 on a Saturday: observed Friday
    expect(open("2026-11-26")).toBe(false)
  })

  it("the one-off closures", () => {
    const closures: ReadonlyArray<readonly [string, string]> = [
      ["1972-12-28", "Truman"],
      ["1973-01-25", "Johnson"],
      ["1977-07-14", "blackout"],
      ["1985-09-27", "Gloria"],
      ["1994-04-27", "Nixon"],
      ["2001-09-11", "September 11"],
      ["2001-09-12", "September 11"],
      ["2001-09-13", "September 11"],
      ["2001-09-14", "September 11"],
      ["2004-06-11", "Reagan"],
      ["2007-01-02", "Ford"],
      ["2012-10-29", "Sandy"],
      ["2012-10-30", "Sandy"],
      ["2018-12-05", "Bush"],
      ["2025-01-09", "Carter"]
    ]
    for (const [date, why] of closures) expect(closedReason(dayOf(date)), date).toContain(why)
    for (const date of ["2001-09-10", "2001-09-17", "2012-10-26", "2012-10-31", "2025-01-08", "2025-01-10"]) {
      expect(open(date), date).toBe(true)
    }
  })

  it("weekends are named as such", () => {
    expect(closedReason(dayOf("2024-01-06"))).toBe("Saturday")
    expect(closedReason(dayOf("2024-01-07"))).toBe("Sunday")
  })
})

describe("US market calendar: early closes", () => {
  it("closes at 13:00 New York on the scheduled half days, 14:00 in the older years, 16:00 otherwise", () => {
    const halfDays = [
      "2026-11-27", // day after Thanksgiving
      "2026-12-24", // Christmas Eve, a Thursday
      "2025-07-03", // a Thursday before Independence Day
      "2019-07-03", // a Wednesday, from 2013
      "2012-07-03", // a Tuesday
      "2002-07-05", // a Friday after Independence Day, 1996 to 2012
      "1997-12-26",
      "2003-12-26"
    ]
    for (const date of halfDays) expect(earlyCloseHour(dayOf(date)), date).toBe(13)
    expect(earlyCloseHour(dayOf("1992-11-27"))).toBe(14)
    expect(earlyCloseHour(dayOf("1991-12-24"))).toBe(14)
    for (const date of ["2026-07-02", "2008-07-02", "2019-07-05", "2021-12-23", "2026-11-25"]) {
      expect(earlyCloseHour(dayOf(date)), date).toBeUndefined()
    }
    expect(iso(sessionCloseMs("2026-11-27"))).toBe("2026-11-27T18:00:00.000Z")
    expect(iso(sessionCloseMs("2025-07-03"))).toBe("2025-07-03T17:00:00.000Z")
    expect(iso(sessionCloseMs("2026-11-25"))).toBe("2026-11-25T21:00:00.000Z")
  })
})

describe("US market calendar: what it drives", () => {
  it("after an early close the session is over: status closed, next_update_at the next open", () => {
    const after = Date.parse("2026-11-27T18:30:00Z") // 13:30 New York
    expect(isSessionOpen(after)).toBe(false)
    expect(lastClosedSession(after)).toBe("2026-11-27")
    expect(iso(nextSessionOpenMs(after))).toBe("2026-11-30T14:30:00.000Z")
    const f = priceFreshness(sessionOpenMs("2026-11-27"), after)
    expect(f).toEqual({
      as_of: "2026-11-27T18:00:00.000Z",
      status: "closed",
      next_update_at: "2026-11-30T14:30:00.000Z"
    })
    // In the half-day session, the next update is its 13:00 close.
    expect(priceFreshness(sessionOpenMs("2026-11-25"), Date.parse("2026-11-27T16:00:00Z")).next_update_at).toBe(
      "2026-11-27T18:00:00.000Z"
    )
  })

  it("a one-off closure is no missing bar: the bar before it is the one expected", () => {
    // Friday 2025-01-10 at noon New York: Thursday 9 January was closed, so Wednesday's bar is up to date.
    const noon = Date.parse("2025-01-10T17:00:00Z")
    expect(lastClosedSession(noon)).toBe("2025-01-08")
    expect(priceFreshness(sessionOpenMs("2025-01-08"), noon).status).toBe("live")
    // After the September 11 closure, the first session is Monday 17 September 2001.
    expect(iso(nextSessionOpenMs(Date.parse("2001-09-11T12:00:00Z")))).toBe("2001-09-17T13:30:00.000Z")
    // The third Monday of January 1990 was a session: a bar of Friday 12 January is one session behind.
    expect(priceFreshness(sessionOpenMs("1990-01-12"), Date.parse("1990-01-16T17:00:00Z")).status).toBe("delayed")
  })

  it("EDGAR keeps its hours (to 22:00 New York) on a half day", () => {
    // 20:00 New York on Friday 2026-11-27, after the 13:00 close: EDGAR still accepts filings.
    expect(iso(nextEdgarMomentMs(Date.parse("2026-11-28T01:00:30Z")))).toBe("2026-11-28T01:01:00.000Z")
  })
})
