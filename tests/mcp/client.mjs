// tests/mcp/client.mjs — a real MCP client (the official TypeScript SDK)
// against `ingero-analyze mcp DB`: spawns the server over stdio, lists the
// tools and prompts, calls every tool, checks the results, prints TAP lines.
//
//   node client.mjs SERVER DB EXPECT.json
//
// EXPECT.json holds what the shell test computed from the database with
// sqlite3 (call counts, process count, the main pid...), so the figures the
// assistant sees are checked against the database, not against themselves.
// tests/e2e/mcp_client.sh copies this file next to the SDK it installed
// (build/tests/mcp/) and runs it there.
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [server, db, expectPath] = process.argv.slice(2);
const expect = JSON.parse(readFileSync(expectPath, 'utf8'));
let failed = 0;
const ok = (cond, what, extra) => {
	if (cond) console.log(`ok - ${what}`);
	else {
		failed = 1;
		console.log(`not ok - ${what}${extra !== undefined ? ` (${extra})` : ''}`);
	}
};
const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
// The one fence around traced strings: opened once, closed once.
const fenced = (r) => {
	const t = text(r);
	return (t.match(/<trace-data>/g) || []).length === 1 && (t.match(/<\/trace-data>/g) || []).length === 1
		&& t.trimEnd().endsWith('</trace-data>');
};
// The JSON inside the fence equals structuredContent.
const fenceMatches = (r) => {
	const t = text(r);
	const body = t.slice(t.indexOf('<trace-data>'), t.lastIndexOf('</trace-data>'));
	const json = body.slice(body.indexOf('\n', body.indexOf(')\n')) + 1);
	try {
		return JSON.stringify(JSON.parse(json)) === JSON.stringify(r.structuredContent);
	} catch (e) {
		return false;
	}
};

async function expectRpcError(what, fn, code) {
	try {
		await fn();
		ok(false, what, 'no error');
	} catch (e) {
		ok(e.code === code, what, `code ${e.code}: ${e.message}`);
	}
}

const stderr = [];
const transport = new StdioClientTransport({ command: server, args: ['mcp', db], stderr: 'pipe' });
transport.stderr?.on('data', (d) => stderr.push(String(d)));
const client = new Client({ name: 'ingero-test-client', version: '1.0.0' });

try {
	await client.connect(transport);
	ok(true, 'connect + initialize through StdioClientTransport');
	const info = client.getServerVersion();
	ok(info?.name === 'ingero-analyze', 'serverInfo.name is ingero-analyze', info?.name);
	const caps = client.getServerCapabilities();
	ok(caps?.tools && caps?.prompts, 'capabilities: tools and prompts');
	ok(/trace-data/.test(client.getInstructions() || ''), 'instructions say how traced strings are fenced');
	await client.ping();
	ok(true, 'ping');

	// ---- tools/list ----
	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort();
	const want = ['get_causal_chains', 'get_gpu_idle', 'get_per_process_breakdown', 'get_ranks', 'get_stacks',
		'get_timeline', 'get_trace_stats', 'run_sql'];
	ok(JSON.stringify(names) === JSON.stringify(want), 'tools/list names the eight tools', names.join(','));
	for (const t of tools) {
		ok(t.inputSchema?.type === 'object' && typeof t.description === 'string' && t.description.length > 80,
			`${t.name}: inputSchema object and a description`);
		ok(t.annotations?.readOnlyHint === true, `${t.name}: readOnlyHint`);
	}
	const sqlTool = tools.find((t) => t.name === 'run_sql');
	ok(/CREATE TABLE cuda_calls/.test(sqlTool.description) && /CREATE TABLE frames/.test(sqlTool.description) &&
		/CREATE VIEW stack_frames/.test(sqlTool.description),
		'run_sql description carries the schema');
	ok(JSON.stringify(sqlTool.inputSchema.required) === '["sql"]', 'run_sql requires sql');

	// ---- prompts ----
	const { prompts } = await client.listPrompts();
	ok(prompts.length === 1 && prompts[0].name === 'investigate', 'prompts/list: investigate');
	const p = await client.getPrompt({ name: 'investigate', arguments: { focus: 'why 10x slower with DataLoader' } });
	const pt = p.messages?.[0]?.content?.text || '';
	ok(p.messages.length === 1 && p.messages[0].role === 'user', 'investigate: one user message');
	for (const w of ['get_trace_stats', 'get_causal_chains', 'get_gpu_idle', 'get_per_process_breakdown',
		'get_stacks', 'get_timeline', 'run_sql', 'pinned', 'pageable', 'gaps', 'workers', 'file:line'])
		ok(pt.includes(w), `investigate mentions ${w}`);
	ok(pt.includes('"why 10x slower with DataLoader"'), 'investigate quotes the focus argument');
	await expectRpcError('prompts/get of an unknown prompt: -32602',
		() => client.getPrompt({ name: 'nope' }), -32602);

	// ---- get_trace_stats ----
	let r = await client.callTool({ name: 'get_trace_stats', arguments: {} });
	const st = r.structuredContent;
	ok(!r.isError && st && Array.isArray(st.apis), 'get_trace_stats: structuredContent.apis');
	ok(fenced(r) && fenceMatches(r), 'get_trace_stats: text fences the JSON, same as structuredContent');
	const total = (st?.apis || []).reduce((a, x) => a + x.count, 0);
	ok(total === expect.calls, 'get_trace_stats: call count equals the database', `${total} vs ${expect.calls}`);
	const sync = (st?.apis || []).find((a) => a.api === 'cudaStreamSynchronize');
	ok(sync && sync.count === expect.syncs && sync.p99_ns >= sync.p50_ns && sync.max_ns === expect.sync_max_ns,
		'get_trace_stats: cudaStreamSynchronize count and max equal the database');
	ok(st?.processes?.length === expect.processes, 'get_trace_stats: process count', st?.processes?.length);
	ok(st?.trace?.command === expect.command, 'get_trace_stats: the traced command');
	const cli = JSON.parse(readFileSync(expect.stats_json, 'utf8'));
	ok(JSON.stringify(st?.apis) === JSON.stringify(cli.apis) && JSON.stringify(st?.processes) === JSON.stringify(cli.processes),
		'get_trace_stats: apis and processes equal stats --json');
	r = await client.callTool({ name: 'get_trace_stats', arguments: { from: '0.5', to: '1s' } });
	const wtotal = (r.structuredContent?.apis || []).reduce((a, x) => a + x.count, 0);
	ok(!r.isError && wtotal === expect.calls_0_5_to_1s, 'get_trace_stats: a window (0.5 s to 1 s)',
		`${wtotal} vs ${expect.calls_0_5_to_1s}`);

	// ---- get_per_process_breakdown ----
	r = await client.callTool({ name: 'get_per_process_breakdown', arguments: {} });
	const pp = r.structuredContent;
	ok(!r.isError && pp?.main_pid === expect.main_pid, 'per-process: main pid', pp?.main_pid);
	ok(pp?.workers === expect.workers, 'per-process: workers', pp?.workers);
	ok((pp?.processes || []).filter((x) => x.role === 'worker').length === expect.workers, 'per-process: roles');
	ok(fenced(r) && fenceMatches(r), 'per-process: fenced text equals structuredContent');
	r = await client.callTool({ name: 'get_per_process_breakdown', arguments: { pid: expect.worker_pid } });
	ok(!r.isError && r.structuredContent?.processes?.length === 1, 'per-process: pid filter keeps one worker');

	// ---- get_stacks ----
	r = await client.callTool({ name: 'get_stacks', arguments: { api: 'cudaStreamSynchronize', limit: 3 } });
	const sk = r.structuredContent;
	ok(!r.isError && sk?.calls?.length === 3, 'get_stacks: 3 calls', sk?.calls?.length);
	ok(sk?.calls?.[0]?.dur_ns === expect.sync_max_ns, 'get_stacks: the slowest sync first');
	ok((sk?.calls || []).every((c, i, a) => i === 0 || a[i - 1].dur_ns >= c.dur_ns), 'get_stacks: by duration');
	const sid = sk?.calls?.[0]?.stack_id;
	const frames = sk?.stacks?.[String(sid)];
	ok(frames && frames.python.some((f) => /\.py$/.test(f.file) && f.line > 0) && frames.native.length > 0,
		'get_stacks: native and python frames (file:line) of the slowest call');
	const c0 = sk?.calls?.[0] || {};
	ok(['oncpu_ns', 'runq_ns', 'blocked_ns'].every((k) => typeof c0[k] === 'number')
		&& c0.oncpu_ns + c0.runq_ns + c0.blocked_ns === c0.dur_ns, 'get_stacks: on-CPU + run queue + blocked = the call');
	ok(/\.py:\d+$/.test(c0.python_line || ''), 'get_stacks: the Python line of the slowest call', c0.python_line);
	r = await client.callTool({ name: 'get_stacks', arguments: { order: 'ratio_to_p50', limit: 5 } });
	ok(!r.isError && r.structuredContent.calls.length === 5, 'get_stacks: by ratio to p50');
	r = await client.callTool({ name: 'get_stacks', arguments: { api: 'cudaNoSuchApi' } });
	ok(r.isError === true, 'get_stacks: an API without calls is a tool error');

	// ---- the analyzer's chains, gaps, timeline ----
	// The same analysis as the command line: `explain --json` of the same file.
	const explain = JSON.parse(readFileSync(expect.explain_json, 'utf8'));
	const brief = (chains) => JSON.stringify((chains || []).map((c) => [c.severity, c.kind, c.api, c.summary, c.source]));
	r = await client.callTool({ name: 'get_causal_chains', arguments: {} });
	{
		const ch = r.structuredContent;
		ok(!r.isError && Array.isArray(ch?.chains) && ch.chains.length > 0, 'get_causal_chains: chains');
		ok(fenced(r) && fenceMatches(r), 'get_causal_chains: fenced text equals structuredContent');
		ok(brief(ch?.chains) === brief(explain.chains), 'get_causal_chains: the chains of explain --json');
		ok(JSON.stringify(ch?.gpu_idle_pct) === JSON.stringify(explain.gpu_idle_pct), 'get_causal_chains: its GPU idle');
		ok(ch?.chains?.[0]?.severity === 'HIGH' && ch.chains.every((c) => ['HIGH', 'MEDIUM', 'LOW'].includes(c.severity)),
			'get_causal_chains: contention trace gives a HIGH chain first');
		r = await client.callTool({ name: 'get_causal_chains', arguments: { limit: 1 } });
		ok(r.structuredContent?.chains?.length === 1 && r.structuredContent.chains_left_out === explain.chains.length - 1,
			'get_causal_chains: limit 1, the rest counted');
	}
	r = await client.callTool({ name: 'get_gpu_idle', arguments: {} });
	{
		const g = r.structuredContent;
		ok(!r.isError && g?.gpu_idle_pct && g.gpu_idle_pct.low <= g.gpu_idle_pct.high, 'get_gpu_idle: bounds');
		ok(g?.gpu_idle_pct?.estimate === true, 'get_gpu_idle: labelled an estimate');
		ok(JSON.stringify([g?.gpu_idle_pct, g?.where_time_went, g?.gaps])
			=== JSON.stringify([explain.gpu_idle_pct, explain.where_time_went, explain.gaps]),
			'get_gpu_idle: the figures of explain --json');
		ok(fenced(r) && fenceMatches(r), 'get_gpu_idle: fenced text equals structuredContent');
	}
	r = await client.callTool({ name: 'get_timeline', arguments: { from: '0.5', to: '0.6', limit: 50 } });
	const tl = JSON.parse(readFileSync(expect.timeline_json, 'utf8'));
	ok(!r.isError && r.structuredContent?.events?.length === 50 && fenced(r) && fenceMatches(r), 'get_timeline: a window, 50 events');
	ok(JSON.stringify(r.structuredContent) === JSON.stringify(tl), 'get_timeline: the events of timeline --json');
	ok(r.structuredContent?.events?.every((e, i, a) => i === 0 || a[i - 1].ts_rel_ns <= e.ts_rel_ns)
		&& r.structuredContent.events.every((e) => e.ts_rel_ns >= 5e8 && e.ts_rel_ns < 6e8), 'get_timeline: in order, inside the window');

	// ---- run_sql ----
	r = await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT count(*) AS n FROM cuda_calls' } });
	ok(!r.isError && r.structuredContent?.rows?.[0]?.[0] === expect.calls, 'run_sql: count(*)');
	ok(r.structuredContent?.columns?.[0] === 'n', 'run_sql: column names');
	r = await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT start_ns FROM cuda_calls', max_rows: 7 } });
	ok(r.structuredContent?.rows?.length === 7 && r.structuredContent.truncated === true, 'run_sql: row cap');
	r = await client.callTool({ name: 'run_sql', arguments: { sql: 'DELETE FROM cuda_calls' } });
	ok(r.isError === true && /refused/.test(text(r)), 'run_sql: DELETE refused', text(r));
	r = await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT count(*) FROM cuda_calls' } });
	ok(r.structuredContent?.rows?.[0]?.[0] === expect.calls, 'run_sql: the data is intact after');

	// ---- protocol errors through the SDK ----
	await expectRpcError('tools/call of an unknown tool: -32602',
		() => client.callTool({ name: 'no_such_tool', arguments: {} }), -32602);
	await expectRpcError('tools/call with a wrongly typed argument: -32602',
		() => client.callTool({ name: 'get_stacks', arguments: { limit: 'ten' } }), -32602);
	await expectRpcError('tools/call without a required argument: -32602',
		() => client.callTool({ name: 'run_sql', arguments: {} }), -32602);
	await client.ping();
	ok(true, 'still serving after the errors');
} catch (e) {
	ok(false, 'client session', e.stack || String(e));
} finally {
	await client.close().catch(() => {});
}
// ---- an empty trace: every tool answers, and the SDK validates each outputSchema ----
const empty = new Client({ name: 'ingero-test-client-empty', version: '1.0.0' });
try {
	await empty.connect(new StdioClientTransport({ command: server, args: ['mcp', expect.empty_db], stderr: 'pipe' }));
	await empty.listTools();   // the SDK caches the output schemas it validates against
	for (const name of ['get_trace_stats', 'get_per_process_breakdown', 'get_stacks', 'get_causal_chains',
		'get_gpu_idle', 'get_timeline', 'get_ranks']) {
		const r = await empty.callTool({ name, arguments: {} });
		ok(r.isError === false && r.structuredContent && fenced(r), `empty trace: ${name} answers`, text(r).slice(0, 200));
	}
	const r = await empty.callTool({ name: 'get_gpu_idle', arguments: {} });
	ok(/no GPU idle estimate/.test(text(r)), 'empty trace: no GPU idle figure is made up');
} catch (e) {
	ok(false, 'empty-trace session', e.stack || String(e));
} finally {
	await empty.close().catch(() => {});
}

// the server's log, for whoever reads a failure
for (const line of stderr.join('').split('\n').filter(Boolean)) console.log(`# server: ${line}`);
process.exit(failed);
