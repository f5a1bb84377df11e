// A small dual-era MCP server on the TypeScript SDK v2
// (@modelcontextprotocol/server 2.4.0), for mcpflight's integration tests
// (internal/cli/bothrevisions_test.go, peer's TestBothRevisions*). It
// serves the same tools to 2025-11-25 clients (initialize) and to
// 2026-07-28 clients (per-request _meta), over stdio or Streamable HTTP:
//
//   node bothrevisions.mjs stdio [--2026-only]
//   node bothrevisions.mjs http  [--2026-only]   # prints its URL on stdout
//
// --2026-only makes it strict (the SDK's legacy: 'reject'): initialize is
// answered with the unsupported-protocol-version error.
//
// Tools:
//   slow     {steps, stepMs, hold}  one notifications/progress per step when
//            the request carries a progressToken; with hold, it waits after
//            the last step until its request is cancelled (it never answers
//            on its own). It stops at the first step after its abort signal.
//   log      {}                     one notifications/message per level
//            (debug, info, warning, error), then a text result.
//   observe  {waitFor, timeoutMs}   the observer: counts of slow calls
//            started, completed and cancelled, and the last step reached.
//            With waitFor "cancelled" (or "started") it answers once that
//            count has grown past the given "after" value, or at timeoutMs.
import http from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';

const mode = process.argv[2];
const only2026 = process.argv.includes('--2026-only');

// The observer's counts live in the process: the HTTP entry builds a fresh
// server instance per request, and they must see one another.
const counts = { started: 0, completed: 0, cancelled: 0, lastStep: 0 };
const waiters = new Set();
function bump(what) {
	counts[what]++;
	for (const w of waiters) w();
}

function abortable(ms, signal) {
	return new Promise((resolve) => {
		if (signal.aborted) return resolve(false);
		const timer = ms >= 0 ? setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(true); }, ms) : null;
		function onAbort() { if (timer) clearTimeout(timer); resolve(false); }
		signal.addEventListener('abort', onAbort, { once: true });
	});
}

function build() {
	const server = new McpServer(
		{ name: 'mcpflight-bothrevisions', version: '1.0.0' },
		{ capabilities: { tools: {}, logging: {} } },
	);
	server.registerTool('slow', {
		description: 'Counts steps, one progress notification each; with hold, waits for a cancel after the last.',
		inputSchema: fromJsonSchema({
			type: 'object',
			properties: {
				steps: { type: 'integer', minimum: 0, maximum: 1000 },
				stepMs: { type: 'integer', minimum: 0, maximum: 10000 },
				hold: { type: 'boolean' },
			},
		}),
	}, async (args, ctx) => {
		const steps = args?.steps ?? 3;
		const stepMs = args?.stepMs ?? 50;
		const token = ctx.mcpReq._meta?.progressToken;
		const signal = ctx.mcpReq.signal;
		bump('started');
		for (let i = 1; i <= steps; i++) {
			if (!(await abortable(stepMs, signal))) { bump('cancelled'); return cancelledResult(); }
			counts.lastStep = i;
			if (token !== undefined) {
				await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i} of ${steps}` } });
			}
		}
		if (args?.hold) {
			await abortable(-1, signal);
			bump('cancelled');
			return cancelledResult();
		}
		bump('completed');
		return { content: [{ type: 'text', text: `done after ${steps} steps` }] };
	});
	server.registerTool('log', {
		description: 'Logs one message at each of debug, info, warning and error.',
		inputSchema: fromJsonSchema({ type: 'object', properties: {} }),
	}, async (_args, ctx) => {
		for (const level of ['debug', 'info', 'warning', 'error']) {
			await ctx.mcpReq.log(level, `a ${level} message`, 'bothrevisions');
		}
		return { content: [{ type: 'text', text: 'logged' }] };
	});
	server.registerTool('observe', {
		description: 'The observer: slow calls started, completed, cancelled, and the last step reached.',
		inputSchema: fromJsonSchema({
			type: 'object',
			properties: {
				waitFor: { type: 'string', enum: ['started', 'completed', 'cancelled'] },
				after: { type: 'integer', minimum: 0 },
				timeoutMs: { type: 'integer', minimum: 0, maximum: 60000 },
			},
		}),
	}, async (args) => {
		if (args?.waitFor) {
			const after = args.after ?? 0;
			await new Promise((resolve) => {
				const check = () => { if (counts[args.waitFor] > after) { done(); } };
				const timer = setTimeout(() => done(), args.timeoutMs ?? 5000);
				function done() { clearTimeout(timer); waiters.delete(check); resolve(); }
				waiters.add(check);
				check();
			});
		}
		return { content: [{ type: 'text', text: JSON.stringify(counts) }], structuredContent: { ...counts } };
	});
	return server;
}

// What the slow tool answers when its abort comes: a client that closed the
// stream or sent notifications/cancelled never reads it if the SDK drops it.
function cancelledResult() {
	return { content: [{ type: 'text', text: 'cancelled' }], isError: true };
}

if (mode === 'stdio') {
	serveStdio(build, { legacy: only2026 ? 'reject' : 'serve', onerror: (e) => process.stderr.write(`bothrevisions: ${e?.message ?? e}\n`) });
} else if (mode === 'http') {
	const handler = createMcpHandler(build, { legacy: only2026 ? 'reject' : 'stateless', onerror: (e) => process.stderr.write(`bothrevisions: ${e?.message ?? e}\n`) });
	const node = toNodeHandler(handler);
	const srv = http.createServer((req, res) => {
		if (req.url !== '/mcp') { res.writeHead(404).end(); return; }
		void node(req, res);
	});
	srv.listen(0, '127.0.0.1', () => {
		process.stdout.write(`http://127.0.0.1:${srv.address().port}/mcp\n`);
	});
	// The test that started it closes its stdin to stop it.
	process.stdin.on('end', () => { srv.close(); void handler.close(); process.exit(0); });
	process.stdin.resume();
} else {
	process.stderr.write('usage: node bothrevisions.mjs stdio|http [--2026-only]\n');
	process.exit(2);
}
