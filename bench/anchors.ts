/**
 * Anchor servers for the benchmark: `bare` answers a small JSON body; `write` does one PostgreSQL
 * `UPDATE ... RETURNING` per request (the physical cost of one durable write). Prints its URL when ready.
 */
import * as http from "node:http"
import pg from "pg"

const kind = process.argv[2]
const body = JSON.stringify({ data: { asset_id: "crypto:bitcoin", usd: 97000.5, status: "live" } })

const start = async () => {
  let handler: (res: http.ServerResponse) => void
  if (kind === "write") {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
    await pool.query("create table if not exists bench_anchor (id int primary key, n bigint not null)")
    await pool.query("insert into bench_anchor values (1, 0) on conflict do nothing")
    handler = (res) => {
      pool.query("update bench_anchor set n = n + 1 where id = 1 returning n").then(
        (r) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ data: { n: Number(r.rows[0].n) } }))
        },
        () => {
          res.writeHead(503)
          res.end()
        }
      )
    }
  } else {
    handler = (res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(body)
    }
  }
  const server = http.createServer((_req, res) => handler(res))
  server.listen(0, "127.0.0.1", () => {
    const a = server.address() as { port: number }
    process.stdout.write(`anchor listening on http://127.0.0.1:${a.port}\n`)
  })
  process.on("SIGTERM", () => server.close(() => process.exit(0)))
}
void start()
