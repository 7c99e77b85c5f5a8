#!/usr/bin/env bash
# A first session with the service, using curl only. Start a server first, for example:
#   MARKET_DATA_BOOTSTRAP_KEY=mdk_0123456789abcdefghijklmnopqrstuv MARKET_DATA_BOOTSTRAP_CREDITS=100 npm start
# then run:  BASE=http://127.0.0.1:8080 KEY=mdk_0123456789abcdefghijklmnopqrstuv examples/curl-walkthrough.sh
set -euo pipefail
BASE="${BASE:-http://127.0.0.1:8080}"
KEY="${KEY:?set KEY to an API key (mdk_...)}"

step() { printf '\n== %s\n' "$*"; }
# Fetch whole bodies, then trim: piping curl into head would fail the script (pipefail) when head stops early.
get() { curl -sS --fail "$@"; }

step "The root document: every operation, its auth class and price (no key needed)"
root=$(get "$BASE/api/v1")
echo "${root:0:600}"

step "The quickstart, as markdown written for agents"
quickstart=$(get "$BASE/api/v1/docs?section=quickstart")
printf '%s\n' "$quickstart" | sed -n 1,20p

step "What funding takes and costs"
schema=$(get "$BASE/api/v1/schema?resource=funding")
echo "${schema:0:600}"

step "Your credits and rate-limit window"
curl -sS --fail -H "Authorization: Bearer $KEY" "$BASE/api/v1/usage"; echo

step "A bad parameter gets a typed error naming it"
status=$(curl -sS -o /tmp/market-data-walkthrough.json -w '%{http_code}' -H "Authorization: Bearer $KEY" "$BASE/api/v1/series?id=crypto:bitcoin&view=summary&limit=5")
echo "HTTP $status: $(cat /tmp/market-data-walkthrough.json)"
test "$status" = 400
