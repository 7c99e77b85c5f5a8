/**
 * New York wall-clock time and UTC. EDGAR works on Eastern time (acceptance clock, filing cut-offs) and US equity
 * sessions open at 09:30 New York time; both need the conversion with daylight saving applied.
 */

const newYorkParts = new Intl.DateTimeFormat("en-US", {
  timeZone: "America/New_York",
  hourCycle: "h23",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit"
})

/**
 * New York's offset by UTC hour: clocks change on whole UTC hours (02:00 local), so the offset is one value within
 * each UTC hour, and formatting a date in a time zone is slow (a bulk load converts hundreds of thousands of times).
 */
const offsetByHour = new Map<number, number>()

/** Milliseconds New York wall time is ahead of UTC at the instant `utcMs` (-4 h or -5 h). */
const newYorkOffsetMs = (utcMs: number): number => {
  const hour = Math.floor(utcMs / 3_600_000)
  const known = offsetByHour.get(hour)
  if (known !== undefined) return known
  const offset = zoneOffsetMs(hour * 3_600_000)
  if (offsetByHour.size > 200_000) offsetByHour.clear()
  offsetByHour.set(hour, offset)
  return offset
}

const zoneOffsetMs = (utcMs: number): number => {
  const parts: Record<string, number> = {}
  for (const part of newYorkParts.formatToParts(new Date(utcMs))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value)
  }
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!)
  return wall - Math.floor(utcMs / 1000) * 1000
}

/**
 * The UTC instant (epoch ms) of a New York wall-clock time. Month is 1-based. A time in the hour skipped when
 * clocks spring forward resolves to the instant one hour later; a repeated fall-back hour to its first occurrence.
 */
export const newYorkToUtcMs = (
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number
): number => {
  const wallMs = Date.UTC(year, month - 1, day, hour, minute, second)
  // Two passes settle the offset on both sides of a daylight-saving change.
  const first = wallMs - newYorkOffsetMs(wallMs)
  return wallMs - newYorkOffsetMs(first)
}
