// mcpflight check-client adapter for the TypeScript SDK 2.x client
// (@modelcontextprotocol/client, dual-era: 2025-11-25 and 2026-07-28):
//   mcpflight check-client --command 'node testdata/targets/client-adapter.mjs' [--protocol 2026-07-28 --dual-era]
import { ctx, requireTarget, run, callOptions, failure, firstText } from './adapter-common.mjs';

const { Client, StreamableHTTPClientTransport } = requireTarget('@modelcontextprotocol/client');
const { StdioClientTransport } = requireTarget('@modelcontextprotocol/client/stdio');

await run({
  async connect(c) {
    // 2026-07-28: let the client negotiate (server/discover, falling back
    // to initialize); 2025-11-25: the plain legacy handshake.
    const modern = c.protocolVersion === '2026-07-28';
    const client = new Client({ name: 'mcpflight-client-adapter', version: '1.0.0' },
      modern ? { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 5000 } } } : {});
    const transport = c.transport === 'http'
      ? new StreamableHTTPClientTransport(new URL(c.url))
      : new StdioClientTransport({ command: c.server.command, args: c.server.args, stderr: 'inherit' });
    await client.connect(transport, c.connect?.timeoutMs ? { timeout: c.connect.timeoutMs } : undefined);
    return client;
  },
  async call(client, c) {
    if (c.task) return { outcome: 'unsupported', error: '@modelcontextprotocol/client 2.4.0 has no task API (no callToolStream, and neither the 2025-11-25 tasks nor the 2026-07-28 tasks extension)' };
    const { ac, opts } = callOptions(c);
    try {
      const res = await client.callTool({ name: c.tool, arguments: c.arguments ?? {} }, opts);
      if (c.abortAfterResponse) ac.abort(new Error('the user cancelled'));
      return { outcome: 'result', text: firstText(res) };
    } catch (e) {
      return failure(e, ac);
    }
  },
  // The client's one way to set a log level: setLoggingLevel, which
  // sends logging/setLevel whatever revision the session speaks.
  async setLogLevel(client, level) {
    await client.setLoggingLevel(level);
  },
  async close(client) {
    await client?.close();
  },
});
