/**
 * The request pipeline: its steps live in `pipeline/` (start at `pipeline/Handle.ts`); this module keeps the
 * import path every plane and transport uses.
 */
export * from "./pipeline/index.ts"
