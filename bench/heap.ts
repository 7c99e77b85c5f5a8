/**
 * `node bench/heap.ts <file.heapsnapshot> [top]`: what a V8 heap snapshot holds, for finding what dominates the
 * server's heap. Not part of `npm run bench`.
 *
 * Take the snapshot from a running server started with `--heapsnapshot-signal=SIGUSR2` (`kill -USR2 <pid>`; the
 * file lands in the working directory, or `--diagnostic-dir`). Prints the heap's total, the self size by
 * constructor, and the self size by retainer path (each object named by its constructor and the property it is
 * held under, three levels up its first strong retainer), which is where the arrays of numbers show up as
 * `SortedWindow.sorted > Array > (array backing)` and the like.
 */
import { readFileSync } from "node:fs"

const file = process.argv[2]
if (file === undefined) {
  console.error("usage: node bench/heap.ts <file.heapsnapshot> [top]")
  process.exit(2)
}
const top = Number(process.argv[3] ?? 30)
const depthLimit = Number(process.argv[4] ?? 3)

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: ReadonlyArray<string>
      readonly node_types: ReadonlyArray<ReadonlyArray<string> | string>
      readonly edge_fields: ReadonlyArray<string>
      readonly edge_types: ReadonlyArray<ReadonlyArray<string> | string>
    }
    readonly node_count: number
  }
  readonly nodes: ReadonlyArray<number>
  readonly edges: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot
const meta = snap.snapshot.meta
const nf = meta.node_fields.length
const ef = meta.edge_fields.length
const nodeTypes = meta.node_types[0] as ReadonlyArray<string>
const edgeTypes = meta.edge_types[0] as ReadonlyArray<string>
const N = snap.nodes.length / nf
const iType = meta.node_fields.indexOf("type")
const iName = meta.node_fields.indexOf("name")
const iSelf = meta.node_fields.indexOf("self_size")
const iEdges = meta.node_fields.indexOf("edge_count")
const eType = meta.edge_fields.indexOf("type")
const eName = meta.edge_fields.indexOf("name_or_index")
const eTo = meta.edge_fields.indexOf("to_node")
const weak = edgeTypes.indexOf("weak")
const shortcut = edgeTypes.indexOf("shortcut")
const elementEdge = edgeTypes.indexOf("element")
const hiddenEdge = edgeTypes.indexOf("hidden")

const nodes = snap.nodes
const edges = snap.edges
const typeOf = (n: number) => nodeTypes[nodes[n * nf + iType] as number] as string
const self = (n: number) => nodes[n * nf + iSelf] as number
const label = (n: number): string => {
  const t = typeOf(n)
  const name = snap.strings[nodes[n * nf + iName] as number] ?? "?"
  if (t === "object" || t === "native" || t === "closure") return name.length > 40 ? `${name.slice(0, 40)}...` : name
  if (t === "hidden" || t === "array") return `(${name.length > 30 ? name.slice(0, 30) : name})`
  return `(${t})`
}

// The first strong retainer of each node, and the edge name it is held under.
const retainer = new Int32Array(N).fill(-1)
const retainerEdge = new Array<string>(N)
let edgeIndex = 0
for (let n = 0; n < N; n++) {
  const count = nodes[n * nf + iEdges] as number
  for (let k = 0; k < count; k++, edgeIndex += ef) {
    const type = edges[edgeIndex + eType] as number
    if (type === weak || type === shortcut) continue
    const to = (edges[edgeIndex + eTo] as number) / nf
    if (retainer[to] !== -1) continue
    retainer[to] = n
    const name = edges[edgeIndex + eName] as number
    retainerEdge[to] = type === elementEdge || type === hiddenEdge ? "[]" : (snap.strings[name] ?? "?")
  }
}

let total = 0
const byCtor = new Map<string, { size: number; count: number }>()
const byPath = new Map<string, { size: number; count: number }>()
const add = (m: Map<string, { size: number; count: number }>, k: string, size: number) => {
  const e = m.get(k)
  if (e === undefined) m.set(k, { size, count: 1 })
  else {
    e.size += size
    e.count++
  }
}
for (let n = 0; n < N; n++) {
  const size = self(n)
  total += size
  add(byCtor, label(n), size)
  const parts: Array<string> = [label(n)]
  let at = n
  for (let depth = 0; depth < depthLimit; depth++) {
    const up = retainer[at] as number
    if (up < 0) break
    parts.unshift(`${label(up)}.${retainerEdge[at]}`)
    at = up
  }
  add(byPath, parts.join(" > "), size)
}

// `HEAP_HOLDERS=a,b,c`: self size by the nearest of these property names up each node's retainer chain (say
// `baselines,timeframes,results,cols`), to see which cache holds how much.
const holders = (process.env.HEAP_HOLDERS ?? "").split(",").filter((x) => x !== "")
const byHolder = new Map<string, { size: number; count: number }>()
if (holders.length > 0) {
  for (let n = 0; n < N; n++) {
    let at = n
    let found = "(none)"
    for (let depth = 0; depth < 16 && at >= 0; depth++) {
      const edge = retainerEdge[at]
      if (edge !== undefined && holders.includes(edge)) {
        found = `${label(retainer[at] as number)}.${edge}`
        break
      }
      at = retainer[at] as number
    }
    add(byHolder, found, self(n))
  }
}

const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`
const print = (title: string, m: Map<string, { size: number; count: number }>) => {
  console.log(`\n${title}`)
  for (const [k, v] of [...m].sort((a, b) => b[1].size - a[1].size).slice(0, top)) {
    console.log(`${mb(v.size).padStart(10)}  ${String(v.count).padStart(9)}  ${k}`)
  }
}
console.log(`${N} nodes, ${mb(total)} in all`)
print("self size by constructor", byCtor)
print("self size by retainer path", byPath)
if (holders.length > 0) print("self size by holder", byHolder)
