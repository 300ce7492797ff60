// A Claude Desktop style host: the official TypeScript SDK client over
// stdio, no elicitation, a short request timeout; e2e/approval_progress_test.go
// answers the ask on the console after the timeout would have passed.
//
//   node progress.mjs BINARY CONFIG PATH TIMEOUT_MS|default RESET(1|0)
//
// "default" passes no timeout, so the SDK's own default applies (60 s in
// 1.x), as for a host that never sets one. Prints one JSON line: whether the
// call completed, its text, how many progress notifications arrived, the
// milliseconds the call took, or the error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [binary, config, path, timeoutMs, reset] = process.argv.slice(2);
let progress = 0;
let started = 0;
const client = new Client({ name: 'desktop-like-host', version: '0.9' }, { capabilities: {} });
const transport = new StdioClientTransport({ command: binary, args: ['serve', '--config', config], env: process.env, stderr: 'inherit' });
try {
  await client.connect(transport);
  const options = { resetTimeoutOnProgress: reset === '1', onprogress: () => { progress++; } };
  if (timeoutMs !== 'default') options.timeout = Number(timeoutMs);
  started = Date.now();
  const res = await client.callTool({ name: 'read_file', arguments: { path } }, undefined, options);
  const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  console.log(JSON.stringify({ ok: !res.isError, text, progress, ms: Date.now() - started }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e?.message ?? e), progress, ms: started ? Date.now() - started : 0 }));
} finally {
  await client.close().catch(() => {});
}
