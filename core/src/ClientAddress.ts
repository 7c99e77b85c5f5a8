/**
 * The client address a keyless caller is rate limited by (`ip:<address>`), behind reverse proxies.
 *
 * By default it is the socket peer, and `X-Forwarded-For` is ignored: anyone can send that header. Behind a
 * reverse proxy every caller's socket peer is the proxy, so the operator lists the proxies
 * (`MARKET_DATA_TRUSTED_PROXIES`: IPs or CIDR ranges). Only when the socket peer is one of them is
 * `X-Forwarded-For` read, from the right: each trusted proxy appends the address it received the request from,
 * so the right-most entry that is not a trusted proxy is the first address no trusted party vouches beyond,
 * the client. Entries to its left were written by the client (or by proxies we do not trust) and are never used.
 */

/** One IP address as bytes: 4 for IPv4 (IPv4-mapped IPv6 addresses included), 16 for IPv6. */
type Address = ReadonlyArray<number>

/** A range of addresses: the first `bits` bits of `base`. */
interface Range {
  readonly base: Address
  readonly bits: number
}

/** The operator's trusted proxies (empty: trust none, the default). */
export interface TrustedProxies {
  readonly ranges: ReadonlyArray<Range>
}

export const NO_TRUSTED_PROXIES: TrustedProxies = { ranges: [] }

/** The configuration variable that lists the trusted proxies. */
export const TRUSTED_PROXIES_VARIABLE = "MARKET_DATA_TRUSTED_PROXIES"

const parseIpv4 = (text: string): Address | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const out: Array<number> = []
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined
    const n = Number(p)
    if (n > 255) return undefined
    out.push(n)
  }
  return out
}

const parseIpv6 = (text: string): Address | undefined => {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const out: Array<number> = []
    const pieces = part.split(":")
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i] as string
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseIpv4(piece)
        if (v4 === undefined) return undefined
        out.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number))
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined
        out.push(Number.parseInt(piece, 16))
      }
    }
    return out
  }
  const head = groupsOf(halves[0] as string)
  const tail = halves.length === 2 ? groupsOf(halves[1] as string) : []
  if (head === undefined || tail === undefined) return undefined
  let groups: Array<number>
  if (halves.length === 2) {
    if (head.length + tail.length > 7) return undefined
    groups = [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
  } else {
    if (head.length !== 8) return undefined
    groups = head
  }
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff])
  // IPv4-mapped (::ffff:a.b.c.d): the IPv4 address, as a dual-stack socket reports IPv4 peers.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12)
  return bytes
}

/** Parses an address as it appears in a socket or an `X-Forwarded-For` entry; `undefined` when it is not one. */
export const parseAddress = (raw: string): Address | undefined => {
  let text = raw.trim()
  // `[v6]:port` and `[v6]`
  const bracketed = /^\[([^\]]+)\](?::[0-9]{1,5})?$/.exec(text)
  if (bracketed !== null) text = bracketed[1] as string
  // `v4:port`
  else if (/^[0-9.]+:[0-9]{1,5}$/.test(text)) text = text.slice(0, text.indexOf(":"))
  // A zone (`fe80::1%eth0`) names an interface, not a different address.
  const zone = text.indexOf("%")
  if (zone >= 0) text = text.slice(0, zone)
  return text.includes(":") ? parseIpv6(text) : parseIpv4(text)
}

/** The canonical text of an address (IPv4 dotted; IPv6 as eight lower-case groups, no compression). */
const formatAddress = (a: Address): string => {
  if (a.length === 4) return a.join(".")
  const groups: Array<string> = []
  for (let i = 0; i < 16; i += 2) groups.push((((a[i] as number) << 8) | (a[i + 1] as number)).toString(16))
  return groups.join(":")
}

const inRange = (a: Address, r: Range): boolean => {
  if (a.length !== r.base.length) return false
  let bits = r.bits
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if (((a[i] as number) & mask) !== ((r.base[i] as number) & mask)) return false
  }
  return true
}

const isTrusted = (a: Address, trusted: TrustedProxies): boolean => trusted.ranges.some((r) => inRange(a, r))

/** Whether a socket peer is one of the trusted proxies (whose connections carry many clients). */
export const isTrustedProxy = (peer: string | undefined, trusted: TrustedProxies): boolean => {
  if (peer === undefined || trusted.ranges.length === 0) return false
  const address = parseAddress(peer)
  return address !== undefined && isTrusted(address, trusted)
}

/**
 * Parses the trusted-proxy list: comma-separated IPs or CIDR ranges (`10.0.0.0/8`, `172.16.0.0/12`, `::1`,
 * `fd00::/8`). Empty text trusts none. A bad entry is a problem naming it.
 */
export const parseTrustedProxies = (
  text: string
): { readonly _tag: "Ok"; readonly value: TrustedProxies } | { readonly _tag: "Problem"; readonly problem: string } => {
  const ranges: Array<Range> = []
  for (const entry of text.split(",")) {
    const item = entry.trim()
    if (item === "") continue
    const slash = item.indexOf("/")
    const base = parseAddress(slash < 0 ? item : item.slice(0, slash))
    const bad = {
      _tag: "Problem" as const,
      problem: `${TRUSTED_PROXIES_VARIABLE} must be a comma-separated list of IP addresses or CIDR ranges like 10.0.0.0/8 or fd00::/8; got ${JSON.stringify(item)}`
    }
    // Ports and brackets belong to addresses seen on the wire, not to the list.
    if (base === undefined || /[[\]%]/.test(item) || (slash < 0 && /^[0-9.]+:/.test(item))) return bad
    const max = base.length * 8
    let bits = max
    if (slash >= 0) {
      const suffix = item.slice(slash + 1)
      if (!/^[0-9]{1,3}$/.test(suffix)) return bad
      bits = Number(suffix)
      // An IPv4-mapped range (`::ffff:10.0.0.0/104`) is the IPv4 range it maps.
      if (base.length === 4 && item.slice(0, slash).includes(":")) bits -= 96
      if (bits < 0 || bits > max) return bad
    }
    ranges.push({ base, bits })
  }
  return { _tag: "Ok", value: { ranges } }
}

/**
 * The client address of a request: the socket peer, unless the peer is a trusted proxy; then the right-most
 * `X-Forwarded-For` entry that is not a trusted proxy (every header line, in order, split at commas). An
 * entry that is not an address stops the walk at the last trusted hop (it cannot be attributed to a client);
 * a chain of trusted proxies only ends at its left-most entry. `"unknown"` when the socket has no address.
 */
export const clientAddress = (
  peer: string | undefined,
  forwardedFor: ReadonlyArray<string>,
  trusted: TrustedProxies
): string => {
  if (peer === undefined || peer === "") return "unknown"
  if (trusted.ranges.length === 0) return peer
  const peerAddress = parseAddress(peer)
  if (peerAddress === undefined || !isTrusted(peerAddress, trusted)) return peer
  const entries = forwardedFor.flatMap((line) => line.split(",")).map((e) => e.trim())
  let last = peerAddress
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as string
    if (entry === "") continue
    const address = parseAddress(entry)
    if (address === undefined) break
    if (!isTrusted(address, trusted)) return formatAddress(address)
    last = address
  }
  return last === peerAddress ? peer : formatAddress(last)
}

/**
 * The budget a keyless caller at `address` spends: an IPv4 address is its own; an IPv6 address shares its /64
 * (`2001:db8:1:2::/64`), the block one subscriber is handed and may draw any address from, so rotating
 * addresses inside it does not multiply the keyless limit. An IPv4-mapped IPv6 address is its IPv4 address;
 * text that is not an address (`"unknown"`) is kept as it is.
 */
export const keylessBudget = (address: string): string => {
  if (!address.includes(":")) return address
  const a = parseAddress(address)
  if (a === undefined) return address
  if (a.length === 4) return a.join(".")
  const groups: Array<string> = []
  for (let i = 0; i < 8; i += 2) groups.push((((a[i] as number) << 8) | (a[i + 1] as number)).toString(16))
  return `${groups.join(":")}::/64`
}
