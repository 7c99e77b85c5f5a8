/**
 * The human docs page at `GET /`: the eleven `docs` sections rendered to HTML on the server, followed by an
 * interactive reference of the OpenAPI document (`@scalar/api-reference`, served from this server, never a
 * CDN) whose try-it console sends requests from the page with a Bearer key. Keyless, zero credits, outside
 * `/api/v1`, and not rate limited: it is a static document of what the running service answers.
 */
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { gzip } from "node:zlib"
import {
  type ApiError,
  apiError,
  BASE_PATH,
  DocsSections,
  etagOf,
  Handlers,
  ifNoneMatchMatches,
  Operations,
  renderDocs,
  Settings,
  type WireResponse
} from "@market-data/core"
import { Effect } from "effect"
import type * as Digest from "effect/crypto/Digest"
import MarkdownIt from "markdown-it"
import { SERVICE_NAME, SERVICE_VERSION } from "./OpenApi.ts"

// ---------------------------------------------------------------------------------------------------------
// Markdown, rendered by markdown-it (CommonMark with GitHub tables). Raw HTML in the source is not passed
// through (shown as text), links go only to web, mail or relative targets, images are not rendered, and
// headings get unique anchors.
// ---------------------------------------------------------------------------------------------------------

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;"
}

/** Escapes text for an HTML text node or a double- or single-quoted attribute value. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string)

/** Link targets allowed in the page: web, mail, or relative to this server. Anything else stays text. */
const safeHref = (href: string): boolean => {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(href)
  if (scheme === null) return ![...href].some((ch) => ch <= " ")
  return ["http", "https", "mailto"].includes((scheme[1] as string).toLowerCase())
}

/** Turns heading text into an anchor slug. */
const slugOf = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[`*\\[\]()]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "") || "section"

interface RenderOptions {
  /** Prefix of heading anchors, so that two sections' "Keys" headings get distinct IDs. */
  readonly idPrefix: string
  /** Anchors already used on the page. */
  readonly ids: Set<string>
}

/** A markdown renderer with this page's rules; each render's options (`env`) carry its anchors' prefix and IDs. */
const makeMarkdown = () => {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false })
  md.validateLink = safeHref
  // No images: the page loads nothing the docs text names (`![alt](url)` stays a link after a "!").
  md.disable("image")
  // Tables scroll sideways inside a wrapper instead of widening the page.
  md.renderer.rules.table_open = () => '<div class="table-wrap"><table>\n'
  md.renderer.rules.table_close = () => "</table></div>\n"
  // Heading anchors: the render's options (`env`) carry the prefix and the IDs the page already uses.
  md.renderer.rules.heading_open = (tokens, idx, options, renderEnv, self) => {
    const env = renderEnv as unknown as RenderOptions
    const base = `${env.idPrefix}${slugOf(tokens[idx + 1]?.content ?? "")}`
    let id = base
    for (let n = 2; env.ids.has(id); n++) id = `${base}-${n}`
    env.ids.add(id)
    tokens[idx]?.attrSet("id", id)
    return self.renderToken(tokens, idx, options)
  }
  return md
}

/**
 * Renders markdown to HTML. Raw HTML in the source is not passed through: it is shown as text. Heading
 * anchors are `idPrefix` + a slug of the heading, unique among `ids` (shared by the sections of one page).
 * `renderer`: one made by `makeMarkdown` to reuse across the sections of a page; a new one otherwise.
 */
export const markdownToHtml = (
  source: string,
  options: Partial<RenderOptions> = {},
  renderer: ReturnType<typeof makeMarkdown> = makeMarkdown()
): string =>
  renderer.render(source, { idPrefix: options.idPrefix ?? "", ids: options.ids ?? new Set() } satisfies RenderOptions)

// ---------------------------------------------------------------------------------------------------------
// The page and its assets.
// ---------------------------------------------------------------------------------------------------------

/** Paths the docs page answers. */
export const DOCS_PAGE_PATH = "/"
export const SCALAR_ASSET_PATH = "/assets/scalar.js"
const PAGE_SCRIPT_PATH = "/assets/docs-page.js"
const PAGE_STYLE_PATH = "/assets/docs-page.css"

const ALLOWED = "GET, HEAD"

/**
 * Scripts only from this origin (Scalar's bundle and the page's own starter, no inline script, no eval);
 * styles also inline because Scalar and its editor inject style elements and attributes at run time;
 * requests (the OpenAPI document, the try-it console) only to this origin.
 */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": DOCS_PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
}

/**
 * The page's starter: mounts Scalar on the OpenAPI document, with nothing that calls out of this origin: no
 * telemetry, agent or MCP features, no remote fonts, no "Open API Client" button (it links to
 * client.scalar.com with this document's URL). Keys typed into the console are not persisted. No
 * `preferredSecurityScheme`: it would send an empty `Authorization: Bearer` on the keyless operations, which
 * the service answers 401 (a key sent to a keyless operation is checked too); each operation's own
 * `security` picks the scheme instead.
 */
// The mount point is not `#api-reference`: the bundle's legacy HTML API auto-mounts a second, unconfigured
// instance on an element with that ID (its skeleton never loads, and it injects the remote fonts).
const PAGE_SCRIPT = `"use strict";
(function () {
  var target = document.getElementById("reference-app");
  if (!target || !window.Scalar) return;
  window.Scalar.createApiReference(target, {
    url: ${JSON.stringify(`${BASE_PATH}/openapi.json`)},
    slug: ${JSON.stringify(SERVICE_NAME)},
    title: ${JSON.stringify(SERVICE_NAME)},
    layout: "modern",
    theme: "default",
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
    hideDarkModeToggle: true,
    forceDarkModeState: "light",
    documentDownloadType: "json",
    persistAuth: false,
    hideClientButton: true,
    defaultOpenAllTags: true,
    operationTitleSource: "path"
  });
})();
`

const PAGE_STYLE = `:root {
  --md-text: #1d2330; --md-muted: #5b6474; --md-border: #dfe3ea; --md-code-bg: #f3f5f8; --md-accent: #2459c7;
  --md-font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --md-mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  --scalar-font: var(--md-font); --scalar-font-code: var(--md-mono);
}
* { box-sizing: border-box; }
html { scroll-behavior: smooth; }
body { margin: 0; font-family: var(--md-font); color: var(--md-text); background: #fff; line-height: 1.55; font-size: 15px; }
a { color: var(--md-accent); }
.site-header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.5rem 1.5rem; padding: 0.9rem 2rem; border-bottom: 1px solid var(--md-border); background: #fafbfc; }
.site-header h1 { font-size: 1.15rem; margin: 0; }
.site-header .version { color: var(--md-muted); font-size: 0.85rem; }
.site-header nav a { margin-right: 1rem; text-decoration: none; font-size: 0.92rem; }
.guide { display: grid; grid-template-columns: 15rem minmax(0, 1fr); gap: 2rem; max-width: 84rem; margin: 0 auto; padding: 1.5rem 2rem 3rem; }
.toc { position: sticky; top: 1rem; align-self: start; max-height: calc(100vh - 2rem); overflow: auto; font-size: 0.92rem; }
.toc h2 { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--md-muted); margin: 0 0 0.5rem; }
.toc ol { list-style: none; padding: 0; margin: 0; }
.toc li { margin: 0.15rem 0; }
.toc a { text-decoration: none; display: block; padding: 0.15rem 0.5rem; border-radius: 4px; }
.toc a:hover { background: var(--md-code-bg); }
.toc .section-name { color: var(--md-muted); font-family: var(--md-mono); font-size: 0.78rem; }
.doc-section { border-bottom: 1px solid var(--md-border); padding-bottom: 1.5rem; margin-bottom: 1.5rem; scroll-margin-top: 1rem; }
.doc-section h1 { font-size: 1.6rem; margin: 0.2rem 0 0.8rem; }
.doc-section h2 { font-size: 1.25rem; margin: 1.6rem 0 0.6rem; }
.doc-section h3 { font-size: 1.05rem; margin: 1.3rem 0 0.4rem; }
.doc-section .source { font-size: 0.8rem; color: var(--md-muted); margin: 0; }
.doc-section .source code { font-size: 0.8rem; }
code { font-family: var(--md-mono); font-size: 0.86em; background: var(--md-code-bg); padding: 0.1em 0.3em; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: var(--md-code-bg); padding: 0.8rem 1rem; border-radius: 6px; overflow: auto; }
pre code { background: none; padding: 0; }
.table-wrap { overflow-x: auto; margin: 0.8rem 0; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid var(--md-border); padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f7f8fa; }
blockquote { margin: 0.8rem 0; padding: 0.2rem 1rem; border-left: 3px solid var(--md-border); color: var(--md-muted); }
.reference-intro { max-width: 84rem; margin: 0 auto; padding: 0.5rem 2rem 0; }
.reference-intro h2 { font-size: 1.6rem; margin: 0.5rem 0; }
.reference-intro p { margin: 0.2rem 0 1rem; color: var(--md-muted); }
#reference-app { border-top: 1px solid var(--md-border); min-height: 30rem; }
@media (max-width: 52rem) {
  .guide { grid-template-columns: minmax(0, 1fr); gap: 1rem; padding: 1rem; }
  .toc { position: static; max-height: none; }
  .site-header, .reference-intro { padding-left: 1rem; padding-right: 1rem; }
}
`

interface RenderedSection {
  readonly section: string
  readonly title: string
  readonly html: string
}

const titleOf = (markdown: string, fallback: string): string => {
  const first = /^#[ \t]+(.+)$/m.exec(markdown)
  return first === null ? fallback : (first[1] as string).replace(/`/g, "")
}

/** The page's HTML, for the operations that answer today and the default rate-limit policy. */
export const docsPageHtml = (implemented: ReadonlySet<string>, rateLimitPerMinute: number): string => {
  const ids = new Set<string>(["guide", "reference", "reference-app", "contents"])
  const context = { implemented, rateLimitPerMinute, basePath: BASE_PATH }
  const renderer = makeMarkdown()
  const sections: Array<RenderedSection> = DocsSections.map((section) => {
    const markdown = renderDocs(section, context)
    const id = `docs-${section}`
    ids.add(id)
    return {
      section,
      title: titleOf(markdown, section),
      html: markdownToHtml(markdown, { idPrefix: `${id}-`, ids }, renderer)
    }
  })
  const toc = sections
    .map(
      (s) =>
        `<li><a href="#docs-${s.section}">${escapeHtml(s.title)} <span class="section-name">${escapeHtml(s.section)}</span></a></li>`
    )
    .join("")
  const body = sections
    .map(
      (s) =>
        `<section class="doc-section" id="docs-${s.section}" data-section="${s.section}">` +
        `<p class="source"><code>GET ${BASE_PATH}/docs?section=${s.section}</code></p>\n${s.html}</section>`
    )
    .join("\n")
  const answering = Operations.filter((o) => implemented.has(o.name)).length
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="${escapeHtml(SERVICE_NAME)}: documentation and interactive API reference">
<title>${escapeHtml(SERVICE_NAME)} ${SERVICE_VERSION}: docs and API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${PAGE_STYLE_PATH}">
</head>
<body>
<header class="site-header">
<h1>${escapeHtml(SERVICE_NAME)} <span class="version">v${SERVICE_VERSION}</span></h1>
<nav><a href="#guide">Guide</a><a href="#reference">API reference</a><a href="${BASE_PATH}/openapi.json">OpenAPI document</a><a href="${BASE_PATH}">Root document</a></nav>
</header>
<div class="guide" id="guide">
<nav class="toc" id="contents" aria-label="Sections"><h2>Sections</h2><ol>${toc}</ol></nav>
<main>
${body}
</main>
</div>
<section class="reference-intro" id="reference">
<h2>API reference</h2>
<p>${Operations.length} operations (${answering} answering today), generated from <a href="${BASE_PATH}/openapi.json"><code>GET ${BASE_PATH}/openapi.json</code></a>. Try a request from this page: <code>docs</code> and <code>schema</code> need no key; for the others, enter your key (<code>mdk_…</code>) as the Bearer token under Authentication. Requests from here are real: paid operations spend credits.</p>
</section>
<div id="reference-app"></div>
<script src="${SCALAR_ASSET_PATH}"></script>
<script src="${PAGE_SCRIPT_PATH}"></script>
</body>
</html>
`
}

// ---------------------------------------------------------------------------------------------------------
// Serving.
// ---------------------------------------------------------------------------------------------------------

interface Asset {
  readonly body: Uint8Array
  readonly gzipped: Uint8Array
  /** Strong ETag of the identity representation (the core's `etagOf`). */
  readonly etag: string
  /** The gzip representation's: the same with a `-gz` suffix. */
  readonly gzipEtag: string
  readonly contentType: string
  readonly cacheControl: string
}

const makeAsset = (
  text: string,
  contentType: string,
  cacheControl: string
): Effect.Effect<Asset, never, Digest.Digest> =>
  Effect.suspend(() => {
    const body = new TextEncoder().encode(text)
    return Effect.zipWith(
      etagOf(text),
      Effect.promise(() => promisify(gzip)(body)),
      (etag, gzipped): Asset => ({
        body,
        gzipped: new Uint8Array(gzipped),
        etag,
        gzipEtag: `${etag.slice(0, -1)}-gz"`,
        contentType,
        cacheControl
      })
    )
  })

/** Scalar's standalone browser bundle, from the installed package (read and compressed once per server). */
const scalarBundlePath = (): string => {
  const entry = createRequire(import.meta.url).resolve("@scalar/api-reference")
  return join(dirname(entry), "browser", "standalone.js")
}

/**
 * Scalar's built-in `@font-face` rules load Inter and JetBrains Mono from fonts.scalar.com. The reference honours
 * `withDefaultFonts: false`, but its API client modal (the try-it console, 1.72.1) injects them regardless, and
 * the machines this runs on have no internet while the page's CSP allows fonts from this origin only. The rules
 * are dropped from the bundle as served (the page sets system fonts through `--scalar-font`); the browser test
 * fails on any request leaving the origin, so a Scalar upgrade that moves them is caught.
 */
const SCALAR_REMOTE_FONTS = /\/\* Inter \(--scalar-font\) \*\/[^`]*?(?=`)/

const scalarAsset = Effect.flatMap(
  Effect.promise(() => readFile(scalarBundlePath(), "utf8")),
  (text) =>
    makeAsset(
      text.replace(SCALAR_REMOTE_FONTS, "").replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"),
      "text/javascript; charset=utf-8",
      "public, max-age=3600"
    )
)

/** How each asset path is built (once per docs page, on its first request). */
const ASSETS: Readonly<Record<string, Effect.Effect<Asset, never, Digest.Digest>>> = {
  [SCALAR_ASSET_PATH]: scalarAsset,
  [PAGE_SCRIPT_PATH]: makeAsset(PAGE_SCRIPT, "text/javascript; charset=utf-8", "public, max-age=300"),
  [PAGE_STYLE_PATH]: makeAsset(PAGE_STYLE, "text/css; charset=utf-8", "public, max-age=300")
}

/** Whether the docs page answers this path (compared, not looked up: every request asks). */
export const isDocsPagePath = (path: string): boolean =>
  path === DOCS_PAGE_PATH || path === SCALAR_ASSET_PATH || path === PAGE_SCRIPT_PATH || path === PAGE_STYLE_PATH

const acceptsGzip = (header: string | undefined): boolean =>
  (header ?? "").split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    return (coding === "gzip" || coding === "*") && (q === undefined || Number(q.slice(2)) > 0)
  })

/** What the docs page reads of a request. */
export interface DocsPageRequest {
  readonly method: string
  readonly acceptEncoding: string | undefined
  readonly ifNoneMatch: string | undefined
}

const respond = (asset: Asset, request: DocsPageRequest): WireResponse => {
  const gz = acceptsGzip(request.acceptEncoding)
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    etag: gz ? asset.gzipEtag : asset.etag,
    "cache-control": asset.cacheControl,
    vary: "Accept-Encoding"
  }
  // Either representation's tag names the same content (If-None-Match compares weakly).
  if (ifNoneMatchMatches(request.ifNoneMatch, asset.etag) || ifNoneMatchMatches(request.ifNoneMatch, asset.gzipEtag))
    return { status: 304, headers }
  if (gz) headers["content-encoding"] = "gzip"
  headers["content-type"] = asset.contentType
  // A HEAD's body is not sent: the transport writes its length alone.
  return { status: 200, headers, body: gz ? asset.gzipped : asset.body }
}

/** The memo a docs page keeps its built assets in. */
interface Memo<K> {
  get(key: K): Promise<Asset> | undefined
  set(key: K, asset: Promise<Asset>): unknown
  delete(key: K): unknown
}

/** `make`'s asset, built once while `memo` holds it; a failed build (the bundle unreadable) is tried again. */
const remember = <K>(
  memo: Memo<K>,
  key: K,
  make: Effect.Effect<Asset, never, Digest.Digest>
): Effect.Effect<Asset, never, Digest.Digest> =>
  Effect.flatMap(Effect.context<Digest.Digest>(), (context) =>
    Effect.promise(() => {
      let asset = memo.get(key)
      if (asset === undefined) {
        const building = Effect.runPromise(Effect.provide(make, context))
        memo.set(key, building)
        building.catch(() => memo.delete(key))
        asset = building
      }
      return asset
    })
  )

/**
 * The docs page of one server: its assets and the page are built on their first request and kept by this value
 * (a second server in the process builds its own). Answers `GET`/`HEAD` on the page and its assets (with
 * `ETag`/`If-None-Match` and gzip); other methods are `405 method_not_allowed` with `Allow: GET, HEAD`, answered
 * by the transport's `errorWire` (passed in, so this module does not import the transport that mounts it).
 */
export const makeDocsPage = (errorWire: (error: ApiError, headers: Record<string, string>) => WireResponse) => {
  const assets = new Map<string, Promise<Asset>>()
  // The page depends only on the handler set and the settings, both fixed for the life of a service.
  const pages = new WeakMap<object, Promise<Asset>>()
  return (
    request: DocsPageRequest,
    path: string
  ): Effect.Effect<WireResponse, never, Handlers | Settings | Digest.Digest> => {
    const method = request.method
    if (method !== "GET" && method !== "HEAD")
      return Effect.succeed(
        errorWire(apiError("method_not_allowed", `${method} is not allowed on ${path}; use GET`), { allow: ALLOWED })
      )
    const make = ASSETS[path]
    const asset =
      make === undefined
        ? Effect.flatMap(Effect.all([Effect.service(Handlers), Effect.service(Settings)]), ([handlers, settings]) =>
            remember(
              pages,
              handlers,
              makeAsset(
                docsPageHtml(new Set(handlers.keys()), settings.rateLimitPerMinute),
                "text/html; charset=utf-8",
                "no-cache"
              )
            )
          )
        : remember(assets, path, make)
    return Effect.map(asset, (a) => respond(a, request))
  }
}
