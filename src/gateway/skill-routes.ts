/**
 * /api/v1/skills: the skill catalogue (config/skills, SKILLS_DIR) over HTTP, read-only.
 * - GET /api/v1/skills: every skill with its latest version and all its versions.
 * - GET /api/v1/skills/{name} (optional `version`, default latest): one skill with its
 *   instructions; unknown → 404 `Skill not found: <name>`, unknown version → 404
 *   `Skill <name> has no version <v>`, a malformed version → 400.
 * - GET /api/v1/skills/{name}/versions: the versions of a skill, oldest first.
 * Behind admission (authentication and rate limit) like every /api/v1 route.
 *
 * `skillPaths` holds the OpenAPI path items of these routes, for openapi.ts to spread into
 * its `paths`; it refers only to `#/components/schemas/Error`.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { badRequest, notFound } from '../kernel/index.js';
import type { Skill, SkillCatalog, SkillSummary } from '../skills/index.js';
import { route, type Req } from './http.js';
import { admitted, type RouteDeps } from './route-deps.js';

export function skillSummaryJson(s: SkillSummary) {
  return { name: s.name, version: s.version, description: s.description, versions: [...s.versions] };
}

export function skillJson(s: Skill, versions: readonly Skill[]) {
  return {
    name: s.name,
    version: s.version,
    description: s.description,
    instructions: s.instructions,
    role: s.role ?? null,
    tools: [...s.tools],
    model_tier: s.modelTier ?? null,
    content_hash: s.contentHash,
    versions: versions.map((v) => v.version),
  };
}

export function skillVersionsJson(name: string, versions: readonly Skill[]) {
  return { name, versions: versions.map((v) => ({ version: v.version, description: v.description, content_hash: v.contentHash })) };
}

const VERSION_PARAM_MAX = 64;

function skillOf(skills: SkillCatalog, req: Req): Skill {
  const name = req.params[0];
  if (!skills.has(name)) throw notFound(`Skill not found: ${name}`);
  const version = req.query.get('version') || undefined;
  if (version === undefined) return skills.get(name);
  if (version.length > VERSION_PARAM_MAX || !/^[0-9A-Za-z.-]+$/.test(version)) throw badRequest('version must be a version such as 1.0.0');
  if (!skills.has(name, version)) throw notFound(`Skill ${name} has no version ${version}`);
  return skills.get(name, version);
}

export function registerSkillRoutes(app: TemplatedApp, d: Pick<RouteDeps, 'ctx' | 'admit'> & { skills: SkillCatalog }): void {
  const { skills } = d;
  route(
    app,
    'get',
    '/api/v1/skills',
    admitted(d.admit, async () => {
      const list = skills.list().map(skillSummaryJson);
      return { skills: list, total_count: list.length };
    }),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/skills/:name',
    admitted(d.admit, async (req) => {
      const s = skillOf(skills, req);
      return skillJson(s, skills.versions(s.name));
    }),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/skills/:name/versions',
    admitted(d.admit, async (req) => {
      const name = req.params[0];
      if (!skills.has(name)) throw notFound(`Skill not found: ${name}`);
      return skillVersionsJson(name, skills.versions(name));
    }),
    d.ctx,
  );
}

// ---- OpenAPI (3.0) path items of the routes above.
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
const ok = (schema: object) => ({ description: 'OK', content: { 'application/json': { schema } } });
const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: 'Skill name' };
const versionList = { type: 'array', items: { type: 'string' }, description: 'Every version, oldest first' };

const SkillSummarySchema = {
  type: 'object',
  required: ['name', 'version', 'description', 'versions'],
  properties: {
    name: { type: 'string' },
    version: { type: 'string', description: 'The latest version' },
    description: { type: 'string', description: "The latest version's description" },
    versions: versionList,
  },
};
const SkillSchema = {
  type: 'object',
  required: ['name', 'version', 'description', 'instructions', 'role', 'tools', 'model_tier', 'content_hash', 'versions'],
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    description: { type: 'string' },
    instructions: { type: 'string', description: 'The markdown body: the system prompt' },
    role: { type: 'string', nullable: true, description: 'Role preset the skill runs as' },
    tools: { type: 'array', items: { type: 'string' } },
    model_tier: { type: 'string', nullable: true, description: 'small, medium or large' },
    content_hash: { type: 'string', description: "sha256 (hex) of the skill file's bytes" },
    versions: versionList,
  },
};
const SkillVersionsSchema = {
  type: 'object',
  required: ['name', 'versions'],
  properties: {
    name: { type: 'string' },
    versions: {
      type: 'array',
      description: 'Oldest first',
      items: {
        type: 'object',
        required: ['version', 'description', 'content_hash'],
        properties: { version: { type: 'string' }, description: { type: 'string' }, content_hash: { type: 'string' } },
      },
    },
  },
};

/** OpenAPI path items of the skill routes: spread into openapi.ts's `paths`. */
export const skillPaths = {
  '/api/v1/skills': {
    get: {
      summary: 'Skills (markdown instructions with front matter from SKILLS_DIR), each with its latest version',
      operationId: 'listSkills',
      security,
      responses: {
        200: ok({
          type: 'object',
          required: ['skills', 'total_count'],
          properties: { skills: { type: 'array', items: SkillSummarySchema }, total_count: { type: 'integer' } },
        }),
      },
    },
  },
  '/api/v1/skills/{name}': {
    get: {
      summary: 'One skill with its instructions (the latest version unless `version` is given)',
      operationId: 'getSkill',
      security,
      parameters: [nameParam, { name: 'version', in: 'query', required: false, schema: { type: 'string' }, description: 'A version; default latest' }],
      responses: {
        200: ok(SkillSchema),
        400: errorResponse('Malformed version'),
        404: errorResponse('Skill not found: <name>, or Skill <name> has no version <version>'),
      },
    },
  },
  '/api/v1/skills/{name}/versions': {
    get: {
      summary: 'The versions of a skill, oldest first',
      operationId: 'listSkillVersions',
      security,
      parameters: [nameParam],
      responses: { 200: ok(SkillVersionsSchema), 404: errorResponse('Skill not found: <name>') },
    },
  },
};
