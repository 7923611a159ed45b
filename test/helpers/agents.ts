/** Agent catalogue entries the tests load (one YAML file each). */

/** `calc`: the calculator tool as a catalogue agent, one required input `expression`. */
export const CALC_AGENT = `id: calc
name: Calculator
description: Exact arithmetic.
category: math
tool: calculator
cost_per_call: 0
input_schema:
  required: [expression]
  properties:
    expression: { type: string, description: The expression }
`;
