/**
 * XML for the SEC's documents, read with `fast-xml-parser`. The document is validated first (the parser alone
 * accepts unclosed tags), then parsed with every element as an array (no guessing whether a tag repeats), every
 * value as its text (no number conversion: `8.88` and `200000.0` stay what was written), namespace prefixes
 * removed (`com:street1`, `n1:infoTable` read as `street1`, `infoTable`) and attributes kept under `@_`.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser"
import { problem } from "./ExactJson.ts"

/** An element: its child elements (always arrays), attributes (`@_name`) and text (`#text`). */
export type XmlElement = { readonly [name: string]: unknown }

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  isArray: (_name, _path, _isLeaf, isAttribute) => !isAttribute
})

/**
 * Parses an XML document and returns its root element, which must be named `rootName`. Leading whitespace (and a
 * byte-order mark) before the declaration is dropped: EDGAR serves 13F information tables with a blank line before
 * `<?xml`, which strict XML forbids. Throws `FormatProblem`.
 */
export const parseXmlRoot = (text: string, rootName: string): XmlElement => {
  const body = text.replace(/^\uFEFF?\s+/, "")
  const verdict = XMLValidator.validate(body)
  if (verdict !== true) {
    const where =
      verdict.err.col === undefined ? `line ${verdict.err.line}` : `line ${verdict.err.line}, column ${verdict.err.col}`
    return problem(`<${rootName}>`, `not well-formed XML at ${where}: ${verdict.err.msg}`)
  }
  // The validator passes a few documents the parser still rejects (a damaged declaration): same answer.
  let document: XmlElement
  try {
    document = parser.parse(body) as XmlElement
  } catch (error) {
    return problem(`<${rootName}>`, `not well-formed XML: ${error instanceof Error ? error.message : String(error)}`)
  }
  const roots = document[rootName]
  if (!Array.isArray(roots) || roots.length !== 1) {
    const found = Object.keys(document).filter((key) => !key.startsWith("@_") && key !== "#text")
    return problem(
      `<${rootName}>`,
      `expected a <${rootName}> document, found ${found.length === 0 ? "no element" : found.map((k) => `<${k}>`).join(", ")}`
    )
  }
  return asElement(roots[0], rootName)
}

/** An element's content as an element (a text-only or empty element has no children). */
const asElement = (value: unknown, path: string): XmlElement =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as XmlElement)
    : typeof value === "string"
      ? value === ""
        ? {}
        : { "#text": value }
      : problem(path, "expected an element")

/** The child elements named `name`, in document order. */
export const children = (parent: XmlElement, name: string, path: string): ReadonlyArray<XmlElement> => {
  const value = parent[name]
  if (value === undefined) return []
  return (Array.isArray(value) ? value : [value]).map((item, i) => asElement(item, `${path}/${name}[${i + 1}]`))
}

/** The first child element named `name`, or undefined. */
export const child = (parent: XmlElement, name: string, path: string): XmlElement | undefined =>
  children(parent, name, path)[0]

/** The first child element named `name`, which must exist. */
export const requiredChild = (parent: XmlElement, name: string, path: string): XmlElement =>
  child(parent, name, path) ?? problem(`${path}/${name}`, "missing")

/** An element's own text, trimmed, or null when it has none. */
export const ownText = (element: XmlElement | undefined): string | null => {
  if (element === undefined) return null
  const text = element["#text"]
  if (typeof text !== "string") return null
  const trimmed = text.trim()
  return trimmed === "" ? null : trimmed
}

/** The text of the first child named `name`, or null when the child is absent or empty. */
export const childText = (parent: XmlElement, name: string, path: string): string | null =>
  ownText(child(parent, name, path))

/** The text of the first child named `name`, which must be present and non-empty. */
export const requiredText = (parent: XmlElement, name: string, path: string): string =>
  childText(parent, name, path) ?? problem(`${path}/${name}`, "missing or empty")

/** The value of an attribute, or null. */
export const attribute = (element: XmlElement, name: string): string | null => {
  const value = element[`@_${name}`]
  return typeof value === "string" ? value : null
}

/** Every descendant element named `name` (depth first, document order within each parent). */
export const descendants = (element: XmlElement, name: string): ReadonlyArray<XmlElement> => {
  const found: Array<XmlElement> = []
  const walk = (node: XmlElement): void => {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith("@_") || key === "#text" || !Array.isArray(value)) continue
      for (const item of value) {
        if (typeof item !== "object" || item === null) {
          if (key === name && typeof item === "string") found.push(item === "" ? {} : { "#text": item })
          continue
        }
        if (key === name) found.push(item as XmlElement)
        walk(item as XmlElement)
      }
    }
  }
  walk(element)
  return found
}

/** The name of a document's root element (namespace prefix removed), or null when the text is not XML. */
export const xmlRootName = (text: string): string | null => {
  const body = text.replace(/^\uFEFF?\s+/, "")
  if (XMLValidator.validate(body) !== true) return null
  try {
    const document = parser.parse(body) as XmlElement
    return Object.keys(document).find((key) => !key.startsWith("@_") && key !== "#text") ?? null
  } catch {
    return null
  }
}
