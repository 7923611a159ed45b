import { describe, expect, it } from 'vitest';
import { systemPrompt } from './preparation.js';

describe('systemPrompt', () => {
  it('substitutes ${name} from prompt_params', () => {
    expect(systemPrompt({ context: { system_prompt: 'You help ${who} with ${what}.', prompt_params: { who: 'Ada', what: 5 } } })).toBe('You help Ada with 5.');
  });

  it('leaves unknown names and prototype members (${constructor}, ${toString}, ${__proto__}) as written', () => {
    const p = 'a ${missing} b ${constructor} c ${toString} d ${__proto__} e ${hasOwnProperty}';
    expect(systemPrompt({ context: { system_prompt: p, prompt_params: { x: 1 } } })).toBe(p);
    expect(systemPrompt({ context: { system_prompt: p } })).toBe(p);
  });
});
