/**
 * A minimal zip writer for tests and the bench (never the service): deflated entries (`node:zlib`), local headers,
 * a central directory and its end record, written entry by entry to a file, so an archive of thousands of entries
 * never sits in memory. No zip64: under 65,535 entries and 4 GB. Faults on request: a wrong CRC-32 in the headers,
 * or the deflated data cut short.
 */
import { closeSync, openSync, writeSync } from "node:fs"
import { crc32, deflateRawSync } from "node:zlib"

export interface ZipEntryOptions {
  /** Write this CRC-32 instead of the data's (a corrupt entry). */
  readonly crc32?: number
  /** Keep only this fraction of the deflated data (a truncated entry); the headers describe what is kept. */
  readonly truncateTo?: number
}

const DOS_TIME = 0
const DOS_DATE = ((2026 - 1980) << 9) | (11 << 5) | 25

export class ZipWriter {
  private readonly fd: number
  private offset = 0
  private readonly central: Array<Buffer> = []
  private count = 0

  constructor(path: string) {
    this.fd = openSync(path, "w")
  }

  private write(b: Buffer) {
    writeSync(this.fd, b)
    this.offset += b.length
  }

  add(name: string, data: Buffer | string, options: ZipEntryOptions = {}): void {
    const raw = typeof data === "string" ? Buffer.from(data, "utf8") : data
    const crc = options.crc32 ?? crc32(raw)
    let deflated = deflateRawSync(raw)
    if (options.truncateTo !== undefined)
      deflated = deflated.subarray(0, Math.floor(deflated.length * options.truncateTo))
    const nameBytes = Buffer.from(name, "utf8")
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(0x0800, 6) // UTF-8 names
    local.writeUInt16LE(8, 8)
    local.writeUInt16LE(DOS_TIME, 10)
    local.writeUInt16LE(DOS_DATE, 12)
    local.writeUInt32LE(crc >>> 0, 14)
    local.writeUInt32LE(deflated.length, 18)
    local.writeUInt32LE(raw.length, 22)
    local.writeUInt16LE(nameBytes.length, 26)
    local.writeUInt16LE(0, 28)
    const at = this.offset
    this.write(local)
    this.write(nameBytes)
    this.write(deflated)
    const cd = Buffer.alloc(46)
    cd.writeUInt32LE(0x02014b50, 0)
    cd.writeUInt16LE(20, 4)
    cd.writeUInt16LE(20, 6)
    cd.writeUInt16LE(0x0800, 8)
    cd.writeUInt16LE(8, 10)
    cd.writeUInt16LE(DOS_TIME, 12)
    cd.writeUInt16LE(DOS_DATE, 14)
    cd.writeUInt32LE(crc >>> 0, 16)
    cd.writeUInt32LE(deflated.length, 20)
    cd.writeUInt32LE(raw.length, 24)
    cd.writeUInt16LE(nameBytes.length, 28)
    cd.writeUInt32LE(at, 42)
    this.central.push(Buffer.concat([cd, nameBytes]))
    this.count++
  }

  /** Writes the central directory and closes the file. Returns the archive's size in bytes. */
  close(): number {
    const start = this.offset
    for (const c of this.central) this.write(c)
    const end = Buffer.alloc(22)
    end.writeUInt32LE(0x06054b50, 0)
    end.writeUInt16LE(this.count, 8)
    end.writeUInt16LE(this.count, 10)
    end.writeUInt32LE(this.offset - start, 12)
    end.writeUInt32LE(start, 16)
    this.write(end)
    closeSync(this.fd)
    return this.offset
  }
}

/** Writes a whole archive at once. */
export const writeZip = (
  path: string,
  entries: ReadonlyArray<{ readonly name: string; readonly data: Buffer | string } & ZipEntryOptions>
): number => {
  const w = new ZipWriter(path)
  for (const e of entries) w.add(e.name, e.data, e)
  return w.close()
}
