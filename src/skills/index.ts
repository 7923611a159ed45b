/**
 * Skills (config/skills, SKILLS_DIR): markdown instructions (a system prompt) with YAML front
 * matter, selected by a task's `skill`. The file format and folder layout are described in
 * parse.ts; versions follow the kernel's version rules (shared with templates).
 *
 * Guarantees: every file is read strictly once at start-up (the first bad file fails it,
 * naming the file and the field); `get(name)` is the latest version (the highest release,
 * else the highest pre-release); unknown names and versions are 400s.
 */
export { SkillFileError, type Skill, type SkillCatalog, type SkillSummary } from './model.js';
export { MAX_SKILL_BYTES, parseSkillFile, SKILL_NAME_RE } from './parse.js';
export { createSkillCatalog } from './catalog.js';
export { loadSkills } from './load.js';
