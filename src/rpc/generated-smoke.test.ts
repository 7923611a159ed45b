// The code in src/gen is what `npm run generate` makes of proto/svc/v1: every message, field
// (name, number, type, cardinality), enum value and RPC (name, types, streaming) declared in
// the .proto files is in the generated descriptors, and nothing else. A proto edited without
// regenerating, or generated code edited by hand, fails here. (The services built on this
// code are exercised over real gRPC, Connect and gRPC-Web in test/grpc.test.ts.)
import { readFileSync } from 'node:fs';
import { ScalarType, type DescField } from '@bufbuild/protobuf';
import type { GenFile } from '@bufbuild/protobuf/codegenv2';
import { describe, expect, it } from 'vitest';
import { TaskStatus, file_svc_v1_common } from '../gen/svc/v1/common_pb.js';
import { file_svc_v1_orchestrator } from '../gen/svc/v1/orchestrator_pb.js';
import { file_svc_v1_session } from '../gen/svc/v1/session_pb.js';
import { file_svc_v1_streaming } from '../gen/svc/v1/streaming_pb.js';

const FILES: [string, GenFile][] = [
  ['common', file_svc_v1_common],
  ['orchestrator', file_svc_v1_orchestrator],
  ['session', file_svc_v1_session],
  ['streaming', file_svc_v1_streaming],
];

/** Last segment of a type name: `google.protobuf.Struct` and `Struct` alike. */
const short = (t: string) => t.split('.').at(-1)!;

interface ProtoDecls {
  messages: Record<string, string[]>;
  enums: Record<string, string[]>;
  services: Record<string, string[]>;
}

/**
 * The declarations of one .proto file, each as a comparable line. Enough of the grammar for
 * these files: top-level messages, enums and services, no nesting, no oneof (a test below
 * checks that it saw every field the generated code has, so a construct it misses shows up).
 */
function parseProto(text: string): ProtoDecls {
  const src = text.replace(/\/\/[^\n]*/g, '');
  const out: ProtoDecls = { messages: {}, enums: {}, services: {} };
  for (const [, kind, name, body] of src.matchAll(/\b(message|enum|service)\s+(\w+)\s*\{([^}]*)\}/g)) {
    const lines = body
      .split(';')
      .map((s) => s.trim().replace(/\s+/g, ' '))
      .filter(Boolean);
    if (kind === 'message') {
      out.messages[name] = lines.map((l) => {
        const m = /^(repeated )?(map<\s*\w+\s*,\s*[\w.]+\s*>|[\w.]+) (\w+) = (\d+)$/.exec(l);
        if (!m) throw new Error(`cannot read field of ${name}: ${l}`);
        const type = m[2].startsWith('map<') ? m[2].replace(/\s/g, '').replace(/,([\w.]+)>/, (_, v: string) => `,${short(v)}>`) : short(m[2]);
        return `${m[3]} = ${m[4]}: ${m[1] ?? ''}${type}`;
      });
    } else if (kind === 'enum') {
      out.enums[name] = lines;
    } else {
      out.services[name] = lines.map((l) => {
        const m = /^rpc (\w+) ?\((stream )?([\w.]+)\) returns \((stream )?([\w.]+)\)$/.exec(l);
        if (!m) throw new Error(`cannot read rpc of ${name}: ${l}`);
        return `${m[1]}(${m[2] ?? ''}${short(m[3])}) returns (${m[4] ?? ''}${short(m[5])})`;
      });
    }
  }
  return out;
}

function scalarName(t: ScalarType): string {
  return ScalarType[t].toLowerCase();
}

function fieldType(f: DescField): string {
  switch (f.fieldKind) {
    case 'scalar':
      return scalarName(f.scalar);
    case 'enum':
      return f.enum.name;
    case 'message':
      return f.message.name;
    case 'list':
      return `repeated ${f.listKind === 'scalar' ? scalarName(f.scalar) : f.listKind === 'enum' ? f.enum.name : f.message.name}`;
    case 'map':
      return `map<${scalarName(f.mapKey)},${f.mapKind === 'scalar' ? scalarName(f.scalar) : f.mapKind === 'enum' ? f.enum.name : f.message.name}>`;
  }
}

function generatedDecls(file: GenFile): ProtoDecls {
  const out: ProtoDecls = { messages: {}, enums: {}, services: {} };
  for (const m of file.messages) out.messages[m.name] = m.fields.map((f) => `${f.name} = ${f.number}: ${fieldType(f)}`);
  for (const e of file.enums) out.enums[e.name] = e.values.map((v) => `${v.name} = ${v.number}`);
  for (const s of file.services) {
    out.services[s.name] = s.methods.map(
      (m) =>
        `${m.name}(${m.methodKind === 'client_streaming' || m.methodKind === 'bidi_streaming' ? 'stream ' : ''}${m.input.name}) returns (${m.methodKind === 'server_streaming' || m.methodKind === 'bidi_streaming' ? 'stream ' : ''}${m.output.name})`,
    );
  }
  return out;
}

describe('generated svc.v1 code matches proto/svc/v1', () => {
  it.each(FILES)('%s.proto', (name, file) => {
    const proto = parseProto(readFileSync(new URL(`../../proto/svc/v1/${name}.proto`, import.meta.url), 'utf8'));
    expect(generatedDecls(file)).toEqual(proto);
  });

  it('sees the declarations it compares (the parser is not silently skipping them)', () => {
    const counts = FILES.map(([name]) => parseProto(readFileSync(new URL(`../../proto/svc/v1/${name}.proto`, import.meta.url), 'utf8')));
    expect(counts.reduce((n, d) => n + Object.values(d.messages).flat().length, 0)).toBeGreaterThan(150);
    expect(counts.reduce((n, d) => n + Object.keys(d.services).length, 0)).toBe(3);
  });

  it("keeps the spec's enum numbering, with PAUSED appended", () => {
    expect([TaskStatus.UNSPECIFIED, TaskStatus.TIMEOUT, TaskStatus.PAUSED]).toEqual([0, 6, 7]);
  });
});
