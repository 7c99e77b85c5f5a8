/**
 * The part of the `resolve` docs section that explains how matches are found, scored, ordered and warned
 * about. Rendered from the constants `resolve` itself uses (`ResolveScores`, `SUBSTRING_MIN_CHARACTERS`), so
 * the explanation cannot drift from the ranking. Meant to follow the section's description of parameters
 * and answer shape.
 */
import {
  MAX_COLLISION_WARNINGS,
  MAX_SUGGESTIONS,
  type MatchRule,
  maxSuggestionDistance,
  ResolveScores,
  SUBSTRING_MIN_CHARACTERS
} from "./Resolve.ts"

const RULE_WORDS: { readonly [R in MatchRule]: string } = {
  exact_symbol:
    "the query is the asset's symbol or its canonical ID, or a company's SEC CIK (`320193`, `0000320193` or `CIK0000320193`)",
  exact_name: "the query is the asset's name",
  symbol_prefix: "the symbol starts with the query",
  name_prefix: "the name starts with the query",
  symbol_substring: "the symbol contains the query",
  name_substring: "the name contains the query",
  exact_alias: "the query is one of the asset's aliases (a former name or another ticker)",
  alias_prefix: "an alias starts with the query",
  alias_substring: "an alias contains the query"
}

const rules: ReadonlyArray<MatchRule> = (Object.keys(ResolveScores) as Array<MatchRule>).sort(
  (a, b) => ResolveScores[b] - ResolveScores[a]
)

/** Markdown: matching, scores, order, contested queries and their warnings, `network` and `limit`. */
export const resolveRankingDoc: string = [
  "## How matches are found and ranked",
  "",
  "Matching ignores case, character width and repeated spaces (`btc`, `BTC` and `ＢＴＣ` are one query). Each asset scores by the best rule it meets:",
  "",
  "| score | rule |",
  "|---|---|",
  ...rules.map((r) => `| ${ResolveScores[r]} | ${RULE_WORDS[r]} |`),
  "",
  `Contains-matches need a query of at least ${SUBSTRING_MIN_CHARACTERS} characters. \`matches\` lists the best first; at equal scores, assets with live data come first, then the richer coverage tier (\`core\` and \`full\`, then \`listed_token\` and \`equity\`, then \`contract_token\`, \`prices_only\`, \`discovery_only\`), then crypto before equity, the shorter symbol, and the asset ID. The order is total, so the same query over the same universe always answers the same list. Matching reads an index of each plane's directory (the pairs of adjacent characters of every symbol, name, alias and ID, and each company's CIK), so a query costs about the same at 1,000 crypto and 10,000 equity assets as at 50; it answers exactly what checking every asset against the rules would.`,
  "",
  "## Contested queries",
  "",
  '`best` is the top match only when no other asset has the same score. When several do, the query is contested: `best` is `null` and every match at the top score carries `warnings`, each `{"code", "message", "asset_id"?}`:',
  "",
  "| code | when | `asset_id` |",
  "|---|---|---|",
  `| \`symbol_collision\` | the query is the symbol of more than one asset, such as a token and a covered equity with one ticker, or two tokens sharing a symbol | one warning per other asset with that symbol (at most ${MAX_COLLISION_WARNINGS}) |`,
  `| \`name_collision\` | the query is the name of more than one asset | one warning per other asset with that name (at most ${MAX_COLLISION_WARNINGS}) |`,
  "| `ambiguous_query` | several assets match equally well by prefix, contains or alias | absent |",
  "",
  "Pick the asset you mean by its `asset_id` from `matches` (its `plane`, `tier` and `name` tell them apart), or narrow the query. A dead asset (no live data) that shares a symbol still contests it. Collisions are judged over every match, also those that `limit` leaves out.",
  "",
  "## `network` and `limit`",
  "",
  "`network` keeps only crypto assets that live on that network (compared without case), so equities drop out, and a symbol that is contested across networks can resolve on one. A match shows `network` when `network` was given, or when the asset lives on exactly one network.",
  "",
  "`limit` caps the matches listed per plane (so up to twice `limit` in all); `coverage` counts every match on each plane, so a count above what is listed means the query is broad.",
  "",
  "## Suggestions when nothing matches",
  "",
  `When no asset matches, the answer adds \`suggestions\` (absent otherwise): up to ${MAX_SUGGESTIONS} assets whose symbol, name, one word of the name, or an alias is within a few single-character edits of the query (insertions, deletions, substitutions, adjacent transpositions: ${maxSuggestionDistance(5)} edit for queries up to 5 characters, one more per further 3 characters, at most ${maxSuggestionDistance(1000)}), each \`{"asset_id", "plane", "symbol", "name", "tier", "matched", "distance"}\` with \`matched\` one of \`symbol\`, \`name\`, \`alias\`. Nearest first, then in the order \`matches\` uses. \`network\` filters them too; an empty list means nothing is near. They are never a match: resolve again with the one you mean.`
].join("\n")
