/**
 * A stdio MCP server for tests (the official SDK's low-level `Server` + `StdioServerTransport`),
 * run as `node mcp-stdio-server.mjs`. Tools:
 * - `echo {text}` → the text; `add {a, b}` → the sum (read-only);
 * - `fail` → an `isError` result; `broken` → a JSON-RPC error;
 * - `slow {ms}` → answers after ms, or stops when the call is cancelled;
 * - `pid` → this process's id; `env {name}` → that variable's value, and the working folder;
 * - `crash` → the process writes a line to stderr and exits (code 3) without answering;
 * - `add_tool` → lists a further tool `late` and notifies tools/list_changed.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const obj = (properties, required = []) => ({ type: 'object', properties, required });
const tools = [
  { name: 'echo', description: 'Echoes text', inputSchema: obj({ text: { type: 'string' } }, ['text']) },
  {
    name: 'add',
    description: 'Adds two numbers',
    inputSchema: obj({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']),
    annotations: { readOnlyHint: true },
  },
  { name: 'fail', description: 'Always reports an error', inputSchema: obj({}) },
  { name: 'broken', description: 'Answers a protocol error', inputSchema: obj({}) },
  { name: 'slow', description: 'Waits', inputSchema: obj({ ms: { type: 'number' } }) },
  { name: 'pid', description: 'Process id', inputSchema: obj({}) },
  { name: 'env', description: 'An environment variable', inputSchema: obj({ name: { type: 'string' } }) },
  { name: 'crash', description: 'Exits', inputSchema: obj({}) },
  { name: 'add_tool', description: 'Adds the tool late', inputSchema: obj({}) },
];

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const server = new Server({ name: 'stdio-test', version: '0.9.0' }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const a = req.params.arguments ?? {};
  switch (req.params.name) {
    case 'echo':
      return text(String(a.text));
    case 'add':
      return { ...text(String(a.a + a.b)), structuredContent: { sum: a.a + a.b } };
    case 'fail':
      return { ...text('it went wrong'), isError: true };
    case 'broken':
      throw new Error('broken on purpose');
    case 'slow':
      await new Promise((resolve) => {
        const t = setTimeout(resolve, Number(a.ms ?? 60_000));
        extra.signal.addEventListener('abort', () => (clearTimeout(t), resolve()));
      });
      return text('slept');
    case 'pid':
      return text(String(process.pid));
    case 'env':
      return text(`${process.env[a.name] ?? ''} ${process.cwd()}`);
    case 'crash':
      process.stderr.write('fatal: out of cheese\n', () => process.exit(3));
      return new Promise(() => {});
    case 'add_tool':
      if (!tools.some((t) => t.name === 'late')) tools.push({ name: 'late', description: 'Added later', inputSchema: obj({}) });
      await server.sendToolListChanged();
      return text('added');
  }
  throw new Error(`no tool ${req.params.name}`);
});
await server.connect(new StdioServerTransport());
