import { describe, expect, it } from 'vitest';
import { feedbackPrompt, planMessage, questionsOfPlan, readReply } from './review-text.js';

describe('plan review text', () => {
  it('shows the plan as numbered sub-questions and reads them back from an approved plan', () => {
    const plan = planMessage('Q', ['One?', 'Two?']);
    expect(plan).toBe('Research plan for: Q\n\n1. One?\n2. Two?');
    expect(questionsOfPlan(plan, 'Q', 5)).toEqual(['One?', 'Two?']);
    expect(questionsOfPlan('- a\n* b\n3) c\nprose', 'Q', 2)).toEqual(['a', 'b']);
    expect(questionsOfPlan('Just read the docs.', 'Q', 3)).toEqual(['Q\n\nFollow this research plan:\nJust read the docs.']);
  });

  it('reads the model answer: JSON intent and message, else the text (a question asks), and a last round is a plan', () => {
    expect(readReply('```json\n{"intent": "feedback", "message": "Which years?"}\n```', false)).toEqual({ intent: 'feedback', message: 'Which years?' });
    expect(readReply('{"intent": "ready", "message": "1. A"}', false)).toEqual({ intent: 'ready', message: '1. A' });
    expect(readReply('Which region do you mean?', false)).toEqual({ intent: 'feedback', message: 'Which region do you mean?' });
    expect(readReply('1. A\n2. B', false)).toEqual({ intent: 'ready', message: '1. A\n2. B' });
    expect(readReply('{"intent": "feedback", "message": "More?"}', true)).toEqual({ intent: 'ready', message: 'More?' });
  });

  it('tells the model at the last round to give a definitive plan', () => {
    const turns = [{ role: 'assistant' as const, message: 'plan', timestamp: '' }];
    expect(String(feedbackPrompt('Q', turns, 'fb', false)[0]!.content)).not.toContain('last review round');
    const last = feedbackPrompt('Q', turns, 'fb', true);
    expect(String(last[0]!.content)).toContain('last review round');
    expect(last.slice(1).map((m) => m.content)).toEqual(['Research question: Q', 'plan', 'fb']);
  });
});
