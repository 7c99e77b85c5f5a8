#!/usr/bin/env node
// The `market-data` command. Runs on the Node 24 that `npm ci` installs into node_modules/.bin.
import "../src/bin.ts"
