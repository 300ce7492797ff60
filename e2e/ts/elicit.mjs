// The official TypeScript clients answering onellm-mcp's approval form, over
// streamable HTTP; e2e/ts_approval_test.go checks the JSON line it prints.
//
//   node elicit.mjs sdk-http URL TOKEN PATH DECISION  (@modelcontextprotocol/sdk 1.x: elicitation/create, legacy era)
//   node elicit.mjs v2-http URL TOKEN PATH DECISION   (@modelcontextprotocol/client 2.x: input_required + retry, newest era)
//
// The client declares elicitation and answers every form with
// {action: "accept", content: {decision: DECISION}}; it calls read_file(PATH)
// once and reports what it was asked and what came back.
//
// With ELICIT_URL_FILE set, the client declares URL-mode elicitation too
// (capabilities.elicitation.url): a URL elicitation's url is written to that
// file, for the test acting as the person, and accepted (which only means
// "the person opened the link"; the content claiming DECISION must count
// for nothing).
const [mode, url, token, path, decision] = process.argv.slice(2);
const urlFile = process.env.ELICIT_URL_FILE;
const elicitation = urlFile ? { form: {}, url: {} } : { form: {} };

const asked = [];
async function answer(request) {
  const p = request.params ?? {};
  asked.push({ message: p.message ?? '', fields: Object.keys(p.requestedSchema?.properties ?? {}), mode: p.mode ?? 'form',
    url: p.url ?? '', elicitationId: p.elicitationId ?? '' });
  if (p.mode === 'url' && urlFile) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(urlFile, p.url);
  }
  return { action: 'accept', content: { decision } };
}

async function connect() {
  const headers = { Authorization: `Bearer ${token}` };
  if (mode === 'sdk-http') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const client = new Client({ name: 'onellm-e2e-ts-elicit', version: '1' }, { capabilities: { elicitation } });
    client.setRequestHandler(ElicitRequestSchema, answer);
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    await client.connect(transport);
    return { client, version: transport.protocolVersion ?? null };
  }
  if (mode === 'v2-http') {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new Client({ name: 'onellm-e2e-ts2-elicit', version: '1' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation } });
    client.setRequestHandler('elicitation/create', answer);
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    await client.connect(transport);
    const version = client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion ?? transport.protocolVersion;
    return { client, version };
  }
  throw new Error(`unknown mode ${mode}`);
}

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

try {
  const { client, version } = await connect();
  const res = await client.callTool({ name: 'read_file', arguments: { path } });
  console.log(JSON.stringify({ version: version ?? null, asked, result: { isError: !!res.isError, text: text(res) } }));
  await client.close();
  process.exit(0);
} catch (err) {
  console.error(String(err?.stack ?? err));
  process.exit(1);
}
