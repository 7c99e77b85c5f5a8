/**
 * The human docs page at `/`: its markdown rendering (markdown-it: escaping, link targets, the subset the docs
 * use) and its HTTP answers (methods, CSP, caching, compression). The page in headless Chromium is checked in
 * docs-page-browser.test.ts (`npm run test:e2e`).
 */
import { DocsSections, Operations, renderDocs } from "@market-data/core"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DOCS_PAGE_CSP, markdownToHtml } from "../adapters/http/src/DocsPage.ts"
import { startServer, type TestServer } from "./support/server.ts"

/** markdown-it's output without the line breaks it puts before tags, to compare structure. */
const tight = (html: string): string => html.replace(/\s*\n\s*</g, "<").trim()

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
        "```",
        "",
        "![remote](https://example.org/pixel.png)"
      ].join("\n")
    )
    expect(html).not.toMatch(/<(script|img|svg|i|b)[\s>]/)
    expect(html).toContain("Title &lt;script&gt;alert(1)&lt;/script&gt;")
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt; &amp; 'quotes'")
    expect(html).toContain("<code>&lt;b&gt;code&lt;/b&gt;</code>")
    expect(tight(html)).toContain("<td>&lt;i&gt;cell&lt;/i&gt;</td><td><code>x&lt;y</code></td>")
    expect(html).toContain('<pre><code class="language-html">&lt;script&gt;alert(4)&lt;/script&gt;\n</code></pre>')
    // Images are not rendered: the page loads nothing the docs text names.
    expect(html).toContain('!<a href="https://example.org/pixel.png">remote</a>')
  })

  it("emits only its own tags and attributes, whatever the input", () => {
    const TAG =
      /<\/?(p|h[1-6]|code|pre|strong|em|s|a|ul|ol|li|table|thead|tbody|tr|th|td|div|blockquote|hr|br)((?: (?:id|class|href|title|style|start)="[^"<>]*")*)>/g
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
      "|---|---|",
      "!",
      "~~",
      "<b>",
      "  \n"
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
    expect(markdownToHtml("see [docs](/api/v1/docs?section=index&x=1)").trim()).toBe(
      '<p>see <a href="/api/v1/docs?section=index&amp;x=1">docs</a></p>'
    )
    expect(markdownToHtml("[site](https://example.org/a)")).toContain('<a href="https://example.org/a">site</a>')
    const evil = markdownToHtml('[click](javascript:alert(1)) [x](data:text/html,hi) [q](/a"onmouseover=b)')
    expect(evil).not.toContain('javascript:alert(1)"')
    expect(evil).not.toMatch(/href="(javascript|data):/)
    expect(evil).toContain("[click](javascript:alert(1))")
    // The quote cannot end the attribute: markdown-it percent-encodes it in the target.
    expect(evil).toContain('<a href="/a%22onmouseover=b">q</a>')
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
    expect(tight(html)).toContain('<th>op</th><th style="text-align:center">rule</th>')
    expect(tight(html)).toContain(
      '<td><code>a|b</code></td><td style="text-align:center"><strong>bold</strong> and <em>em</em></td>'
    )
    expect(tight(html)).toContain(
      "<ol><li><p>First step:</p><p><code>GET /api/v1/docs</code></p></li><li><p>Second step</p></li></ol>"
    )
    expect(tight(html)).toContain("<ul><li>tight one</li><li>tight two</li></ul>")
    expect(html).toContain("<p>A paragraph\nover two lines.</p>")
  })

  it("renders CommonMark beyond the docs' subset (a library, not a hand-written subset)", () => {
    const html = tight(
      markdownToHtml(
        [
          "Intro",
          "",
          "---",
          "",
          "See <https://example.org/x> and ***both***.",
          "",
          "- outer",
          "  - inner",
          "",
          "Setext heading",
          "=============="
        ].join("\n")
      )
    )
    expect(html).toContain("<hr>")
    expect(html).toContain('<a href="https://example.org/x">https://example.org/x</a>')
    expect(html).toContain("<em><strong>both</strong></em>")
    expect(html).toContain("<ul><li>outer<ul><li>inner</li></ul></li></ul>")
    expect(html).toContain('<h1 id="setext-heading">Setext heading</h1>')
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
    expect(etag).toMatch(/^"[0-9a-f]{40}-gz"$/)
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
