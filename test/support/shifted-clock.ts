/**
 * A preload (`node --import`) that runs a process's clock `MARKET_DATA_TEST_CLOCK_OFFSET_MS` ahead of the machine's:
 * `Date.now()` and `new Date()` (no arguments) add the offset; durations (timers, `performance.now()`) are
 * untouched. The live-streams suite starts a service process and its replay venue (`clockOffsetMs`) on one such
 * time base, so a 15-minute close comes at a moment the test chooses instead of up to 15 minutes later.
 * Test support only: nothing in the service reads the variable.
 */
const offsetMs = Number(process.env.MARKET_DATA_TEST_CLOCK_OFFSET_MS ?? "0")
if (Number.isFinite(offsetMs) && offsetMs !== 0) {
  const RealDate = Date
  const realNow = RealDate.now.bind(RealDate)
  class ShiftedDate extends RealDate {
    constructor(...args: Array<unknown>) {
      if (args.length === 0) super(realNow() + offsetMs)
      else super(...(args as [string | number | Date]))
    }
    static override now(): number {
      return realNow() + offsetMs
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor
}

/** The `NODE_OPTIONS` and variable that start a child process on a clock `offsetMs` ahead. */
export const shiftedClockEnv = (offsetMs: number): Record<string, string> => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${new URL(import.meta.url).href}`.trim(),
  MARKET_DATA_TEST_CLOCK_OFFSET_MS: String(Math.round(offsetMs))
})
