/**
 * The request pipeline, one for every transport (HTTP, MCP, the in-process library). Read it top to bottom from
 * `Handle.ts`; each path has its own file.
 */
export {
  CREDITS_CHARGED_HEADER,
  creditsChargedOf,
  creditsHeaderOf,
  statusOf,
  storedAnswerOf
} from "./Answers.ts"
export { etagOf, ifNoneMatchMatches, rememberedEtag } from "./Conditional.ts"
export { handle, PipelineObserver, type PipelineObserverShape } from "./Handle.ts"
export { type Admission, type Admitted, admitKeyless } from "./Keyless.ts"
export {
  type Answer,
  type ApiRequest,
  type Handler,
  type HandlerInput,
  type HandlerOutput,
  Handlers,
  type Outcome,
  type PipelineServices,
  type Principal,
  Settings,
  type StorePorts
} from "./Types.ts"
