// mcpflight check-client adapter for the TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk, a 2025-11-25 client):
//   mcpflight check-client --command 'node testdata/targets/sdk-client-adapter.mjs'
import { ctx, requireTarget, run, callOptions, failure, firstText } from './adapter-common.mjs';

const { Client } = requireTarget('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = requireTarget('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = requireTarget('@modelcontextprotocol/sdk/client/streamableHttp.js');

if (ctx.protocolVersion && ctx.protocolVersion !== '2025-11-25') {
  // This client speaks 2025-11-25 only: say so, and every case skips.
  run({
    connect: async () => { throw new Error('unsupported'); },
    call: async () => ({}),
    close: async () => {},
  }).catch(() => {});
  process.stdout.write(JSON.stringify({ step: 0, outcome: 'unsupported', error: 'the SDK 1.x client speaks 2025-11-25 only' }) + '\n');
} else {
  await run({
    async connect(c) {
      const client = new Client({ name: 'mcpflight-sdk-adapter', version: '1.0.0' });
      const transport = c.transport === 'http'
        ? new StreamableHTTPClientTransport(new URL(c.url))
        : new StdioClientTransport({ command: c.server.command, args: c.server.args, stderr: 'inherit' });
      await client.connect(transport, c.connect?.timeoutMs ? { timeout: c.connect.timeoutMs } : undefined);
      return client;
    },
    async call(client, c) {
      const { ac, opts } = callOptions(c);
      if (c.task) return taskCall(client, c, ac, opts);
      try {
        const res = await client.callTool({ name: c.tool, arguments: c.arguments ?? {} }, undefined, opts);
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
}

// taskCall runs a task-augmented call with the SDK's experimental tasks
// API; an abort after the task is created uses the call's signal, as a
// user interface would.
async function taskCall(client, c, ac, opts) {
  try {
    const stream = client.experimental.tasks.callToolStream({ name: c.tool, arguments: c.arguments ?? {} }, undefined,
      { ...opts, task: { ttl: 60000 } });
    for await (const m of stream) {
      if (m.type === 'taskCreated' && c.abortAfterTaskCreated) {
        ac.abort(new Error('aborted as instructed'));
        return { outcome: 'aborted', error: 'task ' + m.task.taskId + ' aborted' };
      }
      if (m.type === 'result') return { outcome: 'result', text: firstText(m.result) };
      if (m.type === 'error') return failure(m.error, ac);
    }
    return { outcome: 'error', error: 'the stream ended without a result' };
  } catch (e) {
    return failure(e, ac);
  }
}
