/**
 * How long work reports progress: the shape shared by the CLI (which picks a bar or plain lines, `Cli.ts`) and
 * the commands that report through it (`Ingest.ts`). Its own module so neither imports the other for it.
 */

/** Progress of one piece of long work made of named steps. */
export interface Progress {
  readonly stepDone: (name: string, ms: number) => void
  readonly stop: () => void
}

export type ProgressFactory = (title: string, total: number) => Progress
