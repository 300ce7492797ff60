// Drives onellm-mcp with the official TypeScript clients and prints one JSON
// line with what it saw; e2e/ts_test.go checks it.
//
//   node clients.mjs sdk-http URL TOKEN PATH DENIED_PATH   (@modelcontextprotocol/sdk 1.x, legacy era)
//   node clients.mjs sdk-stdio BIN CONFIG PATH DENIED_PATH
//   node clients.mjs v2-http URL TOKEN PATH DENIED_PATH    (@modelcontextprotocol/client 2.x, newest era)
const [mode, a, b, path, denied] = process.argv.slice(2);

async function connect() {
  if (mode === 'sdk-http' || mode === 'sdk-stdio') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const client = new Client({ name: 'onellm-e2e-ts', version: '1' });
    let transport;
    if (mode === 'sdk-http') {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      transport = new StreamableHTTPClientTransport(new URL(a), { requestInit: { headers: { Authorization: `Bearer ${b}` } } });
    } else {
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      transport = new StdioClientTransport({ command: a, args: ['serve', '--config', b], env: { HOME: process.env.HOME, PATH: process.env.PATH }, stderr: 'inherit' });
    }
    await client.connect(transport);
    return { client, version: transport.protocolVersion ?? null };
  }
  if (mode === 'v2-http') {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new Client({ name: 'onellm-e2e-ts2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new StreamableHTTPClientTransport(new URL(a), { requestInit: { headers: { Authorization: `Bearer ${b}` } } });
    await client.connect(transport);
    const version = client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion ?? transport.protocolVersion;
    return { client, version };
  }
  throw new Error(`unknown mode ${mode}`);
}

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

try {
  const { client, version } = await connect();
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const read = await client.callTool({ name: 'read_file', arguments: { path } });
  const deny = await client.callTool({ name: 'read_file', arguments: { path: denied } });
  console.log(JSON.stringify({
    version: version ?? null,
    tools,
    read: { isError: !!read.isError, text: text(read), structured: read.structuredContent ?? null },
    denied: { isError: !!deny.isError, text: text(deny) },
  }));
  await client.close();
  process.exit(0);
} catch (err) {
  console.error(String(err?.stack ?? err));
  process.exit(1);
}
