/**
 * No module of the core holds mutable state: what a request path remembers belongs to the instance that owns it
 * (a plane's state, a universe, a handler, the `RequestCaches` service), so two service instances in one process
 * never share it. Checked on the syntax trees and types the TypeScript compiler gives for `core/src`:
 * - every module-level binding is `const`, and no module runs a statement for its effect at load;
 * - no module-level value is a stateful instance: no `new` of anything but a `ReadonlyMap`/`ReadonlySet` built
 *   from constant data, no call of a `make*` builder (the project's name for "builds something with state"),
 *   no immediately-invoked function unless what it returns is typed read-only;
 * - array literals at module level are read-only (`as const` or a read-only type), and no module-level value has
 *   a mutable collection type (`Map`, `Set`, `WeakMap`, `T[]`, typed arrays, `BoundedCache`, ...);
 * - nothing in a module writes to one of its module-level bindings (assignment, `++`, `delete`, or a mutating
 *   method such as `set`, `push` or `sort` on it or on anything reached through it);
 * - a class's static properties are `readonly`.
 * Exceptions are listed below with their reason; an entry that no longer occurs fails here too.
 */
import { readdirSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import * as ts from "typescript/unstable/ast"
import { API, type Checker, type Project, SignatureKind } from "typescript/unstable/sync"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = resolve(import.meta.dirname, "..", "..")
const SRC = join(ROOT, "core", "src")

/** `file:name` of module-level values that break a rule on purpose, and why. */
const ALLOWED: Record<string, string> = {}

const { SyntaxKind, NodeFlags } = ts

const MUTATING_METHODS = new Set([
  "set",
  "add",
  "delete",
  "clear",
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin"
])

/**
 * Types a module-level value must not have: collections and caches that can be changed in place (read-only
 * arrays, `readonly T[]`, and function types are fine).
 */
const MUTABLE_TYPE =
  /^(Map|Set|WeakMap|WeakSet|WeakRef|Array|BoundedCache|Record)<|\[\]$|^(Int8|Uint8|Uint8Clamped|Int16|Uint16|Int32|Uint32|Float32|Float64|BigInt64|BigUint64)Array\b|^(ArrayBuffer|SharedArrayBuffer|DataView)\b/

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

/** The expression under `as`, `satisfies`, `!` and parentheses, and whether it was cast `as const`. */
const unwrap = (e: ts.Expression): { readonly expr: ts.Expression; readonly asConst: boolean } => {
  let asConst = false
  let x: ts.Expression = e
  for (;;) {
    if (ts.isAsExpression(x)) {
      if (x.type.kind === SyntaxKind.TypeReference && x.type.getText() === "const") asConst = true
      x = x.expression
    } else if (ts.isSatisfiesExpression(x) || ts.isParenthesizedExpression(x) || ts.isNonNullExpression(x)) {
      x = x.expression
    } else return { expr: x, asConst }
  }
}

/** The identifier a property or element access chain starts from (`a` in `a.b[c].d`), if any. */
const rootOf = (e: ts.Expression): ts.Identifier | undefined => {
  let x: ts.Expression = e
  for (;;) {
    if (ts.isPropertyAccessExpression(x) || ts.isElementAccessExpression(x)) x = x.expression
    else if (ts.isParenthesizedExpression(x) || ts.isNonNullExpression(x)) x = x.expression
    else return ts.isIdentifier(x) ? x : undefined
  }
}

const isReadonlyTypeText = (t: string): boolean => /^(Readonly|readonly\s)/.test(t)

const bindingNames = (name: ts.BindingName): Array<ts.Identifier> =>
  ts.isIdentifier(name)
    ? [name]
    : name.elements.flatMap((el) => (ts.isOmittedExpression(el) || el.name === undefined ? [] : bindingNames(el.name)))

interface Finding {
  readonly key: string
  readonly what: string
}

/** The findings of one source file. */
const inspect = (project: Project, checker: Checker, file: string): Array<Finding> => {
  const sf = project.program.getSourceFile(file)
  if (sf === undefined) throw new Error(`${file} is not in the core's program`)
  const rel = relative(SRC, file).split("\\").join("/")
  const out: Array<Finding> = []
  const found = (name: string, what: string) => out.push({ key: `${rel}:${name}`, what })
  const moduleNames: Array<ts.Identifier> = []

  for (const st of sf.statements) {
    if (ts.isVariableStatement(st)) {
      const isConst = (st.declarationList.flags & NodeFlags.Const) !== 0
      for (const d of st.declarationList.declarations) {
        const names = bindingNames(d.name)
        moduleNames.push(...names)
        const name = names.map((n) => n.text).join(",")
        if (!isConst) found(name, "is a `let` or `var` at module scope")
        if (d.initializer === undefined) continue
        const declared = d.type?.getText() ?? ""
        const { expr, asConst } = unwrap(d.initializer)
        if (ts.isNewExpression(expr)) {
          const ctor = expr.expression.getText()
          const readonlyCollection =
            (ctor === "Map" && declared.startsWith("ReadonlyMap<")) ||
            (ctor === "Set" && declared.startsWith("ReadonlySet<"))
          if (!readonlyCollection) found(name, `is \`new ${ctor}\` at module scope`)
        } else if (ts.isArrayLiteralExpression(expr)) {
          if (!asConst && !isReadonlyTypeText(declared)) found(name, "is an array literal without a read-only type")
        } else if (ts.isCallExpression(expr)) {
          const callee = unwrap(expr.expression).expr
          if (ts.isIdentifier(callee) && /^make[A-Z]/.test(callee.text))
            found(name, `is built by \`${callee.text}\` at module scope`)
          if ((ts.isArrowFunction(callee) || ts.isFunctionExpression(callee)) && !isReadonlyTypeText(declared))
            found(name, "is an immediately-invoked function whose result is not typed read-only")
        }
      }
    } else if (ts.isExpressionStatement(st)) {
      found(`line ${sf.getLineAndCharacterOfPosition(st.getStart()).line + 1}`, "runs a statement at module load")
    } else if (ts.isClassDeclaration(st)) {
      if (st.name !== undefined) moduleNames.push(st.name)
      for (const m of st.members) {
        const modifiers = (m as { readonly modifiers?: ReadonlyArray<ts.Node> }).modifiers ?? []
        const isStatic = modifiers.some((x) => x.kind === SyntaxKind.StaticKeyword)
        if (ts.isClassStaticBlockDeclaration(m)) found(st.name?.text ?? "class", "has a static block")
        if (isStatic && ts.isPropertyDeclaration(m) && !modifiers.some((x) => x.kind === SyntaxKind.ReadonlyKeyword))
          found(`${st.name?.text}.${m.name.getText()}`, "is a static property that is not readonly")
      }
    } else if (ts.isFunctionDeclaration(st) && st.name !== undefined) {
      moduleNames.push(st.name)
    }
  }

  // Types of module-level values: no mutable collection, however it was built.
  const symbols = checker.getSymbolAtLocation(moduleNames)
  const types = checker.getTypeOfSymbol(symbols.filter((s) => s !== undefined))
  let t = 0
  moduleNames.forEach((n, i) => {
    if (symbols[i] === undefined) return
    const type = types[t++]
    if (type === undefined) return
    const text = checker.typeToString(type)
    if (/^(readonly |typeof )/.test(text) || !MUTABLE_TYPE.test(text)) return
    // A function's type names what it returns; a function holds nothing.
    if (checker.getSignaturesOfType(type, SignatureKind.Call).length > 0) return
    found(n.text, `has the mutable type ${text}`)
  })

  // Writes to module-level bindings anywhere in the module, resolved by symbol (a local of the same name is not one).
  const byName = new Set(moduleNames.map((n) => n.text))
  const writes: Array<{ readonly root: ts.Identifier; readonly node: ts.Node }> = []
  const visit = (n: ts.Node): void => {
    let target: ts.Expression | undefined
    if (ts.isBinaryExpression(n) && n.operatorToken.kind >= SyntaxKind.FirstAssignment) {
      if (n.operatorToken.kind <= SyntaxKind.LastAssignment) target = n.left
    } else if (
      (ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) &&
      (n.operator === SyntaxKind.PlusPlusToken || n.operator === SyntaxKind.MinusMinusToken)
    ) {
      target = n.operand
    } else if (ts.isDeleteExpression(n)) {
      target = n.expression
    } else if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      MUTATING_METHODS.has(n.expression.name.text)
    ) {
      target = n.expression.expression
    }
    const root = target === undefined ? undefined : rootOf(target)
    if (root !== undefined && byName.has(root.text)) writes.push({ root, node: n })
    n.forEachChild(visit)
  }
  sf.forEachChild(visit)
  if (writes.length > 0) {
    const moduleIds = new Set(symbols.flatMap((s) => (s === undefined ? [] : [s.id])))
    const resolved = checker.getSymbolAtLocation(writes.map((w) => w.root))
    writes.forEach((w, i) => {
      const s = resolved[i]
      if (s !== undefined && moduleIds.has(s.id)) found(w.root.text, `is written: \`${w.node.getText().slice(0, 60)}\``)
    })
  }
  return out
}

let api: API | undefined
let findings: Array<Finding> = []

beforeAll(() => {
  api = new API({ cwd: ROOT })
  const config = join(ROOT, "core", "tsconfig.build.json")
  const snapshot = api.updateSnapshot({ openProjects: [config] })
  const project = snapshot.getProject(config)
  if (project === undefined) throw new Error("the core's tsconfig did not open")
  findings = sources(SRC).flatMap((f) => inspect(project, project.checker, f))
}, 60_000)

afterAll(() => api?.close())

describe("module-level state in core/src", () => {
  it("finds none but the listed exceptions", () => {
    const unlisted = findings.filter((f) => ALLOWED[f.key] === undefined).map((f) => `${f.key} ${f.what}`)
    expect(unlisted).toEqual([])
  })

  it("lists no exception that no longer occurs", () => {
    const stale = Object.keys(ALLOWED).filter((k) => !findings.some((f) => f.key === k))
    expect(stale).toEqual([])
  })
})
