/**
 * Exact decimal arithmetic for filed figures. Every sum, difference and ratio of values a company filed goes
 * through `Exact` (decimal.js with 64 significant digits), never through JavaScript floats.
 */
import { Decimal } from "decimal.js"

/** decimal.js with room for any filed figure (64 significant digits) and banker's rounding. */
export const Exact = Decimal.clone({ precision: 64, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -64, toExpPos: 64 })
export type Exact = InstanceType<typeof Exact>

/** Decimal places of ratios and percentages derived from filed figures (rounded half to even). */
export const RATIO_DECIMALS = 4

/** A decimal's plain text (never exponent notation), e.g. "416161000000", "-0.25". */
export const text = (d: Exact): string => d.toFixed()

/** A ratio or percentage rounded to `RATIO_DECIMALS` places, half to even, as plain text ("21.5000"). */
export const ratioText = (d: Exact): string => d.toFixed(RATIO_DECIMALS, Decimal.ROUND_HALF_EVEN)

/** Whether `s` is a decimal string decimal.js reads exactly (filed values always are). */
export const isDecimalText = (s: string): boolean => /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(s)

/** A market measurement (a JSON number) as an exact decimal: its shortest round-trip text. */
export const fromNumber = (n: number): Exact => new Exact(String(n))
