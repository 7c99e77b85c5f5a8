/**
 * The human docs page at `/`: its markdown renderer (escaping, the subset the docs use), its HTTP answers
 * (methods, CSP, caching, compression), and the page itself in headless Chromium: no console errors, no failed
 * request, no request leaving the origin, the eleven sections rendered, the Scalar reference listing every
 * operation, and a keyless `schema` call and a keyed `usage` call sent from the page's try-it console.
 */
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DocsSections, Operations, renderDocs } from "@market-data/core"
import fc from "fast-check"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DOCS_PAGE_CSP, markdownToHtml } from "../adapters/http/src/DocsPage.ts"
import { startServer, type TestServer } from "./support/server.ts"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) {
  console.warn(
    `docs-page: ${CHROMIUM} is absent, so the headless-browser tests are SKIPPED (Debian: apt-get install chromium; .ci/run installs it)`
  )
}

describe("markdown rendering of the docs sections", () => {
  it("escapes every character of the source: raw HTML shows as text, never as markup", () => {
    const html = markdownToHtml(
      [
        "# Title <script>alert(1)</script>",
        "",
        `Text <img src=x onerror="alert(2)"> & 'quotes' and \`<b>code</b>\`.`,
        "",
        "| a | b |",
        "|---|---|",
        "| <i>cell</i> | `x<y` |",
        "",
        "- item <svg onload=alert(3)>",
        "",
        "```html",
        "<script>alert(4)</script>",
        "```"
      ].join("\n")
    )
    expect(html).not.toMatch(/<(script|img|svg|i|b)[\s>]/)
    expect(html).toContain("Title &lt;script&gt;alert(1)&lt;/script&gt;")
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt; &amp; &#39;quotes&#39;")
    expect(html).toContain("<code>&lt;b&gt;code&lt;/b&gt;</code>")
    expect(html).toContain("<td>&lt;i&gt;cell&lt;/i&gt;</td><td><code>x&lt;y</code></td>")
    expect(html).toContain('<pre><code class="language-html">&lt;script&gt;alert(4)&lt;/script&gt;</code></pre>')
  })

  it("emits only its own tags and attributes, whatever the input", () => {
    const TAG =
      /<\/?(p|h[1-6]|code|pre|strong|em|a|ul|ol|li|table|thead|tbody|tr|th|td|div|blockquote)((?: (?:id|class|href|style|start)="[^"<>]*")*)>/g
    const pieces = [
      "<",
      ">",
      "&",
      '"',
      "'",
      "`",
      "``",
      "*",
      "**",
      "[",
      "]",
      "(",
      ")",
      "|",
      "\\|",
      "-",
      "#",
      "1.",
      ">",
      "```",
      "   ",
      "\n",
      "\n\n",
      "a",
      "script",
      "javascript:",
      "onload=",
      "/x",
      "|---|---|"
    ]
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (parts) => {
        const html = markdownToHtml(parts.join(""))
        const rest = html.replace(TAG, "")
        expect(rest).not.toMatch(/[<>]/)
        for (const [, , attrs] of html.matchAll(TAG)) {
          expect(attrs ?? "").not.toMatch(/href="(?!https?:|mailto:|[^:]*$)/i)
          expect(attrs ?? "").not.toMatch(/style="(?!text-align:(left|right|center)")/)
        }
      }),
      { numRuns: 2_000 }
    )
  })

  it("links only to web, mail or relative targets, with the target escaped", () => {
    expect(markdownToHtml("see [docs](/api/v1/docs?section=index&x=1)")).toBe(
      '<p>see <a href="/api/v1/docs?section=index&amp;x=1">docs</a></p>'
    )
    expect(markdownToHtml("[site](https://example.org/a)")).toContain('<a href="https://example.org/a">site</a>')
    const evil = markdownToHtml('[click](javascript:alert(1)) [x](data:text/html,hi) [q](/a"onmouseover=b)')
    expect(evil).not.toContain('javascript:alert(1)"')
    expect(evil).not.toMatch(/href="(javascript|data):/)
    expect(evil).toContain('<a href="/a&quot;onmouseover=b">q</a>')
  })

  it("renders the subset the docs use: headings, tables with escaped pipes, lists, code, bold, emphasis", () => {
    const html = markdownToHtml(
      [
        "## Keys and `codes`",
        "",
        "| op | rule |",
        "|---|:---:|",
        "| `a\\|b` | **bold** and *em* |",
        "",
        "1. First step:",
        "",
        "   `GET /api/v1/docs`",
        "",
        "2. Second step",
        "",
        "- tight one",
        "- tight two",
        "",
        "A paragraph",
        "over two lines."
      ].join("\n"),
      { idPrefix: "docs-x-" }
    )
    expect(html).toContain('<h2 id="docs-x-keys-and-codes">Keys and <code>codes</code></h2>')
    expect(html).toContain('<th>op</th><th style="text-align:center">rule</th>')
    expect(html).toContain(
      '<td><code>a|b</code></td><td style="text-align:center"><strong>bold</strong> and <em>em</em></td>'
    )
    expect(html).toContain(
      "<ol><li><p>First step:</p>\n<p><code>GET /api/v1/docs</code></p></li><li><p>Second step</p></li></ol>"
    )
    expect(html).toContain("<ul><li>tight one</li><li>tight two</li></ul>")
    expect(html).toContain("<p>A paragraph\nover two lines.</p>")
  })

  it("gives headings unique anchors across sections", () => {
    const ids = new Set<string>()
    const a = markdownToHtml("## Keys\n\n## Keys", { ids })
    const b = markdownToHtml("## Keys", { ids })
    expect(a).toContain('id="keys"')
    expect(a).toContain('id="keys-2"')
    expect(b).toContain('id="keys-3"')
  })

  it("renders every docs section completely: no markdown syntax is left over", () => {
    const ctx = { implemented: new Set(Operations.map((o) => o.name)), rateLimitPerMinute: 60, basePath: "/api/v1" }
    for (const section of DocsSections) {
      const markdown = renderDocs(section, ctx)
      const html = markdownToHtml(markdown)
      const text = html.replace(/<code>[\s\S]*?<\/code>/g, "")
      expect(text, section).not.toMatch(/^\s*(#{1,6} |\|---|[-*] |\d+\. )/m)
      expect(text, section).not.toContain("**")
      const headings = markdown.split("\n").filter((l) => /^#{1,6} /.test(l)).length
      expect((html.match(/<h[1-6] /g) ?? []).length, section).toBe(headings)
      const tableRows = markdown.split("\n").filter((l) => l.startsWith("|") && !/^\|-/.test(l)).length
      expect((html.match(/<tr>/g) ?? []).length, section).toBe(tableRows)
    }
  })
})

describe("the docs page over HTTP", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("answers GET / with the HTML page under a strict CSP, keyless, spending a unit of the client address", async () => {
    const res = await fetch(`${server.base}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(res.headers.get("content-security-policy")).toBe(DOCS_PAGE_CSP)
    expect(DOCS_PAGE_CSP).toContain("script-src 'self'")
    expect(DOCS_PAGE_CSP).not.toContain("unsafe-eval")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/)
    const html = await res.text()
    for (const section of DocsSections) expect(html).toContain(`id="docs-${section}"`)
    // Only external scripts, all from this origin.
    const scripts = html.match(/<script[^>]*>/g) ?? []
    expect(scripts).toEqual(['<script src="/assets/scalar.js">', '<script src="/assets/docs-page.js">'])
    // Nothing the page loads comes from elsewhere (links in the text may point anywhere).
    const loaded = [...html.matchAll(/<(?:script|img|link|iframe|source)\b[^>]*\b(?:src|href)="([^"]*)"/g)].map(
      (m) => m[1]
    )
    expect(loaded.length).toBeGreaterThanOrEqual(3)
    for (const url of loaded) expect(url).toMatch(/^(\/(?!\/)|data:)/)
  })

  it("answers HEAD with the headers and no body; other methods 405 with Allow: GET, HEAD", async () => {
    const head = await fetch(`${server.base}/`, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(await head.text()).toBe("")
    for (const method of ["POST", "PUT", "DELETE", "OPTIONS"]) {
      const res = await fetch(`${server.base}/`, { method })
      expect(res.status, method).toBe(405)
      expect(res.headers.get("allow"), method).toBe("GET, HEAD")
      expect(((await res.json()) as { error: { code: string } }).error.code, method).toBe("method_not_allowed")
    }
    const asset = await fetch(`${server.base}/assets/scalar.js`, { method: "POST" })
    expect(asset.status).toBe(405)
  })

  it("serves Scalar's bundle from this server, compressed, revalidated by ETag, without remote fonts", async () => {
    const res = await fetch(`${server.base}/assets/scalar.js`, { headers: { "accept-encoding": "gzip" } })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(res.headers.get("content-encoding")).toBe("gzip")
    const js = await res.text()
    expect(js).toContain("createApiReference")
    expect(js).not.toContain("fonts.scalar.com")
    expect(js).not.toContain("sourceMappingURL")
    const etag = res.headers.get("etag") as string
    expect(etag).toMatch(/^"[\w-]{27}-gz"$/)
    const again = await fetch(`${server.base}/assets/scalar.js`, { headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
    const plain = await fetch(`${server.base}/assets/scalar.js`, { headers: { "accept-encoding": "identity" } })
    expect(plain.headers.get("content-encoding")).toBeNull()
    expect(plain.headers.get("etag")).toBe(etag.replace("-gz", ""))
    expect(await plain.text()).toBe(js)
    const page = await fetch(`${server.base}/`)
    const revalidated = await fetch(`${server.base}/`, {
      headers: { "if-none-match": page.headers.get("etag") as string }
    })
    expect(revalidated.status).toBe(304)
    expect(revalidated.headers.get("content-security-policy")).toBe(DOCS_PAGE_CSP)
  })

  it("leaves the API where it was: GET /api/v1 is still the JSON root document", async () => {
    const res = await fetch(`${server.base}/api/v1`)
    expect(res.headers.get("content-type")).toBe("application/json")
    expect(((await res.json()) as { name: string }).name).toBe("service-market-data")
  })
})

describe.skipIf(!hasChromium)("the docs page in headless Chromium", () => {
  let server: TestServer
  let browser: Browser
  let key: string
  beforeAll(async () => {
    const { chromium } = await import("playwright-core")
    server = await startServer({ rateLimitPerMinute: 100_000 })
    key = (await server.newKey(50)).key
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  /** Opens the page, recording console errors, page errors, failed requests and requests off the origin. */
  const open = async (): Promise<{ page: Page; problems: Array<string> }> => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    const problems: Array<string> = []
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console error: ${m.text()}`)
    })
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`))
    page.on("requestfailed", (r) => problems.push(`failed request: ${r.url()} ${r.failure()?.errorText}`))
    page.on("request", (r) => {
      if (!r.url().startsWith(server.base) && !r.url().startsWith("data:"))
        problems.push(`request off the origin: ${r.url()}`)
    })
    page.on("response", (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`)
    })
    await page.goto(`${server.base}/`)
    return { page, problems }
  }

  const referenceText = (page: Page) => page.locator("#reference-app").innerText()

  it("renders the eleven sections and the reference of all 23 operations, with no error", async () => {
    const { page, problems } = await open()
    for (const section of DocsSections) {
      const markdown = await (await fetch(`${server.base}/api/v1/docs?section=${section}`)).text()
      const title = (/^# (.+)$/m.exec(markdown)?.[1] ?? "").replace(/`/g, "")
      expect(title, section).not.toBe("")
      const h1 = page.locator(`#docs-${section} h1`)
      expect(await h1.innerText(), section).toBe(title)
      expect(await h1.isVisible(), section).toBe(true)
      const subheadings = markdown.split("\n").filter((l) => /^#{2,3} /.test(l)).length
      expect(await page.locator(`#docs-${section} :is(h2, h3)`).count(), section).toBe(subheadings)
    }
    await page.locator("#reference").scrollIntoViewIfNeeded()
    await expect
      .poll(
        async () => {
          const text = await referenceText(page)
          return Operations.filter((o) => !text.includes(`/api/v1/${o.name}\n`)).map((o) => o.name)
        },
        { timeout: 30_000 }
      )
      .toEqual([])
    await page.waitForTimeout(1_000)
    // Scalar can render its client link for a moment before its options apply (seen under load): what
    // matters is that the settled page has none.
    await expect.poll(() => page.locator('a[href*="client.scalar.com"]').count(), { timeout: 15_000 }).toBe(0)
    await page.screenshot({ path: join(tmpdir(), "market-data-docs-page.png") })
    expect(problems).toEqual([])
    // Readable on a phone: nothing wider than the viewport.
    await page.setViewportSize({ width: 420, height: 900 })
    await page.waitForTimeout(300)
    const [scrollWidth, clientWidth] = (await page.evaluate(
      "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )) as [number, number]
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth)
    await page.close()
  })

  it("sends a keyless schema call from the try-it console and shows the answer", async () => {
    const { page, problems } = await open()
    const reference = page.locator("#reference-app")
    await reference.getByText("/api/v1/schema", { exact: true }).first().click()
    await reference.locator("button", { hasText: "Test Request(get /api/v1/schema)" }).click()
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/schema")
    await page.getByRole("button", { name: /^Send Request/ }).click()
    const response = await answered
    expect(response.status()).toBe(200)
    expect(response.request().headers().authorization).toBeUndefined()
    const body = await response.json()
    const resource = new URL(response.url()).searchParams.get("resource")
    if (resource === null) expect(JSON.stringify(body.data)).toContain('"usage"')
    else expect(body.data.name).toBe(resource)
    await expect.poll(() => page.getByText("200 OK").first().isVisible(), { timeout: 10_000 }).toBe(true)
    await page.screenshot({ path: join(tmpdir(), "market-data-docs-page-try-it.png") })
    expect(problems).toEqual([])
    await page.close()
  })

  it("takes a key in the try-it console and sends it as a Bearer token", async () => {
    const { page, problems } = await open()
    const reference = page.locator("#reference-app")
    await reference.getByText("/api/v1/usage", { exact: true }).first().click()
    await reference.locator("button", { hasText: "Test Request(get /api/v1/usage)" }).click()
    const client = page.getByRole("dialog")
    await client
      .getByRole("button", { name: /^Authentication/ })
      .first()
      .click()
    await client.getByPlaceholder("Token").fill(key)
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/usage")
    await page.getByRole("button", { name: /^Send Request/ }).click()
    const response = await answered
    expect(response.request().headers().authorization).toBe(`Bearer ${key}`)
    expect(response.status()).toBe(200)
    expect((await response.json()).data.credits_remaining).toBe(50)
    expect(problems).toEqual([])
    await page.close()
  })
})
