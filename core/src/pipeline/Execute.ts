/** Running a handler: the one step every path takes to execute an operation. */
import { Cause, Effect } from "effect"
import type { ApiError } from "../Errors.ts"
import { internalError } from "./Answers.ts"
import type { Handler, HandlerInput, HandlerOutput } from "./Types.ts"

/** What running a handler gave: its output, or the error it failed with. */
export type Executed =
  | { readonly _tag: "Output"; readonly out: HandlerOutput }
  | { readonly _tag: "Error"; readonly error: ApiError }

/** Runs a handler, turning a defect into `internal_error` (an interruption stays one). */
export const execute = (handler: Handler, input: HandlerInput): Effect.Effect<Executed> =>
  Effect.matchCauseEffectEager(handler(input), {
    onSuccess: (out) => Effect.succeed({ _tag: "Output" as const, out }),
    onFailure: (cause) => {
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "Some") return Effect.succeed({ _tag: "Error" as const, error: failure.value })
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      return Effect.logError("handler defect", Cause.pretty(cause)).pipe(
        Effect.as({ _tag: "Error" as const, error: internalError() })
      )
    }
  })
