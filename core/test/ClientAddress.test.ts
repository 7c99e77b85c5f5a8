/**
 * The keyless rate-limit address behind reverse proxies (`clientAddress`): `X-Forwarded-For` counts only when the
 * socket peer is a trusted proxy, and then its right-most entry that is not a trusted proxy is the client; a
 * caller can never choose its address by sending the header itself.
 */
import { describe, expect, it } from "vitest"
import {
  clientAddress,
  keylessBudget,
  NO_TRUSTED_PROXIES,
  parseAddress,
  parseTrustedProxies,
  type TrustedProxies
} from "../src/ClientAddress.ts"

const trusted = (text: string): TrustedProxies => {
  const parsed = parseTrustedProxies(text)
  if (parsed._tag === "Problem") throw new Error(parsed.problem)
  return parsed.value
}

describe("clientAddress", () => {
  const proxies = trusted("10.0.0.0/8, 192.168.1.7, fd00::/8")

  it("is the socket peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress("203.0.113.9", ["198.51.100.1"], NO_TRUSTED_PROXIES)).toBe("203.0.113.9")
    expect(clientAddress("::ffff:10.0.0.2", ["198.51.100.1"], NO_TRUSTED_PROXIES)).toBe("::ffff:10.0.0.2")
    expect(clientAddress(undefined, ["198.51.100.1"], proxies)).toBe("unknown")
  })

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy (spoofing)", () => {
    expect(clientAddress("203.0.113.9", ["198.51.100.1"], proxies)).toBe("203.0.113.9")
    expect(clientAddress("203.0.113.9", ["10.0.0.1"], proxies)).toBe("203.0.113.9")
    expect(clientAddress("192.168.1.8", ["198.51.100.1"], proxies)).toBe("192.168.1.8")
    expect(clientAddress("fe00::1", ["198.51.100.1"], proxies)).toBe("fe00::1")
  })

  it("takes the right-most untrusted entry when the peer is trusted; entries left of it are never used", () => {
    expect(clientAddress("10.1.2.3", ["198.51.100.1"], proxies)).toBe("198.51.100.1")
    // The caller wrote 1.1.1.1 itself; the proxy appended the address it saw.
    expect(clientAddress("10.1.2.3", ["1.1.1.1, 198.51.100.1"], proxies)).toBe("198.51.100.1")
    // Two trusted hops: the first proxy's entry is skipped.
    expect(clientAddress("10.1.2.3", ["1.1.1.1, 198.51.100.1, 192.168.1.7"], proxies)).toBe("198.51.100.1")
    // Several header lines are one list, in order.
    expect(clientAddress("10.1.2.3", ["1.1.1.1", "198.51.100.1,10.9.9.9"], proxies)).toBe("198.51.100.1")
    // A dual-stack socket's IPv4-mapped peer is the IPv4 address.
    expect(clientAddress("::ffff:10.0.0.5", ["198.51.100.1"], proxies)).toBe("198.51.100.1")
    // Ports and brackets, as some proxies write them, and IPv6 in canonical form.
    expect(clientAddress("10.1.2.3", ["198.51.100.1:5555"], proxies)).toBe("198.51.100.1")
    expect(clientAddress("fd12::1", ["[2001:DB8::1]:443"], proxies)).toBe("2001:db8:0:0:0:0:0:1")
    expect(clientAddress("fd12::1", ["2001:db8::1"], proxies)).toBe("2001:db8:0:0:0:0:0:1")
  })

  it("stays at the trusted hops when the header has nothing usable", () => {
    expect(clientAddress("10.1.2.3", [], proxies)).toBe("10.1.2.3")
    expect(clientAddress("10.1.2.3", ["", " , "], proxies)).toBe("10.1.2.3")
    // An unparseable entry stops the walk at the last trusted hop: it is nobody's address.
    expect(clientAddress("10.1.2.3", ["198.51.100.1, unknown"], proxies)).toBe("10.1.2.3")
    expect(clientAddress("10.1.2.3", ["198.51.100.1, garbage, 10.4.4.4"], proxies)).toBe("10.4.4.4")
    // Every entry trusted: the left-most is the origin.
    expect(clientAddress("10.1.2.3", ["10.7.7.7, 10.8.8.8"], proxies)).toBe("10.7.7.7")
  })
})

describe("keylessBudget", () => {
  it("keeps an IPv4 address, maps an IPv4-mapped IPv6 address to it, and keeps text that is not an address", () => {
    expect(keylessBudget("203.0.113.9")).toBe("203.0.113.9")
    expect(keylessBudget("::ffff:203.0.113.9")).toBe("203.0.113.9")
    expect(keylessBudget("unknown")).toBe("unknown")
    expect(keylessBudget("not:an:address")).toBe("not:an:address")
  })

  it("groups an IPv6 address by its /64, whatever its spelling", () => {
    expect(keylessBudget("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64")
    expect(keylessBudget("2001:0DB8:0001:0002:ffff:eeee:dddd:cccc")).toBe("2001:db8:1:2::/64")
    expect(keylessBudget("[2001:db8:1:2:a:b:c:d]:443")).toBe("2001:db8:1:2::/64")
    expect(keylessBudget("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(keylessBudget("::1")).toBe("0:0:0:0::/64")
    // The next /64 is another budget.
    expect(keylessBudget("2001:db8:1:3::1")).not.toBe(keylessBudget("2001:db8:1:2::1"))
  })
})

describe("parseTrustedProxies", () => {
  it("reads IPs and CIDR ranges, v4 and v6; empty trusts none", () => {
    expect(trusted("").ranges).toHaveLength(0)
    expect(trusted(" , ").ranges).toHaveLength(0)
    const t = trusted("172.16.0.0/12,::1,2001:db8::/32,0.0.0.0/0")
    expect(t.ranges).toHaveLength(4)
    expect(clientAddress("172.31.255.255", ["8.8.8.8"], trusted("172.16.0.0/12"))).toBe("8.8.8.8")
    expect(clientAddress("172.32.0.0", ["8.8.8.8"], trusted("172.16.0.0/12"))).toBe("172.32.0.0")
    expect(clientAddress("::1", ["8.8.8.8"], trusted("::1"))).toBe("8.8.8.8")
    expect(clientAddress("::2", ["8.8.8.8"], trusted("::1"))).toBe("::2")
    expect(clientAddress("2001:db8:ffff::9", ["8.8.8.8"], trusted("2001:db8::/32"))).toBe("8.8.8.8")
    expect(clientAddress("2001:db9::9", ["8.8.8.8"], trusted("2001:db8::/32"))).toBe("2001:db9::9")
    // An IPv4-mapped range is the IPv4 range.
    expect(clientAddress("10.0.0.1", ["8.8.8.8"], trusted("::ffff:10.0.0.0/104"))).toBe("8.8.8.8")
    expect(clientAddress("11.0.0.1", ["8.8.8.8"], trusted("::ffff:10.0.0.0/104"))).toBe("11.0.0.1")
  })

  it("names a bad entry", () => {
    for (const bad of [
      "10.0.0.0/33",
      "10.0.0",
      "256.1.1.1",
      "proxy.local",
      "::/129",
      "10.0.0.1:80",
      "[::1]",
      "1.2.3.4/x"
    ]) {
      const parsed = parseTrustedProxies(`127.0.0.1,${bad}`)
      expect(parsed._tag, bad).toBe("Problem")
      if (parsed._tag === "Problem") {
        expect(parsed.problem).toContain("MARKET_DATA_TRUSTED_PROXIES")
        expect(parsed.problem).toContain(JSON.stringify(bad))
      }
    }
  })

  it("parses addresses strictly", () => {
    expect(parseAddress("01.2.3.4")).toBeUndefined()
    expect(parseAddress("1:2:3:4:5:6:7:8:9")).toBeUndefined()
    expect(parseAddress("1::2::3")).toBeUndefined()
    expect(parseAddress("::")).toEqual(Array(16).fill(0))
    expect(parseAddress("fe80::1%eth0")).toEqual(parseAddress("fe80::1"))
    expect(parseAddress("::ffff:1.2.3.4")).toEqual([1, 2, 3, 4])
  })
})
