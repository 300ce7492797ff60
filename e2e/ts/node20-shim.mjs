// Lets @modelcontextprotocol/conformance run on Node 20 without another
// runtime: it imports `globSync` from "fs" (Node 22+) and uses it only as
// globSync("**/checks.json", {cwd}). A module loader hook rewrites that
// import to the small implementation below; nothing else is changed.
// Use: node --import ./node20-shim.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js …
import { register } from 'node:module';
import * as fs from 'node:fs';

if (typeof fs.globSync !== 'function') {
  register('./node20-hooks.mjs', import.meta.url);
}
