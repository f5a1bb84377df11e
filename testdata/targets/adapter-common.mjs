// The part of the check-client adapters that does not depend on the SDK:
// read the instructions (MCP_CONFORMANCE_CONTEXT), run the steps, print
// one report per line. See docs/check-client.md.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The npm targets are found in MCPFLIGHT_TARGETS_DIR, or beside this file.
const here = dirname(fileURLToPath(import.meta.url));
export const requireTarget = createRequire(join(process.env.MCPFLIGHT_TARGETS_DIR || here, 'package.json'));

export const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');

export function report(r) {
  process.stdout.write(JSON.stringify(r) + '\n');
}

export function firstText(result) {
  for (const c of result?.content ?? []) {
    if (c.type === 'text') return c.text;
  }
  return '';
}

function message(e) {
  return String(e?.message ?? e);
}

// callOptions builds the SDK's RequestOptions for a call step, with the
// abort controller that the step's abort conditions trip.
export function callOptions(c) {
  const ac = new AbortController();
  let seen = 0;
  const opts = { signal: ac.signal };
  if (c.timeoutMs) opts.timeout = c.timeoutMs;
  if (c.resetTimeoutOnProgress) opts.resetTimeoutOnProgress = true;
  if (c.maxTotalTimeoutMs) opts.maxTotalTimeout = c.maxTotalTimeoutMs;
  if (c.progress || c.abortAfterProgress) {
    opts.onprogress = () => {
      seen++;
      if (c.abortAfterProgress && seen >= c.abortAfterProgress) ac.abort(new Error('aborted after progress'));
    };
  }
  return { ac, opts };
}

// outcome classifies a failed call: aborted (our signal), timeout (the
// SDK's request timeout, -32001), or error.
export function failure(e, ac) {
  if (ac.signal.aborted) return { outcome: 'aborted', error: message(e) };
  if (e?.code === -32001 || /timed out|timeout/i.test(message(e))) return { outcome: 'timeout', error: message(e) };
  return { outcome: 'error', error: message(e) };
}

// linger keeps the connection open before close(): the instructions'
// lingerMs (a host that goes on running after an abort or a timeout), or
// the diagnostic MCPFLIGHT_ADAPTER_CLOSE_DELAY_MS (0 by default), which
// tells what close() itself loses (an in-flight POST) from what was never
// sent.
async function linger() {
  const delay = Number(ctx.lingerMs || process.env.MCPFLIGHT_ADAPTER_CLOSE_DELAY_MS || 0);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
}

// run connects with connect(), runs every step with call() (and a
// setLogLevel step with setLogLevel(), the library's own way to set the
// level the caller wants), closes.
export async function run({ connect, call, setLogLevel, close }) {
  let client;
  try {
    client = await connect(ctx);
    report({ step: 0, outcome: 'connected' });
  } catch (e) {
    report({ step: 0, outcome: /timed out|timeout/i.test(message(e)) || e?.code === -32001 ? 'timeout' : 'error', error: message(e) });
    await linger();
    await close(client).catch(() => {});
    report({ step: (ctx.steps ?? []).length + 1, outcome: 'closed' });
    return;
  }
  for (const [i, s] of (ctx.steps ?? []).entries()) {
    const n = i + 1;
    if (s.op === 'call') {
      report({ step: n, ...(await call(client, s.call)) });
    } else if (s.op === 'parallel') {
      const out = await Promise.all(s.calls.map((c) => call(client, c)));
      out.forEach((r, j) => report({ step: n, call: j + 1, ...r }));
    } else if (s.op === 'setLogLevel' && setLogLevel) {
      try {
        await setLogLevel(client, s.level);
        report({ step: n, outcome: 'result', text: 'level ' + s.level });
      } catch (e) {
        report({ step: n, outcome: 'error', error: message(e) });
      }
    } else {
      report({ step: n, outcome: 'unsupported', error: 'unknown op ' + s.op });
    }
  }
  await linger();
  await close(client).catch((e) => process.stderr.write('close: ' + message(e) + '\n'));
  report({ step: (ctx.steps ?? []).length + 1, outcome: 'closed' });
}
