import { describe, expect, it } from 'vitest';
import { rowInserter } from './insert-rows.js';

describe('rowInserter', () => {
  it('refuses a table or column name that is not a plain identifier', () => {
    expect(() => rowInserter<{ a: string }>('tasks; DROP TABLE tasks', [['a', 'text']])).toThrow(/not a plain identifier/);
    expect(() => rowInserter<{ 'a b': string }>('tasks', [['a b', 'text']])).toThrow(/not a plain identifier/);
  });
});
