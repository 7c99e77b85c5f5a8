/**
 * The child process that writes a new kept history's segments (see `Apart.ts`): receives one `ApartJob` over
 * IPC, writes each asset's segment and reports it (`{ done: index }`), then disconnects and exits. It stops
 * between two assets once its parent is gone (the IPC channel closed), so it never outlives the start.
 */
import { type ApartJob, writeSegmentsApart } from "./Apart.ts"

const report = (index: number): Promise<boolean> =>
  new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve(false)
    // The callback runs once the message is handed to the channel: one turn of the event loop per asset, so a
    // disconnect is noticed.
    process.send({ done: index }, undefined, {}, (error) => resolve(error === null || error === undefined))
  })

process.once("message", (job: ApartJob) => {
  writeSegmentsApart(job, report).then(
    () => {
      // Its CPU time, for the parent's log line; then the channel closes and the process ends.
      const cpu = process.cpuUsage()
      if (process.send !== undefined && process.connected) {
        process.send({ cpuMs: (cpu.user + cpu.system) / 1000 }, undefined, {}, () => {
          if (process.connected) process.disconnect()
        })
      }
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
      process.exitCode = 1
      if (process.connected) process.disconnect()
    }
  )
})
